"""CPU per page of the media rule's scan (``media_page_reason``): the plain scan vs the gated one.

Run: ``.venv/bin/python bench/media_scan.py [--dir DIR] [--rounds N]``. DIR defaults to the
templates of a bench-web site (``bench/web/gen_web.py``; every page of bench-web is one of them).
Each page is put into a Recording and decoded once (as ExtractorHTML does before the media
extractor runs), then ``media_page_reason`` is timed with ``time.process_time`` in rounds that
alternate the two scans: ``plain`` is the scan before the gates (lower-case, five ``in``
searches; kept here as the reference), ``gated`` the one in ``processors.media``. The pages are
timed as they are (none holds a needle) and with markers put in their middle (``markers``: a
``<video>`` tag and an ``og:video`` meta, so both scans go on to the markers).

``--callgrind`` prints instructions per call instead (valgrind's callgrind, which does not move
with the machine's load): the script runs under callgrind once with no timed calls and once with
``--rounds`` of them for each scan, and the difference is divided by the calls.
Prints a table; asserts nothing beyond both scans agreeing on every page.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from crawler import CrawlURI, Recording
from processors.media import media_page_rule
from processors.media.media_page_rule import SCAN_BYTES, media_page_reason

DEFAULT_DIR = Path("/tmp/web-s8/prof/web-10000x100/site/t")
MARKERS = b'<meta property="og:video" content="https://x.test/v.mp4"><video src="v.mp4"></video>'
_NEEDLES = (b"video", b"audio", b"player", b".m3u8", b".mpd")
_MARKERS = (
    b"<video", b"<audio", b".m3u8", b".mpd", b"og:video", b"og:audio", b"twitter:player",
    b"videoobject", b"audioobject", b"jwplayer", b"data-setup", b"video-js", b"flowplayer",
)  # fmt: skip
_HOSTS = (b"brightcove", b"kaltura", b"wistia", b"vidyard", b"jwplatform")
_HOSTED = re.compile(
    rb"(?:brightcove|kaltura|wistia|vidyard|jwplatform)[\w./ \"'=-]{0,60}(?:player|embed)"
)


def plain_markup(html: bytes) -> str | None:
    """The scan before the gates (lower-case, five needle searches, then hosts and markers)."""
    low = html.lower()
    if not any(needle in low for needle in _NEEDLES):
        return None
    if any(host in low for host in _HOSTS) and _HOSTED.search(low):
        return "hosted"
    return "markup" if any(marker in low for marker in _MARKERS) else None


SCANS: dict[str, Callable[[bytes], str | None]] = {
    "plain": plain_markup,
    "gated": media_page_rule.player_markup,
}


def load(root: Path, markers: bool) -> list[CrawlURI]:
    """One decoded CrawlURI per ``*.html`` under ``root`` (markers put in the middle if asked)."""
    curis = []
    for i, path in enumerate(sorted(root.rglob("*.html"))):
        body = path.read_bytes()
        if markers:
            body = body[: len(body) // 2] + MARKERS + body[len(body) // 2 :]
        rec = Recording(in_memory_bytes=len(body) + 1)
        rec.write_body(body)
        curi = CrawlURI(
            f"https://h{i}.web.test/p{i}.html", status=200, content_type="text/html", recording=rec
        )
        rec.decoded_body(None, SCAN_BYTES)
        curis.append(curi)
    # The first call reads yt-dlp's extractor list (ExtractorUrlIndex, once per process): not
    # part of a page's cost.
    media_page_reason(curis[0])
    return curis


def run(scan: str, curis: list[CrawlURI], rounds: int) -> float:
    """CPU seconds of ``rounds`` passes of ``media_page_reason`` over ``curis`` with ``scan``."""
    media_page_rule.player_markup = SCANS[scan]  # type: ignore[assignment]
    start = time.process_time()
    for _ in range(rounds):
        for curi in curis:
            media_page_reason(curi)
    return time.process_time() - start


def check(curis: list[CrawlURI]) -> None:
    for curi in curis:
        answers = set()
        for scan in SCANS:
            media_page_rule.player_markup = SCANS[scan]  # type: ignore[assignment]
            answers.add(media_page_reason(curi))
        if len(answers) != 1:
            sys.exit(f"the scans disagree on {curi.uri}: {answers}")


def timed(root: Path, rounds: int, repeats: int) -> None:
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min)")
    print(
        f"{'pages':<10}{'scan':<8}{'KB/page':>9}{'CPU-µs/page (alternating runs)':>40}{'best':>8}"
    )
    for markers in (False, True):
        curis = load(root, markers)
        check(curis)
        kb = sum(c.recording.body_size for c in curis if c.recording) / len(curis) / 1024
        runs: dict[str, list[float]] = {scan: [] for scan in SCANS}
        for _ in range(repeats):
            for scan in SCANS:
                runs[scan].append(run(scan, curis, rounds) * 1e6 / (rounds * len(curis)))
        for scan, us in runs.items():
            label = "markers" if markers else "as is"
            figures = " ".join(f"{u:.1f}" for u in us)
            print(f"{label:<10}{scan:<8}{kb:>9.1f}{figures:>40}{min(us):>8.1f}")
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min)")


def instructions(args: list[str]) -> int:
    """Instructions callgrind counts for this script run with ``args``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable,
             __file__, *args],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        for line in out.read_text().splitlines():
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise SystemExit(f"no totals in callgrind's output for {args}")


def callgrind(root: Path, rounds: int) -> None:
    pages = len(list(root.rglob("*.html")))
    print(f"{'pages':<10}{'scan':<8}{'instructions/call':>20}")
    for markers in ([], ["--markers"]):
        label = "markers" if markers else "as is"
        for scan in SCANS:
            common = ["--only", scan, "--dir", str(root), *markers]
            base = instructions([*common, "--rounds", "0"])
            total = instructions([*common, "--rounds", str(rounds)])
            print(f"{label:<10}{scan:<8}{(total - base) / (rounds * pages):>20,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="HTML pages (*.html)")
    parser.add_argument("--rounds", type=int, default=20, help="passes over the pages per run")
    parser.add_argument("--repeats", type=int, default=3, help="alternating runs of each scan")
    parser.add_argument("--callgrind", action="store_true", help="instructions per call")
    parser.add_argument("--only", choices=sorted(SCANS), help=argparse.SUPPRESS)
    parser.add_argument("--markers", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not any(args.dir.rglob("*.html")):
        sys.exit(f"no *.html under {args.dir} (make a site with bench/web/gen_web.py)")
    if args.only:
        run(args.only, load(args.dir, args.markers), args.rounds)
    elif args.callgrind:
        callgrind(args.dir, args.rounds)
    else:
        timed(args.dir, args.rounds, args.repeats)


if __name__ == "__main__":
    main()
