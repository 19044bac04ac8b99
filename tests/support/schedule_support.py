"""What the scheduler tests share: a jobs directory whose job crawls a local sample site, and
waiting for the crawls the scheduler launched."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import yaml

from crawler.console.launcher import Launcher
from crawler.demo import SampleSite
from crawler.reports.status import read_status

T0 = 1_700_000_000.0
"""2023-11-14T22:13:20Z: the fake clock's start (the hour's fire time is 23:00:00)."""
HOUR_FIRE = 1_700_002_800.0


def make_job(
    jobs_dir: Path,
    site: SampleSite,
    schedule: str | None = "0 * * * *",
    name: str = "site",
    **extra: Any,
) -> Path:
    """``jobs_dir/<name>/order.yaml``: crawl ``site`` (2 threads, no politeness) on
    ``schedule``; ``extra`` keys go into the order as they are."""
    job = jobs_dir / name
    job.mkdir(parents=True, exist_ok=True)
    order: dict[str, Any] = {
        "name": name,
        "operator": {"contact_url": "https://example.org/about-our-crawler"},
        "seeds": {"urls": site.base_urls[:1]},
        "toe_threads": 2,
        "frontier": {
            "politeness": {"delay_factor": 0, "min_delay_ms": 0, "max_delay_ms": 0},
        },
        "logging": {"console": False, "display": False, "progress_interval_s": 1},
        **extra,
    }
    if schedule is not None:
        order["schedule"] = schedule
    (job / "order.yaml").write_text(yaml.safe_dump(order), encoding="utf-8")
    return job


def wait_launch_done(launcher: Launcher, run_dir: Path, timeout_s: float = 90.0) -> int:
    """The exit code of the crawl ``launcher`` started in ``run_dir``, once it ended."""
    launch = launcher.get(run_dir)
    assert launch is not None, run_dir
    assert launch.done.wait(timeout_s), f"the crawl in {run_dir} did not end"
    assert launch.exit_code is not None
    return launch.exit_code


def wait_state(run_dir: Path, states: tuple[str, ...], timeout_s: float = 60.0) -> str:
    """Poll ``status.json`` until the crawl's state is one of ``states``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        doc = read_status(run_dir)
        if doc is not None and doc.get("state") in states:
            return str(doc["state"])
        time.sleep(0.1)
    raise AssertionError(f"{run_dir} never reached {states}: {read_status(run_dir)}")


def effective_import(run_dir: Path) -> str | None:
    """``history.import_from`` of the order the run ran with."""
    doc = yaml.safe_load((run_dir / "order.effective.yaml").read_text(encoding="utf-8"))
    value = doc["history"]["import_from"]
    return str(value) if value is not None else None


def app_events(run_dir: Path) -> str:
    """The run's application log (crawler.jsonl) as text."""
    return (run_dir / "logs" / "crawler.jsonl").read_text(encoding="utf-8")
