"""The adaptive pace against a rate-limited server: throughput, 429s and pages lost.

For each limiter shape (``--shape``: ``bucket`` a token bucket of burst 5, ``bucket-small`` burst
2, ``fixed`` a fixed window per second, ``sliding`` a sliding window counting refusals too; see
:mod:`crawler.demo.rate_limited_server`), each ``Retry-After`` a 429 carries (``--retry-after``:
``none``, ``auto``, or whole seconds such as ``1`` and ``0``) and each rate R (requests/s) a
:class:`~crawler.demo.rate_limited_server.RateLimitedSite` serves a site of about
``R x --seconds`` pages, and ``crawler run`` (a subprocess, as a user
runs it) crawls it with politeness off (delays 0) and one queue or ``parallel_queues: 4`` for
the host (``--workers 2`` on Redis with ``--redis``). The server's own counters give:

* ``200/s % of R`` — pages answered 200 per second, from the first request to the last, as a
  share of R (the goal: >= 85%);
* ``429 %`` — the share of all requests (robots.txt and retries included) answered 429 (<= 1%);
* ``lost`` — pages of the site whose final crawl.log status is not 200 (0);
* ``load`` — the 1-minute load average at the end of the run.

Run: ``python bench/ratelimit.py [--rates 10,25,100] [--seconds 60] [--shape bucket,fixed]
[--retry-after none,1,0] [--wide] [--redis]`` (``make bench-ratelimit``); ``--wide``: the home
page links every page, so the crawl has the whole site queued at once. Prints one table row per run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crawler.demo.rate_limited_server import SHAPES, RateLimitedSite  # noqa: E402

ORDER = ROOT / "jobs" / "example" / "order.yaml"
CRAWLER = ROOT / ".venv" / "bin" / "crawler"
BURST = 5


def crawl(site: RateLimitedSite, run_dir: Path, queues: int, workers: int, redis_url: str) -> None:
    sets = {
        "seeds.urls": json.dumps([site.base_url + "/"]),
        "seeds.file": "null",
        "toe_threads": "10",
        "frontier.politeness.delay_factor": "0",
        "frontier.politeness.min_delay_ms": "0",
        "frontier.politeness.max_delay_ms": "0",
        "frontier.queue_assignment.params": json.dumps({"parallel_queues": queues}),
        "logging.console": "false",
        "limits.max_time_s": "900",
    }
    argv = [str(CRAWLER), "run", str(ORDER), "--run-dir", str(run_dir), "--no-display"]
    for key, value in sets.items():
        argv += ["--set", f"{key}={value}"]
    if workers > 1:
        store = {"class": "crawler.frontier.RedisQueueStore", "params": {"url": redis_url}}
        argv += ["--set", f"frontier.store={json.dumps(store)}", "--workers", str(workers)]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def final_statuses(run_dir: Path) -> dict[str, int]:
    """URI -> status of every crawl.log line (of every worker's log)."""
    out: dict[str, int] = {}
    for log in run_dir.rglob("crawl.log"):
        for line in log.read_text(encoding="utf-8").splitlines():
            cols = line.split()
            if len(cols) > 3:
                out[cols[3]] = int(cols[1])
    return out


def one_run(
    shape: str,
    retry_after: str | None,
    rate: float,
    queues: int,
    workers: int,
    args: argparse.Namespace,
) -> str:
    pages = int(rate * args.seconds)
    with RateLimitedSite(
        pages, rate, BURST, retry_after=retry_after, shape=shape, wide=args.wide
    ) as site:
        run_dir = Path(tempfile.mkdtemp(prefix="ratelimit-"))
        started = time.monotonic()
        try:
            crawl(site, run_dir / "run", queues, workers, args.redis_url)
            elapsed = time.monotonic() - started
            statuses = final_statuses(run_dir)
        finally:
            if args.keep:
                print(f"kept {run_dir}", file=sys.stderr)
            else:
                shutil.rmtree(run_dir, ignore_errors=True)
        first, last = site.first_last()
    ok = site.statuses[200]
    refused = site.statuses[429]
    total = sum(site.statuses.values())
    lost = sum(1 for url in site.page_urls if statuses.get(url) != 200)
    span = max(last - first, 1e-9)
    mode = f"{queues} queue{'s' if queues > 1 else ''}" + (
        f", {workers} workers" if workers > 1 else ""
    )
    share_ok = 100 * ok / span / rate
    share_refused = 100 * refused / total
    return (
        f"| {shape:<12} | {retry_after or 'none':>4} | {rate:5.0f} | {mode:<20} | "
        f"{len(site.page_urls):6d} | {ok / span:7.1f} | {share_ok:6.1f}% | {total:6d} | "
        f"{refused:5d} | {share_refused:5.2f}% | {lost:4d} | {elapsed:6.1f} | "
        f"{os.getloadavg()[0]:4.1f} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rates", default="10,25,100", help="comma-separated R values")
    parser.add_argument("--seconds", type=float, default=60.0, help="site size: R x this pages")
    parser.add_argument("--queues", default="1,4", help="parallel_queues values to run")
    parser.add_argument(
        "--shape", default="bucket", help=f"comma-separated limiter shapes ({', '.join(SHAPES)})"
    )
    parser.add_argument(
        "--retry-after",
        default="none",
        help="comma-separated Retry-After of the 429s: none, auto (seconds until a request "
        "would pass, at least 1) or whole seconds",
    )
    parser.add_argument(
        "--wide", action="store_true", help="the home page links every page (all queued at once)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the run directories")
    parser.add_argument("--redis", action="store_true", help="also --workers 2 on redis-server")
    parser.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL", ""))
    args = parser.parse_args(argv)
    rates = [float(r) for r in args.rates.split(",")]
    shapes = args.shape.split(",")
    unknown = [shape for shape in shapes if shape not in SHAPES]
    if unknown:
        parser.error(f"--shape: unknown {', '.join(unknown)} (one of {', '.join(SHAPES)})")
    retry_afters = [None if v == "none" else v for v in args.retry_after.split(",")]
    bad = [v for v in retry_afters if v is not None and v != "auto" and not v.isdigit()]
    if bad:
        parser.error(f"--retry-after: {', '.join(bad)} is not none, auto or whole seconds")
    modes = [(int(q), 1) for q in args.queues.split(",")]
    redis_proc = None
    if args.redis:
        if not args.redis_url:
            redis_proc, args.redis_url = start_redis()
        modes += [(int(q), 2) for q in args.queues.split(",")]
    print(f"bucket burst {BURST}, politeness off{', wide site' if args.wide else ''}")
    print(
        "| shape        |   RA |     R | mode                 |  pages |   200/s | % of R |"
        "   reqs |   429 | 429 % | lost |   wall | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    try:
        for shape in shapes:
            for retry_after in retry_afters:
                for rate in rates:
                    for queues, workers in modes:
                        row = one_run(shape, retry_after, rate, queues, workers, args)
                        print(row, flush=True)
    finally:
        if redis_proc is not None:
            redis_proc.terminate()
            redis_proc.wait(timeout=10)
    return 0


def start_redis() -> tuple[subprocess.Popen[bytes], str]:
    """A throw-away redis-server on a free port (no persistence)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
    )
    time.sleep(0.5)
    return proc, f"redis://127.0.0.1:{port}/0"


if __name__ == "__main__":
    raise SystemExit(main())
