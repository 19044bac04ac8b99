"""WARCWriterProcessor revisit records (identical payload, 304), dns: records and write errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.processor_context import make_context
from support.warc_checks import fetched, records, warcio_check, warcs

from crawler import CrawlURI, Recording, RevisitInfo
from crawler.continuity import DigestIndex, LevelDBDigestIndex
from crawler.history import CrawlHistory
from processors.write import WARCWriterParams, WARCWriterProcessor

pytestmark = pytest.mark.integration

BODY = b"<html>" + b"the same payload " * 300 + b"</html>"


@pytest.fixture
def history(tmp_path: Path) -> Iterator[CrawlHistory]:
    db = CrawlHistory.open(tmp_path / "state")
    yield db
    db.close()


@pytest.fixture
def digests(tmp_path: Path) -> Iterator[LevelDBDigestIndex]:
    with LevelDBDigestIndex(tmp_path / "state" / "digest-index") as index:
        yield index


def writer_for(
    tmp_path: Path,
    history: CrawlHistory | None,
    digests: DigestIndex | None = None,
    **params: object,
) -> WARCWriterProcessor:
    writer = WARCWriterProcessor("warc", WARCWriterParams.model_validate(params))
    writer.start(make_context(tmp_path, history=history, digest_index=digests))
    return writer


def only_warc(tmp_path: Path) -> Path:
    (path,) = warcs(tmp_path)
    warcio_check(path)
    return path


@pytest.mark.parametrize("version", ["1.1", "1.0"])
def test_a_payload_seen_before_becomes_a_headers_only_revisit(
    tmp_path: Path, history: CrawlHistory, digests: DigestIndex, version: str
) -> None:
    writer = writer_for(tmp_path, history, digests, warc_version=version)
    first, second, third = fetched(0, BODY), fetched(1, BODY), fetched(2, BODY)
    for curi in (first, second, third):
        writer.process(curi)
    writer.stop()
    recs = records(only_warc(tmp_path))
    assert [r[0] for r in recs] == ["warcinfo"] + ["response", "request", "metadata"] + [
        "revisit",
        "request",
        "metadata",
    ] * 2
    original, revisit = recs[1], recs[4]
    h = revisit[1]
    assert h["WARC-Profile"] == (
        f"http://netpreserve.org/warc/{version}/revisit/identical-payload-digest"
    )
    assert h["WARC-Target-URI"] == second.uri
    assert h["WARC-Refers-To-Target-URI"] == first.uri
    assert h["WARC-Refers-To-Date"] == original[1]["WARC-Date"]
    assert h["WARC-Refers-To"] == original[1]["WARC-Record-ID"]
    assert h["WARC-Payload-Digest"] == first.payload_digest
    assert h["WARC-Truncated"] == "length"
    assert h["WARC-IP-Address"] == "127.0.0.1"
    assert int(h["Content-Length"]) == len(second.recording.response_head)
    assert revisit[2] == b""  # warcio: headers-only revisit, no payload
    assert recs[5][1]["WARC-Concurrent-To"] == h["WARC-Record-ID"]
    assert recs[7][1]["WARC-Refers-To"] == original[1]["WARC-Record-ID"]  # never chained
    assert "duplicate:digest" in second.annotations
    assert "duplicate:digest" not in first.annotations
    assert second.revisit == RevisitInfo(
        "identical-payload-digest",
        first.uri,
        original[1]["WARC-Date"],
        original[1]["WARC-Record-ID"],
        first.payload_digest,
    )
    entry = digests.lookup(str(first.payload_digest))
    assert entry is not None and entry.uri == first.uri
    assert entry.warc_record_id == original[1]["WARC-Record-ID"]
    assert entry.warc_offset == first.extra_info["warcFileOffset"]
    fetch = history.fetch_history(second.uri)
    assert fetch is not None and fetch.warc_target_uri == first.uri
    assert fetch.warc_record_id == original[1]["WARC-Record-ID"]
    assert "revisit 2" in "\n".join(writer.report())


def test_revisit_extra_records_off_writes_the_revisit_alone(
    tmp_path: Path, history: CrawlHistory, digests: DigestIndex
) -> None:
    writer = writer_for(tmp_path, history, digests, revisit_extra_records=False)
    # A recrawl of the same URI: the revisit alone. Another URI with that payload: its own
    # request and metadata records still (its outlinks resolve against another base).
    for curi in (fetched(0, BODY), fetched(0, BODY), fetched(1, BODY)):
        writer.process(curi)
    writer.stop()
    kinds = [r[0] for r in records(only_warc(tmp_path))]
    first = ["warcinfo", "response", "request", "metadata"]
    assert kinds == [*first, "revisit", "revisit", "request", "metadata"]


def test_revisit_extra_records_on_writes_them_beside_a_recrawls_revisit(
    tmp_path: Path, history: CrawlHistory, digests: DigestIndex
) -> None:
    writer = writer_for(tmp_path, history, digests, revisit_extra_records=True)
    for curi in (fetched(0, BODY), fetched(0, BODY)):
        writer.process(curi)
    writer.stop()
    kinds = [r[0] for r in records(only_warc(tmp_path))]
    assert kinds == [
        "warcinfo",
        "response",
        "request",
        "metadata",
        "revisit",
        "request",
        "metadata",
    ]


def test_dedup_off_or_no_history_writes_full_responses(
    tmp_path: Path, history: CrawlHistory, digests: DigestIndex
) -> None:
    for run, hist, params in (("off", history, {"dedup": False}), ("none", None, {})):
        writer = writer_for(tmp_path / run, hist, digests if hist else None, **params)
        for n in range(3):
            writer.process(fetched(n, BODY))
        writer.stop()
        kinds = [r[0] for r in records(only_warc(tmp_path / run))]
        assert kinds.count("response") == 3 and "revisit" not in kinds


def test_truncated_and_small_payloads_are_written_in_full(
    tmp_path: Path, history: CrawlHistory, digests: DigestIndex
) -> None:
    writer = writer_for(tmp_path, history, digests, dedup_min_size_bytes=len(BODY) + 1)
    small = [fetched(0, BODY), fetched(1, BODY)]
    for curi in small:
        writer.process(curi)
    writer.stop()
    writer = writer_for(tmp_path / "b", history, digests)
    cut = [fetched(2, BODY[:100], truncated="lenTrunc"), fetched(3, BODY[:100], "lenTrunc")]
    for curi in cut:
        writer.process(curi)
    writer.stop()
    assert all(r[0] != "revisit" for r in records(only_warc(tmp_path)))
    assert all(r[0] != "revisit" for r in records(only_warc(tmp_path / "b")))
    assert digests.lookup(str(cut[0].payload_digest)) is None  # never an original
    entry = digests.lookup(str(small[0].payload_digest))
    assert entry is not None and entry.uri == small[0].uri


def test_skip_identical_digests_writes_nothing_for_a_duplicate(
    tmp_path: Path, history: CrawlHistory, digests: DigestIndex
) -> None:
    writer = writer_for(tmp_path, history, digests, skip_identical_digests=True)
    first, dup = fetched(0, BODY), fetched(1, BODY)
    writer.process(first)
    writer.process(dup)
    writer.stop()
    assert [r[0] for r in records(only_warc(tmp_path))].count("response") == 1
    assert "unwritten:identicalDigest" in dup.annotations and dup.extra_info == {}


def test_a_304_refers_to_where_the_payload_really_is(
    tmp_path: Path, history: CrawlHistory, digests: DigestIndex
) -> None:
    writer = writer_for(tmp_path, history, digests)
    original, dup = fetched(0, BODY), fetched(1, BODY)
    writer.process(original)
    writer.process(dup)  # deduplicated against p0
    prev = history.fetch_history(dup.uri)
    assert prev is not None
    rec = Recording()
    rec.request_head = b"GET /p1 HTTP/1.1\r\nIf-None-Match: x\r\n\r\n"
    rec.response_head = b"HTTP/1.1 304 Not Modified\r\n\r\n"
    not_modified = CrawlURI(dup.uri, status=304, http_status=304, recording=rec)
    # FetchHTTP only knows this URI's history entry, not which URI holds the payload.
    not_modified.revisit = RevisitInfo(
        "server-not-modified", dup.uri, str(prev.warc_date), prev.warc_record_id
    )
    writer.process(not_modified)
    writer.stop()
    recs = records(only_warc(tmp_path))
    revisit = recs[-3][1]
    assert revisit["WARC-Type"] == "revisit"
    assert revisit["WARC-Profile"].endswith("/1.1/revisit/server-not-modified")
    assert revisit["WARC-Refers-To-Target-URI"] == original.uri
    assert revisit["WARC-Refers-To"] == recs[1][1]["WARC-Record-ID"]
    assert revisit["WARC-Payload-Digest"] == original.payload_digest
    assert "WARC-Truncated" not in revisit
    assert "duplicate:server-not-modified" in not_modified.annotations
    after = history.fetch_history(dup.uri)
    assert after is not None and after.payload_digest == original.payload_digest


def test_dns_answer_is_a_text_dns_response(
    tmp_path: Path, history: CrawlHistory, digests: DigestIndex
) -> None:
    writer = writer_for(tmp_path, history, digests)
    rec = Recording()
    rec.write_body(b"20231114221320\nsite.example.\t300\tIN\tA\t127.0.0.1\n")
    dns = CrawlURI("dns:site.example", status=1, recording=rec, ip_address="10.0.0.53")
    dns.fetch_start_ms = 1_700_000_000_000
    writer.process(dns)
    writer.stop()
    recs = records(only_warc(tmp_path))
    assert [r[0] for r in recs] == ["warcinfo", "response"]
    headers, block = recs[1][1], recs[1][2]
    assert headers["Content-Type"] == "text/dns"
    assert headers["WARC-Target-URI"] == "dns:site.example"
    assert headers["WARC-IP-Address"] == "10.0.0.53"
    assert block == rec.body_bytes()
    assert dns.extra_info["warcFileOffset"] == recs[1][3]
    assert history.fetch_history(dns.uri) is None


def test_a_write_error_marks_the_file_invalid_and_the_next_uri_starts_a_new_one(
    tmp_path: Path,
) -> None:
    writer = writer_for(tmp_path, None)
    writer.process(fetched(0, BODY))
    (path,) = warcs(tmp_path)
    files = writer._files
    assert files is not None and files._file is not None
    files._file.close()  # the disk "fails": writes now raise OSError (ValueError is not one)
    broken = open(path, "rb")  # noqa: SIM115 - read-only handle: write() raises OSError
    files._file = broken
    failed = fetched(1, BODY)
    writer.process(failed)
    assert "unwritten:ioerror" in failed.annotations and failed.nonfatal_errors
    later = fetched(2, BODY)
    writer.process(later)
    writer.stop()
    names = sorted(p.name for p in warcs(tmp_path))
    assert len(names) == 2 and names[0].endswith(".warc.gz.invalid")
    assert later.extra_info["warcFilename"] == names[1]
    warcio_check(tmp_path / "warcs" / names[1])


def test_a_crawl_made_before_the_digest_index_is_still_deduplicated_against(
    tmp_path: Path,
) -> None:
    # An earlier crawl recorded its payloads in its history's digest table (no digest index).
    old_capture = ("http://old.example/p", "2025-01-01T00:00:00Z", "urn:uuid:old-record")
    earlier = CrawlHistory.open(tmp_path / "old" / "state")
    earlier.record_digest(str(fetched(0, BODY).payload_digest), *old_capture, "OLD.warc.gz", 9)
    earlier.close()
    run = tmp_path / "new"
    with (
        CrawlHistory.open(run / "state", import_from=tmp_path / "old") as history,
        LevelDBDigestIndex(run / "state" / "digest-index") as digests,
    ):
        writer = writer_for(run, history, digests)
        curi = fetched(5, BODY)
        writer.process(curi)
        writer.stop()
        revisit = records(only_warc(run))[1][1]
        assert revisit["WARC-Type"] == "revisit"
        assert (
            revisit["WARC-Refers-To-Target-URI"],
            revisit["WARC-Refers-To-Date"],
            revisit["WARC-Refers-To"],
        ) == old_capture
        # The old capture joins this run's index: the next crawl finds it there.
        found = digests.lookup(str(curi.payload_digest))
        assert found is not None and found.uri == old_capture[0]
        assert found.warc_filename == "OLD.warc.gz"
