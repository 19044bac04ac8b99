"""Scheduler benchmark: what one tick of ``crawler schedule`` costs over many jobs.

The scheduler looks at every job of the jobs directory about once a second (``POLL_S``): a
``stat`` of each ``order.yaml``, a cron computation and, when an order changed, reading and
validating it again. This makes ``--jobs`` jobs with an hourly schedule (nothing falls due, so
nothing is launched) and times the first tick (every order read), the steady ticks (nothing
changed) and a tick after every order was touched. It also times CronSchedule.next_after.

Run: ``python bench/schedule_tick.py [--jobs 1000] [--ticks 20]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crawler.clock import ManualClock  # noqa: E402
from crawler.console.launcher import Launcher  # noqa: E402
from crawler.schedule.cron_schedule import CronSchedule  # noqa: E402
from crawler.schedule.scheduler import Scheduler  # noqa: E402

ORDER = """name: job{i}
operator: {{contact_url: "https://example.org/about-our-crawler"}}
seeds: {{urls: ["http://127.0.0.1:9/"]}}
schedule: "H * * * *"
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--ticks", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        jobs = Path(tmp) / "jobs"
        for i in range(args.jobs):
            job = jobs / f"job{i}"
            job.mkdir(parents=True)
            (job / "order.yaml").write_text(ORDER.format(i=i))
        clock = ManualClock(1_700_000_000.0)
        scheduler = Scheduler(jobs, Launcher(), clock=clock)
        started = time.perf_counter()
        assert scheduler.tick() == []
        first = time.perf_counter() - started
        started = time.perf_counter()
        for _ in range(args.ticks):
            clock.advance(1.0)
            assert scheduler.tick() == []
        steady = (time.perf_counter() - started) / args.ticks
        for job in jobs.iterdir():
            os.utime(job / "order.yaml", ns=(1, 1))
        started = time.perf_counter()
        scheduler.tick()
        touched = time.perf_counter() - started
    cron = CronSchedule("*/5 * * * *")
    started = time.perf_counter()
    for i in range(10_000):
        cron.next_after(1_700_000_000.0 + i * 37)
    per_next_us = (time.perf_counter() - started) / 10_000 * 1e6
    print(f"jobs: {args.jobs}; load average {os.getloadavg()[0]:.2f}")
    print(f"first tick (every order read and validated): {first * 1000:.0f} ms")
    print(f"steady tick (nothing changed):               {steady * 1000:.1f} ms")
    print(f"tick after every order was touched:          {touched * 1000:.0f} ms")
    print(f"CronSchedule.next_after:                     {per_next_us:.0f} us")


if __name__ == "__main__":
    main()
