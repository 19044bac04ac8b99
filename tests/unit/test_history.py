"""CrawlHistory: fetch and payload-digest history in LevelDB, with an imported earlier crawl."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from crawler import CrawlURI, RevisitInfo
from crawler.history import CrawlHistory, DigestHistoryEntry, FetchHistoryEntry

DIGEST = "sha1:" + "A" * 32
OTHER = "sha1:" + "B" * 32


def fetched(uri: str, digest: str | None = DIGEST, **headers: str) -> CrawlURI:
    curi = CrawlURI(uri, status=200, payload_digest=digest, fetch_start_ms=1_700_000_000_500)
    curi.response_headers = [(k.replace("_", "-"), v) for k, v in headers.items()]
    return curi


def test_fetch_history_round_trips_and_survives_reopening(tmp_path: Path) -> None:
    with CrawlHistory.open(tmp_path) as history:
        assert history.fetch_history("http://a/") is None
        curi = fetched("http://a/", ETag='"x"', Last_Modified="Tue, 14 Nov 2023 22:13:20 GMT")
        history.record_fetch(curi, "<urn:uuid:1>", "2023-11-14T22:13:20Z", "W.warc.gz", 42)
    assert (tmp_path / "history" / "CURRENT").is_file()
    with CrawlHistory.open(tmp_path) as history:
        assert history.fetch_history("http://a/") == FetchHistoryEntry(
            200,
            1_700_000_000.5,
            DIGEST,
            '"x"',
            "Tue, 14 Nov 2023 22:13:20 GMT",
            "<urn:uuid:1>",
            "2023-11-14T22:13:20Z",
            "W.warc.gz",
            42,
        )


def test_a_304_keeps_the_previous_digest_and_validators(tmp_path: Path) -> None:
    with CrawlHistory.open(tmp_path) as history:
        history.record_fetch(fetched("http://a/", ETag='"x"'), "<urn:uuid:1>", "d1")
        empty_body = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"
        not_modified = fetched("http://a/", digest=empty_body)
        not_modified.status = 304
        not_modified.revisit = RevisitInfo("server-not-modified", "http://a/", "d1")
        entry = history.record_fetch(not_modified, "<urn:uuid:1>", "d1")
        assert (entry.status, entry.payload_digest, entry.etag) == (304, DIGEST, '"x"')
        # A full response replaces validators: a stale ETag must not be sent again.
        changed = history.record_fetch(fetched("http://a/", digest=OTHER), "<urn:uuid:2>", "d2")
        assert (changed.payload_digest, changed.etag) == (OTHER, None)


def test_the_first_capture_of_a_digest_wins_and_captures_are_counted(tmp_path: Path) -> None:
    with CrawlHistory.open(tmp_path) as history:
        assert history.lookup_digest(DIGEST) is None
        history.record_digest(DIGEST, "http://a/", "d1", "<urn:uuid:1>", "W0", 10)
        history.record_digest(DIGEST, "http://b/", "d2", "<urn:uuid:2>", "W1", 20)
        assert history.lookup_digest(DIGEST) == DigestHistoryEntry(
            "http://a/", "d1", "<urn:uuid:1>", "W0", 10, 2
        )
        assert history.lookup_digest(OTHER) is None


def test_concurrent_captures_are_all_counted(tmp_path: Path) -> None:
    with CrawlHistory.open(tmp_path) as history:

        def work(n: int) -> None:
            for i in range(200):
                history.record_digest(DIGEST, f"http://t{n}/{i}", "d")

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        entry = history.lookup_digest(DIGEST)
        assert entry is not None and entry.count == 800


@pytest.mark.parametrize("where", ["run", "state", "db"])
def test_an_imported_crawl_is_read_but_never_written(tmp_path: Path, where: str) -> None:
    old_state = tmp_path / "old" / "state"
    with CrawlHistory.open(old_state) as old:
        old.record_fetch(fetched("http://a/", ETag='"v1"'), "<urn:uuid:old>", "d-old", "OLD", 5)
        old.record_digest(DIGEST, "http://a/", "d-old", "<urn:uuid:old>", "OLD", 5)
    source = {"run": old_state.parent, "state": old_state, "db": old_state / "history"}[where]
    with CrawlHistory.open(tmp_path / "new" / "state", import_from=source) as new:
        prev = new.fetch_history("http://a/")
        assert prev is not None and (prev.etag, prev.warc_filename) == ('"v1"', "OLD")
        new.record_digest(DIGEST, "http://b/", "d-new", "<urn:uuid:new>", "NEW", 7)
        entry = new.lookup_digest(DIGEST)
        assert entry is not None and (entry.uri, entry.warc_filename, entry.count) == (
            "http://a/",
            "OLD",
            2,
        )
        new.record_fetch(fetched("http://a/", digest=OTHER), "<urn:uuid:new>", "d-new")
        now = new.fetch_history("http://a/")
        assert now is not None and now.payload_digest == OTHER  # this run's entry shadows
    with CrawlHistory.open(old_state) as old:
        again = old.lookup_digest(DIGEST)
        assert again is not None and again.count == 1
        before = old.fetch_history("http://a/")
        assert before is not None and before.payload_digest == DIGEST


def test_bad_imports_fail_clearly(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no crawl history"):
        CrawlHistory.open(tmp_path / "new", import_from=tmp_path / "nowhere")
    CrawlHistory.open(tmp_path / "self").close()
    with pytest.raises(ValueError, match="own history"):
        CrawlHistory.open(tmp_path / "self", import_from=tmp_path / "self")


def test_close_is_idempotent_and_use_after_close_fails(tmp_path: Path) -> None:
    history = CrawlHistory.open(tmp_path)
    history.close()
    history.close()
    with pytest.raises(RuntimeError, match="closed"):
        history.fetch_history("http://a/")


def test_every_worker_of_a_workers_run_is_imported_from_a_snapshot(tmp_path: Path) -> None:
    run = tmp_path / "old"
    for worker, uri in (("w01", "http://a/"), ("w02", "http://b/")):
        with CrawlHistory.open(run / "workers" / worker / "state") as old:
            old.record_fetch(fetched(uri, ETag=f'"{worker}"'), f"<urn:{worker}>", "d", worker, 1)
    state = tmp_path / "new" / "state"
    with CrawlHistory.open(state, import_from=run) as new:
        a, b = new.fetch_history("http://a/"), new.fetch_history("http://b/")
        assert a is not None and b is not None and (a.etag, b.etag) == ('"w01"', '"w02"')
        assert new.imported_from == [
            run / "workers" / w / "state" / "history" for w in ("w01", "w02")
        ]
        # A second process (another worker of this recrawl) opens its own snapshot meanwhile.
        with CrawlHistory.open(tmp_path / "other" / "state", import_from=run) as other:
            assert other.fetch_history("http://b/") == b
    snapshots = sorted((state / "history-import").iterdir())
    assert [p.name for p in snapshots] == ["0", "1"]
    marker = (snapshots[0] / "IMPORTED-FROM").read_text()
    assert marker == str((run / "workers" / "w01" / "state" / "history").resolve())
    # A resumed crawl reuses its snapshots (they are not copied again).
    (snapshots[0] / "kept").write_text("")
    with CrawlHistory.open(state, import_from=run) as resumed:
        assert resumed.fetch_history("http://a/") == a
    assert (snapshots[0] / "kept").is_file()
    # ...even once the earlier run is gone (a new crawl importing nothing there still fails).
    shutil.rmtree(run)
    with CrawlHistory.open(state, import_from=run) as resumed:
        assert resumed.fetch_history("http://b/") == b
    with pytest.raises(FileNotFoundError, match="no crawl history"):
        CrawlHistory.open(tmp_path / "fresh" / "state", import_from=run)


def test_a_history_still_in_use_is_not_imported(tmp_path: Path) -> None:
    CrawlHistory.open(tmp_path / "old" / "state").close()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_OPEN, str(tmp_path / "old" / "state" / "history")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        with pytest.raises(ValueError, match="is in use"):
            CrawlHistory.open(tmp_path / "new", import_from=tmp_path / "old", lock_wait_s=0.2)
    finally:
        holder.kill()
        holder.wait()
    CrawlHistory.open(tmp_path / "new", import_from=tmp_path / "old").close()


HOLD_OPEN = """
import sys, time, plyvel
db = plyvel.DB(sys.argv[1])
print("open", flush=True)
time.sleep(60)
"""
