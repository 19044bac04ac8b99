"""Lookups in earlier collections' index files: CdxjFileIndex, index line parsing, CollectionSet."""

from __future__ import annotations

import gzip
import json
import os
import random
from pathlib import Path

import pytest

from crawler.archive.cdxj_file import UNPACK_DIR, CdxjFileIndex, IndexFileError
from crawler.archive.collection_index import (
    digest_b32,
    parse_index_line,
    timestamp_to_warc_date,
)
from crawler.archive.collection_set import CollectionSet, CollectionSetError, surt_urlkey
from crawler.order.schema import DedupConfig

pytestmark = pytest.mark.timeout(60)

D1 = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA1"
D2 = "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB2"


def cdxj_line(url: str, ts: str, digest: str, mime: str = "text/html", offset: int = 0) -> str:
    fields = {
        "url": url,
        "mime": mime,
        "status": "200",
        "digest": f"sha1:{digest}",
        "length": "100",
        "offset": str(offset),
        "filename": "OLD.warc.gz",
    }
    return f"{surt_urlkey(url)} {ts} {json.dumps(fields)}\n"


def write_sorted(path: Path, lines: list[str]) -> Path:
    path.write_bytes(b"".join(sorted(line.encode() for line in lines)))
    return path


def test_finds_the_latest_capture_of_the_same_uri_with_the_same_digest(tmp_path: Path) -> None:
    lines = [
        cdxj_line("http://example.com/a", "20240101000000", D1, offset=10),
        cdxj_line("http://example.com/a", "20250101000000", D1, offset=20),
        cdxj_line("http://example.com/a", "20260101000000", D2, offset=30),  # changed since
        cdxj_line("http://example.com/a", "20260601000000", D1, "warc/revisit", 40),
        cdxj_line("http://example.com/ab", "20240101000000", D2, offset=50),  # key prefix of /a
        cdxj_line("http://example.com/", "20240101000000", D2, offset=60),
    ]
    index = CdxjFileIndex(write_sorted(tmp_path / "i.cdxj", lines))
    url = "http://example.com/a"
    found = index.find(url, surt_urlkey(url), D1)
    assert found is not None
    assert (found.url, found.timestamp, found.offset) == (url, "20250101000000", 20)
    assert found.filename == "OLD.warc.gz" and found.warc_date == "2025-01-01T00:00:00Z"
    latest = index.find(url, surt_urlkey(url), D2)
    assert latest is not None and latest.offset == 30
    assert index.find("http://example.com/ab", surt_urlkey("http://example.com/ab"), D1) is None
    assert index.find("http://example.com/zz", surt_urlkey("http://example.com/zz"), D1) is None
    index.close()
    index.close()


def test_every_line_of_a_large_random_index_is_found_and_nothing_else(tmp_path: Path) -> None:
    rng = random.Random(5)
    digests = {}
    lines = [" CDX-style header line sorts first\n", "!meta 0 {}\n"]
    for n in range(3000):
        url = f"http://h{rng.randrange(40)}.example/p/{n}?q={rng.randrange(9)}"
        digest = f"{n:032d}".replace("0", "A")
        digests[url] = digest
        lines.append(cdxj_line(url, f"2026{n % 10000:010d}", digest))
    index = CdxjFileIndex(write_sorted(tmp_path / "big.cdxj", lines))
    for url, digest in digests.items():
        found = index.find(url, surt_urlkey(url), digest)
        assert found is not None and found.url == url, url
        assert index.find(url, surt_urlkey(url), digest[::-1] + "X") is None
    assert index.find("http://a/", surt_urlkey("http://a/"), D1) is None  # before the first
    assert index.find("http://zzz/", surt_urlkey("http://zzz/"), D1) is None  # past the last


def test_the_surt_key_makes_www_and_query_order_the_same_uri(tmp_path: Path) -> None:
    line = cdxj_line("http://www.example.com/p?b=2&a=1", "20260101000000", D1)
    index = CdxjFileIndex(write_sorted(tmp_path / "i.cdxj", [line]))
    other_form = "http://example.com/p?a=1&b=2"
    found = index.find(other_form, surt_urlkey(other_form), D1)
    assert found is not None and found.url == "http://www.example.com/p?b=2&a=1"


def test_an_unsorted_index_is_refused_with_how_to_sort_it(tmp_path: Path) -> None:
    lines = [cdxj_line(f"http://example.com/{n}", "20260101000000", D1) for n in range(200)]
    path = tmp_path / "warc-order.cdxj"
    path.write_text("".join(sorted(lines, reverse=True)))
    with pytest.raises(IndexFileError, match=r"not sorted.*LC_ALL=C sort"):
        CdxjFileIndex(path)


def test_an_empty_or_missing_index(tmp_path: Path) -> None:
    empty = tmp_path / "empty.cdxj"
    empty.write_bytes(b"")
    assert CdxjFileIndex(empty).find("http://a/", "a)/", D1) is None
    with pytest.raises(IndexFileError, match="no such index file"):
        CdxjFileIndex.open(tmp_path / "nope.cdxj", tmp_path / "state")


def test_a_gzipped_index_is_unpacked_once_into_the_state_dir(tmp_path: Path) -> None:
    url = "http://example.com/x"
    plain = "".join(sorted([cdxj_line(url, "20260101000000", D1), cdxj_line("http://b/", "1", D2)]))
    source = tmp_path / "index.cdxj.gz"
    source.write_bytes(gzip.compress(plain.encode()))
    state = tmp_path / "state"
    index = CdxjFileIndex.open(source, state)
    assert index.name == str(source)
    found = index.find(url, surt_urlkey(url), D1)
    assert found is not None and found.source == str(source)
    index.close()
    (copy,) = [p for p in (state / UNPACK_DIR).iterdir() if p.suffix == ".cdxj"]
    made = copy.stat().st_mtime_ns
    CdxjFileIndex.open(source, state).close()
    assert copy.stat().st_mtime_ns == made  # reused
    source.write_bytes(gzip.compress(cdxj_line(url, "20270101000000", D1).encode()))
    os.utime(source, ns=(made + 10**9, made + 10**9))
    index = CdxjFileIndex.open(source, state)
    again = index.find(url, surt_urlkey(url), D1)
    assert again is not None and again.timestamp == "20270101000000"  # source changed: re-made
    index.close()
    broken = tmp_path / "broken.cdxj.gz"
    broken.write_bytes(gzip.compress(plain.encode())[:-20])
    with pytest.raises(IndexFileError, match="cannot read"):
        CdxjFileIndex.open(broken, state)


def test_several_indexes_are_merged_once_into_one_sorted_file(tmp_path: Path) -> None:
    urls = [f"http://example.com/{n}" for n in range(60)]
    run = tmp_path / "old-run"
    for part in range(3):  # one index per WARC, as `crawler index` writes them
        (run / "warcs").mkdir(parents=True, exist_ok=True)
        (run / "indexes").mkdir(exist_ok=True)
        lines = [cdxj_line(u, "20260101000000", D1) for u in urls[part::3]]
        target = run / "indexes" / f"WEB-{part}.warc.gz.cdxj"
        write_sorted(target, lines)
    gz = run / "indexes" / "WEB-2.warc.gz.cdxj"
    (run / "indexes" / "WEB-2.cdxj.gz").write_bytes(gzip.compress(gz.read_bytes()))
    gz.unlink()
    index = CdxjFileIndex.open(run, tmp_path / "state")
    assert index.name == str(run)
    assert all(index.find(u, surt_urlkey(u), D1) is not None for u in urls)
    index.close()
    (merged,) = (tmp_path / "state" / UNPACK_DIR).glob("*-merged.cdxj")
    assert merged.read_bytes().count(b"\n") == len(urls)
    empty = tmp_path / "empty-run"
    (empty / "warcs").mkdir(parents=True)
    with pytest.raises(IndexFileError, match="crawler index"):
        CdxjFileIndex.open(empty, tmp_path / "state")


def test_cdx11_and_cdxj_lines_and_digests() -> None:
    cdx11 = (
        "com,example)/ 20150914222034 http://example.com/ text/html 200 "
        "ZMSA5TNJUKKRYAIM5PRUJLL24DV7QYOO - - 83848 117273 WEB-1.warc.gz"
    )
    capture = parse_index_line(cdx11, "old")
    assert capture is not None
    assert (capture.url, capture.offset, capture.filename) == (
        "http://example.com/",
        117273,
        "WEB-1.warc.gz",
    )
    assert digest_b32(capture.digest) == digest_b32("sha1:zmsa5tnjukkryaim5prujll24dv7qyoo")
    assert parse_index_line(" CDX N b a m s k r M S V g", "old") is None
    assert parse_index_line("com,example)/ 2015 {not json", "old") is None
    revisit = cdxj_line("http://example.com/", "20150914222034", D1, "warc/revisit")
    assert parse_index_line(revisit.strip(), "old") is None
    assert timestamp_to_warc_date("20261122023750") == "2026-11-22T02:37:50Z"
    assert timestamp_to_warc_date("2026") == "2026-01-01T00:00:00Z"


def test_collection_set_asks_in_order_and_counts(tmp_path: Path) -> None:
    url = "http://example.com/a"
    first = write_sorted(tmp_path / "one.cdxj", [cdxj_line(url, "20240101000000", D1)])
    second = write_sorted(
        tmp_path / "two.cdxj",
        [cdxj_line(url, "20250101000000", D1), cdxj_line(url, "20250101000000", D2)],
    )
    config = DedupConfig.model_validate(
        {"collections": [{"cdxj": "one.cdxj"}, {"cdxj": str(second)}]}
    )
    collections = CollectionSet.open(config, tmp_path, tmp_path / "state")
    assert collections is not None
    hit = collections.lookup(url, f"sha1:{D1}")
    assert hit is not None and hit.source == str(first)  # the first collection answers
    hit = collections.lookup(url, f"sha1:{D2}")
    assert hit is not None and hit.source == str(second)
    assert collections.lookup(url, "sha1:" + "C" * 32) is None
    report = "\n".join(collections.report())
    assert "3 lookups, 2 found" in report and f"{first}: 1 found" in report
    collections.close()
    assert CollectionSet.open(DedupConfig(), tmp_path, tmp_path / "state") is None
    missing = DedupConfig.model_validate({"collections": [{"cdxj": "one.cdxj"}, {"cdxj": "x"}]})
    with pytest.raises(CollectionSetError) as info:
        CollectionSet.open(missing, tmp_path, tmp_path / "state")
    assert info.value.path == "dedup.collections[1].cdxj"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({}, "exactly one of cdxj"),
        ({"cdxj": "a", "cdx_server": "http://h/c/cdx"}, "exactly one of cdxj"),
        ({"cdx_server": "ftp://h/"}, "not an http"),
    ],
)
def test_a_collection_names_one_source(spec: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        DedupConfig.model_validate({"collections": [spec]})


class BrokenIndex:
    """An index whose lookups fail (a disk error, a bug): what cannot be made real here."""

    name = "broken"

    def find(self, url: str, urlkey: str, digest_b32: str) -> None:
        raise OSError("I/O error")

    def close(self) -> None:
        pass


def test_an_index_that_fails_is_skipped_with_one_alert(tmp_path: Path) -> None:
    from structlog.testing import capture_logs

    url = "http://example.com/a"
    good = CdxjFileIndex(write_sorted(tmp_path / "i.cdxj", [cdxj_line(url, "20250101000000", D1)]))
    collections = CollectionSet([BrokenIndex(), good])
    with capture_logs() as logs:
        for _ in range(3):
            found = collections.lookup(url, f"sha1:{D1}")
            assert found is not None and found.source == good.name
    assert [e["event"] for e in logs] == ["dedup_collection_lookup_failed"]
    assert "OSError: I/O error" in logs[0]["error"]
    assert "broken: 0 found, 3 lookups failed" in "\n".join(collections.report())
