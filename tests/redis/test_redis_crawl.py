"""Distributed crawls of the sample site: worker processes sharing a real redis-server (or a
3-master Cluster), checked from the site's request log and the workers' crawl.logs."""

from __future__ import annotations

import io
import json
import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from support.crawllog_parser import count_lines, parse_file
from support.redis_servers import RedisClusterServers, RedisServer, free_port
from warcio.archiveiterator import ArchiveIterator

from crawler.demo import SampleSite
from crawler.distributed import cmd_control, cmd_status, run_workers
from crawler.reports import REPORT_NAMES

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
STORE = "crawler.frontier.redis.redis_store.RedisQueueStore"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def _sets(site: SampleSite, url: str, lease_s: float = 30.0, threads: int = 4) -> list[str]:
    store = {"class": STORE, "params": {"url": url, "lease_s": lease_s, "shards": 8}}
    return [
        f"seeds.urls={site.base_urls!r}",
        "seeds.file=null",
        "name=redis-test",
        f"toe_threads={threads}",
        "logging.console=false",
        f"frontier.store={json.dumps(store)}",
    ]


class Launch(threading.Thread):
    """``run_workers`` in a thread, as ``crawler run ORDER --workers N`` would run it."""

    def __init__(self, sets: list[str], workers: int, run_dir: Path) -> None:
        super().__init__(daemon=True)
        self.sets, self.workers, self.run_dir = sets, workers, run_dir
        self.out, self.err = io.StringIO(), io.StringIO()
        self.code: int | None = None

    def run(self) -> None:
        self.code = run_workers(
            EXAMPLE, self.sets, self.workers, self.out, self.err, run_dir=self.run_dir
        )

    def logged(self) -> int:
        return sum(count_lines(p) for p in self.run_dir.glob("workers/*/logs/crawl.log"))

    def wait_logged(self, n: int, timeout_s: float = 60) -> None:
        deadline = time.monotonic() + timeout_s
        while self.logged() < n:
            assert time.monotonic() < deadline, self.err.getvalue()
            time.sleep(0.05)

    def finish(self, timeout_s: float = 90) -> int:
        self.join(timeout_s)
        assert self.code is not None, "the crawl did not end"
        return self.code


def _logged_uris(run_dir: Path, wid: str | None = None) -> Counter[str]:
    pattern = f"workers/{wid or '*'}/logs/crawl.log"
    return Counter(line.uri for p in run_dir.glob(pattern) for line in parse_file(p, growing=True))


def _captures(run_dir: Path) -> Counter[str]:
    """How many times each http(s) URI was captured (response or revisit record) in the WARCs
    of all the workers of ``run_dir``."""
    captured: Counter[str] = Counter()
    for path in run_dir.glob("workers/*/warcs/*.warc.gz"):
        with path.open("rb") as fh:
            for record in ArchiveIterator(fh):
                uri = record.rec_headers.get_header("WARC-Target-URI") or ""
                if record.rec_type in ("response", "revisit") and uri.startswith("http"):
                    captured[uri] += 1
    return captured


def _refetched(site: SampleSite) -> dict[str, int]:
    """URLs fetched more than once, robots.txt included: the workers share a host's robots.txt
    (crawler.server_facts), so it is fetched once per crawl, as any other URL."""
    return {u: n for u, n in site.counts().items() if n > 1}


def test_three_workers_lose_nothing_when_one_is_killed(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    with SampleSite(pages_per_host=60, latency_s=0.03) as site:
        launch = Launch(_sets(site, redis_server.url, lease_s=1.5), 3, tmp_path / "run")
        launch.start()
        launch.wait_logged(60)
        pid_file = tmp_path / "run" / "workers" / "w02" / "crawler.pid"
        deadline = time.monotonic() + 60
        while not (pid_file.exists() and pid_file.read_text().strip()):
            assert time.monotonic() < deadline, "w02 never started"
            time.sleep(0.05)
        os.kill(int(pid_file.read_text()), signal.SIGKILL)
        assert launch.finish() == 1  # one worker died
        expected = site.expected_urls(obey_robots=True)
        fetched = site.counts()
        refetched = _refetched(site)
    logged = _logged_uris(tmp_path / "run")
    assert set(fetched) == expected
    assert expected <= {u for u in logged if not u.startswith("dns:")}
    # Only URIs the killed worker had in flight (at most its 4 threads) were fetched again, by
    # the other workers, which logged each once. (A worker logs a URI before it reports it to
    # Redis, so that a kill never loses a line: one killed in between may have logged it too.)
    assert len(refetched) <= 4, refetched
    others = _logged_uris(tmp_path / "run", "w01") + _logged_uris(tmp_path / "run", "w03")
    assert all(others[u] == 1 for u in refetched), (refetched, others)
    assert all(n == 1 for n in others.values()), others


def test_workers_wait_for_a_restarted_redis_and_finish_the_crawl(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    with SampleSite(pages_per_host=60, latency_s=0.03) as site:
        launch = Launch(_sets(site, redis_server.url), 2, tmp_path / "run")
        launch.start()
        launch.wait_logged(50)
        redis_server.restart()
        assert launch.finish() == 0, launch.err.getvalue()
        expected = site.expected_urls(obey_robots=True)
        assert set(site.counts()) == expected
        refetched = _refetched(site)
    # A reply lost in the restart may schedule a URI twice (never lose it): a handful at most.
    assert len(refetched) <= 4, refetched


def test_one_name_one_crawl_and_operator_commands_reach_every_worker(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    with SampleSite(pages_per_host=100, latency_s=0.05) as site:
        sets = _sets(site, redis_server.url, threads=2)
        first = Launch(sets, 2, tmp_path / "one")
        first.start()
        first.wait_logged(10)
        # Paused, the crawl waits for the test however slow the machine: it cannot end before
        # the test terminates it.
        out, err = io.StringIO(), io.StringIO()
        assert cmd_control("pause", tmp_path / "one", 60, out, err) == 0, out.getvalue()
        paused_at = first.logged()
        second = Launch(sets, 2, tmp_path / "two")
        second.run()
        assert second.code == 1
        assert "already running" in second.err.getvalue()
        assert not (tmp_path / "two" / "workers").exists()
        time.sleep(0.5)
        assert first.logged() == paused_at, [
            (p.parent.parent.name, p.read_text().splitlines()[-4:])
            for p in (tmp_path / "one").glob("workers/*/logs/crawl.log")
        ]
        out = io.StringIO()
        assert cmd_status(tmp_path / "one", False, out, err) == 0
        text = out.getvalue()
        assert "PAUSED" in text and "2 of 2 workers alive" in text
        assert cmd_control("unpause", tmp_path / "one", 60, io.StringIO(), err) == 0
        first.wait_logged(paused_at + 5)
        assert cmd_control("pause", tmp_path / "one", 60, io.StringIO(), err) == 0
        assert cmd_control("terminate", tmp_path / "one", 60, io.StringIO(), err) == 0
        assert first.finish() == 0
        assert first.logged() < len(site.expected_urls())
    with SampleSite(pages_per_host=20) as small:
        third = Launch(_sets(small, redis_server.url), 1, tmp_path / "three")
        third.run()
        assert third.code == 0, third.err.getvalue()
        assert set(small.counts()) == small.expected_urls(obey_robots=True)
    one = json.loads((tmp_path / "one" / "distributed.json").read_text())
    three = json.loads((tmp_path / "three" / "distributed.json").read_text())
    assert one["namespace"] != three["namespace"]


def test_unreachable_redis_at_start_is_a_clear_error(tmp_path: Path) -> None:
    with SampleSite(pages_per_host=20) as site:
        launch = Launch(_sets(site, f"redis://127.0.0.1:{free_port()}/0"), 2, tmp_path / "run")
        launch.run()
    assert launch.code == 1
    assert "cannot reach Redis at redis://127.0.0.1:" in launch.err.getvalue()


def test_one_host_over_many_queues_and_two_workers_has_its_robots_txt_fetched_once(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """Eight queues per host (``parallel_queues``) and seeds in several of them: both workers
    lease queues of every host at once, and each host's robots.txt is still fetched once (the
    first worker to claim it fetches it, the other waits for the outcome)."""
    with SampleSite(pages_per_host=30, latency_s=0.1) as site:
        expected = site.expected_urls(obey_robots=True)
        seeds = site.base_urls + [
            u
            for host in site.hosts
            for u in sorted(x for x in expected if host in x and x.endswith(".html"))[:8]
        ]
        sets = [
            *_sets(site, redis_server.url),
            f"seeds.urls={seeds!r}",
            "frontier.queue_assignment.params.parallel_queues=8",
        ]
        launch = Launch(sets, 2, tmp_path / "run")
        launch.run()
        assert launch.code == 0, launch.err.getvalue()
        assert set(site.counts()) == expected
        robots = {u: n for u, n in site.counts().items() if u.endswith("/robots.txt")}
    assert len(robots) == len(site.hosts)
    assert set(robots.values()) == {1}, robots


def test_a_crawl_runs_unchanged_on_a_redis_cluster(
    redis_cluster: RedisClusterServers, tmp_path: Path
) -> None:
    with SampleSite(pages_per_host=40) as site:
        launch = Launch(_sets(site, redis_cluster.url), 2, tmp_path / "run")
        launch.run()
        assert launch.code == 0, launch.err.getvalue()
        expected = site.expected_urls(obey_robots=True)
        assert set(site.counts()) == expected
        assert _refetched(site) == {}
    run_dir = tmp_path / "run"
    # Every page is in the WARCs, captured once, whichever worker fetched it (how the work
    # split between the two workers is the scheduler's business: one may even have done all).
    captured = _captures(run_dir)
    assert set(captured) == expected
    assert {u: n for u, n in captured.items() if n > 1} == {}
    # The crawl-wide reports count every line of every worker's crawl.log.
    per_worker = [len(parse_file(p)) for p in run_dir.glob("workers/*/logs/crawl.log")]
    assert len(per_worker) == 2
    for name in REPORT_NAMES:
        assert (run_dir / "reports" / name).is_file(), name
    report = (run_dir / "reports" / "crawl-report.txt").read_text()
    assert f"URIs processed: {sum(per_worker)}\n" in report
    assert "crawl name: redis-test\n" in report
    workers = (run_dir / "reports" / "workers-report.txt").read_text()
    assert " total (2 workers)" in workers and str(sum(per_worker)) in workers.splitlines()[-1]
