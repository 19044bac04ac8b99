"""Following logs for the console: the tail of a growing file (whole lines only, filtered,
incremental) and the crawl.log tally of response codes and MIME types."""

from __future__ import annotations

from pathlib import Path

from crawler.console.logtail import tail
from crawler.console.monitor import CrawlLogTally


def write_lines(path: Path, count: int, width: int = 0) -> list[str]:
    lines = [f"line {i:06d} {'x' * width}{'robots' if i % 7 == 0 else ''}" for i in range(count)]
    path.write_text("\n".join(lines) + "\n")
    return lines


def test_tail_reads_backwards_across_blocks(tmp_path: Path) -> None:
    path = tmp_path / "crawl.log"
    lines = write_lines(path, 5000, width=100)  # ~560 KB: many 64 KB blocks
    found = tail(path, 1200)
    assert found.lines == lines[-1200:]
    assert found.end == found.size == path.stat().st_size and not found.truncated
    assert tail(path, 10_000).lines == lines


def test_tail_filter_is_case_insensitive_and_counts_matches(tmp_path: Path) -> None:
    path = tmp_path / "crawl.log"
    lines = write_lines(path, 3000, width=50)
    found = tail(path, 5, contains="ROBOTS")
    assert found.lines == [line for line in lines if "robots" in line][-5:]
    assert tail(path, 5, contains="no such text").lines == []


def test_tail_scan_limit_marks_truncation(tmp_path: Path) -> None:
    path = tmp_path / "crawl.log"
    write_lines(path, 2000, width=100)
    found = tail(path, 10, contains="absent", max_scan_bytes=64 * 1024)
    assert found.lines == [] and found.truncated


def test_tail_after_offset_returns_only_new_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "crawl.log"
    write_lines(path, 10)
    first = tail(path, 3)
    with path.open("a") as fh:
        fh.write("new one\nnew two\nhalf a li")
    new = tail(path, 100, after=first.end)
    assert new.lines == ["new one", "new two"]
    with path.open("a") as fh:
        fh.write("ne\n")
    assert tail(path, 100, after=new.end).lines == ["half a line"]
    assert tail(path, 100, after=10**9).lines[-1] == "half a line"  # shrunk file: plain tail


def test_tail_of_a_file_without_newline_or_missing(tmp_path: Path) -> None:
    path = tmp_path / "partial.log"
    path.write_text("still being written")
    assert tail(path, 5).lines == []
    assert tail(tmp_path / "missing.log", 5).lines == []
    long = tmp_path / "long.log"
    long.write_text("y" * 200_000 + "\nshort\n")
    found = tail(long, 2)
    assert found.lines[1] == "short" and found.lines[0].endswith("…")
    assert len(found.lines[0]) < 5000


def test_tally_counts_codes_and_mimes_incrementally(tmp_path: Path) -> None:
    path = tmp_path / "crawl.log"
    row = "2026-01-01T00:00:01.000Z {code:>5} {size:>10} http://h/{n} - - {mime} #001 - - - - -\n"
    path.write_text(row.format(code=200, size=100, n=1, mime="text/html"))
    tally = CrawlLogTally(path, chunk_bytes=150)
    tally.update()
    with path.open("a") as fh:
        fh.write(row.format(code=404, size=10, n=2, mime="text/html"))
        fh.write(row.format(code=-2, size="-", n=3, mime="no-type"))
        fh.write("2026-01-01T00:00:02.000Z   200  half a line")
    for _ in range(5):  # a small chunk size: it catches up over several calls
        tally.update()
    doc = tally.document()
    assert doc["lines"] == 3 and doc["complete"]
    assert {c["code"]: c["count"] for c in doc["codes"]} == {200: 1, 404: 1, -2: 1}
    assert doc["mimes"][0] == {"mime": "text/html", "count": 2, "bytes": 110}
    assert doc["hosts"] == [{"host": "h", "urls": 3, "bytes": 110, "failed": 1}]
    path.write_text(row.format(code=301, size=0, n=9, mime="text/html"))  # replaced: start over
    tally.update()
    assert [c["code"] for c in tally.document()["codes"]] == [301]
