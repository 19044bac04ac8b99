"""Measures the console's cost on a running crawl (not a test; run it by hand):

    .venv/bin/python bench/console_overhead.py [--seconds 30]

Two crawls of the sample site (latency 20 ms, 4 threads), each launched through the console's
API: during the first nobody looks; during the second a headless Chromium shows the run view
(polling every 1.5 s). Prints the CPU seconds the console process used in each window, the
crawl's own CPU seconds and the page weight of the run view."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "console"))

from console_support import ROOT, ConsoleProc, chromium, wait_until

from crawler.demo import SampleSite


def proc_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_window(console: ConsoleProc, seconds: float, watch: bool) -> dict[str, float]:
    launched = console.api("POST", "/api/jobs/sample/launch", json={"sets": ["toe_threads=4"]})
    launched.raise_for_status()
    run_id = launched.json()["run"]["id"]
    crawl_pid = launched.json()["pid"]
    wait_until(lambda: console.api("GET", f"/api/runs/{run_id}").json()["state"] == "RUNNING")
    weight = 0.0
    with chromium() as browser:
        page = None
        if watch:
            page = browser.new_page(viewport={"width": 1280, "height": 860})
            sizes: dict[str, int] = {}
            kinds = ("document", "script", "stylesheet")

            def weigh(response: Any) -> None:
                if response.status == 200 and response.request.resource_type in kinds:
                    sizes[response.url] = len(response.body())

            page.on("response", weigh)
            page.goto(f"{console.url}/login?token={console.token}")
            page.goto(f"{console.url}/#/runs/{run_id}")
            page.wait_for_selector("#state .badge")
            weight = float(sum(sizes.values()))
        console_0, crawl_0 = console.cpu_s(), proc_cpu_s(crawl_pid)
        time.sleep(seconds)
        console_1, crawl_1 = console.cpu_s(), proc_cpu_s(crawl_pid)
        downloaded = console.api("GET", f"/api/runs/{run_id}").json()["status"]["downloaded"]
    console.api("POST", f"/api/runs/{run_id}/terminate", params={"wait_s": 30})
    return {
        "console_cpu_s": console_1 - console_0,
        "crawl_cpu_s": crawl_1 - crawl_0,
        "downloaded": downloaded,
        "page_weight": weight,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        SampleSite(pages_per_host=3000, latency_s=0.02) as site,
    ):
        job = Path(tmp) / "jobs" / "sample"
        job.mkdir(parents=True)
        shutil.copy(ROOT / "jobs" / "example" / "order.yaml", job / "order.yaml")
        (job / "seeds.txt").write_text("\n".join(site.base_urls) + "\n")
        console = ConsoleProc(Path(tmp) / "jobs", "overhead-token")
        try:
            idle = one_window(console, args.seconds, watch=False)
            watched = one_window(console, args.seconds, watch=True)
        finally:
            console.stop()
    print(f"window: {args.seconds:.0f} s of a running crawl (4 threads, 20 ms latency)")
    for label, row in (("no browser", idle), ("run view open", watched)):
        print(
            f"{label:>14}: console {row['console_cpu_s']:.2f} CPU s "
            f"({row['console_cpu_s'] / args.seconds * 100:.1f}% of a core); "
            f"crawl {row['crawl_cpu_s']:.2f} CPU s, {row['downloaded']:.0f} URIs downloaded"
        )
    print(f"run view page weight (HTML+JS+CSS): {watched['page_weight']:.0f} bytes")


if __name__ == "__main__":
    main()
