"""The console's REST API, in process (FastAPI's TestClient) on run directories shaped like a
crawl's: every endpoint, token and origin checks, bad bodies, and path traversal attempts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from support.console_runs import AUTH, DEAD_PID, TOKEN, MakeRun

RUN = "site~20260101T000000Z"


def test_every_api_endpoint_needs_the_token(client: TestClient, make_run: MakeRun) -> None:
    run = make_run(state="RUNNING")
    schema = client.get("/api/openapi.json", headers=AUTH).json()
    calls = []
    for path, methods in schema["paths"].items():
        concrete = path.replace("{job}", "site").replace("{run_id}", RUN)
        concrete = concrete.replace("{name}", "crawl.log")
        calls += [(method.upper(), concrete) for method in methods]
    assert len(calls) >= 17
    for method, path in [*calls, ("GET", "/api/openapi.json"), ("GET", "/api/nowhere")]:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
            response = client.request(method, path, headers=headers, json={})
            assert response.status_code == 401, (method, path, headers)
            assert "token" in response.json()["message"]
            assert response.headers["www-authenticate"].startswith("Bearer")
    assert not list((run / "action").iterdir())  # nothing was done


def test_pages_redirect_to_login_and_login_sets_an_httponly_strict_cookie(
    client: TestClient,
) -> None:
    page = client.get("/", follow_redirects=False)
    assert page.status_code == 303 and page.headers["location"] == "/login"
    assert client.get("/login").status_code == 200
    assert client.get("/static/run.js").status_code == 200  # assets hold no data
    wrong = client.post("/login", data={"token": "nope"}, follow_redirects=False)
    assert wrong.status_code == 401 and "Wrong token" in wrong.text
    assert client.get("/api/jobs").status_code == 401
    ok = client.post("/login", data={"token": TOKEN}, follow_redirects=False)
    assert ok.status_code == 303
    cookie = ok.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    assert client.get("/api/jobs").status_code == 200  # the cookie now authenticates
    assert client.get("/").status_code == 200
    client.post("/logout")
    assert client.get("/api/jobs").status_code == 401


def test_login_link_with_the_token(client: TestClient) -> None:
    assert client.get("/login?token=bad", follow_redirects=False).status_code == 401
    response = client.get(f"/login?token={TOKEN}", follow_redirects=False)
    assert response.status_code == 303 and "crawler_console=" in response.headers["set-cookie"]


def test_state_changing_requests_from_another_origin_are_refused(
    client: TestClient, make_run: MakeRun
) -> None:
    run = make_run(state="RUNNING")
    for headers in (
        {"Origin": "http://evil.example"},
        {"Origin": "http://127.0.0.1:9999"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
    ):
        response = client.post(f"/api/runs/{RUN}/pause", headers={**AUTH, **headers})
        assert response.status_code == 403, headers
        assert "refused" in response.json()["message"]
    assert not list((run / "action").glob("*.pause"))
    same = {**AUTH, "Origin": "http://127.0.0.1:8443", "Sec-Fetch-Site": "same-origin"}
    assert client.post(f"/api/runs/{RUN}/pause", headers=same).status_code == 202
    assert client.get(f"/api/runs/{RUN}", headers={**AUTH, "Origin": "http://x"}).is_success


def test_responses_carry_security_headers(client: TestClient) -> None:
    response = client.get("/login")
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert response.headers["x-content-type-options"] == "nosniff"
    assert client.get("/api/jobs", headers=AUTH).headers["cache-control"] == "no-store"


def test_openapi_document_describes_the_api(client: TestClient) -> None:
    doc = client.get("/api/openapi.json", headers=AUTH).json()
    assert doc["openapi"].startswith("3.")
    paths = doc["paths"]
    for path in ("/api/jobs", "/api/runs/{run_id}", "/api/runs/{run_id}/pause"):
        assert path in paths
    assert "BlockBody" in doc["components"]["schemas"]
    assert doc["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"


def test_jobs_list_their_runs_and_orders(client: TestClient, make_run: MakeRun) -> None:
    make_run()
    make_run("20260102T000000Z", state="RUNNING")
    make_run("20260103T000000Z", state="RUNNING", pid=DEAD_PID)
    data = client.get("/api/jobs", headers=AUTH).json()
    (job,) = data["jobs"]
    assert job["name"] == "site" and job["has_order"]
    assert "demo site" in job["description"]
    names = [r["name"] for r in job["runs"]]
    assert names == ["20260103T000000Z", "20260102T000000Z", "20260101T000000Z"]
    assert [r["state"] for r in job["runs"]] == ["DIED", "RUNNING", "FINISHED"]
    one = client.get("/api/jobs/site", headers=AUTH).json()
    assert "contact_url" in one["order_text"]
    runs = client.get("/api/runs", headers=AUTH).json()["runs"]
    assert len(runs) == 3 and runs[-1]["id"] == RUN


def test_unknown_and_malformed_jobs(client: TestClient) -> None:
    missing = client.get("/api/jobs/nope", headers=AUTH)
    assert missing.status_code == 404 and "nope" in missing.json()["message"]
    for bad in (".hidden", "a b", "%2e%2e", "..%5c..%5cwindows", "a%00b"):
        response = client.get(f"/api/jobs/{bad}", headers=AUTH)
        assert response.status_code == 400, bad
        assert "invalid job name" in response.json()["message"]


def test_validate_reports_every_issue_by_yaml_path(client: TestClient) -> None:
    ok = client.post("/api/jobs/site/validate", headers=AUTH, json={"sets": ["toe_threads=2"]})
    assert ok.status_code == 200 and ok.json()["valid"] is True
    bad = client.post(
        "/api/jobs/site/validate",
        headers=AUTH,
        json={"sets": ["toe_threads=abc", "frontier.nope=1"]},
    ).json()
    assert bad["valid"] is False
    paths = {issue["path"] for issue in bad["issues"]}
    assert paths == {"toe_threads", "frontier"}
    assert any("nope" in issue["message"] for issue in bad["issues"])


def test_launch_refuses_an_invalid_order_without_starting_anything(
    client: TestClient, jobs_dir: Path
) -> None:
    response = client.post(
        "/api/jobs/site/launch", headers=AUTH, json={"sets": ["operator.contact_url=null"]}
    )
    assert response.status_code == 422
    body = response.json()
    assert body["message"].startswith("invalid crawl order")
    assert body["issues"][0]["path"] == "operator.contact_url"
    assert not (jobs_dir / "site" / "runs").exists()


@pytest.mark.parametrize(
    "body",
    [{"sets": "toe_threads=2"}, {"sets": [1, 2]}, {"overrides": []}, {"sets": ["x"] * 201}],
)
def test_launch_body_is_validated(client: TestClient, body: object) -> None:
    response = client.post("/api/jobs/site/launch", headers=AUTH, json=body)
    assert response.status_code == 422
    assert response.json()["message"].startswith("invalid request: body")


def test_run_shows_status_and_tallies_of_crawl_log(client: TestClient, make_run: MakeRun) -> None:
    make_run(state="RUNNING")
    run = client.get(f"/api/runs/{RUN}", headers=AUTH).json()
    assert run["state"] == "RUNNING" and run["running"] is True
    assert run["status"]["downloaded"] == 3 and "processors" not in run["status"]
    assert run["progress"] == pytest.approx(0.4)
    codes = {c["code"]: c["count"] for c in run["tally"]["codes"]}
    assert codes == {200: 2, 404: 1, -2: 1}
    mimes = {m["mime"]: (m["count"], m["bytes"]) for m in run["tally"]["mimes"]}
    assert mimes["text/html"] == (2, 4555) and mimes["no-type"] == (1, 0)


def test_run_whose_crawl_died_and_run_without_status(client: TestClient, make_run: MakeRun) -> None:
    make_run(state="RUNNING", pid=DEAD_PID)
    doc = client.get(f"/api/runs/{RUN}", headers=AUTH).json()
    assert doc["state"] == "DIED" and doc["running"] is False
    empty = make_run("20260103T000000Z")
    (empty / "status.json").unlink()
    doc = client.get("/api/runs/site~20260103T000000Z", headers=AUTH).json()
    assert doc["state"] == "UNKNOWN" and doc["status"] is None and doc["progress"] is None


def test_unknown_and_malformed_run_ids(client: TestClient, make_run: MakeRun) -> None:
    make_run()
    assert client.get("/api/runs/site~19990101T000000Z", headers=AUTH).status_code == 404
    assert client.get("/api/runs/other~x", headers=AUTH).status_code == 404
    for bad in ("site", "site~..", "..~20260101T000000Z", "site~.hidden", "site~a%2F..%2F.."):
        assert client.get(f"/api/runs/{bad}", headers=AUTH).status_code in (400, 404), bad
    assert client.get("/api/runs/site~..", headers=AUTH).json()["message"].startswith("invalid")


def test_series_has_points_after_since(client: TestClient, make_run: MakeRun) -> None:
    run = make_run(state="RUNNING")
    (run / "logs" / "progress-statistics.log").write_text(
        "2026-01-01T00:00:00Z CRAWL RUNNING - Running\n"
        "2026-01-01T00:00:05Z          10           6            3   1.50(1.50)   2(2)"
        "             1             1        1000         2000"
        "         1.00           1           1\n"
    )
    series = client.get(f"/api/runs/{RUN}/series", headers=AUTH).json()
    assert series["keys"][:4] == ["t", "discovered", "queued", "downloaded"]
    assert len(series["points"]) == 2  # the progress log row, then the live sample
    assert series["points"][0][1:4] == [10, 6, 3]
    last_t = series["points"][-1][0]
    assert client.get(f"/api/runs/{RUN}/series?since={last_t}", headers=AUTH).json()["points"] == []
    assert client.get(f"/api/runs/{RUN}/series?since=-1", headers=AUTH).status_code == 422


def test_log_tail_filter_and_follow(client: TestClient, make_run: MakeRun) -> None:
    run = make_run()
    names = {f["name"] for f in client.get(f"/api/runs/{RUN}/logs", headers=AUTH).json()["logs"]}
    assert {"crawl.log", "alerts.log"} <= names
    url = f"/api/runs/{RUN}/logs/crawl.log"
    last2 = client.get(url, params={"lines": 2}, headers=AUTH).json()
    assert [line.split()[1] for line in last2["lines"]] == ["404", "-2"]
    found = client.get(url, params={"filter": "ROBOTS"}, headers=AUTH).json()["lines"]
    assert len(found) == 1 and "robots.txt" in found[0]
    with (run / "logs" / "crawl.log").open("a") as fh:
        fh.write("2026-01-01T00:00:02.000Z   200 new-line\n2026-01-01T00:00:02.100Z partial")
    new = client.get(url, params={"after": last2["end"]}, headers=AUTH).json()
    assert new["lines"] == ["2026-01-01T00:00:02.000Z   200 new-line"]
    assert client.get(url, params={"lines": 0}, headers=AUTH).status_code == 422


@pytest.mark.parametrize(
    "name",
    [
        "%2e%2e",
        "..%2F..%2F..%2Fetc%2Fpasswd",
        "%2Fetc%2Fpasswd",
        "..%5Cstatus.json",
        "crawl.log%00.txt",
        ".hidden",
        "status.json",
        "order.effective.yaml",
        "..%252F..%252Fetc%252Fpasswd",
    ],
)
def test_traversal_in_log_and_report_names_is_refused(
    client: TestClient, make_run: MakeRun, name: str
) -> None:
    make_run()
    for kind in ("logs", "reports"):
        response = client.get(f"/api/runs/{RUN}/{kind}/{name}", headers=AUTH)
        assert response.status_code in (400, 404), (kind, name)
        body = response.json()
        assert set(body) == {"status", "message"} and "root:" not in response.text
        assert '"state"' not in response.text


def test_alerts_are_parsed(client: TestClient, make_run: MakeRun) -> None:
    make_run()
    (alert,) = client.get(f"/api/runs/{RUN}/alerts", headers=AUTH).json()["alerts"]
    assert alert["level"] == "WARNING" and alert["event"] == "robots_fetch_failed"
    assert alert["details"] == "host=127.0.0.1:10"


def test_reports_list_read_and_rebuild(client: TestClient, make_run: MakeRun) -> None:
    make_run()
    listed = client.get(f"/api/runs/{RUN}/reports", headers=AUTH).json()["reports"]
    assert [r["name"] for r in listed] == ["crawl-report.txt"]
    text = client.get(f"/api/runs/{RUN}/reports/crawl-report.txt", headers=AUTH).json()["text"]
    assert text == "crawl name: site\n"
    missing = client.get(f"/api/runs/{RUN}/reports/hosts-report.txt", headers=AUTH)
    assert missing.status_code == 404 and "not written yet" in missing.json()["message"]
    rebuilt = client.post(f"/api/runs/{RUN}/reports", headers=AUTH)
    assert rebuilt.status_code == 200 and rebuilt.json()["message"] == "reports rebuilt from logs"
    hosts = client.get(f"/api/runs/{RUN}/reports/hosts-report.txt", headers=AUTH).json()["text"]
    assert "127.0.0.1:9" in hosts


def test_steering_a_run_that_is_not_running_is_a_conflict(
    client: TestClient, make_run: MakeRun
) -> None:
    run = make_run()
    for verb, body in (("pause", None), ("unpause", None), ("terminate", None)):
        response = client.post(f"/api/runs/{RUN}/{verb}", headers=AUTH, json=body)
        assert response.status_code == 409 and "not running" in response.json()["message"]
    seeds = client.post(f"/api/runs/{RUN}/seeds", headers=AUTH, json={"seeds": "http://a.test/"})
    assert seeds.status_code == 409
    assert not [p for p in (run / "action").iterdir() if p.is_file()]


def test_control_verbs_drop_action_files(client: TestClient, make_run: MakeRun) -> None:
    run = make_run(state="RUNNING")
    for verb in ("pause", "unpause", "terminate"):
        response = client.post(f"/api/runs/{RUN}/{verb}", headers=AUTH)
        assert response.status_code == 202
        body = response.json()
        assert body["action"].endswith(f".{verb}") and body["taken"] is False
        assert (run / "action" / body["action"]).is_file()
    report = client.post(f"/api/runs/{RUN}/reports", headers=AUTH).json()
    assert report["action"].endswith(".report")
    waited = client.post(f"/api/runs/{RUN}/pause?wait_s=0.2", headers=AUTH).json()
    assert waited["taken"] is False  # nobody takes it in: the wait just ends
    assert client.post(f"/api/runs/{RUN}/pause?wait_s=31", headers=AUTH).status_code == 422


def test_add_seeds_validates_and_drops_a_seeds_file(client: TestClient, make_run: MakeRun) -> None:
    run = make_run(state="RUNNING")
    url = f"/api/runs/{RUN}/seeds"
    ok = client.post(url, headers=AUTH, json={"seeds": "http://a.test/\nb.test:8080/x\n+c.test"})
    assert ok.status_code == 202
    written = (run / "action" / ok.json()["action"]).read_text().split()
    assert written == ["http://a.test/", "http://b.test:8080/x", "+c.test"]
    bad = client.post(url, headers=AUTH, json={"seeds": "http://a.test/\nhttp://[bad/"})
    assert bad.status_code == 422 and bad.json()["issues"][0]["path"] == "seeds"
    assert client.post(url, headers=AUTH, json={"seeds": "# only a comment"}).status_code == 422
    assert client.post(url, headers=AUTH, json={"seeds": ""}).status_code == 422
    assert client.post(url, headers=AUTH, json={"seeds": ["http://a.test/"]}).status_code == 422
    assert len(list((run / "action").glob("*.seeds"))) == 1


def test_block_validates_the_regex(client: TestClient, make_run: MakeRun) -> None:
    run = make_run(state="PAUSED")
    url = f"/api/runs/{RUN}/block"
    ok = client.post(url, headers=AUTH, json={"regex": r"\.pdf$"})
    assert ok.status_code == 202
    assert (run / "action" / ok.json()["action"]).read_text() == "\\.pdf$\n"
    bad = client.post(url, headers=AUTH, json={"regex": "(unclosed"})
    assert bad.status_code == 422 and "invalid regular expression" in bad.json()["message"]
    assert client.post(url, headers=AUTH, json={"regex": "a\nb"}).status_code == 422
    assert client.post(url, headers=AUTH, json={"regex": "x", "extra": 1}).status_code == 422
    raw = client.post(url, headers={**AUTH, "content-type": "application/json"}, content=b"{nope")
    assert raw.status_code == 422 and raw.json()["status"] == 422


def test_block_on_a_stopped_crawl_waits_for_resume(client: TestClient, make_run: MakeRun) -> None:
    make_run()
    response = client.post(f"/api/runs/{RUN}/block", headers=AUTH, json={"regex": "x"})
    assert response.status_code == 202
    assert "when it is resumed" in response.json()["message"]


def test_unknown_endpoint_is_a_json_404(client: TestClient) -> None:
    response = client.get("/api/runs/x~y/nothing-here", headers=AUTH)
    assert response.status_code == 404
    assert json.loads(response.text) == {"status": 404, "message": "no such API endpoint"}
