"""The container image (Dockerfile, `make image`): `crawler demo` runs inside it, and two workers
in it crawl a site through one Redis frontier. Run by `make test-image`, which builds the image
first (several minutes: a debootstrap base, Debian's chromium, the wheels); in `make test` these
tests skip unless CRAWLER_IMAGE names a built image."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from support.redis_servers import REDIS_SERVER, RedisServer
from support.route_server import RouteServer, page

IMAGE = os.environ.get("CRAWLER_IMAGE", "")
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


def podman(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CONTAINERS_CONF": str(CONF)}
    return subprocess.run(
        ["podman", *args], capture_output=True, text=True, timeout=timeout, env=env
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
