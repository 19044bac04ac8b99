"""The WARC writer's index entries wait on disk while their file is written: the memory they
hold does not grow with the records, and they come back whole and in order for the index."""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from warc_samples import write_warc

from crawler.archive.entry_spool import EntrySpool
from crawler.archive.indexer import CdxjIndexer, LocatedEntry
from crawler.archive.method_query import MethodQuery
from crawler.archive.warc_scan import IndexEntry
from processors.write.warc_files import WARCFileSet


def _pair(i: int) -> tuple[int, LocatedEntry]:
    request = MethodQuery("POST", f"q={i}") if i % 1000 == 0 else None
    entry = IndexEntry(
        f"https://h{i % 97:05d}.web.test/p{i}.html",
        f"2026-11-27T18:{i % 60:02d}:00Z",
        "response",
        "application/http; msgtype=response",
        "200",
        "text/html",
        f"sha1:{i:032d}",
        request,
    )
    return i * 731, LocatedEntry(0, 731, entry)


@pytest.mark.timeout(60)
def test_entries_come_back_in_order_and_hold_no_memory_per_entry(tmp_path: Path) -> None:
    spool: EntrySpool[LocatedEntry] = EntrySpool(tmp_path)
    count = 10_000
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(count):
            spool.append(*_pair(i))
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # Kept as tuples these entries held ~6 MB until the file closed; the spool keeps a buffer.
    assert grown < 512 * 1024, grown
    assert len(spool) == count and spool.disk_bytes() > count * 100
    assert list(spool) == [_pair(i) for i in range(count)]
    spool.append(*_pair(count))  # appends go on after a read
    assert list(spool)[-2:] == [_pair(count - 1), _pair(count)]
    assert list(tmp_path.iterdir()) == []  # no name in the directory
    spool.close()
    spool.close()
    with pytest.raises(ValueError, match="closed"):
        list(spool)


@pytest.mark.timeout(60)
def test_each_closed_file_hands_over_the_entries_of_its_appends(tmp_path: Path) -> None:
    closed: list[tuple[str, list[tuple[int, Any]]]] = []

    def on_closed(path: Path, spool: EntrySpool[Any] | None) -> None:
        assert spool is not None
        closed.append((path.name, list(spool)))
        spool.close()

    files = WARCFileSet(
        tmp_path,
        prefix="T",
        template="{prefix}-{serial:05d}",
        compress=False,
        max_file_size_bytes=10_000,
        warcinfo=lambda name: b"WARC/1.1\r\n\r\n",
        now_s=lambda: 1_800_000_000.0,
        on_closed=on_closed,
    )
    record = b"x" * 3000
    placed = []
    for i in range(7):
        name, offset = files.append(_Spool(record), len(record), entry=_pair(i)[1])
        placed.append((name, offset))
    files.close()
    assert [name for name, _ in closed] == ["T-00000.warc", "T-00001.warc"]
    got = [(name, offset, entry) for name, pairs in closed for offset, entry in pairs]
    assert got == [(n, o, _pair(i)[1]) for i, (n, o) in enumerate(placed)]
    assert sorted(p.name for p in tmp_path.iterdir()) == [name for name, _ in closed]


class _Spool:
    """A record spool as the writer hands it over (a file-like object read in chunks)."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def read(self, size: int = -1) -> bytes:
        data, self._data = self._data, b""
        return data

    def seek(self, pos: int) -> None:
        raise AssertionError("not asked for without a full disk")


class _UnreadableSpool:
    """Entries on a disk that fails when they are read back."""

    def __iter__(self) -> Any:
        raise OSError(5, "Input/output error")


@pytest.mark.timeout(60)
def test_entries_that_cannot_be_read_back_leave_the_index_to_a_read_of_the_file(
    tmp_path: Path,
) -> None:
    warc = tmp_path / "S.warc.gz"
    urls = write_warc(warc, pages=4)
    result = CdxjIndexer().index(warc, tmp_path / "indexes", _UnreadableSpool())
    assert result.problem is None and result.records == 4
    lines = (tmp_path / "indexes" / "S.warc.gz.cdxj").read_text().splitlines()
    assert sorted(line.split('"url": "', 1)[1].split('"', 1)[0] for line in lines) == urls
