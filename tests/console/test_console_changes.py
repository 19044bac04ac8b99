"""The console's change report of a recrawl: counts overall and per host, the first URIs of each
list, and the whole report's downloads (token-protected, names checked)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from support.console_runs import AUTH, MakeRun

from crawler.continuity.change_report import write_change_report
from crawler.curi import CrawlURI
from crawler.history import CrawlHistory

FIRST, SECOND = "20260101T000000Z", "20260102T000000Z"
H = "http://127.0.0.1:9"


def _history(run: Path, fetches: dict[str, tuple[int, str]]) -> None:
    with CrawlHistory.open(run / "state") as history:
        for uri, (status, digest) in fetches.items():
            curi = CrawlURI(uri)
            curi.status, curi.payload_digest = status, digest
            history.record_fetch(curi, None, None)


@pytest.fixture
def recrawl(make_run: MakeRun) -> Path:
    first, second = make_run(FIRST), make_run(SECOND)
    _history(
        first, {f"{H}/": (200, "sha1:A"), f"{H}/a": (200, "sha1:B"), f"{H}/b": (200, "sha1:C")}
    )
    _history(
        second, {f"{H}/": (200, "sha1:A2"), f"{H}/a": (304, "sha1:B"), f"{H}/c": (200, "sha1:D")}
    )
    (second / "order.effective.yaml").write_text(f"history:\n  import_from: {first / 'state'}\n")
    summary = write_change_report(second)
    assert summary is not None and summary.earlier == first.resolve()
    return second


def test_the_run_page_data_has_counts_hosts_and_the_first_uris(
    client: TestClient, recrawl: Path
) -> None:
    doc = client.get(f"/api/runs/site~{SECOND}/changes", params={"limit": 1}, headers=AUTH).json()
    report = doc["report"]
    counts = {"new": 1, "changed": 1, "unchanged": 1, "gone": 1}
    assert report["counts"] == counts
    assert report["hosts"] == {"127.0.0.1:9": counts}
    assert report["gone"] == [{"uri": f"{H}/b", "status": None, "earlier_status": 200}]
    assert report["unchanged"] == [{"uri": f"{H}/a", "status": 304, "earlier_status": 200}]
    assert doc["files"] == {
        name: f"/api/runs/site~{SECOND}/changes/{name}"
        for name in ("changes-report.txt", "changes-report.json")
    }
    text = client.get(doc["files"]["changes-report.txt"], headers=AUTH)
    assert text.status_code == 200 and f"  304   200 {H}/a\n" in text.text


def test_a_first_crawl_has_no_report_and_names_are_checked(
    client: TestClient, recrawl: Path
) -> None:
    doc = client.get(f"/api/runs/site~{FIRST}/changes", headers=AUTH).json()
    assert doc["report"] is None and doc["files"] == {}
    missing = client.get(f"/api/runs/site~{SECOND}/changes/crawl-report.txt", headers=AUTH)
    assert missing.status_code == 404
    assert client.get(f"/api/runs/site~{SECOND}/changes").status_code == 401
