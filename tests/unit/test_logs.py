"""crawl.log and progress-statistics.log formats."""

from __future__ import annotations

import time
from pathlib import Path

from support.crawllog_parser import parse_line

from crawler import CrawlURI, Hop
from crawler.frontier.frontier import FrontierSnapshot
from crawler.logs.crawl_logs import CrawlLogs, format_crawl_line, log17, stamp17
from crawler.logs.progress import LEGEND, ProgressStatistics, fmt_decimal

NOW = 1_709_647_336.204  # 2024-03-05T14:02:16.204Z


def fetched() -> CrawlURI:
    seed = CrawlURI("https://www.example.org/", is_seed=True, source_tag="https://www.example.org/")
    curi = seed.create_child("https://www.example.org/static/logo.png", Hop.EMBED)
    curi.status = 200
    curi.content_size = 7321
    curi.content_type = "image/png"
    curi.thread_number = 7
    curi.fetch_start_ms = 1_709_647_341_602
    curi.fetch_duration_ms = 37
    curi.payload_digest = "sha1:LAD52YBGMSSWL7STZ4WSANTUWOENPMWR"
    return curi


def test_times() -> None:
    assert log17(NOW) == "2024-03-05T14:02:16.204Z"
    assert stamp17(1_709_647_341_602) == "20240305140221602"


def test_times_of_interleaved_seconds_each_keep_their_own_text() -> None:
    # Lines name a few seconds in turn (fetch starts), more than the memo keeps: each must
    # still print its own second, never a neighbour's.
    base_ms = 1_709_647_341_602
    for round_ in range(3):
        for k in range(0, 3000, 7):  # 429 seconds: past the memo's 256
            ms = base_ms + k * 1000 + round_
            want = time.strftime("%Y%m%d%H%M%S", time.gmtime(ms // 1000)) + f"{ms % 1000:03d}"
            assert stamp17(ms) == want
            assert (
                log17(ms / 1000)
                == time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000))
                + f".{ms % 1000:03d}Z"
            )


def test_crawl_line_matches_heritrix_layout() -> None:
    line = format_crawl_line(fetched(), NOW, extra_info=False)
    assert line == (
        "2024-03-05T14:02:16.204Z   200       7321 https://www.example.org/static/logo.png E "
        "https://www.example.org/ image/png #007 20240305140221602+37 "
        "sha1:LAD52YBGMSSWL7STZ4WSANTUWOENPMWR https://www.example.org/ -"
    )
    parsed = parse_line(line)
    assert parsed.status == 200 and parsed.size == 7321 and parsed.hops == "E"


def test_unfetched_uri_prints_dashes_and_attempts() -> None:
    curi = CrawlURI("https://www.example.org/private/a.html", via="https://www.example.org/")
    curi.hop_path = "L"
    curi.status = -9998
    curi.thread_number = 21
    curi.fetch_attempts = 3
    line = format_crawl_line(curi, NOW)
    assert line == (
        "2024-03-05T14:02:16.204Z -9998          - https://www.example.org/private/a.html L "
        "https://www.example.org/ no-type #021 - - - 3t"
    )
    assert parse_line(line).annotations == ["3t"]


def test_extra_info_is_the_thirteenth_column() -> None:
    curi = fetched()
    curi.extra_info = {"warcFilename": "WEB-1-00000-1~h.warc.gz", "warcFileOffset": 1234}
    parsed = parse_line(format_crawl_line(curi, NOW))
    assert parsed.extra == {
        "warcFilename": "WEB-1-00000-1~h.warc.gz",
        "warcFileOffset": 1234,
        "contentSize": 7321,
    }


def test_runtime_error_goes_to_both_logs(tmp_path: Path) -> None:
    logs = CrawlLogs(tmp_path)
    curi = fetched()
    curi.status = -5
    curi.error_traceback = "Traceback (most recent call last):\n  boom\nRuntimeError: boom\n"
    logs.log_final(curi, NOW)
    logs.uri_error("http://a/", 'bad "port"', "http://a:99999/", NOW)
    logs.close()
    crawl = (tmp_path / "crawl.log").read_text().splitlines()
    assert len(crawl) == 1 and parse_line(crawl[0]).status == -5
    runtime = (tmp_path / "runtime-errors.log").read_text()
    assert runtime.startswith(crawl[0]) and "RuntimeError: boom" in runtime
    assert (tmp_path / "uri-errors.log").read_text() == (
        "2024-03-05T14:02:16.204Z http://a/ \"bad 'port'\" http://a:99999/\n"
    )


def test_progress_row_columns_end_where_heritrix_puts_them() -> None:
    stats = ProgressStatistics(start_s=NOW - 100)
    snap = FrontierSnapshot(
        discovered=15234, queued=9871, congestion=1.8, max_depth=432, avg_depth=12
    )
    row = stats.sample(
        NOW, snap, downloaded=5102, failed=17, total_bytes=28_000_000, busy_threads=25
    )
    line = row.line()
    assert line.startswith("2024-03-05T14:02:16Z       15234        9871         5102")
    for end, value in ((32, "15234"), (44, "9871"), (57, "5102"), (99, "17"), (113, "25")):
        assert line[end - len(value) : end] == value
    assert line[:177].endswith("12")
    assert len(LEGEND) == 177


def test_decimal_format() -> None:
    assert fmt_decimal(1234.5) == "1,234.5"
    assert fmt_decimal(3.0) == "3"
    assert fmt_decimal(float("nan")) == "NaN"
