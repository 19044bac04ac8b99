"""A crawl whose run directory is on a small, real file system (a tmpfs filled by a ballast
file): the disk guard pauses it below ``limits.min_free_disk_mb`` and resumes it once space
returns, an operator's pause outlives the guard's resume, and with the guard off the writes that
hit ENOSPC wait for space. Every case ends with every page in crawl.log and in a valid WARC.

Skipped, with the reason, where a tmpfs cannot be mounted (it needs root; CI runs as root).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.crawl_process import wait_until
from support.crawllog_parser import CrawlLogLine, parse_file
from support.small_fs import MIB, Ballast, small_fs
from warcio.archiveiterator import ArchiveIterator

from crawler.cli.display import format_status
from crawler.control.controller import CrawlController
from crawler.demo import SampleSite
from crawler.disk import SPACE_WAIT
from crawler.order.loader import load_order
from crawler.reports.status import read_status

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
WARCIO = Path(sys.executable).with_name("warcio")
FS_MB = 64

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


@pytest.fixture
def fs(tmp_path: Path) -> Iterator[Path]:
    with small_fs(tmp_path / "fs", FS_MB) as mount:
        yield mount


@pytest.fixture
def site() -> Iterator[SampleSite]:
    with SampleSite(pages_per_host=30) as s:
        yield s


class Crawl:
    """A controller running in a background thread on ``run_dir``."""

    def __init__(self, site: SampleSite, run_dir: Path, min_free_mb: int) -> None:
        order = load_order(
            EXAMPLE,
            [
                f"seeds.urls={site.base_urls!r}",
                "seeds.file=null",
                # A 100 ms gap per host: the crawl lasts long enough to fill the disk midway.
                "frontier.politeness.delay_factor=0",
                "frontier.politeness.min_delay_ms=100",
                "frontier.politeness.max_delay_ms=100",
                "toe_threads=4",
                "logging.console=false",
                "logging.progress_interval_s=0.5",
                f"limits.min_free_disk_mb={min_free_mb}",
                "limits.disk_resume_margin_mb=4",
                "limits.disk_check_interval_s=0.1",
            ],
        )
        self.run_dir = run_dir
        self.controller = CrawlController(order, run_dir, install_signals=False)
        self.exit_codes: list[int] = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        self.exit_codes.append(self.controller.run())

    def lines(self) -> list[CrawlLogLine]:
        return parse_file(self.run_dir / "logs" / "crawl.log")

    def logged(self) -> int:
        path = self.run_dir / "logs" / "crawl.log"
        return path.read_bytes().count(b"\n") if path.exists() else 0

    def log_text(self, name: str) -> str:
        return (self.run_dir / "logs" / name).read_text(encoding="utf-8")

    def finish(self) -> None:
        self.thread.join(90)
        assert not self.thread.is_alive(), f"crawl still {self.controller.state}"
        assert self.exit_codes == [0]
        assert self.controller.exit_status == "Finished"


def assert_every_page_captured(crawl: Crawl, site: SampleSite) -> None:
    """Every in-scope URI once in crawl.log (strictly parsed: no broken line), each 2xx in a
    WARC that warcio checks cleanly, nothing marked unwritten, no file left invalid."""
    lines = crawl.lines()
    fetched = {line.uri for line in lines if line.status > 0}
    assert fetched == site.expected_urls(obey_robots=True)
    assert len(lines) == len({line.uri for line in lines})
    assert not [line for line in lines if any(a.startswith("unwritten") for a in line.annotations)]
    assert crawl.log_text("runtime-errors.log") == ""
    warcs = sorted((crawl.run_dir / "warcs").iterdir())
    assert warcs and all(p.name.endswith(".warc.gz") for p in warcs), warcs
    check = subprocess.run([str(WARCIO), "check", *map(str, warcs)], capture_output=True)
    assert check.returncode == 0, check.stdout + check.stderr
    captured: set[str] = set()
    for path in warcs:
        with path.open("rb") as fh:
            for record in ArchiveIterator(fh):
                if record.rec_type in ("response", "revisit"):
                    captured.add(record.rec_headers.get_header("WARC-Target-URI"))
    ok = {line.uri for line in lines if 200 <= line.status < 300}
    assert ok and ok <= captured


def test_the_guard_pauses_a_crawl_on_a_filling_disk_and_resumes_it(
    fs: Path, site: SampleSite
) -> None:
    crawl = Crawl(site, fs / "run", min_free_mb=16)
    wait_until(lambda: crawl.logged() >= 10, "ten URIs are logged")
    ballast = Ballast(fs / "ballast")
    ballast.fill(leave_bytes=8 * MIB)
    wait_until(lambda: crawl.controller.state == "PAUSED", "the crawl pauses")

    assert crawl.controller.pause_reasons == {"disk"}
    wait_until(lambda: (read_status(crawl.run_dir) or {}).get("state") == "PAUSED", "status")
    status = read_status(crawl.run_dir)
    assert status is not None
    assert status["pause_reasons"] == ["disk"]
    assert status["disk"]["low"] is True and status["disk"]["free_mb"] < 16
    text = format_status(status)
    assert "paused:      by the disk guard (disk space low)" in text
    assert "LOW, crawl paused until 20 MiB free" in text
    assert "disk_space_low" in crawl.log_text("alerts.log")
    assert "CRAWL PAUSED - Paused - disk space low" in crawl.log_text("progress-statistics.log")
    # Paused means paused: the server sees no request until space returns.
    requests = sum(site.counts().values())
    time.sleep(0.5)
    assert sum(site.counts().values()) == requests

    ballast.remove()
    crawl.finish()
    assert "disk_space_recovered" in crawl.log_text("alerts.log")
    assert crawl.controller.disk_guard.pauses == 1
    assert_every_page_captured(crawl, site)


def test_an_operator_pause_outlives_the_guard_resume(fs: Path, site: SampleSite) -> None:
    crawl = Crawl(site, fs / "run", min_free_mb=16)
    controller = crawl.controller
    wait_until(lambda: crawl.logged() >= 5, "five URIs are logged")
    controller.pause()
    wait_until(lambda: controller.state == "PAUSED", "the operator's pause")
    ballast = Ballast(fs / "ballast")
    ballast.fill(leave_bytes=8 * MIB)
    wait_until(lambda: controller.pause_reasons == {"operator", "disk"}, "the guard's pause")

    ballast.remove()
    wait_until(lambda: not controller.disk_guard.low, "the guard sees space again")
    assert controller.state == "PAUSED"
    assert controller.pause_reasons == {"operator"}
    requests = sum(site.counts().values())
    time.sleep(0.3)
    assert sum(site.counts().values()) == requests

    controller.unpause()
    crawl.finish()
    assert_every_page_captured(crawl, site)


def test_with_the_guard_off_writes_that_hit_enospc_wait_and_lose_nothing(
    fs: Path, site: SampleSite
) -> None:
    crawl = Crawl(site, fs / "run", min_free_mb=0)
    waits = SPACE_WAIT.waits
    wait_until(lambda: crawl.logged() >= 10, "ten URIs are logged")
    ballast = Ballast(fs / "ballast")
    ballast.fill(leave_bytes=0)
    wait_until(lambda: SPACE_WAIT.waits > waits, "a write hits the full disk")
    assert crawl.thread.is_alive()
    # What is on the disk now is whole: every WARC record reads, every crawl.log line parses.
    for path in (crawl.run_dir / "warcs").iterdir():
        with path.open("rb") as fh:
            assert all(r.rec_type for r in ArchiveIterator(fh))
    assert crawl.lines()

    ballast.remove()
    crawl.finish()
    assert "disk_full_waiting" in crawl.log_text("alerts.log")
    assert crawl.controller.disk_guard.pauses == 0
    assert_every_page_captured(crawl, site)
