"""WARCWriterProcessor with earlier collections (``ctx.collections``): revisits of them."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.processor_context import make_context
from support.warc_checks import fetched, records, warcio_check, warcs

from crawler.archive.cdxj_file import CdxjFileIndex
from crawler.archive.collection_set import CollectionSet, surt_urlkey
from crawler.continuity import DigestIndex, LevelDBDigestIndex
from crawler.history import CrawlHistory
from processors.write import WARCWriterParams, WARCWriterProcessor

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

BODY = b"<html>" + b"a page the earlier crawl captured " * 100 + b"</html>"
CHANGED = b"<html>" + b"a page that changed since " * 100 + b"</html>"


@pytest.fixture
def history(tmp_path: Path) -> Iterator[CrawlHistory]:
    db = CrawlHistory.open(tmp_path / "state")
    yield db
    db.close()


def old_index(tmp_path: Path, uri: str, digest: str) -> CollectionSet:
    fields = {"url": uri, "mime": "text/html", "status": "200", "digest": digest,
              "offset": "777", "length": "999", "filename": "OLD-00001.warc.gz"}  # fmt: skip
    line = f"{surt_urlkey(uri)} 20250102030405 {json.dumps(fields)}\n"
    path = tmp_path / "old.cdxj"
    path.write_text(line)
    return CollectionSet([CdxjFileIndex(path)])


def writer_for(
    tmp_path: Path,
    history: CrawlHistory | None,
    collections: CollectionSet,
    digests: DigestIndex | None = None,
    **params: object,
) -> WARCWriterProcessor:
    writer = WARCWriterProcessor("warc", WARCWriterParams.model_validate(params))
    ctx = make_context(tmp_path, history=history, digest_index=digests)
    writer.start(dataclasses.replace(ctx, collections=collections))
    return writer


def test_a_payload_an_earlier_collection_holds_for_the_uri_is_a_revisit_of_it(
    tmp_path: Path, history: CrawlHistory
) -> None:
    same, changed, copy = fetched(0, BODY), fetched(1, CHANGED), fetched(2, BODY)
    collections = old_index(tmp_path, same.uri, str(same.payload_digest))
    digests = LevelDBDigestIndex(tmp_path / "state" / "digest-index")
    writer = writer_for(tmp_path, history, collections, digests)
    for curi in (same, changed, copy):
        writer.process(curi)
    lines = writer.report()
    writer.stop()
    (path,) = warcs(tmp_path)
    warcio_check(path)
    recs = records(path)
    kinds = [r[0] for r in recs if r[0] in ("response", "revisit")]
    assert kinds == ["revisit", "response", "revisit"]
    h = recs[1][1]
    assert h["WARC-Type"] == "revisit"
    assert h["WARC-Profile"].endswith("/1.1/revisit/identical-payload-digest")
    assert h["WARC-Refers-To-Target-URI"] == same.uri
    assert h["WARC-Refers-To-Date"] == "2025-01-02T03:04:05Z"
    assert "WARC-Refers-To" not in h  # CDXJ indexes carry no record ids
    assert h["WARC-Payload-Digest"] == same.payload_digest
    assert h["WARC-Truncated"] == "length"
    assert "duplicate:digest" in same.annotations
    assert "duplicate:digest" not in changed.annotations
    # Another URI with the same payload, later in this crawl: a revisit of the same original
    # (URL-agnostic, through the digest index), not of this crawl's revisit.
    copy_revisit = next(r[1] for r in recs if r[1].get("WARC-Target-URI") == copy.uri)
    assert copy_revisit["WARC-Type"] == "revisit"
    assert copy_revisit["WARC-Refers-To-Target-URI"] == same.uri
    assert copy_revisit["WARC-Refers-To-Date"] == "2025-01-02T03:04:05Z"
    entry = history.fetch_history(same.uri)
    assert entry is not None and entry.warc_filename == "OLD-00001.warc.gz"
    assert entry.warc_offset == 777
    assert any("earlier collections: 2 lookups, 1 found" in line for line in lines)
    original = digests.lookup(str(same.payload_digest))
    assert original is not None and original.uri == same.uri
    assert original.warc_date == "2025-01-02T03:04:05Z" and original.warc_record_id is None
    digests.close()
    collections.close()


def test_without_history_or_with_dedup_off(tmp_path: Path) -> None:
    curi = fetched(0, BODY)
    collections = old_index(tmp_path, curi.uri, str(curi.payload_digest))
    writer = writer_for(tmp_path / "a", None, collections)  # no history: collections still work
    writer.process(curi)
    writer.stop()
    assert [r[0] for r in records(warcs(tmp_path / "a")[0])][1] == "revisit"
    off = fetched(0, BODY)
    writer = writer_for(tmp_path / "b", None, collections, dedup=False)
    writer.process(off)
    writer.stop()
    assert [r[0] for r in records(warcs(tmp_path / "b")[0])][1] == "response"
    small = writer_for(tmp_path / "c", None, collections, dedup_min_size_bytes=len(BODY) + 1)
    small.process(fetched(0, BODY))
    small.stop()
    assert [r[0] for r in records(warcs(tmp_path / "c")[0])][1] == "response"
    collections.close()
