"""Recrawls of the sample site served with validators (ETag, Last-Modified, 304 on a match),
importing the first crawl's history: an unchanged site is reached in full again through 304s,
a changed one yields its new pages, stores its changed pages in full and logs removed ones."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from recrawl_support import (
    HERITRIX_304,
    NOT_MODIFIED,
    REVISIT_304,
    crawl_log,
    not_modified,
    reached,
    warc_bytes,
    warc_records,
)
from support.sample_crawl import crawl_sample_site
from warcio.archiveiterator import ArchiveIterator

from crawler.demo import SampleSite

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def crawl(site: SampleSite, run_dir: Path, *extra: str) -> None:
    crawl_sample_site(site, run_dir, "toe_threads=4", *extra)


def recrawl(site: SampleSite, first: Path, run_dir: Path, *extra: str) -> None:
    crawl(site, run_dir, f"history.import_from={str(first)!r}", *extra)


def test_an_unchanged_site_is_reached_again_through_304s(tmp_path: Path) -> None:
    with SampleSite(ports=(0, 0), pages_per_host=30, validators=True) as site:
        first, second = tmp_path / "first", tmp_path / "second"
        crawl(site, first)
        expected = site.expected_urls()
        assert expected <= reached(first)
        site.clear_log()
        recrawl(site, first, second)
        statuses = Counter(entry.status for entry in site.request_log)
    assert reached(second) == reached(first)
    before, after = crawl_log(first), crawl_log(second)
    # Every page the first crawl got with a 200 (robots.txt aside: never conditional) was
    # asked conditionally and answered 304, and still led to the same pages by the same hops.
    ok = {u for u, line in before.items() if line.status == 200 and "robots.txt" not in u}
    assert ok and not_modified(second) == ok
    assert statuses[304] == len(ok)
    # Reached the same way: by a link (L) or as an embed (E). Which page of the two crawls found
    # a URL first (so its whole hop path, L or LL) depends on how 4 threads interleave.
    assert {u: line.hops[-1:] for u, line in after.items()} == {
        u: line.hops[-1:] for u, line in before.items()
    }
    for uri in ok:
        line = after[uri]
        assert (line.status, line.size) == (304, 0), uri
        assert line.mime == before[uri].mime, uri  # the stored response's type, freshened
    # CSS url(), script and image embeds were found through the stored payloads too.
    assert {line.mime for u, line in after.items() if u in ok} >= {"text/html", "text/css"}
    # A 304 is a revisit (the stored head freshened by the 304's), never the payload again.
    records = warc_records(second)
    revisits = {
        h["WARC-Target-URI"]
        for k, h in records
        if k == "revisit"
        and h["WARC-Profile"] == REVISIT_304
        and after[h["WARC-Target-URI"]].status == 304
    }
    responses = {h["WARC-Target-URI"] for k, h in records if k == "response"}
    assert revisits == ok
    assert not responses & ok
    # A revisit of the URI's own earlier capture is written alone (revisit_extra_records off):
    # the original's metadata record already lists the outlinks. (A URI whose payload another
    # URI holds, as the second host's copy of the stylesheet, keeps them.)
    own = {h["WARC-Target-URI"] for k, h in warc_records(first) if k == "response"} & ok
    extras = {h["WARC-Target-URI"] for k, h in records if k in ("request", "metadata")}
    assert own and not extras & own
    assert warc_bytes(second) <= warc_bytes(first) // 5


def test_a_changed_site_yields_new_pages_full_changes_and_404s(tmp_path: Path) -> None:
    with SampleSite(ports=(0,), pages_per_host=40, validators=True) as site:
        first, second = tmp_path / "first", tmp_path / "second"
        crawl(site, first)
        before = crawl_log(first)
        origin = site.content.origins[0]
        pages = sorted(
            u
            for u, line in before.items()
            if line.status == 200 and line.mime == "text/html" and u != origin + "/"
        )
        changed, removed = pages[:2], pages[-1]
        new = [f"{origin}/new/page-{n}.html" for n in range(10)]
        for n, url in enumerate(changed):
            old = site.content.hosts[origin][url[len(origin) :]].body
            links = "".join(f'<a href="{u}">new</a>' for u in new[n * 5 : n * 5 + 5])
            site.change(url, old.replace(b"</body>", links.encode() + b"</body>"))
        for url in new:
            site.add(url, f"<html><body><h1>{url}</h1></body></html>".encode())
        site.remove(removed)
        recrawl(site, first, second)
    after = crawl_log(second)
    assert reached(second) == reached(first) | set(new)
    for url in new:
        assert after[url].status == 200 and after[url].hops.endswith("L"), url
    for url in changed:
        assert after[url].status == 200 and NOT_MODIFIED not in after[url].annotations
    assert after[removed].status == 404
    unchanged = {
        u
        for u, line in before.items()
        if line.status == 200 and "robots.txt" not in u and u not in [*changed, removed]
    }
    assert not_modified(second) == unchanged
    records = warc_records(second)
    responses = {h["WARC-Target-URI"] for k, h in records if k == "response"}
    assert set(changed) | set(new) <= responses
    assert not responses & unchanged


def test_a_third_crawl_reads_payloads_stored_two_crawls_back(tmp_path: Path) -> None:
    # The second crawl's 304 revisits name the first crawl's records; the third crawl imports
    # only the second, and finds the first through the second's import.
    with SampleSite(ports=(0,), pages_per_host=25, validators=True) as site:
        runs = [tmp_path / "first", tmp_path / "second", tmp_path / "third"]
        crawl(site, runs[0])
        recrawl(site, runs[0], runs[1])
        recrawl(site, runs[1], runs[2])
    assert reached(runs[2]) == reached(runs[1]) == reached(runs[0])
    assert not_modified(runs[2]) == not_modified(runs[1])
    notes = {note for line in crawl_log(runs[2]).values() for note in line.annotations}
    assert not any(note.startswith("earlierPayload:") for note in notes)


def test_a_304_revisit_holds_the_stored_head_and_heritrix_s_profile_is_an_option(
    tmp_path: Path,
) -> None:
    with SampleSite(ports=(0,), pages_per_host=30, validators=True) as site:
        first, second, third = tmp_path / "first", tmp_path / "second", tmp_path / "third"
        crawl(site, first)
        recrawl(site, first, second)
        recrawl(
            site, first, third, "chains.write.warc_writer.params.not_modified_revisit="
            "server-not-modified",
        )  # fmt: skip
    originals = {
        h["WARC-Target-URI"]: h for k, h in warc_records(first) if k == "response"
    }  # fmt: skip
    home = site.base_urls[0]
    # Default: an identical-payload-digest revisit of the first capture, its head the stored
    # 200 freshened by the 304's, so replay shows the page.
    revisit = next(
        (h, block) for k, h, block in _records_with_blocks(second)
        if k == "revisit" and h["WARC-Target-URI"] == home
    )  # fmt: skip
    assert revisit[0]["WARC-Profile"] == REVISIT_304
    assert revisit[0]["WARC-Payload-Digest"] == originals[home]["WARC-Payload-Digest"]
    assert revisit[0]["WARC-Refers-To"] == originals[home]["WARC-Record-ID"]
    assert revisit[1].startswith(b"HTTP/1.1 200 OK\r\n") and b"ETag" in revisit[1]
    assert NOT_MODIFIED in crawl_log(second)[home].annotations
    # As Heritrix: a server-not-modified revisit of the 304 head.
    heritrix = next(
        (h, block) for k, h, block in _records_with_blocks(third)
        if k == "revisit" and h["WARC-Target-URI"] == home
    )  # fmt: skip
    assert heritrix[0]["WARC-Profile"] == HERITRIX_304
    assert heritrix[1].startswith(b"HTTP/1.1 304")


def _records_with_blocks(run_dir: Path) -> list[tuple[str, dict[str, str], bytes]]:
    out = []
    for path in sorted(run_dir.glob("warcs/*.warc.gz")):
        with path.open("rb") as fh:
            for record in ArchiveIterator(fh):
                block = record.http_headers.to_bytes() if record.http_headers else b""
                out.append((record.rec_type, dict(record.rec_headers.headers), block))
    return out
