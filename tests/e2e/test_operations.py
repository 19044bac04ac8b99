"""Seeing and steering a running crawl: each test runs a real crawl in a subprocess and steers it
with the operator commands (crawler status/pause/unpause/terminate/block/report)."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.crawllog_parser import CrawlLogLine, count_lines, parse_file

from crawler.cli import operations
from crawler.demo import SampleSite
from crawler.reports.status import read_status

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(120)]


def wait_until(check: Callable[[], object], timeout_s: float = 60.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        time.sleep(0.05)


def crawl_lines(run_dir: Path, *, growing: bool = False) -> list[CrawlLogLine]:
    """crawl.log's lines; ``growing`` for a crawl that may still write (or died writing) one."""
    path = run_dir / "logs" / "crawl.log"
    return parse_file(path, growing=growing) if growing or path.exists() else []


def line_count(run_dir: Path) -> int:
    """Complete lines in crawl.log so far."""
    return count_lines(run_dir / "logs" / "crawl.log")


def state_of(run_dir: Path) -> str | None:
    doc = read_status(run_dir)
    return None if doc is None else str(doc["state"])


class Crawl:
    """A `crawler run` subprocess on the sample site."""

    def __init__(self, run_dir: Path, seeds: list[str], *sets: str) -> None:
        self.run_dir = run_dir
        args = [
            f"seeds.urls={seeds!r}",
            "seeds.file=null",
            "toe_threads=3",
            "logging.console=false",
            "logging.progress_interval_s=0.5",
            *sets,
        ]
        cmd = [sys.executable, "-m", "crawler", "run", str(EXAMPLE), "--run-dir", str(run_dir)]
        for item in args:
            cmd += ["--set", item]
        self.proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        wait_until(lambda: state_of(run_dir) == "RUNNING", what="the crawl to run")

    def op(self, fn: Callable[..., int], *args: object) -> str:
        out, err = io.StringIO(), io.StringIO()
        code = fn(*args, out, err)
        assert code == 0, err.getvalue()
        return out.getvalue()

    def finish(self, timeout_s: float = 60) -> tuple[str, str]:
        out, err = self.proc.communicate(timeout=timeout_s)
        assert self.proc.returncode == 0, err
        return out, err

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.communicate(timeout=30)


@pytest.fixture
def slow_site() -> Iterator[SampleSite]:
    with SampleSite(pages_per_host=150, latency_s=0.03) as site:
        yield site


def test_pause_stops_fetches_unpause_resumes_terminate_writes_reports(
    tmp_path: Path, slow_site: SampleSite
) -> None:
    run_dir = tmp_path / "run"
    crawl = Crawl(run_dir, slow_site.base_urls)
    try:
        wait_until(lambda: line_count(run_dir) >= 15, what="15 crawl.log lines")
        out = crawl.op(operations.cmd_control, "pause", run_dir, 30.0)
        assert "PAUSED" in out
        requests_at_pause = len(slow_site.request_log)
        lines_at_pause = line_count(run_dir)
        time.sleep(1.0)
        assert len(slow_site.request_log) == requests_at_pause
        assert line_count(run_dir) == lines_at_pause
        doc = read_status(run_dir)
        assert doc is not None and doc["state"] == "PAUSED" and doc["threads"]["busy"] == 0
        progress = (run_dir / "logs" / "progress-statistics.log").read_text()
        assert "CRAWL WAITING - Pausing" in progress and "CRAWL PAUSED - " in progress

        crawl.op(operations.cmd_control, "unpause", run_dir, 30.0)
        wait_until(
            lambda: len(slow_site.request_log) > requests_at_pause + 5, what="fetching again"
        )
        out = crawl.op(operations.cmd_control, "terminate", run_dir, 60.0)
        assert "FINISHED" in out
        stdout, _ = crawl.finish()
    finally:
        crawl.kill()
    assert "Finished - Ended by operator" in stdout
    reports = sorted(p.name for p in (run_dir / "reports").glob("*.txt"))
    assert len(reports) == 9
    assert (
        "crawl status: Finished - Ended by operator"
        in (run_dir / "reports" / "crawl-report.txt").read_text()
    )
    lines = crawl_lines(run_dir)
    assert len(lines) < len(slow_site.expected_urls())
    assert sum(1 for line in lines if line.status > 0) == len(slow_site.request_log)
    doc = read_status(run_dir)
    assert doc is not None and doc["state"] == "FINISHED" and not doc["died"]
    assert not (run_dir / "crawler.pid").exists()


def test_dropped_seeds_file_gets_crawled(tmp_path: Path, slow_site: SampleSite) -> None:
    run_dir = tmp_path / "run"
    with SampleSite(ports=(0,), pages_per_host=20) as second:
        crawl = Crawl(run_dir, slow_site.base_urls[:1])
        try:
            wait_until(lambda: line_count(run_dir) >= 5, what="5 crawl.log lines")
            # paused, the crawl cannot end before it takes the file in, however slow the test
            crawl.op(operations.cmd_control, "pause", run_dir, 60.0)
            action = run_dir / "action"
            (action / ".new.seeds.tmp").write_text(f"# more\n{second.base_urls[0]}\n")
            os.replace(action / ".new.seeds.tmp", action / "new.seeds")
            wait_until(lambda: list((action / "done").glob("*.new.seeds")), what="done/")
            crawl.op(operations.cmd_control, "unpause", run_dir, 60.0)
            wait_until(lambda: len(second.request_log) >= 10, what="the new seed's host")
            crawl.op(operations.cmd_control, "terminate", run_dir, 60.0)
            crawl.finish()
        finally:
            crawl.kill()
    lines = crawl_lines(run_dir)
    new_seed = [line for line in lines if line.uri == second.base_urls[0]]
    assert len(new_seed) == 1 and new_seed[0].status == 200 and new_seed[0].hops == "-"
    # the new seed widened the scope: pages linked from it were crawled too
    assert any(line.uri.startswith(second.base_urls[0]) and line.hops == "L" for line in lines)
    seeds_report = (run_dir / "reports" / "seeds-report.txt").read_text()
    assert f"200 CRAWLED {second.base_urls[0]}" in seeds_report
    assert not (action / "new.seeds").exists()


def test_block_ends_queued_uris_as_minus_5001_unfetched(
    tmp_path: Path, slow_site: SampleSite
) -> None:
    run_dir = tmp_path / "run"
    crawl = Crawl(run_dir, slow_site.base_urls[:1])
    try:
        wait_until(lambda: line_count(run_dir) >= 10, what="10 crawl.log lines")
        # paused, the crawl cannot end before the rule is active, however slow the test
        crawl.op(operations.cmd_control, "pause", run_dir, 60.0)
        out = crawl.op(operations.cmd_block, run_dir, r"/(blog|news)/", 60.0)
        assert "block rule active" in out
        blocked_at = len(slow_site.request_log)
        crawl.op(operations.cmd_control, "unpause", run_dir, 60.0)
        wait_until(lambda: state_of(run_dir) == "FINISHED", timeout_s=90, what="the end")
        crawl.finish()
    finally:
        crawl.kill()
    lines = crawl_lines(run_dir)
    blocked = [line for line in lines if line.status == -5001]
    assert len(blocked) >= 3
    requested = {r.path for r in slow_site.request_log}
    prefix = slow_site.base_urls[0].rstrip("/")
    assert not {line.uri.removeprefix(prefix) for line in blocked} & requested
    late = slow_site.request_log[blocked_at + 3 :]
    assert not [r for r in late if "/blog/" in r.path or "/news/" in r.path]
    assert (run_dir / "block-rules.txt").read_text() == "/(blog|news)/\n"
    assert read_status(run_dir)["block_rules"] == ["/(blog|news)/"]  # type: ignore[index]


def test_status_and_every_report_agree_with_crawl_log(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    with SampleSite(pages_per_host=80, latency_s=0.03) as site:
        crawl = Crawl(run_dir, site.base_urls, "seeds.source_tag_seeds=true")
        try:
            wait_until(
                lambda: (read_status(run_dir) or {}).get("downloaded", 0) >= 10,
                what="10 downloads in status.json",
            )
            live = json.loads(crawl.op(operations.cmd_status, run_dir, True))
            assert live["state"] == "RUNNING" and live["alive"] and not live["died"]
            assert live["discovered"] >= live["downloaded"] > 0
            # paused, so the crawl is surely still live when it writes the reports
            crawl.op(operations.cmd_control, "pause", run_dir, 30.0)
            running_report = crawl.op(operations.cmd_report, run_dir, False, 30.0)
            assert "crawl status: PAUSED - Active" in running_report
            crawl.op(operations.cmd_control, "unpause", run_dir, 30.0)
            wait_until(lambda: state_of(run_dir) == "FINISHED", timeout_s=90, what="the end")
            crawl.finish()
        finally:
            crawl.kill()
    lines = crawl_lines(run_dir)
    ok = [line for line in lines if line.status > 0]
    disregarded = [line for line in lines if line.status in (-9998, -5000, -5001, -5002, -6000)]
    failed = len(lines) - len(ok) - len(disregarded)
    doc = json.loads(crawl.op(operations.cmd_status, run_dir, True))
    assert (doc["finished"], doc["downloaded"], doc["failed"], doc["disregarded"]) == (
        len(lines),
        len(ok),
        failed,
        len(disregarded),
    )
    assert doc["bytes"] == sum(line.size or 0 for line in ok)
    assert doc["queued"] == 0 and doc["discovered"] == len(lines)
    check_reports(run_dir, lines)
    # rebuilt from the run directory, the reports say the same
    before = {p.name: p.read_text() for p in (run_dir / "reports").glob("*.txt")}
    crawl.op(operations.cmd_report, run_dir, True, 5.0)
    after = {p.name: p.read_text() for p in (run_dir / "reports").glob("*.txt")}
    assert after == before
    assert (run_dir / "reports" / "progress.png").read_bytes()[:4] == b"\x89PNG"


def check_reports(run_dir: Path, lines: list[CrawlLogLine]) -> None:
    reports = run_dir / "reports"
    ok = [line for line in lines if line.status > 0]
    crawl_report = dict(
        line.split(": ", 1)
        for line in (reports / "crawl-report.txt").read_text().splitlines()
        if ": " in line
    )
    assert int(crawl_report["URIs processed"]) == len(lines)
    assert int(crawl_report["URI successes"]) == len(ok)
    assert int(crawl_report["total crawled bytes"].split()[0]) == sum(x.size or 0 for x in ok)

    def rows(name: str) -> list[list[str]]:
        return [r.split() for r in (reports / name).read_text().splitlines()[1:]]

    hosts = rows("hosts-report.txt")
    assert sum(int(r[0]) for r in hosts) == len(ok)
    assert sum(int(r[1]) for r in hosts) == sum(line.size or 0 for line in ok)
    assert sum(int(r[3]) for r in hosts) == sum(1 for line in lines if line.status == -9998)
    mimes = rows("mimetype-report.txt")
    assert sum(int(r[0]) for r in mimes) == len(ok)
    codes = {int(r[1]): int(r[0]) for r in rows("responsecode-report.txt")}
    assert codes == Counter(line.status for line in ok)
    sources = rows("source-report.txt")
    assert sum(int(r[2]) for r in sources) == len(ok)
    seeds = {r[2]: int(r[0]) for r in rows("seeds-report.txt")}
    assert seeds == {line.uri: line.status for line in lines if line.hops == "-"}
    frontier = (reports / "frontier-summary-report.txt").read_text()
    assert f"Discovered:    {len(lines)}" in frontier or str(len(lines)) in frontier
    assert "Number of toe threads in pool: 3" in (reports / "threads-report.txt").read_text()
    assert "Processor: processors.fetch" in (reports / "processors-report.txt").read_text()


def test_a_killed_crawl_is_reported_as_died(tmp_path: Path, slow_site: SampleSite) -> None:
    run_dir = tmp_path / "run"
    crawl = Crawl(run_dir, slow_site.base_urls[:1])
    wait_until(lambda: line_count(run_dir) >= 5, what="5 crawl.log lines")
    crawl.kill()
    doc = read_status(run_dir)
    assert doc is not None and doc["state"] == "RUNNING" and doc["died"]
    assert "DIED" in crawl.op(operations.cmd_status, run_dir, False)
    out, err = io.StringIO(), io.StringIO()
    assert operations.cmd_control("pause", run_dir, 1.0, out, err) == 1
    assert "died" in err.getvalue()
    report = crawl.op(operations.cmd_report, run_dir, False, 1.0)
    assert "crawl status: Finished - Abnormal exit from crawling" in report
    logged = len(crawl_lines(run_dir, growing=True))
    assert int(report.split("URIs processed: ")[1].split()[0]) == logged
