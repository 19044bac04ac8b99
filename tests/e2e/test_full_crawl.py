"""A full crawl of the sample site through the real controller, checked from the server's side."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from support.crawllog_parser import count_lines, parse_file
from support.sample_crawl import crawl_sample_site
from warcio.archiveiterator import ArchiveIterator

from crawler.control.controller import CrawlController
from crawler.demo import DISALLOWED_PREFIX, SampleSite

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def crawl(site: SampleSite, run_dir: Path, *extra: str) -> CrawlController:
    return crawl_sample_site(site, run_dir, "logging.progress_interval_s=0.5", *extra)


def test_crawl_fetches_every_in_scope_uri_exactly_once(tmp_path: Path) -> None:
    with SampleSite(pages_per_host=40) as site:
        controller = crawl(site, tmp_path / "run")
        fetched = site.counts()
        expected = site.expected_urls(obey_robots=True)
    assert controller.exit_status == "Finished"
    assert set(fetched) == expected
    assert [url for url, n in fetched.items() if n > 1] == []
    assert not any(DISALLOWED_PREFIX in url for url in fetched)

    lines = parse_file(tmp_path / "run" / "logs" / "crawl.log")
    logged = Counter(line.uri for line in lines)
    assert [uri for uri, n in logged.items() if n > 1] == []
    http_logged = {line.uri for line in lines if line.status > 0}
    assert http_logged == expected
    precluded = {line.uri for line in lines if line.status == -9998}
    assert precluded and all(DISALLOWED_PREFIX in uri for uri in precluded)
    assert {line.status for line in lines} >= {200, 301, 404, -9998}

    progress = (tmp_path / "run" / "logs" / "progress-statistics.log").read_text()
    assert "CRAWL ENDED - Finished" in progress
    assert (tmp_path / "run" / "order.effective.yaml").exists()


def test_warc_has_one_capture_per_fetch_with_the_logged_digest(tmp_path: Path) -> None:
    """One response record per fetch, or a revisit for a payload captured before (dedup)."""
    with SampleSite(pages_per_host=25) as site:
        crawl(site, tmp_path / "run")
    lines = parse_file(tmp_path / "run" / "logs" / "crawl.log")
    logged = {line.uri: line for line in lines if line.status > 0}
    warcs = sorted((tmp_path / "run" / "warcs").iterdir())
    assert warcs and all(p.name.endswith(".warc.gz") for p in warcs)
    responses: Counter[str] = Counter()
    revisits: list[str] = []
    first_types = []
    for path in warcs:
        with path.open("rb") as fh:
            for i, record in enumerate(ArchiveIterator(fh)):
                if i == 0:
                    first_types.append(record.rec_type)
                if record.rec_type not in ("response", "revisit"):
                    continue
                uri = record.rec_headers.get_header("WARC-Target-URI")
                responses[uri] += 1
                digest = record.rec_headers.get_header("WARC-Payload-Digest")
                assert digest == logged[uri].digest, uri
                if record.rec_type == "revisit":
                    revisits.append(uri)
                    assert "duplicate:digest" in logged[uri].annotations
                    continue
                body = record.content_stream().read()
                assert len(body) == logged[uri].size
    assert first_types == ["warcinfo"] * len(warcs)
    assert set(responses) == set(logged)
    assert max(responses.values()) == 1
    assert len(revisits) < len(responses) / 2
    for line in logged.values():
        assert line.extra is not None and line.extra["warcFilename"].endswith(".warc.gz")


def test_sigint_stops_a_running_crawl_cleanly(tmp_path: Path) -> None:
    with SampleSite(pages_per_host=200, latency_s=0.05) as site:
        run_dir = tmp_path / "run"
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "crawler",
                "run",
                str(EXAMPLE),
                "--run-dir",
                str(run_dir),
                "--set",
                f"seeds.urls={site.base_urls!r}",
                "--set",
                "seeds.file=null",
                "--set",
                "frontier.politeness.min_delay_ms=0",
                "--set",
                "frontier.politeness.delay_factor=0",
                "--set",
                "toe_threads=4",
                "--set",
                "logging.console=false",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == str(run_dir)
        crawl_log = run_dir / "logs" / "crawl.log"
        deadline = time.monotonic() + 60
        while count_lines(crawl_log) < 20:
            assert time.monotonic() < deadline and proc.poll() is None, "no 20 crawl.log lines"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        fetched_total = sum(site.counts().values())
    assert proc.returncode == 0, err
    assert "Ended by operator" in out
    lines = parse_file(crawl_log)
    assert 20 <= len(lines) < len(site.expected_urls())
    # every fetch the server answered is accounted for in crawl.log (nothing in flight was lost)
    assert fetched_total == sum(1 for line in lines if line.status > 0)
    assert (
        "CRAWL ENDED - Finished - Ended by operator"
        in (run_dir / "logs" / "progress-statistics.log").read_text()
    )
    assert not list((run_dir / "warcs").glob("*.open"))
    # cpu_affinity: auto pinned the crawl process to one of the CPUs this test may use.
    events = [json.loads(line) for line in (run_dir / "logs" / "crawler.jsonl").open()]
    # every state change reaches the run's app log, PREPARING included, tagged with the crawl
    states = [e["state"] for e in events if e["event"] == "crawl_state"]
    assert states[0] == "PREPARING" and states[-1] == "FINISHED"
    assert all(e.get("crawl") for e in events if e["event"] == "crawl_state")
    (prepared,) = [e for e in events if e["event"] == "crawl_prepared"]
    usable = sorted(os.sched_getaffinity(0))
    assert len(prepared["cpus"]) == (1 if len(usable) > 1 else len(usable))
    assert set(prepared["cpus"]) <= set(usable)
