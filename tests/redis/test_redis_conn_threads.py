"""The raw Redis calls (``redis_conn.send_commands`` / ``run_calls``) keep one connection per
thread, against a real redis-server: threads that end give theirs back (no connection piles
up on the server), and a server restart between two calls costs no failed call."""

from __future__ import annotations

import gc
import threading
import time

from support.redis_servers import RedisServer

from crawler.frontier.redis import redis_conn


def _clients(client: object) -> int:
    return len(client.client_list())  # type: ignore[attr-defined]


def test_threads_that_end_leave_no_connection_behind(redis_server: RedisServer) -> None:
    client = redis_conn.connect(redis_server.url)
    script = client.register_script("return redis.call('INCR', KEYS[1])")
    client.set("n", 0)
    before = _clients(client)

    def work() -> None:
        for _ in range(5):
            redis_conn.send_commands(client, [("INCR", "n")])
            redis_conn.run_calls(client, [(script, ["n"], [])])

    for _ in range(6):  # 6 waves of 10 threads: a wave reuses what the last ones gave back
        threads = [threading.Thread(target=work) for _ in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=10)
        time.sleep(0.05)  # a thread's locals go just after join() returns
        gc.collect()
    assert int(client.get("n")) == 6 * 10 * 10
    assert _clients(client) <= before + 25  # not 60: about two waves at most
    client.close()


def test_more_threads_than_a_default_pool_holds_each_keep_a_connection(
    redis_server: RedisServer,
) -> None:
    """A worker's 300 toe threads each keep a connection: the pool must not stop at redis-py's
    default of 100 (the calls then fail as if Redis were down)."""
    client = redis_conn.connect(redis_server.url)
    n = 120
    barrier = threading.Barrier(n, timeout=20)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            redis_conn.send_commands(client, [("INCR", "k")])
            barrier.wait()  # every thread holds its connection at once
        except BaseException as exc:  # noqa: BLE001 - reported by the assert below
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=work) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors, errors[:1]
    assert int(client.get("k")) == n
    client.close()


def test_a_restart_between_calls_is_not_a_failed_call(redis_server: RedisServer) -> None:
    client = redis_conn.connect(redis_server.url)
    assert redis_conn.send_commands(client, [("SET", "k", "1"), ("GET", "k")]) == [b"OK", b"1"]
    redis_server.restart()
    failed: list[bool] = []
    replies = redis_conn.retrying(
        lambda: redis_conn.send_commands(client, [("SET", "k", "2"), ("GET", "k")]),
        outage_timeout_s=10,
        what="test",
        on_retry=lambda: failed.append(True),
    )
    assert replies == [b"OK", b"2"] and not failed
    client.close()
