"""ExtractorHTML throughput over a directory of real HTML pages (pages/s, links/s, µs per page).

Run: ``.venv/bin/python bench/extract_html.py [DIR] [ROUNDS]``; DIR defaults to the Python
documentation of Debian's python3-doc package (``/usr/share/doc/python3-doc/html``). Each page
is loaded into a Recording once; the timed loop runs only the extractor. Prints a table;
asserts nothing.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from crawler import CrawlURI, Recording
from processors.extract import ExtractorHTML, ExtractorHTMLParams

DEFAULT_DIR = Path("/usr/share/doc/python3-doc/html")


def load(root: Path) -> list[tuple[str, bytes]]:
    pages = []
    for path in sorted(root.rglob("*.html")):
        rel = path.relative_to(root).as_posix()
        pages.append((f"https://docs.python.org/3/{rel}", path.read_bytes()))
    return pages


def run(extractor: ExtractorHTML, pages: list[tuple[str, bytes]]) -> tuple[float, int]:
    curis = []
    for uri, body in pages:
        rec = Recording(in_memory_bytes=len(body) + 1)
        rec.write_body(body)
        curis.append(
            CrawlURI(uri, status=200, content_type="text/html; charset=utf-8", recording=rec)
        )
    start = time.perf_counter()
    for curi in curis:
        extractor.process(curi)
    elapsed = time.perf_counter() - start
    return elapsed, sum(len(c.outlinks) for c in curis)


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DIR
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    pages = load(root)
    if not pages:
        sys.exit(f"no *.html under {root}")
    total_bytes = sum(len(body) for _, body in pages)
    mean_kb = total_bytes / len(pages) / 1e3
    print(f"{len(pages)} pages, {total_bytes / 1e6:.1f} MB, mean {mean_kb:.1f} KB")
    print(f"{'variant':<28}{'pages/s':>10}{'links/s':>12}{'µs/page':>10}{'links':>9}")
    variants = {
        "default": ExtractorHTMLParams(),
        "tag scanner only": ExtractorHTMLParams(max_tree_parse_bytes=0),
    }
    for label, params in variants.items():
        extractor = ExtractorHTML("html", params)
        best = min((run(extractor, pages) for _ in range(rounds)), key=lambda r: r[0])
        seconds, links = best
        print(
            f"{label:<28}{len(pages) / seconds:>10,.0f}{links / seconds:>12,.0f}"
            f"{seconds * 1e6 / len(pages):>10,.0f}{links:>9,}"
        )


if __name__ == "__main__":
    main()
