"""The container image (Dockerfile, `make image`): `crawler demo` runs inside it, two workers in
it crawl a site through one Redis frontier, and compose.yaml runs a two-worker crawl with the
Redis image built here (podman-compose). Run by `make test-image`, which builds the images first
(several minutes: a debootstrap base, Debian's chromium, the wheels); in `make test` these tests
skip unless CRAWLER_IMAGE names a built image."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from support.redis_servers import REDIS_SERVER, RedisServer
from support.route_server import RouteServer, page

IMAGE = os.environ.get("CRAWLER_IMAGE", "")
REDIS_IMAGE = os.environ.get("REDIS_IMAGE", "localhost/crawler-redis:bookworm")
ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "deploy" / "image" / "containers.conf"

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(600)]


def _skip_reason() -> str | None:
    if not IMAGE:
        return "the image smoke test runs with `make test-image` (it builds the image first)"
    if shutil.which("podman") is None:
        return "podman is not installed (make image installs it)"
    return None


@pytest.fixture(scope="module", autouse=True)
def _podman() -> None:
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)


def podman(
    *args: str, timeout: float = 300, tool: str = "podman", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "CONTAINERS_CONF": str(CONF), **(env or {})}
    return subprocess.run(
        [tool, *args], capture_output=True, text=True, timeout=timeout, env=full, cwd=ROOT
    )


def test_the_demo_runs_inside_the_image(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    jobs.mkdir(mode=0o777)
    os.chmod(jobs, 0o777)  # the image's user (uid 1000) writes there
    done = podman(
        "run",
        "--rm",
        "--network",
        "host",
        "-v",
        f"{jobs}:/jobs",
        IMAGE,
        "demo",
        "--pages",
        "40",
        "--port",
        "0",
        "--no-display",
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Finished" in done.stdout
    assert list(jobs.glob("jobs/demo/runs/*/warcs/*.warc.gz"))


def test_two_workers_in_the_image_share_one_redis_frontier(tmp_path: Path) -> None:
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed (make test installs it)")

    def site(host: str, path: str) -> tuple[int, dict[str, str], bytes]:
        if path == "/":
            return page(*(f"/p{n}" for n in range(30)))
        return page() if path.startswith("/p") else (404, {}, b"no")

    redis = RedisServer(tmp_path / "redis").start()
    try:
        with RouteServer(site) as a, RouteServer(site) as b, RouteServer(site) as c:
            origins = [a, b, c]  # three servers, three queues: both workers get some
            job = tmp_path / "jobs" / "site"
            job.mkdir(parents=True)
            os.chmod(tmp_path / "jobs", 0o777)
            os.chmod(job, 0o777)
            seeds = ", ".join(f"'{o.origin()}/'" for o in origins)
            (job / "order.yaml").write_text(
                "name: site\n"
                "operator: {contact_url: 'https://example.org/about'}\n"
                f"seeds: {{urls: [{seeds}]}}\n"
                "fetch: {allow_private: [127.0.0.0/8]}\n"
                "frontier:\n"
                "  politeness: {delay_factor: 0, min_delay_ms: 50, max_delay_ms: 50}\n"
                "  store:\n"
                "    class: crawler.frontier.RedisQueueStore\n"
                f"    params: {{url: '{redis.url}'}}\n"
            )
            done = podman(
                "run",
                "--rm",
                "--network",
                "host",
                "-v",
                f"{tmp_path / 'jobs'}:/jobs",
                IMAGE,
                "run",
                "/jobs/site/order.yaml",
                "--workers",
                "2",
                "--no-display",
            )
            assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
            hits = [dict(o.hits) for o in origins]
    finally:
        redis.stop()
    for served in hits:
        assert sum(1 for k in served if "/p" in k) == 30  # every page, fetched once
    logs = list((tmp_path / "jobs" / "site").glob("runs/*/workers/*/logs/crawl.log"))
    assert len(logs) == 2 and all(log.read_text() for log in logs)  # both workers fetched


def _compose_skip_reason() -> str | None:
    if shutil.which("podman-compose") is None:
        return "podman-compose is not installed (make test-image installs it)"
    if podman("image", "exists", REDIS_IMAGE).returncode != 0:
        return f"the Redis image {REDIS_IMAGE} is not built (make image builds it)"
    backend = podman("info", "--format", "{{.Host.NetworkBackend}}").stdout.strip()
    if backend == "cni" and not any(
        Path(d, "dnsname").exists() for d in ("/usr/lib/cni", "/opt/cni/bin")
    ):
        return "the CNI dnsname plugin is missing: services cannot find redis by name"
    return None


def _state(container: str) -> str:
    return podman("inspect", "--format", "{{.State.Status}}", container).stdout.strip()


def _scrape_worker(container: str, deadline: float) -> str:
    """The worker's /metrics (port 9310 of its container, on the compose network) once it
    shows the workers' leases and the held servers (the shared frontier is open and read)."""
    address = ""
    while time.monotonic() < deadline:
        networks = podman("inspect", "--format", "{{json .NetworkSettings.Networks}}", container)
        found = json.loads(networks.stdout or "{}") or {}
        address = next((n["IPAddress"] for n in found.values() if n.get("IPAddress")), "")
        if address:
            try:
                with urllib.request.urlopen(f"http://{address}:9310/metrics", timeout=2) as got:
                    text: str = got.read().decode()
                if "crawler_worker_lease_age_seconds{" in text and "crawler_held_servers " in text:
                    return text
            except OSError:
                pass
        time.sleep(0.5)
    raise AssertionError(f"{container}'s /metrics did not answer on {address or 'its network'}")


def test_compose_runs_a_two_worker_crawl(tmp_path: Path) -> None:
    reason = _compose_skip_reason()
    if reason:
        pytest.skip(reason)
    pages = 40

    def site(host: str, path: str) -> tuple[int, dict[str, str], bytes]:
        if path == "/":
            return page(*(f"/p{n}" for n in range(pages)))
        return page() if path.startswith("/p") else (404, {}, b"no")

    project = f"crawlertest{os.getpid()}"
    env = {
        "CRAWLER_IMAGE": IMAGE,
        "REDIS_IMAGE": REDIS_IMAGE,
        "JOBS_DIR": str(tmp_path / "jobs"),
        "JOB": "site",
        "WORKERS": "1",  # the starter's worker and one that joins
    }
    compose = ("-p", project, "-f", str(ROOT / "compose.yaml"))
    # Served on every address of this machine: the containers reach it as
    # host.containers.internal (their network's gateway).
    servers = [RouteServer(site, bind="0.0.0.0") for _ in range(4)]
    job = tmp_path / "jobs" / "site"
    job.mkdir(parents=True)
    for directory in (tmp_path / "jobs", job):
        os.chmod(directory, 0o777)  # the image's user (uid 1000) writes there
    seeds = ", ".join(f"'{s.origin('host.containers.internal')}/'" for s in servers)
    (job / "order.yaml").write_text(
        "name: site\n"
        "operator: {contact_url: 'https://example.org/about'}\n"
        f"seeds: {{urls: [{seeds}]}}\n"
        "fetch: {allow_private: [10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16]}\n"
        "frontier:\n"
        "  politeness: {delay_factor: 0, min_delay_ms: 300, max_delay_ms: 300}\n"
        "  store:\n"
        "    class: crawler.frontier.RedisQueueStore\n"
        "    params: {url: 'redis://redis:6379/0'}\n"
    )
    started = time.monotonic()
    try:
        for server in servers:
            server.__enter__()
        up = podman(
            *compose, "up", "-d", "redis", "starter", "worker", tool="podman-compose", env=env
        )
        assert up.returncode == 0, up.stdout[-2000:] + up.stderr[-2000:]
        deadline = time.monotonic() + 240
        metrics = _scrape_worker(f"{project}_worker_1", deadline)
        crawlers = (f"{project}_starter_1", f"{project}_worker_1")
        while time.monotonic() < deadline and any(_state(c) != "exited" for c in crawlers):
            time.sleep(1)
        elapsed = time.monotonic() - started
        states = {c: _state(c) for c in crawlers}
        logs = podman("logs", f"{project}_starter_1")
        hits = [dict(s.hits) for s in servers]
    finally:
        podman(*compose, "down", "-v", tool="podman-compose", env=env, timeout=120)
        for server in servers:
            server.__exit__(None, None, None)
    assert set(states.values()) == {"exited"}, (states, logs.stdout[-2000:], logs.stderr[-2000:])
    assert "crawler_worker_lease_age_seconds{" in metrics
    assert "crawler_held_servers " in metrics and "process_resident_memory_bytes " in metrics
    for served in hits:
        assert sum(1 for k in served if "/p" in k) == pages  # every page, fetched once
    crawl_logs = [log for log in job.glob("**/logs/crawl.log") if log.read_text().strip()]
    assert len(crawl_logs) == 2, crawl_logs  # both workers fetched: the starter's and the joiner
    print(f"compose two-worker crawl of {4 * pages} pages: {elapsed:.1f} s")
