"""Cost of sheets per URI: ``Processor.params_for`` with no sheets, with sheets that do not match,
and with many sheets of which some match (first lookup of a URI, then the lookups of the other
processors of the same URI, served from ``curi.sheet``). Prints a table of microseconds per URI.

    .venv/bin/python bench/sheets_lookup.py
"""

from __future__ import annotations

import time
from pathlib import Path

from crawler.curi import CrawlURI
from crawler.order.loader import load_order
from crawler.order.schema import SheetConfig
from crawler.sheets import SheetOverlays
from processors.fetch.fetch_http import FetchHTTP

ROOT = Path(__file__).resolve().parents[1]
URIS = 100_000
HOSTS = 5_000


def sheets(count: int, prefix: str) -> list[SheetConfig]:
    return [
        SheetConfig.model_validate(
            {
                "name": f"s{n}",
                "hosts": [f"{prefix}{n}.example"],
                "surt_prefixes": [f"http://{prefix}{n}.example/private/"],
                "settings": {"chains.fetch.fetch_http.params.timeout_s": 30 + n % 7},
            }
        )
        for n in range(count)
    ]


def per_uri_us(overlays: SheetOverlays | None, lookups: int) -> float:
    proc = FetchHTTP("fetch_http")
    proc._sheets = overlays
    uris = [CrawlURI(f"http://h{n % HOSTS}.example/private/p{n}.html") for n in range(URIS)]
    start = time.perf_counter()
    for curi in uris:
        for _ in range(lookups):
            proc.params_for(curi)
    return (time.perf_counter() - start) / URIS * 1e6


def main() -> None:
    order = load_order(ROOT / "jobs" / "example" / "order.yaml")
    cases = [
        ("no sheets (ctx.sheets None)", None),
        ("sheets configured, none left", SheetOverlays(order, [])),
        ("1,000 sheets, none match", SheetOverlays(order, sheets(1000, "other"))),
        ("1,000 sheets, 1 in 5 URIs match 2", SheetOverlays(order, sheets(1000, "h"))),
    ]
    print(f"{'case':<36} {'1 lookup/URI us':>16} {'4 lookups/URI us':>17}")
    for name, overlays in cases:
        one = per_uri_us(overlays, 1)
        if overlays is not None:
            overlays.replace(overlays.configs)  # new version: no URI starts resolved
        four = per_uri_us(overlays, 4)
        print(f"{name:<36} {one:>16.2f} {four:>17.2f}")


if __name__ == "__main__":
    main()
