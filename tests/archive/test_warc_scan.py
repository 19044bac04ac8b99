"""WarcScanner writes exactly the lines cdxj-indexer writes, on a real crawl's WARCs (responses,
revisits, redirects, 404s, images) and on warcio's own, and stops cleanly at damage."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from replay_support import crawl
from warc_samples import write_warc

from crawler.archive.indexer import _indexer_class
from crawler.archive.run_layout import all_warcs
from crawler.archive.warc_scan import WarcScanner
from crawler.demo import SampleSite


def _library_lines(warc: Path) -> list[str]:
    out = io.StringIO()
    _indexer_class()(out, [str(warc)], filename=warc.name).process_all()
    return sorted(out.getvalue().splitlines())


@pytest.mark.e2e
@pytest.mark.timeout(180)
def test_same_lines_as_cdxj_indexer_on_a_crawl_and_its_recrawl(tmp_path: Path) -> None:
    with SampleSite(pages_per_host=20) as site:
        crawl(site, tmp_path / "a")
        crawl(site, tmp_path / "b", f"history.import_from={tmp_path / 'a'}")
    warcs = all_warcs(tmp_path / "a") + all_warcs(tmp_path / "b")
    assert len(warcs) == 2
    kinds = set()
    for warc in warcs:
        result = WarcScanner().scan(warc, warc.name)
        assert result is not None and result.problem is None
        library = _library_lines(warc)
        assert sorted(result.lines) == library
        # the index the crawl wrote from its writer's entries, without reading the file
        written = (warc.parent.parent / "indexes" / (warc.name + ".cdxj")).read_text()
        assert written.splitlines() == library
        kinds |= {line.split('"mime": "', 1)[1].split('"', 1)[0] for line in result.lines}
    assert {"text/html", "warc/revisit", "image/png", "text/css"} <= kinds


def test_same_lines_on_warcio_written_files_and_none_for_uncompressed(tmp_path: Path) -> None:
    warc = tmp_path / "s.warc.gz"
    write_warc(warc, pages=4)
    result = WarcScanner().scan(warc, warc.name)
    assert result is not None and sorted(result.lines) == _library_lines(warc)
    plain = tmp_path / "s.warc"
    write_warc(plain, pages=2, gzip=False)
    assert WarcScanner().scan(plain, plain.name) is None  # left to cdxj-indexer


def test_a_cut_or_damaged_file_stops_at_the_last_whole_record(tmp_path: Path) -> None:
    warc = tmp_path / "s.warc.gz"
    write_warc(warc, pages=4)
    whole = WarcScanner().scan(warc, warc.name)
    assert whole is not None
    offsets = sorted(int(line.split('"offset": "')[1].split('"')[0]) for line in whole.lines)
    data = warc.read_bytes()
    cut = tmp_path / "cut.warc.gz.open"
    cut.write_bytes(data[: offsets[2] + 25])
    result = WarcScanner().scan(cut, cut.name)
    assert result is not None and len(result.lines) == 2 and result.whole_bytes == offsets[2]
    assert result.problem is not None and "cut short" in result.problem
    broken = bytearray(data)
    broken[offsets[3] + 12 : offsets[3] + 40] = b"\xff" * 28
    bad = tmp_path / "bad.warc.gz"
    bad.write_bytes(bytes(broken))
    result = WarcScanner().scan(bad, bad.name)
    assert result is not None and len(result.lines) == 3 and result.whole_bytes == offsets[3]
    assert result.problem is not None


class _Hosts:
    def __init__(self, urls: list[str]) -> None:
        self.base_urls = urls


@pytest.mark.e2e
@pytest.mark.timeout(180)
def test_dns_records_are_indexed_as_cdxj_indexer_does(tmp_path: Path) -> None:
    with SampleSite(pages_per_host=20) as site:
        by_name = _Hosts([u.replace("127.0.0.1", "localhost") for u in site.base_urls])
        crawl(by_name, tmp_path / "a")  # type: ignore[arg-type]  # only base_urls is read
    (warc,) = all_warcs(tmp_path / "a")
    library = _library_lines(warc)
    assert any(line.startswith("dns:localhost ") for line in library)
    result = WarcScanner().scan(warc, warc.name)
    assert result is not None and sorted(result.lines) == library
    written = (tmp_path / "a" / "indexes" / (warc.name + ".cdxj")).read_text()
    assert written.splitlines() == library
