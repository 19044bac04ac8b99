"""Two Redis workers share one digest index: a payload under two URIs, fetched by different
workers, is stored once (the other capture is a revisit of it, across the workers' WARCs). The
launcher saves the crawl's index into the job's, and the job's next ``--workers`` crawl, with
the index loaded into its Redis, stores none of those payloads again."""

from __future__ import annotations

import io
import json
import threading
import time
from pathlib import Path

import pytest
import redis
import yaml
from support.redis_servers import RedisServer
from support.route_server import Answer, RouteServer
from warcio.archiveiterator import ArchiveIterator

from crawler.archive.collection import earlier_runs
from crawler.continuity import LevelDBDigestIndex
from crawler.continuity.job_digest_index import REDIS_PENDING_FILE
from crawler.control.controller import new_run_dir
from crawler.distributed import cmd_control, cmd_status, run_workers

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

PAIRS = 12
STORE = "crawler.frontier.redis.redis_store.RedisQueueStore"


def payload(i: int, port: int) -> bytes:
    """Page ``/p<i>`` of 127.0.0.1, the same bytes as ``/q<i>`` of localhost (it links there)."""
    link = f'<a href="http://localhost:{port}/q{i}">q</a>'
    return f"<html><body>{link} payload number {i} ".encode() + b"x" * 2000 + b"</body></html>"


class PairSite:
    def __init__(self) -> None:
        self.server = RouteServer(self.route)
        self.roots = {"127.0.0.1": threading.Event(), "localhost": threading.Event()}

    def route(self, host: str, path: str) -> Answer:
        time.sleep(0.02)  # fetches overlap, so both workers have work
        port = self.server.port
        if path == "/":  # localhost's is a seed too: the q pages are in scope
            # Each root answers once the other was asked for: with one thread per worker, the
            # second root is fetched by the other worker, so both are at work however slowly
            # one of them started (bounded: a worker that never comes only delays the crawl).
            self.roots[host].set()
            self.roots["localhost" if host == "127.0.0.1" else "127.0.0.1"].wait(10)
            links = "".join(f'<a href="/p{i}">p</a>' for i in range(PAIRS))
            return 200, {}, links.encode() if host == "127.0.0.1" else b"q pages"
        for prefix, where in (("/p", "127.0.0.1"), ("/q", "localhost")):
            if host == where and path.startswith(prefix) and path[2:].isdigit():
                return 200, {}, payload(int(path[2:]), port)
        return 404, {}, b""


def write_job(job: Path, origin: str, url: str) -> Path:
    job.mkdir(parents=True, exist_ok=True)
    order = {
        "name": "redis-digests",
        "operator": {"contact_url": "https://example.org/about"},
        "seeds": {"urls": [origin + "/", origin.replace("127.0.0.1", "localhost") + "/"]},
        "toe_threads": 1,  # one URI at a time per worker: the two hosts' queues get split
        "pause_at_start": True,
        "robots": {"policy": "ignore"},
        "frontier": {
            "store": {"class": STORE, "params": {"url": url}},
            "politeness": {"delay_factor": 0, "min_delay_ms": 0, "max_delay_ms": 0},
        },
        "logging": {"console": False, "display": False},
    }
    path = job / "order.yaml"
    path.write_text(yaml.safe_dump(order), encoding="utf-8")
    return path


def crawl_with_two_workers(order: Path) -> tuple[Path, str]:
    """``crawler run ORDER --workers 2``, unpaused once both workers are alive (so both work
    however slowly the second starts); the run directory and the launcher's output."""
    run_dir = new_run_dir(order.parent)
    out, err = io.StringIO(), io.StringIO()
    codes: list[int] = []
    launcher = threading.Thread(
        target=lambda: codes.append(run_workers(order, [], 2, out, err, run_dir=run_dir)),
        daemon=True,
    )
    launcher.start()
    deadline = time.monotonic() + 60
    while True:
        status = io.StringIO()
        cmd_status(run_dir, False, status, io.StringIO())
        if "2 of 2 workers alive" in status.getvalue():
            break
        assert time.monotonic() < deadline, (status.getvalue(), err.getvalue())
        time.sleep(0.1)
    assert cmd_control("unpause", run_dir, 60, io.StringIO(), io.StringIO()) == 0
    launcher.join(90)
    assert codes == [0], err.getvalue()
    return run_dir, out.getvalue()


def records(run_dir: Path) -> dict[str, tuple[str, dict[str, str]]]:
    """URI -> (worker id, headers) of each response or revisit record of every worker."""
    found: dict[str, tuple[str, dict[str, str]]] = {}
    for warc in run_dir.glob("workers/*/warcs/*.warc.gz"):
        with warc.open("rb") as fh:
            for record in ArchiveIterator(fh):
                uri = record.rec_headers.get_header("WARC-Target-URI") or ""
                pair = "/p" in uri or "/q" in uri
                if record.rec_type in ("response", "revisit") and pair:
                    assert uri not in found, f"{uri} captured twice"
                    found[uri] = (warc.parent.parent.name, dict(record.rec_headers.headers))
    return found


def test_two_workers_store_a_payload_once_and_the_job_keeps_it(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    site = PairSite()
    with site.server:
        port = site.server.port
        order = write_job(tmp_path / "job", site.server.origin(), redis_server.url)
        run_dir, out = crawl_with_two_workers(order)
        first = records(run_dir)
        split = 0
        for i in range(PAIRS):
            p_worker, original = first[f"http://127.0.0.1:{port}/p{i}"]
            q_worker, revisit = first[f"http://localhost:{port}/q{i}"]
            assert original["WARC-Type"] == "response", i
            assert revisit["WARC-Type"] == "revisit", i
            assert revisit["WARC-Refers-To"] == original["WARC-Record-ID"]
            assert revisit["WARC-Refers-To-Target-URI"] == original["WARC-Target-URI"]
            assert revisit["WARC-Refers-To-Date"] == original["WARC-Date"]
            split += p_worker != q_worker
        assert split > 0, "no pair was fetched by two workers"
        # The launcher saved the crawl's index into the job's and removed it from Redis.
        assert "new payload(s) saved in" in out
        assert not (run_dir / REDIS_PENDING_FILE).exists()
        client = redis.Redis.from_url(redis_server.url)
        assert client.keys("*dg:*") == []
        with LevelDBDigestIndex(tmp_path / "job" / "digest-index") as job:
            assert len(job) >= PAIRS

        # The job's next crawl: every pair is a revisit of the first crawl's response.
        again, out = crawl_with_two_workers(order)
        assert f"{len(job_entries(tmp_path))} payload(s) of earlier crawls" in out
        second = records(again)
        for i in range(PAIRS):
            _, original = first[f"http://127.0.0.1:{port}/p{i}"]
            for uri in (f"http://127.0.0.1:{port}/p{i}", f"http://localhost:{port}/q{i}"):
                _, headers = second[uri]
                assert headers["WARC-Type"] == "revisit", uri
                assert headers["WARC-Refers-To"] == original["WARC-Record-ID"], uri
        # `crawler replay` of the second crawl serves the first beside it.
        assert earlier_runs(again) == [run_dir.resolve()]
        info = json.loads((again / "distributed.json").read_text())
        assert client.keys(f"{info['namespace']}dg:*") == []
        client.close()


def job_entries(tmp_path: Path) -> list[str]:
    with LevelDBDigestIndex(tmp_path / "job" / "digest-index") as job:
        return [digest for digest, _ in job.entries()]
