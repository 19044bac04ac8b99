"""CPU and size of a WARC response record's gzip member at each deflate level.

Run: ``.venv/bin/python bench/deflate_levels.py [--dir DIR] [--rounds N]``. DIR defaults to the
site ``make bench-web`` generates (``bench/out/web/web-10000x100/site``: its HTML templates,
images and style sheet; every fetch of bench-web serves one of them). Each file becomes a
record body behind a short HTTP head and is deflated as the WARC writer deflates a record
(:func:`processors.write.warc_streams.gzip_member`, one call) by ISA-L at levels 1-3 and zlib
at levels 1 and 6 (Heritrix's), in rounds that alternate the levels. Prints the median CPU-µs
per record (``time.thread_time``) and the compressed size as a share of the input. Asserts
nothing beyond every member inflating back to its input.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from processors.write.warc_streams import gzip_member  # noqa: E402

DEFAULT_DIR = ROOT / "bench" / "out" / "web" / "web-10000x100" / "site"
LEVELS = (("isal", 1), ("isal", 2), ("isal", 3), ("zlib", 1), ("zlib", 6))
HEAD = b"HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/html\r\n\r\n"


def records(root: Path) -> list[bytes]:
    """A response record's block for every file under ``root``."""
    return [HEAD + p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="files to deflate")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    blocks = records(args.dir)
    if not blocks:
        sys.exit(f"no files under {args.dir} (make a site with bench/web/gen_web.py)")
    size = sum(map(len, blocks))
    times: dict[tuple[str, int], list[float]] = {level: [] for level in LEVELS}
    ratio: dict[tuple[str, int], float] = {}
    for _ in range(args.rounds):
        for lib, level in LEVELS:
            t0 = time.thread_time()
            members = [gzip_member(b, level, lib) for b in blocks]
            times[(lib, level)].append((time.thread_time() - t0) * 1e6 / len(blocks))
            ratio[(lib, level)] = sum(map(len, members)) / size
            for block, member in zip(blocks, members, strict=True):
                assert zlib.decompress(member, zlib.MAX_WBITS + 16) == block
    print(f"{len(blocks)} records of {size // len(blocks):,} B on average from {args.dir}")
    print("| deflate | CPU-µs per record (median) | size of the input |")
    print("|---|--:|--:|")
    for lib, level in LEVELS:
        median = statistics.median(times[(lib, level)])
        print(f"| {lib} {level} | {median:,.0f} | {100 * ratio[(lib, level)]:.1f}% |")


if __name__ == "__main__":
    main()
