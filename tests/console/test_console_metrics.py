"""The console's ``/metrics``: each job's latest run in Prometheus text format, behind the token."""

from __future__ import annotations

from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from support.console_runs import AUTH, MakeRun


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_metrics_show_the_latest_run_of_each_job(client: TestClient, make_run: MakeRun) -> None:
    make_run("20260101T000000Z", "FINISHED")
    make_run("20260102T000000Z", "RUNNING")  # the latest: this process, so alive
    response = client.get("/metrics", headers=AUTH)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    got = samples(response.text)
    assert got[("crawler_job_state", (("job", "site"), ("state", "RUNNING")))] == 1
    assert got[("crawler_job_state", (("job", "site"), ("state", "FINISHED")))] == 0
    assert got[("crawler_job_alive", (("job", "site"),))] == 1
    assert got[("crawler_job_uris_total", (("job", "site"), ("outcome", "succeeded")))] == 3
    assert got[("crawler_job_uris_total", (("job", "site"), ("outcome", "failed")))] == 1
    assert got[("crawler_job_bytes_total", (("job", "site"),))] == 4663
    assert got[("crawler_job_queued", (("job", "site"),))] == 6
    assert got[("crawler_job_status_age_seconds", (("job", "site"),))] < 60
    assert got[("process_resident_memory_bytes", ())] > 0


def test_metrics_need_the_token(client: TestClient) -> None:
    assert client.get("/metrics").status_code == 401
