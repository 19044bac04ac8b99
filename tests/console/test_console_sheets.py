"""The console's sheets endpoints: the sheets in force, and a change checked against the run's
effective order before it is dropped into the run's action directory as a ``*.sheets`` file."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from fastapi.testclient import TestClient
from support.console_runs import AUTH, MakeRun

from crawler.order.loader import effective_yaml, load_order
from crawler.sheets.sheet_updates import read_sheet_document

ROOT = Path(__file__).resolve().parents[2]
RUN = "site~20260101T000000Z"

pytestmark = pytest.mark.timeout(60)

SLOW = {
    "name": "slow",
    "hosts": ["example.org"],
    "settings": {"frontier.politeness.min_delay_ms": 10000},
}


def with_order(run: Path) -> Path:
    order = load_order(ROOT / "jobs" / "example" / "order.yaml")
    (run / "order.effective.yaml").write_text(effective_yaml(order))
    return run


def test_a_valid_change_becomes_a_sheets_action_file(client: TestClient, make_run: MakeRun) -> None:
    run = with_order(make_run(state="RUNNING"))
    url = f"/api/runs/{RUN}/sheets"
    assert client.get(url, headers=AUTH).json() == {"sheets": []}
    ok = client.post(url, headers=AUTH, json={"sheets": [SLOW], "remove": ["old"]})
    assert ok.status_code == 202, ok.text
    written = (run / "action" / ok.json()["action"]).read_text()
    sheets, removals = read_sheet_document(written, "x")
    assert [s.name for s in sheets] == ["slow"] and removals == ["old"]
    (run / "sheets.yaml").write_text(yaml.safe_dump({"sheets": [SLOW]}))
    assert client.get(url, headers=AUTH).json()["sheets"][0]["name"] == "slow"


def test_an_invalid_change_is_refused_with_its_paths(client: TestClient, make_run: MakeRun) -> None:
    run = with_order(make_run(state="RUNNING"))
    url = f"/api/runs/{RUN}/sheets"
    typo = {**SLOW, "settings": {"chains.fetch.fetch_http.params.timout_s": 5}}
    bad = client.post(url, headers=AUTH, json={"sheets": [typo]})
    assert bad.status_code == 422
    issue = bad.json()["issues"][0]
    assert issue["path"] == "body: sheets[0].settings.chains.fetch.fetch_http.params.timout_s"
    assert "did you mean 'timeout_s'?" in issue["message"]
    assert not list((run / "action").glob("*.sheets"))


def test_a_run_without_an_effective_order_is_refused(client: TestClient, make_run: MakeRun) -> None:
    make_run(state="RUNNING")
    response = client.post(f"/api/runs/{RUN}/sheets", headers=AUTH, json={"sheets": [SLOW]})
    assert response.status_code == 409
