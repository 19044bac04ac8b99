"""Readers of a growing log see complete lines only: a last line without its newline is being
written (or was cut short by a crash) and is left out until it is whole."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from support.crawllog_parser import count_lines, parse_file

from crawler.console.logtail import tail
from crawler.console.monitor import CrawlLogTally
from crawler.frontier.store.recovery import logged_uris
from crawler.logs.crawl_logs import CrawlLogs
from crawler.logs.growing_file import complete_lines, read_complete, trim_partial_line
from crawler.reports.offline import log_span_ms
from crawler.reports.plot import parse_progress_log
from crawler.reports.status import read_status
from crawler.servers import ServerCache
from crawler.stats import CrawlStats

pytestmark = pytest.mark.timeout(30)

LINE_A = (
    "2026-11-22T02:37:50.125Z   200       4435 http://127.0.0.1:8000/ - - text/html #002 "
    "20261122023750122+1 sha1:4A5SYIWBSQRBJMRXM3IUPRVMFHOG2RT4 - - "
    '{"warcFilename":"a.warc.gz","warcFileOffset":0,"contentSize":4435}\n'
)
LINE_B = (
    "2026-11-22T02:37:51.125Z   404        120 http://127.0.0.1:8000/gone L "
    "http://127.0.0.1:8000/ text/html #001 20261122023751122+2 "
    "sha1:4A5SYIWBSQRBJMRXM3IUPRVMFHOG2RT4 - - "
    '{"warcFilename":"a.warc.gz","warcFileOffset":5000,"contentSize":120}\n'
)
# the third line, as far as a writer had got when it was read
PARTIAL = LINE_B.replace("404", "200").replace("/gone", "/half")[:150]


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "crawl.log"
    path.write_text(LINE_A + LINE_B + PARTIAL, encoding="utf-8")
    return path


def test_complete_lines_leave_out_the_unterminated_last_line(log: Path) -> None:
    assert list(complete_lines(log)) == [LINE_A[:-1], LINE_B[:-1]]
    assert list(complete_lines(log, len(LINE_A))) == [LINE_B[:-1]]
    with log.open("a") as fh:
        fh.write(LINE_B[150:].replace("404", "200"))
    assert len(list(complete_lines(log))) == 3


def test_complete_lines_of_a_missing_or_empty_file_are_none(tmp_path: Path) -> None:
    assert list(complete_lines(tmp_path / "missing.log")) == []
    (tmp_path / "empty.log").write_bytes(b"")
    assert list(complete_lines(tmp_path / "empty.log")) == []
    (tmp_path / "fragment.log").write_bytes(b'{"event": "sta')
    assert list(complete_lines(tmp_path / "fragment.log")) == []


def test_read_complete_stops_at_the_last_newline_and_resumes_there(log: Path) -> None:
    first = read_complete(log)
    assert first.data == (LINE_A + LINE_B).encode()
    assert first.end == len(first.data) and first.size == len(first.data) + len(PARTIAL)
    assert read_complete(log, first.end).data == b""  # the line is still being written
    with log.open("a") as fh:
        fh.write("rest\n")
    again = read_complete(log, first.end)
    assert again.data == (PARTIAL + "rest\n").encode() and again.end == again.size
    # at most max_bytes, whole lines only
    assert read_complete(log, 0, len(LINE_A) + 10).data == LINE_A.encode()
    assert read_complete(log, 0, 10).data == b""
    # missing; truncated below the offset
    assert read_complete(log.with_name("nope"), 5) == read_complete(log.with_name("nope"), 5)
    assert read_complete(log.with_name("nope"), 5).size == 0
    assert read_complete(log, 10**6).size < 10**6


def test_trim_partial_line_cuts_the_fragment_only(tmp_path: Path, log: Path) -> None:
    assert trim_partial_line(log) == len(PARTIAL)
    assert log.read_text() == LINE_A + LINE_B
    assert trim_partial_line(log) == 0
    assert trim_partial_line(tmp_path / "missing") == 0
    only = tmp_path / "only-fragment"
    only.write_bytes(b"x" * 200_000)  # longer than one block, no newline at all
    assert trim_partial_line(only) == 200_000 and only.read_bytes() == b""


def test_a_resumed_crawl_log_does_not_glue_its_first_line_to_a_fragment(
    tmp_path: Path, log: Path
) -> None:
    logs = CrawlLogs(tmp_path)
    logs.crawl.write(LINE_B[:-1])
    logs.close()
    assert [line.uri for line in parse_file(log)] == [
        "http://127.0.0.1:8000/",
        "http://127.0.0.1:8000/gone",
        "http://127.0.0.1:8000/gone",
    ]


def test_every_crawl_log_reader_ignores_the_line_being_written(log: Path) -> None:
    stats = CrawlStats()
    assert stats.replay_crawl_log(log) == 2
    assert (stats.counts().finished, stats.counts().bytes) == (2, 4435 + 120)
    tally = CrawlLogTally(log)
    tally.update()
    assert tally.lines == 2 and dict(tally.codes) == {"200": 1, "404": 1} and tally.complete
    assert tail(log, 10).lines == [LINE_A[:-1], LINE_B[:-1]]
    assert tail(log, 10, after=0).lines == [LINE_A[:-1], LINE_B[:-1]]
    assert logged_uris(log) == {"http://127.0.0.1:8000/", "http://127.0.0.1:8000/gone"}
    assert log_span_ms(log) == 1000
    assert [line.uri for line in parse_file(log, growing=True)] == [
        "http://127.0.0.1:8000/",
        "http://127.0.0.1:8000/gone",
    ]
    assert count_lines(log) == 2
    with pytest.raises(ValueError, match="no newline"):
        parse_file(log)  # a finished crawl's log must end with a whole line


def test_recovery_ignores_the_first_line_of_its_window_too(log: Path) -> None:
    # the window starts inside LINE_A: its remains are not a line either
    assert logged_uris(log, tail_bytes=len(LINE_B) + len(PARTIAL) + 20) == {
        "http://127.0.0.1:8000/gone"
    }
    # a window that begins exactly where a line does keeps that line
    assert logged_uris(log, tail_bytes=len(LINE_B) + len(PARTIAL)) == {"http://127.0.0.1:8000/gone"}
    assert logged_uris(log, tail_bytes=len(LINE_B) + len(PARTIAL) - 1) == set()


def test_progress_log_rows_are_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "progress-statistics.log"
    row = (
        "2026-11-22T02:37:50Z          10           5           5      2.5(2.5)      10(10)"
        "           0           1       1000      2000           1         1         1\n"
    )
    path.write_text(row + row[:40], encoding="utf-8")
    series = parse_progress_log(path)
    assert series.downloaded == [5]
    assert parse_progress_log(tmp_path / "missing.log").downloaded == []


def test_the_servers_journal_skips_and_trims_a_cut_short_entry(tmp_path: Path) -> None:
    journal = tmp_path / "servers.jsonl"
    journal.write_text('{"kind": "robo', encoding="utf-8")
    servers = ServerCache()
    assert servers.attach_journal(journal) == 0
    servers.close_journal()
    assert journal.read_text() == ""


def test_status_readers_survive_a_missing_partial_or_odd_status_file(tmp_path: Path) -> None:
    assert read_status(tmp_path) is None
    status = tmp_path / "status.json"
    status.write_text('{"state": "RUNNING", "pid": 1', encoding="utf-8")
    assert read_status(tmp_path) is None
    status.write_text("[1, 2]", encoding="utf-8")
    assert read_status(tmp_path) is None
    status.write_text('{"state": "RUNNING", "pid": "x"}', encoding="utf-8")
    assert read_status(tmp_path) is None
    status.write_text(json.dumps({"state": "FINISHED", "pid": 0, "updated_s": 1}), "utf-8")
    doc = read_status(tmp_path)
    assert doc is not None and doc["state"] == "FINISHED" and not doc["died"]


def test_readers_racing_a_writer_see_whole_lines_only(tmp_path: Path) -> None:
    """A writer appends lines in pieces (as a reader may catch one); every read parses."""
    path = tmp_path / "crawler.jsonl"
    path.write_bytes(b"")
    done = threading.Event()

    def write() -> None:
        with path.open("ab", buffering=0) as fh:
            for n in range(2000):
                line = json.dumps({"event": "fetched", "n": n, "pad": "x" * (n % 300)}) + "\n"
                cut = len(line) // 2
                fh.write(line[:cut].encode())
                time.sleep(0)  # let the reader catch the half line
                fh.write(line[cut:].encode())
        done.set()

    writer = threading.Thread(target=write)
    writer.start()
    seen = 0
    while not done.is_set() or seen < 2000:
        events = [json.loads(line) for line in complete_lines(path)]
        assert [e["n"] for e in events] == list(range(len(events)))
        seen = len(events)
        # A reader polls; spinning would keep the writer from the interpreter (one thread at a
        # time runs Python code), and the test would measure the switch interval, not lines.
        time.sleep(0.001)
    writer.join(10)
    assert seen == 2000
