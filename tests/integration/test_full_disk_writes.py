"""Writes that hit a real full disk (a tmpfs of a few MiB filled by a ballast file) lose
nothing: each writer waits for space, and once the ballast is gone everything it was given is
in its file or database, and the file is valid throughout (no half record, no half line).

Skipped, with the reason, where a tmpfs cannot be mounted (it needs root; CI runs as root).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.crawl_process import wait_until
from support.small_fs import MIB, Ballast, small_fs
from warcio.archiveiterator import ArchiveIterator
from warcio.warcwriter import WARCWriter

from crawler.continuity import DigestEntry, LevelDBDigestIndex
from crawler.disk import SPACE_WAIT
from crawler.frontier import LevelDBQueueStore
from crawler.frontier.store.queue_store import StoreBatch
from crawler.history import CrawlHistory
from crawler.logs.line_file import LineFile
from crawler.uniq import (
    BloomUriUniqFilter,
    BloomUriUniqFilterParams,
    LevelDBUriUniqFilter,
    UniqStateError,
)
from processors.write.warc_files import WARCFileSet

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

WARCIO = Path(sys.executable).with_name("warcio")


@pytest.fixture
def fs(tmp_path: Path) -> Iterator[Path]:
    with small_fs(tmp_path / "fs", 8) as mount:
        yield mount


class Writer(threading.Thread):
    """Runs ``work`` in a thread, keeping its exception for the test."""

    def __init__(self, work: Callable[[], None]) -> None:
        super().__init__(daemon=True)
        self.work = work
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.work()
        except BaseException as exc:  # noqa: BLE001 - reported by finish()
            self.error = exc

    def finish(self) -> None:
        self.join(30)
        assert not self.is_alive(), "the writer never finished"
        assert self.error is None, repr(self.error)


def blocked_on_space(writer: Writer, waits_before: int) -> None:
    """The writer hit the full disk and waits (it did not fail, did not finish)."""
    wait_until(lambda: SPACE_WAIT.waits > waits_before or not writer.is_alive(), "the write blocks")
    assert writer.is_alive() and writer.error is None, repr(writer.error)
    assert SPACE_WAIT.waiting >= 1


# ------------------------------------------------------------------------- logs
def test_log_lines_the_disk_refuses_wait_in_memory_and_keep_their_order(fs: Path) -> None:
    ballast = Ballast(fs / "ballast")
    ballast.fill(leave_bytes=4096)
    log = LineFile(fs / "crawl.log")
    lines = [f"{i:05d} " + "x" * 90 for i in range(200)]  # 97 bytes each: 20 KB, 4 KB free
    for line in lines:
        log.write(line)
    assert log.waiting_lines > 0
    on_disk = (fs / "crawl.log").read_bytes()
    assert on_disk.endswith(b"\n"), "a half line stayed in the file"
    assert on_disk.decode().splitlines() == lines[: len(on_disk.splitlines())]

    assert log.flush() is False  # still no room
    ballast.remove()
    log.write("last")
    assert log.waiting_lines == 0
    log.close()
    assert (fs / "crawl.log").read_text().splitlines() == [*lines, "last"]


# ------------------------------------------------------------------------- WARC
def resource_record(n: int, size: int) -> bytes:
    buf = io.BytesIO()
    writer = WARCWriter(buf, gzip=True)
    record = writer.create_warc_record(
        f"http://example.test/{n}", "resource", payload=io.BytesIO(os.urandom(size))
    )
    writer.write_record(record)
    return buf.getvalue()


def test_a_warc_append_on_a_full_disk_waits_and_leaves_no_half_record(fs: Path) -> None:
    files = WARCFileSet(
        fs,
        prefix="T",
        template="{prefix}-{serial:05d}",
        compress=True,
        max_file_size_bytes=100 * MIB,
        warcinfo=lambda name: resource_record(-1, 10),
        now_s=time.time,
    )
    records = [resource_record(n, 300_000) for n in range(6)]  # incompressible: ~300 KB each
    ballast = Ballast(fs / "ballast")
    ballast.fill(leave_bytes=700_000)
    offsets: list[int] = []

    def append_all() -> None:
        for data in records:
            offsets.append(files.append(io.BytesIO(data), len(data))[1])

    waits = SPACE_WAIT.waits
    writer = Writer(append_all)
    writer.start()
    blocked_on_space(writer, waits)
    (path,) = fs.glob("*.warc.gz.open")
    written = len(offsets)
    assert 0 < written < len(records)
    # Cut back to the end of the last whole record: what is in the file reads cleanly.
    assert path.stat().st_size == offsets[-1] + len(records[written - 1])
    with path.open("rb") as fh:
        assert sum(1 for _ in ArchiveIterator(fh)) == 1 + written

    ballast.remove()
    writer.finish()
    files.close()
    (done,) = fs.glob("*.warc.gz")
    check = subprocess.run([str(WARCIO), "check", str(done)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    with done.open("rb") as fh:
        uris = [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(fh)]
    assert uris == ["http://example.test/-1", *(f"http://example.test/{n}" for n in range(6))]
    assert not list(fs.glob("*.invalid"))


# --------------------------------------------------------------------- LevelDB
def test_frontier_batches_on_a_full_disk_wait_and_survive_a_reopen(fs: Path) -> None:
    store = LevelDBQueueStore()
    store.open(fs / "state")
    value = os.urandom(1000)
    # One record a batch, as the frontier writes them: 4 MB in all, 1 MB free. LevelDB's log
    # goes on past a failed append misaligned; only a reopen makes later records survive.
    batches = [StoreBatch(puts=[(f"q{b}", i, value)]) for i in range(200) for b in range(20)]
    ballast = Ballast(fs / "ballast")
    ballast.fill(leave_bytes=MIB)

    def write_all() -> None:
        for batch in batches:
            store.write(batch)

    waits = SPACE_WAIT.waits
    writer = Writer(write_all)
    writer.start()
    blocked_on_space(writer, waits)
    ballast.remove()
    writer.finish()
    store.close()

    again = LevelDBQueueStore()
    again.open(fs / "state")
    for b in range(20):
        rows = again.head_many(f"q{b}", 1000)
        assert [key for key, _ in rows] == list(range(200)), f"queue q{b}"
        assert all(v == value for _, v in rows)
    again.close()


def test_uniq_filter_adds_on_a_full_disk_wait_and_survive_a_reopen(fs: Path) -> None:
    uniq = LevelDBUriUniqFilter()
    uniq.open(fs / "state")
    # 60,000 fingerprints in batches of 10: about 1.5 MB of LevelDB log for 0.5 MB free, all
    # in LevelDB's 4 MB memtable, so only its log (replayed on reopen) holds them.
    pages = [[f"http://a.test/{p}/{i}" for i in range(10)] for p in range(6_000)]
    ballast = Ballast(fs / "ballast")
    ballast.fill(leave_bytes=MIB // 2)

    def add_all() -> None:
        for page in pages:
            assert uniq.add_many(page) == [True] * len(page)

    waits = SPACE_WAIT.waits
    writer = Writer(add_all)
    writer.start()
    blocked_on_space(writer, waits)
    ballast.remove()
    writer.finish()
    uniq.close()

    again = LevelDBUriUniqFilter()
    again.open(fs / "state")
    assert again.count() == 60_000
    assert not any(again.add_many([u for page in pages for u in page]))
    again.close()


def test_history_writes_on_a_full_disk_wait_while_reads_go_on(fs: Path) -> None:
    history = CrawlHistory.open(fs / "state")
    history.record_digest("sha1:FIRST", "http://a.test/first", "2026-01-01T00:00:00Z")
    digests = [f"sha1:{i:032d}" for i in range(6000)]
    ballast = Ballast(fs / "ballast")
    ballast.fill(leave_bytes=MIB // 2)
    reads: list[bool] = []
    stop = threading.Event()

    def write_all() -> None:
        for i, digest in enumerate(digests):
            history.record_digest(digest, f"http://a.test/{i}/" + "y" * 200, "2026-01-01")

    def read_on() -> None:
        while not stop.is_set():
            reads.append(history.lookup_digest("sha1:FIRST") is not None)

    waits = SPACE_WAIT.waits
    writer, reader = Writer(write_all), Writer(read_on)
    writer.start()
    reader.start()
    blocked_on_space(writer, waits)
    ballast.remove()
    writer.finish()
    stop.set()
    reader.finish()
    assert reads and all(reads)
    history.close()

    again = CrawlHistory.open(fs / "state")
    missing = [d for d in digests if again.lookup_digest(d) is None]
    assert missing == []
    again.close()


def test_digest_index_adds_on_a_full_disk_wait_while_lookups_go_on(fs: Path) -> None:
    index = LevelDBDigestIndex(fs / "state" / "digest-index")
    first = DigestEntry("http://a.test/first", "2026-01-01T00:00:00Z")
    index.add("sha1:FIRST", first)
    digests = [f"sha1:{i:032d}" for i in range(6000)]
    ballast = Ballast(fs / "ballast")
    ballast.fill(leave_bytes=MIB // 2)
    reads: list[bool] = []
    stop = threading.Event()

    def add_all() -> None:
        for i, digest in enumerate(digests):
            index.add(digest, DigestEntry(f"http://a.test/{i}/" + "y" * 200, "2026-01-01"))

    def read_on() -> None:
        while not stop.is_set():
            reads.append(index.lookup("sha1:FIRST") == first)

    waits = SPACE_WAIT.waits
    writer, reader = Writer(add_all), Writer(read_on)
    writer.start()
    reader.start()
    blocked_on_space(writer, waits)
    ballast.remove()
    writer.finish()
    stop.set()
    reader.finish()
    assert reads and all(reads)
    index.close()

    with LevelDBDigestIndex(fs / "state" / "digest-index") as again:
        assert [d for d in digests if again.lookup(d) is None] == []


# ----------------------------------------------------------------------- Bloom
def test_a_bloom_filter_too_big_for_the_disk_is_refused_at_open(fs: Path) -> None:
    """Its pages are written through a shared mapping, where a full disk would be SIGBUS in
    the middle of the crawl: the whole file is allocated at open, so the error comes first."""
    params = BloomUriUniqFilterParams(expected_items=20_000_000, false_positive_rate=0.001)
    bloom = BloomUriUniqFilter(params)  # about 34 MiB of bits on an 8 MiB disk
    with pytest.raises(UniqStateError, match="No space left on device"):
        bloom.open(fs / "state")

    small = BloomUriUniqFilter(BloomUriUniqFilterParams(expected_items=1_000_000))
    small.open(fs / "small")
    bits = small.bits
    assert bits is not None
    path = bits.path
    assert path.stat().st_blocks * 512 >= path.stat().st_size  # allocated, not sparse
    assert small.add_many([f"http://a.test/{i}" for i in range(1000)]) == [True] * 1000
    small.close()
