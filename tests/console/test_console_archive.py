"""The console's Replay panel data: the `crawler replay` command, the live replay link while a
replay server serves the run, and WACZ downloads (token-protected, names checked)."""

from __future__ import annotations

import json
import os
from io import BytesIO
from pathlib import Path

from fastapi.testclient import TestClient
from support.console_runs import AUTH, DEAD_PID, MakeRun
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from crawler.archive.wacz import WaczPackager

RUN = "site~20260101T000000Z"


def _warc(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        body = b"<html><title>Home</title></html>"
        head = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        record = writer.create_warc_record(
            "http://127.0.0.1:9/", "response", payload=BytesIO(body), http_headers=head
        )
        writer.write_record(record)


def test_a_run_without_package_shows_the_replay_command(
    client: TestClient, make_run: MakeRun
) -> None:
    run = make_run()
    doc = client.get(f"/api/runs/{RUN}/archive", headers=AUTH).json()
    assert doc["replay_command"] == f"crawler replay {run}"
    assert doc["replay_url"] is None
    assert doc["wacz"] == [] and doc["indexes"] == 0


def test_wacz_packages_are_listed_and_downloaded(client: TestClient, make_run: MakeRun) -> None:
    run = make_run()
    _warc(run / "warcs" / "A.warc.gz")
    package = run / "site.wacz"
    WaczPackager(run).write(package)
    doc = client.get(f"/api/runs/{RUN}/archive", headers=AUTH).json()
    assert doc["indexes"] == 1
    assert doc["wacz"] == [
        {
            "name": "site.wacz",
            "size": package.stat().st_size,
            "url": f"/api/runs/{RUN}/wacz/site.wacz",
        }
    ]
    response = client.get(doc["wacz"][0]["url"], headers=AUTH)
    assert response.status_code == 200
    assert response.content == package.read_bytes()
    assert response.headers["content-type"] == "application/wacz"
    assert "site.wacz" in response.headers["content-disposition"]
    assert client.get(doc["wacz"][0]["url"]).status_code == 401
    for name in ("other.wacz", "..%2Fsite.wacz", "order.yaml"):
        missing = client.get(f"/api/runs/{RUN}/wacz/{name}", headers=AUTH)
        assert missing.status_code == 404, name


def test_a_live_replay_server_shows_as_a_link(client: TestClient, make_run: MakeRun) -> None:
    run = make_run()
    prefix = "http://127.0.0.1:8488/site/"
    (run / "replay.json").write_text(json.dumps({"prefix": prefix, "pid": os.getpid()}))
    assert client.get(f"/api/runs/{RUN}/archive", headers=AUTH).json()["replay_url"] == prefix
    (run / "replay.json").write_text(json.dumps({"prefix": prefix, "pid": DEAD_PID}))
    assert client.get(f"/api/runs/{RUN}/archive", headers=AUTH).json()["replay_url"] is None
