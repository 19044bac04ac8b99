"""``crawler console`` and ``crawler run ORDER --console`` as a user runs them: a printed URL
and token, loopback only, every call refused without the token, raw traversal requests refused,
and the REST API steering a live crawl (pause stops fetches, unpause, terminate)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from console_support import ROOT, ConsoleProc, wait_until
from support.console_runs import MakeRun

from crawler.console.auth import TOKEN_ENV
from crawler.demo import SampleSite

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def raw_get(url: str, path: str, token: str) -> bytes:
    """A GET sent byte for byte (no client-side ``..`` clean-up)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        request = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        request += f"Authorization: Bearer {token}\r\nConnection: close\r\n\r\n"
        sock.sendall(request.encode())
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_console_prints_url_and_token_and_guards_everything(
    jobs_dir: Path, make_run: MakeRun
) -> None:
    make_run()
    console = ConsoleProc(jobs_dir, None)
    try:
        assert console.url.startswith("http://127.0.0.1:")
        assert len(console.token) >= 40  # made up: 32 random bytes
        assert console.login_line.strip() == f"log in: {console.url}/login?token={console.token}"
        assert httpx.get(console.url + "/api/jobs").status_code == 401
        wrong = httpx.get(console.url + "/api/jobs", headers={"Authorization": "Bearer x"})
        assert wrong.status_code == 401
        jobs = console.api("GET", "/api/jobs").json()["jobs"]
        assert [j["name"] for j in jobs] == ["site"]
        run = "/api/runs/site~20260101T000000Z"
        for path in (
            f"{run}/logs/../../../../../etc/passwd",
            f"{run}/logs/..",
            f"{run}/reports/..%2F..%2F..%2Fstatus.json",
            f"{run}/reports/%2e%2e",
            "/api/runs/site~../../../../etc",
            "/static/../../../../etc/passwd",
            "/static/..%2F..%2F__init__.py",
        ):
            answer = raw_get(console.url, path, console.token)
            status_line = answer.split(b"\r\n", 1)[0]
            assert status_line.split()[1] in (b"400", b"404"), (path, status_line)
            assert b"root:" not in answer and b"import" not in answer
        ok = raw_get(console.url, f"{run}/logs/crawl.log", console.token)
        assert ok.startswith(b"HTTP/1.1 200") and b"robots.txt" in ok
    finally:
        code, err = console.stop()
    assert code == 0, err


def test_console_bad_bind_and_busy_port(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "crawler", "console", "--jobs-dir", str(tmp_path)]
    bad = subprocess.run([*cmd, "--bind", "nowhere"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "HOST:PORT" in bad.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = subprocess.run(
            [*cmd, "--bind", f"127.0.0.1:{port}"], capture_output=True, text=True, timeout=60
        )
    assert busy.returncode == 1 and "cannot listen" in busy.stderr


@pytest.mark.slow
def test_run_with_console_is_steered_through_the_api(tmp_path: Path) -> None:
    with SampleSite(pages_per_host=150, latency_s=0.03) as site:
        job = tmp_path / "jobs" / "sample"
        job.mkdir(parents=True)
        order = ROOT / "jobs" / "example" / "order.yaml"
        (job / "order.yaml").write_text(f"extends: {order}\nname: sample\n")
        cmd = [sys.executable, "-m", "crawler", "run", str(job / "order.yaml"), "--no-display"]
        cmd += ["--console", "--console-bind", "127.0.0.1:0"]
        for item in (
            f"seeds.urls={site.base_urls!r}",
            "seeds.file=null",
            "toe_threads=2",
            "logging.console=false",
        ):
            cmd += ["--set", item]
        env = {**os.environ, TOKEN_ENV: "run-console-token", "PYTHONUNBUFFERED": "1"}
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        try:
            assert proc.stdout is not None
            run_dir = Path(proc.stdout.readline().strip())
            console_line = proc.stdout.readline()
            assert console_line.startswith("console: http://127.0.0.1:"), console_line
            url = console_line.split()[1].rstrip("/")
            assert console_line.split()[-1] == "run-console-token"
            auth = {"Authorization": "Bearer run-console-token"}
            run_id = f"sample~{run_dir.name}"

            def api(method: str, path: str, **kw: object) -> httpx.Response:
                return httpx.request(
                    method, f"{url}/api/runs/{run_id}{path}", headers=auth, timeout=30, **kw
                )  # type: ignore[arg-type]

            wait_until(lambda: api("GET", "").json()["state"] == "RUNNING", what="running")
            wait_until(lambda: api("GET", "").json()["status"]["downloaded"] >= 10, what="fetches")
            paused = api("POST", "/pause", params={"wait_s": 20})
            assert paused.status_code == 202 and paused.json()["state"] == "PAUSED"
            requests_paused = len(site.request_log)
            time.sleep(0.8)
            assert len(site.request_log) == requests_paused
            assert api("GET", "").json()["status"]["threads"]["busy"] == 0
            resumed = api("POST", "/unpause", params={"wait_s": 20}).json()
            assert resumed["taken"] and resumed["state"] in ("RUNNING", "STOPPING", "FINISHED")
            wait_until(lambda: len(site.request_log) > requests_paused, what="fetching again")
            done = api("POST", "/terminate", params={"wait_s": 30}).json()
            assert done["state"] == "FINISHED"
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        with pytest.raises(httpx.ConnectError):  # the console ended with the crawl
            httpx.get(url + "/api/jobs", headers=auth, timeout=5)
