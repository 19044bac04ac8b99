"""The commands a user types: ``crawler run ORDER --workers N``, ``crawler worker ORDER --redis
URL`` joining from elsewhere, and ``crawler status`` on the distributed run directory."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from support.crawl_process import wait_until
from support.crawllog_parser import count_lines, parse_file
from support.redis_servers import RedisServer

from crawler.demo import SampleSite

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def _cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "crawler", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def _command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "crawler", *args], capture_output=True, text=True, timeout=90
    )


def _metrics(port: int) -> str:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as got:
            return str(got.read().decode())
    except OSError:
        return ""


def test_run_with_workers_and_a_worker_joining_from_elsewhere(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    with SampleSite(pages_per_host=40, latency_s=0.03) as site:
        store = {"class": "crawler.frontier.RedisQueueStore", "params": {"url": redis_server.url}}
        sets: list[str] = []
        for item in (
            f"seeds.urls={site.base_urls!r}",
            "seeds.file=null",
            "name=cli-test",
            "toe_threads=2",
            "logging.console=false",
            f"frontier.store={json.dumps(store)}",
        ):
            sets += ["--set", item]
        run_dir = tmp_path / "run"
        launcher = _cli("run", str(EXAMPLE), "--workers", "1", "--run-dir", str(run_dir), *sets)
        assert launcher.stdout is not None
        assert launcher.stdout.readline().strip() == str(run_dir)
        log = run_dir / "workers" / "w01" / "logs" / "crawl.log"
        wait_until(lambda: count_lines(log) >= 5, "5 crawl.log lines")
        # Paused, the crawl cannot end before the other worker joins, however slow the machine.
        assert _command("pause", str(run_dir)).returncode == 0
        joiner_dir = tmp_path / "elsewhere"
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        joiner = _cli(
            "worker",
            str(EXAMPLE),
            "--redis",
            redis_server.url,
            "--run-dir",
            str(joiner_dir),
            "--metrics-port",
            str(port),
            *sets,
        )
        wait_until(lambda: "2 of 2 workers alive" in _command("status", str(run_dir)).stdout)
        wait_until(lambda: _command("pause", str(run_dir)).returncode == 0, "both paused")
        # The joiner's /metrics shows every worker's heartbeat and lease ages.
        wait_until(
            lambda: _metrics(port).count("crawler_worker_lease_age_seconds{") == 2,
            "the lease ages of both workers on the joiner's /metrics",
            poll_s=0.5,
        )
        assert 'crawler_worker_heartbeat_age_seconds{worker="w01"}' in _metrics(port)
        status = _command("status", str(run_dir))
        assert status.returncode == 0, status.stderr
        assert "crawl 'cli-test'" in status.stdout and "2 of 2 workers alive" in status.stdout
        assert "RUNNING" not in status.stdout.split("\n", 2)[2]  # each worker is paused
        assert _command("unpause", str(run_dir)).returncode == 0
        _, joiner_err = joiner.communicate(timeout=90)
        out, err = launcher.communicate(timeout=90)
        assert launcher.returncode == 0, err
        assert joiner.returncode == 0, joiner_err
        assert "URIs logged by 1 workers" in out
        expected = site.expected_urls(obey_robots=True)
        assert set(site.counts()) == expected
    # Together the two workers crawled the whole site (how they shared it is theirs to decide).
    mine = {line.uri for line in parse_file(log)}
    theirs = {line.uri for line in parse_file(joiner_dir / "logs" / "crawl.log")}
    assert expected <= mine | theirs
    final = subprocess.run(
        [sys.executable, "-m", "crawler", "status", str(run_dir)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert "FINISHED" in final.stdout
    # Crawl-wide reports: this machine's workers, then with the worker that ran "elsewhere".
    counts = [len(p.read_text().splitlines()) for p in (log, joiner_dir / "logs" / "crawl.log")]
    for extra, lines in (([], counts[0]), (["--include", str(joiner_dir)], sum(counts))):
        report = subprocess.run(
            [sys.executable, "-m", "crawler", "report", str(run_dir), *extra],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert report.returncode == 0, report.stderr
        assert f"URIs processed: {lines}\n" in report.stdout
        assert (
            f"URIs processed: {lines}\n" in (run_dir / "reports" / "crawl-report.txt").read_text()
        )
