"""The change report of a recrawl: a local site with validators is crawled, changed (a page
added, one changed, one removed, one no longer linked) and recrawled importing the first crawl's
history; reports/changes-report.txt and its JSON twin list each URI under new, changed,
unchanged or gone with per-host counts. A --workers crawl's report covers every worker's
history; a crawl that imports no history gets none; a missing earlier history is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.changing_site import ChangingSite
from support.recrawl_job import RecrawlJob, crawl_twice
from support.sample_crawl import crawl_sample_site

from crawler.cli import main
from crawler.continuity.change_report import (
    ChangeReportError,
    read_change_report,
    write_change_report,
)
from crawler.curi import CrawlURI
from crawler.history import CrawlHistory
from crawler.order.errors import OrderError

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def recrawl(tmp_path_factory: pytest.TempPathFactory) -> RecrawlJob:
    with ChangingSite() as site:
        return crawl_twice(site, tmp_path_factory.mktemp("changes") / "job")


def _uris(doc: dict[str, object], kind: str, base: str) -> dict[str, tuple[object, object]]:
    entries = doc[kind]
    assert isinstance(entries, list)
    return {e["uri"].removeprefix(base): (e["status"], e["earlier_status"]) for e in entries}


def test_the_recrawl_lists_new_changed_unchanged_and_gone_uris(recrawl: RecrawlJob) -> None:
    reports = recrawl.second / "reports"
    doc = json.loads((reports / "changes-report.json").read_text())
    base = recrawl.url
    assert doc["earlier"] == str(recrawl.first.resolve())
    assert _uris(doc, "new", base) == {"/e.html": (200, None)}
    assert _uris(doc, "changed", base) == {"/": (200, 200), "/b.html": (200, 200)}
    assert _uris(doc, "unchanged", base) == {
        "/a.html": (304, 200),  # the server said Not Modified
        "/robots.txt": (200, 200),  # no validators, the same payload digest
        "/favicon.ico": (404, 404),  # gone before, still gone
    }
    assert _uris(doc, "gone", base) == {"/c.html": (404, 200), "/d.html": (None, 200)}
    counts = {"new": 1, "changed": 2, "unchanged": 3, "gone": 2}
    assert doc["counts"] == counts
    assert doc["hosts"] == {base.removeprefix("http://"): counts}

    text = (reports / "changes-report.txt").read_text()
    for kind, n in counts.items():
        assert f"\n{kind}: {n}\n" in text
    assert f"  404   200 {base}/c.html\n" in text
    assert f"    -   200 {base}/d.html\n" in text
    assert f"  304   200 {base}/a.html\n" in text
    assert f"       1          2            3        2 {base.removeprefix('http://')}\n" in text
    log = (recrawl.second / "logs" / "crawler.jsonl").read_text()
    assert '"change_report_written"' in log


def test_the_first_crawl_gets_no_change_report(recrawl: RecrawlJob) -> None:
    assert not (recrawl.first / "reports" / "changes-report.txt").exists()
    assert write_change_report(recrawl.first) is None


def test_the_reader_gives_whole_counts_and_the_first_entries(recrawl: RecrawlJob) -> None:
    doc = read_change_report(recrawl.second / "reports", limit=1)
    assert doc is not None
    assert doc["counts"] == {"new": 1, "changed": 2, "unchanged": 3, "gone": 2}
    assert [len(doc[k]) for k in ("new", "changed", "unchanged", "gone")] == [1, 1, 1, 1]
    assert doc["changed"][0]["uri"] == recrawl.url + "/"  # URI order
    assert read_change_report(recrawl.first / "reports") is None
    (recrawl.first / "reports" / "changes-report.json").write_text('{"format": "other"}\n')
    with pytest.raises(ChangeReportError, match="not a change report"):
        read_change_report(recrawl.first / "reports")
    (recrawl.first / "reports" / "changes-report.json").unlink()


def test_an_earlier_crawl_without_history_is_named(tmp_path: Path) -> None:
    with ChangingSite() as site:
        site.set("/", "<html><body>home</body></html>")
        earlier = tmp_path / "earlier"
        crawl_sample_site(site, earlier, "history.enabled=false")  # type: ignore[arg-type]
        run = tmp_path / "run"
        # The crawl itself refuses to start: history.import_from is checked up front.
        with pytest.raises(OrderError, match=r"history\.import_from"):
            crawl_sample_site(  # type: ignore[arg-type]
                site, run, f"history.import_from={json.dumps(str(earlier))}"
            )
    with pytest.raises(ChangeReportError, match=rf"{earlier}.*no crawl history"):
        write_change_report(run)


def _history(state: Path, fetches: dict[str, tuple[int, str]], start_s: float) -> None:
    with CrawlHistory.open(state) as history:
        for n, (uri, (status, digest)) in enumerate(fetches.items()):
            curi = CrawlURI(uri)
            curi.status = status
            curi.payload_digest = digest
            curi.fetch_start_ms = int((start_s + n) * 1000)
            history.record_fetch(curi, None, None)


def test_a_workers_crawl_is_compared_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every worker keeps its own history: the report merges them (and the earlier crawl's)."""
    earlier, run = tmp_path / "earlier", tmp_path / "run"
    h = "http://h.test"
    a, b, c, other = f"{h}/a", f"{h}/b", f"{h}/c", "http://other.test/"
    _history(earlier / "workers" / "w01" / "state", {a: (200, "sha1:A")}, 0)
    _history(earlier / "workers" / "w02" / "state", {b: (200, "sha1:B"), c: (200, "sha1:C")}, 0)
    (earlier / "distributed.json").write_text("{}")
    _history(run / "workers" / "w01" / "state", {b: (200, "sha1:B"), c: (200, "sha1:C2")}, 100)
    _history(run / "workers" / "w02" / "state", {a: (304, "sha1:A"), other: (200, "sha1:O")}, 100)
    # A URI two workers fetched (one took over the other's) counts once, with its latest fetch.
    _history(run / "workers" / "w03" / "state", {c: (410, "sha1:G")}, 50)
    (run / "distributed.json").write_text("{}")
    for wdir in [*(run / "workers").iterdir(), *(earlier / "workers").iterdir()]:
        (wdir / "logs").mkdir()
    order = f"history:\n  import_from: {json.dumps(str(earlier / 'workers' / 'w01' / 'state'))}\n"
    (run / "workers" / "w01" / "order.effective.yaml").write_text(order)
    summary = write_change_report(run)
    assert summary is not None
    assert summary.earlier == earlier.resolve()  # the whole crawl, not the one worker named
    assert summary.counts == {"new": 1, "changed": 1, "unchanged": 2, "gone": 0}
    assert summary.hosts == {
        "h.test": {"new": 0, "changed": 1, "unchanged": 2, "gone": 0},
        "other.test": {"new": 1, "changed": 0, "unchanged": 0, "gone": 0},
    }
    doc = json.loads(summary.json_path.read_text())
    assert doc["changed"] == [{"uri": c, "status": 200, "earlier_status": 200}]
    # `crawler report` of the distributed run writes it too, with the crawl-wide reports.
    summary.json_path.unlink()
    assert main(["report", str(run)]) == 0
    out = capsys.readouterr().out
    assert f"changes since {earlier.resolve()}: 1 new, 1 changed, 2 unchanged, 0 gone" in out
    assert json.loads(summary.json_path.read_text()) == doc
