"""Page-text benchmark: CPU-ms per page of :func:`crawler.archive.page_text.html_text` on real
HTML (python3-doc's library pages), and of resiliparse and trafilatura when this Python has them
(they are not dependencies: ``pip install resiliparse trafilatura`` into a scratch virtualenv to
compare). Usage: ``python bench/page_text.py [--pages 300]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DOCS = Path("/usr/share/doc/python3-doc/html/library")


def extractors() -> dict[str, Callable[[bytes], str]]:
    found: dict[str, Callable[[bytes], str]] = {}
    try:
        from crawler.archive.page_text import html_text

        found["html_text (selectolax/lexbor)"] = html_text
    except ImportError:
        pass
    try:
        from resiliparse.extract.html2text import extract_plain_text
        from resiliparse.parse.html import HTMLTree

        found["resiliparse"] = lambda b: extract_plain_text(HTMLTree.parse_from_bytes(b))
        found["resiliparse main_content"] = lambda b: extract_plain_text(
            HTMLTree.parse_from_bytes(b), main_content=True
        )
    except ImportError:
        pass
    try:
        import trafilatura

        found["trafilatura"] = lambda b: trafilatura.extract(b.decode("utf-8", "replace")) or ""
    except ImportError:
        pass
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=300)
    args = parser.parse_args()
    files = sorted(DOCS.glob("*.html"))[: args.pages]
    if not files:
        sys.exit(f"{DOCS}: no HTML (apt-get install python3-doc)")
    docs = [f.read_bytes() for f in files]
    kb = sum(map(len, docs)) / len(docs) / 1024
    print(f"{len(docs)} pages of {DOCS}, {kb:.0f} KB on average")
    print(f"{'extractor':>30} {'CPU-ms/page':>12} {'chars/page':>11}")
    for name, fn in extractors().items():
        fn(docs[0])
        t0, chars = time.process_time(), 0
        for doc in docs:
            chars += len(fn(doc))
        ms = (time.process_time() - t0) * 1000 / len(docs)
        print(f"{name:>30} {ms:>12.2f} {chars / len(docs):>11.0f}")


if __name__ == "__main__":
    main()
