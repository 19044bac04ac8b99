"""Cost of the checks ``crawler run`` makes before it makes a run directory
(:func:`crawler.order.preflight.load_checked_order`) next to loading the order alone
(:func:`crawler.order.loader.load_order`), for the example job and for seeds files of 10^4 and
10^5 URLs (read once by the checks, once more by the crawl). Prints milliseconds (best of 3).

    .venv/bin/python bench/preflight.py
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from crawler.order.loader import load_order
from crawler.order.preflight import load_checked_order

ROOT = Path(__file__).resolve().parents[1]


def best_ms(call: Callable[[], object], rounds: int = 3) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="bench-preflight-"))
    try:
        shutil.copytree(ROOT / "jobs" / "example", work / "job")
        order = work / "job" / "order.yaml"
        load_checked_order(order)  # imports and component modules, once
        print(f"{'seeds':>8} {'load_order ms':>14} {'load_checked_order ms':>22}")
        for seeds in (0, 10_000, 100_000):
            if seeds:
                lines = (f"http://host{n % 997}.example/page/{n}" for n in range(seeds))
                (work / "job" / "seeds.txt").write_text("\n".join(lines) + "\n")
            plain = best_ms(lambda: load_order(order))
            checked = best_ms(lambda: load_checked_order(order))
            print(f"{seeds or 'example':>8} {plain:>14.1f} {checked:>22.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
