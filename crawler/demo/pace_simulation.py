"""``simulate``: the adaptive pace against a rate limiter, on a simulated clock.

A deterministic model of a crawl of one rate-limited server, for the pace's unit tests and for
tuning it without a machine's noise: ``queues`` queues of the server each fetch one URI at a
time through the real :class:`~crawler.frontier.politeness.server_gate.ServerGate` and
:class:`~crawler.frontier.politeness.server_pace.ServerPace` (politeness off), and the server's real
limiter (:func:`~crawler.demo.rate_limited_server.make_limiter`, any of its shapes) answers each
request 200 or 429, on one simulated clock. Each request reaches the server after a short
network delay, now and then a longer one (a busy machine: the crawler's thread late, the
server's accept late), drawn from a seeded generator, so a run is the same every time. A 429's
``Retry-After`` holds the server as the frontier does.

``python -m crawler.demo.pace_simulation`` prints a table of every shape. Not thread-safe (one
run, one thread); runs are independent.
"""

from __future__ import annotations

import argparse
import heapq
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from crawler.demo.rate_limited_server import SHAPES, make_limiter, retry_after_value
from crawler.frontier.politeness.politeness import retry_after_s
from crawler.frontier.politeness.server_gate import ServerGate
from crawler.frontier.politeness.server_pace import ServerPace
from crawler.order.schema import PaceConfig

_KEY = "server:80"
_READY, _ARRIVE, _ANSWER = 0, 1, 2


@dataclass(frozen=True)
class SimulationResult:
    """What the server saw in a simulated crawl."""

    ok: int
    """Requests answered 200."""
    refused: int
    """Requests answered 429."""
    seconds: float
    """Simulated time from the first request to the last."""
    rate_per_s: float
    final_gap_s: float
    """The pace's gap at the end."""

    @property
    def ok_share(self) -> float:
        """200s per second as a share of the allowed rate."""
        return self.ok / self.seconds / self.rate_per_s

    @property
    def refused_share(self) -> float:
        """The share of requests answered 429."""
        return self.refused / max(1, self.ok + self.refused)


def simulate(
    shape: str,
    rate_per_s: float,
    *,
    retry_after: str | None = None,
    queues: int = 1,
    seconds: float = 120.0,
    seed: int = 1,
    burst: int = 5,
    config: PaceConfig | None = None,
    hiccup_share: float = 0.05,
    hiccup_max_s: float = 0.015,
) -> SimulationResult:
    """Crawl a server limited to ``rate_per_s`` by a ``shape`` limiter for ``seconds`` of
    simulated time with ``queues`` queues always holding work; see the module docstring.

    Network delay 0.3-1.5 ms each way; with ``hiccup_share`` chance a request arrives up to
    ``hiccup_max_s`` later; the server answers in 0.5 ms (429) or 1-3 ms (200); a queue takes
    its next URI 0.5-2 ms after an answer (the crawler's own work)."""
    clock = [0.0]
    rng = random.Random(seed)
    limiter = make_limiter(shape, rate_per_s, burst, clock=lambda: clock[0])
    gate: ServerGate[int] = ServerGate(pace=ServerPace(config or PaceConfig()))
    events: list[tuple[float, int, int, int, float]] = []
    seq = 0

    def push(at: float, kind: int, queue: int, started: float = 0.0) -> None:
        nonlocal seq
        seq += 1
        heapq.heappush(events, (at, seq, kind, queue, started))

    for q in range(queues):
        push(0.0, _READY, q)
    ok = refused = 0
    first = last = -1.0
    answers: dict[int, tuple[int, str | None]] = {}
    """queue -> the status and Retry-After of its request's answer"""
    while events:
        now, _, kind, queue, started = heapq.heappop(events)
        if now > seconds:
            break
        clock[0] = now
        if kind == _READY:
            wait = gate.try_start(_KEY, now)
            if wait is not None:
                push(wait if math.isfinite(wait) else now + 0.001, _READY, queue)
                continue
            delay = rng.uniform(0.0003, 0.0015)
            if rng.random() < hiccup_share:
                delay += rng.uniform(0.0, hiccup_max_s)
            push(now + delay, _ARRIVE, queue, now)
        elif kind == _ARRIVE:
            wait_s = limiter.take()
            first = now if first < 0 else first
            last = now
            if wait_s > 0:
                refused += 1
                answers[queue] = (429, retry_after_value(retry_after, wait_s))
                took = 0.0005
            else:
                ok += 1
                answers[queue] = (200, None)
                took = rng.uniform(0.001, 0.003)
            push(now + took + rng.uniform(0.0003, 0.0015), _ANSWER, queue, started)
        else:
            status, header = answers.pop(queue)
            gate.observe(_KEY, now, started, status, now - started)
            backoff = retry_after_s(header, now, 300.0)
            if backoff > 0:
                gate.hold(_KEY, now, backoff, 0.0)
            gate.finish(_KEY, now)
            push(now + rng.uniform(0.0005, 0.002), _READY, queue)
    return SimulationResult(ok, refused, max(last - first, 1e-9), rate_per_s, gate.gap_s(_KEY))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rate", type=float, default=25.0)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--seeds", type=int, default=3, help="runs per row (seeds 1..N)")
    args = parser.parse_args(argv)
    print("| shape | Retry-After | queues | 200/s % of R (min) | 429 % (max) | gap ms |")
    print("|---|---|---|---|---|---|")
    for shape in SHAPES:
        for retry_after in (None, "1", "0"):
            for queues in (1, 4):
                runs = [
                    simulate(
                        shape,
                        args.rate,
                        retry_after=retry_after,
                        queues=queues,
                        seconds=args.seconds,
                        seed=seed,
                    )
                    for seed in range(1, args.seeds + 1)
                ]
                print(
                    f"| {shape} | {retry_after or 'none'} | {queues} | "
                    f"{100 * min(r.ok_share for r in runs):.1f}% | "
                    f"{100 * max(r.refused_share for r in runs):.2f}% | "
                    f"{1000 * runs[-1].final_gap_s:.1f} |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
