"""CDXJ indexes: what pywb reads, written per WARC, and bad WARCs never crash the indexer."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from warc_samples import write_warc

from crawler.archive.indexer import BackgroundIndexer, CdxjIndexer
from crawler.archive.run_index import index_run
from crawler.cli import main
from crawler.cli.commands.index import index_warcs


def _lines(index: Path) -> list[tuple[str, str, dict[str, str]]]:
    rows = []
    for line in index.read_text().splitlines():
        key, ts, data = line.split(" ", 2)
        rows.append((key, ts, json.loads(data)))
    return rows


def test_index_lists_every_response_sorted_with_offsets(tmp_path: Path) -> None:
    warc = tmp_path / "warcs" / "A.warc.gz"
    warc.parent.mkdir()
    urls = write_warc(warc, pages=5)
    result = CdxjIndexer().index(warc, tmp_path / "indexes")
    assert result.problem is None and result.records == 5
    rows = _lines(tmp_path / "indexes" / "A.warc.gz.cdxj")
    assert [r[0] for r in rows] == sorted(r[0] for r in rows)
    assert sorted(r[2]["url"] for r in rows) == urls
    assert rows[0][0].startswith("test,example)/page")
    data = warc.read_bytes()
    for _, ts, fields in rows:
        assert len(ts) == 14 and fields["status"] == "200" and fields["mime"] == "text/html"
        assert fields["filename"] == "A.warc.gz"
        start = int(fields["offset"])
        assert data[start : start + 2] == b"\x1f\x8b"  # a record's gzip member starts there


@pytest.mark.parametrize("gzip", [True, False])
def test_truncated_warc_is_indexed_to_its_last_whole_record(tmp_path: Path, gzip: bool) -> None:
    name = "B.warc.gz.open" if gzip else "B.warc.open"
    whole = tmp_path / "whole"
    write_warc(whole, pages=6, gzip=gzip)
    full = _lines(CdxjIndexer().index(whole, tmp_path / "full").index or Path())
    offsets = sorted(int(f["offset"]) for _, _, f in full)
    data = whole.read_bytes()
    warc = tmp_path / name
    warc.write_bytes(data[: offsets[3] + 40])  # cut inside the fourth response record
    result = CdxjIndexer().index(warc, tmp_path / "indexes")
    assert result.records == 3
    assert result.problem is not None and "cut short" in result.problem
    assert sorted(int(f["offset"]) for _, _, f in _lines(result.index or Path())) == offsets[:3]


def test_corrupt_warc_is_indexed_up_to_the_damage(tmp_path: Path) -> None:
    whole = tmp_path / "whole"
    write_warc(whole, pages=6)
    full = _lines(CdxjIndexer().index(whole, tmp_path / "full").index or Path())
    offsets = sorted(int(f["offset"]) for _, _, f in full)
    data = bytearray(whole.read_bytes())
    data[offsets[4] : offsets[4] + 30] = b"\x00" * 30
    warc = tmp_path / "C.warc.gz"
    warc.write_bytes(bytes(data))
    result = CdxjIndexer().index(warc, tmp_path / "indexes")
    assert result.problem is not None
    assert result.records == 4


def test_empty_and_unreadable_files_give_a_problem_not_a_crash(tmp_path: Path) -> None:
    empty = tmp_path / "E.warc.gz.open"
    empty.write_bytes(b"")
    result = CdxjIndexer().index(empty, tmp_path / "indexes")
    assert result.records == 0
    missing = CdxjIndexer().index(tmp_path / "gone.warc.gz", tmp_path / "indexes")
    assert missing.index is None and missing.problem and "cannot read" in missing.problem


def test_background_indexer_indexes_closed_files_and_drops_the_open_index(tmp_path: Path) -> None:
    indexes = tmp_path / "indexes"
    warc = tmp_path / "D.warc.gz"
    write_warc(warc, pages=2)
    indexes.mkdir()
    (indexes / "D.warc.gz.open.cdxj").write_text("")
    bg = BackgroundIndexer(indexes)
    bg.submit(warc)
    bg.close(timeout_s=60)
    assert [r.records for r in bg.results] == [2]
    assert sorted(p.name for p in indexes.iterdir()) == ["D.warc.gz.cdxj"]


def test_index_run_covers_workers_and_reports_orphans(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "warcs").mkdir(parents=True)
    (run / "workers" / "w01" / "warcs").mkdir(parents=True)
    write_warc(run / "warcs" / "M.warc.gz", pages=2)
    write_warc(run / "workers" / "w01" / "warcs" / "W.warc.gz", pages=3)
    (run / "indexes").mkdir()
    (run / "indexes" / "Gone.warc.gz.cdxj").write_text("")
    report = index_run(run)
    assert sorted(r.records for r in report.indexed) == [2, 3]
    assert (run / "workers" / "w01" / "indexes" / "W.warc.gz.cdxj").is_file()
    assert [p.name for p in report.orphans] == ["Gone.warc.gz.cdxj"]
    assert any("names a WARC that is gone" in line for line in report.problems)
    again = index_run(run)
    assert not again.indexed and len(again.up_to_date) == 2


def test_crawler_index_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    (run / "warcs").mkdir(parents=True)
    write_warc(run / "warcs" / "M.warc.gz", pages=2)
    (run / "warcs" / "T.warc.gz.open").write_bytes((run / "warcs" / "M.warc.gz").read_bytes()[:-30])
    assert main(["index", str(run)]) == 1
    captured = capsys.readouterr()
    assert "indexed 2 WARC file(s), 4 record(s)" in captured.out
    assert "T.warc.gz.open: cut short" in captured.err
    assert index_warcs(tmp_path / "nothing", False, *_streams()) == 2


def _streams() -> tuple[io.StringIO, io.StringIO]:

    return io.StringIO(), io.StringIO()
