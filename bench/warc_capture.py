"""CPU and instructions per capture of the WARC write chain, by kind of capture.

``WARCWriterProcessor.process`` as a crawl runs it (the crawl history, the run's own digest
index in LevelDB, CDXJ entries handed to the background indexer, ISA-L at the default level or
``--level``) on captures of one kind at a time, shaped like the synthetic web's (``bench/web``):

* ``page``: a new 30 KB HTML page (deflated), 90 outlinks: response + request + metadata;
* ``image``: a new 3 KB PNG (stored, level 0): response + request + metadata;
* ``image-dup``: a 3 KB PNG another host's URI already captured (a digest index hit):
  identical-payload-digest revisit + request + metadata;
* ``page-job``: ``page`` with a job's index of earlier crawls behind the run's own (a crawl
  in a job), so each new payload is looked up in two LevelDBs.

Usage::

    .venv/bin/python bench/warc_capture.py [--kinds page,image,image-dup] [--n 2000] [--rounds 5]
        [--level N]
    .venv/bin/python bench/warc_capture.py --callgrind [--kinds page] [--small 100 --large 600]

The first form prints the median CPU-µs per capture (``time.process_time`` of one thread over
``--n`` captures, after a warm-up) of each kind. ``--callgrind`` runs the script under
``valgrind --tool=callgrind`` twice per kind, writing ``--small`` and ``--large`` captures
(both runs build ``--large`` captures first), and prints the instructions per capture:
``(Ir(large) - Ir(small)) / (large - small)``, start-up and set-up taken out. Output files go to
``--out`` (``bench/out/warc-capture/``). Another tree's code is measured with
``PYTHONPATH=<tree>`` (the script prints the tree it imported). Asserts nothing.
"""

from __future__ import annotations

import argparse
import logging
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import structlog

from crawler import CrawlURI, DecideRuleSequence, Link, Recording, SystemClock
from crawler.continuity.run_digest_index import open_run_digest_index
from crawler.history import CrawlHistory
from crawler.order.schema import CrawlOrder
from crawler.processor import ProcessorContext
from crawler.servers import ServerCache
from crawler.stats import CrawlStats
from processors.write import WARCWriterParams, WARCWriterProcessor

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out" / "warc-capture"
KINDS = ("page", "image", "image-dup", "page-job")
_WORDS = [
    "archive",
    "web",
    "crawl",
    "frontier",
    "queue",
    "host",
    "politeness",
    "robots",
    "sitemap",
    "record",
    "harvest",
]
_TOTALS = re.compile(rb"^(?:summary|totals):\s+(\d+)", re.M)
_REQUEST = (
    "GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: Mozilla/5.0 (compatible; crawler/0.1; "
    "+https://crawler.web.test/about)\r\nAccept: text/html,application/xhtml+xml,application/"
    "xml;q=0.9,*/*;q=0.8\r\nReferer: https://{host}/\r\nConnection: keep-alive\r\n\r\n"
)
_RESPONSE = (
    "HTTP/1.1 200 OK\r\nServer: nginx/1.24.0\r\nDate: Fri, 27 Nov 2026 22:13:20 GMT\r\n"
    "Content-Type: {ctype}\r\nContent-Length: {size}\r\nLast-Modified: Thu, 26 Nov 2026 "
    '10:00:00 GMT\r\nConnection: keep-alive\r\nETag: "{etag}"\r\nAccept-Ranges: bytes\r\n\r\n'
)


def _html(rng: random.Random, size: int) -> bytes:
    words: list[str] = []
    n = 0
    while n < size:
        word = rng.choice(_WORDS)
        words.append(word)
        n += len(word) + 1
    return ("<html><body><p>" + " ".join(words))[:size].encode()


def capture(kind: str, i: int, body: bytes) -> CrawlURI:
    """The CrawlURI of capture ``i`` of ``kind`` with payload ``body``, fetched and extracted."""
    host = f"h{i:05d}.web.test"
    page = kind.startswith("page")
    path = f"/p{i % 100}.html" if page else f"/img/i{i % 20}.png"
    ctype = "text/html" if page else "image/png"
    rec = Recording()
    rec.request_head = _REQUEST.format(path=path, host=host).encode()
    etag = f"{i:x}-{len(body):x}"
    rec.response_head = _RESPONSE.format(ctype=ctype, size=len(body), etag=etag).encode()
    rec.write_body(body)
    headers = [
        ("Server", "nginx/1.24.0"),
        ("Content-Type", ctype),
        ("Content-Length", str(len(body))),
        ("Last-Modified", "Thu, 26 Nov 2026 10:00:00 GMT"),
        ("ETag", f'"{etag}"'),
    ]
    links = []
    if page:
        for k in range(90):
            other = f"h{(i + k) % 10000:05d}.web.test" if k % 5 == 0 else host
            links.append(Link(f"https://{other}/p{k}.html", "L", "a/@href"))
    return CrawlURI(
        f"https://{host}{path}",
        via=f"https://{host}/",
        hop_path="LLE"[: 2 if page else 3],
        status=200,
        http_status=200,
        content_type=ctype,
        response_headers=headers,
        recording=rec,
        payload_digest=rec.payload_digest,
        fetch_start_ms=int(time.time() * 1000),
        fetch_duration_ms=3,
        ip_address="127.0.0.1",
        outlinks=links,
    )


LEVEL: int | None = None
"""``--level``: the WARC writer's ``compress_level`` (None: the default)."""


def captures(kind: str, count: int, seed: int = 7) -> list[CrawlURI]:
    """``count`` captures of ``kind``; for ``image-dup`` the first is the original."""
    rng = random.Random(seed)
    if kind.startswith("page"):
        base = _html(rng, 30_000)
        return [
            capture(kind, i, base + f"<!-- {i} --></body></html>".encode()) for i in range(count)
        ]
    if kind == "image":
        return [capture(kind, i, rng.randbytes(3_000)) for i in range(count)]
    same = rng.randbytes(3_000)
    return [capture(kind, i, same) for i in range(count)]


class Bench:
    """One writer with its history and digest index in a temporary run directory."""

    def __init__(self, kind: str) -> None:
        self._tmp = tempfile.TemporaryDirectory()
        run_dir = Path(self._tmp.name)
        state = run_dir / "state"
        self.history = CrawlHistory.open(state)
        job_index = run_dir / "job-index" if kind == "page-job" else None
        self.digests = open_run_digest_index(state, job_index=job_index)
        ctx = ProcessorContext(
            run_dir=run_dir,
            state_dir=state,
            order=CrawlOrder(name="bench", operator={"contact_url": "http://x/"}),
            stats=CrawlStats(),
            logger=structlog.get_logger(),
            clock=SystemClock(),
            stopping=threading.Event(),
            servers=ServerCache(),
            scope=DecideRuleSequence(),
            schedule=lambda curi: True,
            uri_error=lambda base, message, raw: None,
            history=self.history,
            digest_index=self.digests,
        )
        params = WARCWriterParams() if LEVEL is None else WARCWriterParams(compress_level=LEVEL)
        self.writer = WARCWriterProcessor("warc", params)
        self.writer.start(ctx)

    def write(self, curis: list[CrawlURI]) -> float:
        """Write ``curis``; CPU seconds of this thread."""
        process = self.writer.process
        t0 = time.thread_time()
        for curi in curis:
            process(curi)
        return time.thread_time() - t0

    def close(self) -> None:
        self.writer.stop()
        self.digests.close()
        self.history.close()
        self._tmp.cleanup()


def cpu_per_capture(kind: str, n: int, rounds: int) -> list[float]:
    """CPU-µs per capture of each round of ``n`` captures (after a warm-up of 200)."""
    warm = 200
    curis = captures(kind, warm + n * rounds)
    bench = Bench(kind)
    try:
        bench.write(curis[:warm])
        figures = []
        for r in range(rounds):
            batch = curis[warm + r * n : warm + (r + 1) * n]
            figures.append(bench.write(batch) * 1e6 / n)
    finally:
        bench.close()
        for curi in curis:
            curi.close_recording()
    return figures


def inner(kind: str, build: int, write: int) -> None:
    """The run callgrind counts: build ``build`` captures, write ``write`` of them."""
    curis = captures(kind, build)
    bench = Bench(kind)
    try:
        bench.write(curis[:write])
    finally:
        bench.close()


def callgrind(kind: str, small: int, large: int, out_dir: Path) -> tuple[int, int, float]:
    """(Ir small, Ir large, Ir per capture) of ``kind``; callgrind's files in ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    counts = []
    for write in (small, large):
        out = out_dir / f"{kind}-{write}.out"
        cmd = [
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
            sys.executable, __file__, "--inner", kind, str(large), str(write),
            *(["--level", str(LEVEL)] if LEVEL is not None else []),
        ]  # fmt: skip
        subprocess.run(cmd, check=True, capture_output=True)
        m = _TOTALS.search(out.read_bytes())
        if m is None:
            raise SystemExit(f"{out}: no totals line")
        counts.append(int(m.group(1)))
    return counts[0], counts[1], (counts[1] - counts[0]) / (large - small)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kinds", default="page,image,image-dup")
    parser.add_argument("--n", type=int, default=2000, help="captures per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--callgrind", action="store_true")
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=600)
    parser.add_argument("--out", type=Path, default=OUT, help="callgrind's output directory")
    parser.add_argument(
        "--level", type=int, help="the writer's compress_level (default: the order's default)"
    )
    parser.add_argument("--inner", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    global LEVEL
    LEVEL = args.level
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    if args.inner:
        inner(args.inner[0], int(args.inner[1]), int(args.inner[2]))
        return
    import crawler

    print(f"code of {Path(crawler.__file__).parent.parent}")
    kinds = args.kinds.split(",")
    for kind in kinds:
        if kind not in KINDS:
            raise SystemExit(f"--kinds: unknown kind {kind!r} (one of {', '.join(KINDS)})")
    for kind in kinds:
        if args.callgrind:
            small, large, per = callgrind(kind, args.small, args.large, args.out)
            print(f"{kind:>10}  Ir {small:,} / {large:,}  per capture {per:,.0f}")
        else:
            figures = cpu_per_capture(kind, args.n, args.rounds)
            text = " ".join(f"{f:.0f}" for f in figures)
            print(f"{kind:>10}  CPU-us/capture median {statistics.median(figures):.0f}  ({text})")


if __name__ == "__main__":
    main()
