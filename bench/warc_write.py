"""WARC write throughput of WARCWriterProcessor on a realistic mix of captures.

Run: ``.venv/bin/python bench/warc_write.py [URIS]`` (or ``make bench-warc``). Prints a table;
asserts nothing. The mix (by count): 45% HTML 10-80 KB of word-like text (compresses ~4x),
25% images 2-150 KB (incompressible), 12% CSS/JS 5-60 KB text, 8% redirects/404s with empty or
tiny bodies, 2% PDFs/binaries 0.5-3 MB, and 8% payloads already captured (dedup revisits).
Each URI gets response + request + metadata records, gzip members deflated with the writer's
default (ISA-L level 3), history (dedup) on.
MB/s counts the bytes captured (HTTP heads + bodies) per wall-clock second.
"""

from __future__ import annotations

import random
import resource
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import structlog

from crawler import CrawlURI, DecideRuleSequence, Link, Recording, SystemClock
from crawler.history import CrawlHistory
from crawler.order.schema import CrawlOrder
from crawler.processor import ProcessorContext
from crawler.servers import ServerCache
from crawler.stats import CrawlStats
from processors.write import WARCWriterParams, WARCWriterProcessor

WORDS = [
    "the",
    "archive",
    "crawler",
    "page",
    "link",
    "text",
    "web",
    "content",
    "python",
    "data",
    "index",
    "search",
    "about",
    "news",
    "contact",
    "home",
    "product",
    "service",
    "review",
    "article",
    "comment",
    "user",
    "login",
    "help",
    "policy",
]


def text(rng: random.Random, size: int) -> bytes:
    out: list[str] = []
    n = 0
    while n < size:
        word = rng.choice(WORDS) if rng.random() < 0.9 else str(rng.randrange(100000))
        out.append(word)
        n += len(word) + 1
    return " ".join(out).encode()[:size]


def make_mix(n: int, seed: int = 1) -> list[tuple[str, str, int, bytes]]:
    """(uri, content type, status, body) for n captures."""
    rng = random.Random(seed)
    mix: list[tuple[str, str, int, bytes]] = []
    for i in range(n):
        roll = rng.random()
        uri = f"http://host{i % 40}.example/p/{i}"
        if roll < 0.45:
            mix.append((uri, "text/html", 200, text(rng, rng.randint(10_000, 80_000))))
        elif roll < 0.70:
            mix.append((uri, "image/jpeg", 200, rng.randbytes(rng.randint(2_000, 150_000))))
        elif roll < 0.82:
            mix.append((uri, "text/css", 200, text(rng, rng.randint(5_000, 60_000))))
        elif roll < 0.90:
            mix.append((uri, "text/html", rng.choice((301, 404)), text(rng, rng.randint(0, 300))))
        elif roll < 0.92:
            size = rng.randint(500_000, 3_000_000)
            mix.append((uri, "application/pdf", 200, rng.randbytes(size)))
        elif mix:
            _, ctype, status, body = mix[rng.randrange(len(mix))]
            mix.append((uri, ctype, status, body))
        else:
            mix.append((uri, "text/html", 200, text(rng, 20_000)))
    return mix


def curi_of(uri: str, ctype: str, status: int, body: bytes) -> CrawlURI:
    rec = Recording()
    path = uri.split("/", 3)[3]
    rec.request_head = (
        f"GET /{path} HTTP/1.1\r\nHost: {uri.split('/')[2]}\r\nUser-Agent: bench\r\n\r\n".encode()
    )
    rec.response_head = (
        f"HTTP/1.1 {status} X\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
        "Server: bench\r\nDate: Tue, 14 Nov 2023 22:13:20 GMT\r\n\r\n"
    ).encode()
    rec.write_body(body)
    links = [Link(f"{uri}/l{k}", "L", "a/@href") for k in range(20)] if ctype == "text/html" else []
    return CrawlURI(
        uri,
        via="http://host0.example/",
        hop_path="LL",
        status=status,
        http_status=status,
        content_type=ctype,
        recording=rec,
        payload_digest=rec.payload_digest,
        fetch_start_ms=int(time.time() * 1000),
        fetch_duration_ms=12,
        ip_address="127.0.0.1",
        outlinks=links,
    )


def run(mix: list[tuple[str, str, int, bytes]], threads: int, dedup: bool) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp)
        history = CrawlHistory.open(run_dir / "state")
        ctx = ProcessorContext(
            run_dir=run_dir,
            state_dir=run_dir / "state",
            order=CrawlOrder(name="bench", operator={"contact_url": "http://x/"}),
            stats=CrawlStats(),
            logger=structlog.get_logger(),
            clock=SystemClock(),
            stopping=threading.Event(),
            servers=ServerCache(),
            scope=DecideRuleSequence(),
            schedule=lambda curi: True,
            uri_error=lambda base, message, raw: None,
            history=history,
        )
        writer = WARCWriterProcessor("warc", WARCWriterParams(dedup=dedup))
        writer.start(ctx)
        curis = [curi_of(*item) for item in mix]
        captured = sum(len(c.recording.response_head) + c.recording.body_size for c in curis)
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        if threads == 1:
            for curi in curis:
                writer.process(curi)
        else:
            with ThreadPoolExecutor(threads) as pool:
                list(pool.map(writer.process, curis))
        writer.stop()
        wall = time.perf_counter() - t0
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        history.close()
        cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
        written = sum(p.stat().st_size for p in (run_dir / "warcs").iterdir())
        revisits = sum("duplicate:digest" in c.annotations for c in curis)
        for curi in curis:
            curi.close_recording()
    mb = captured / 1e6
    return [
        f"{threads:>7} {'on' if dedup else 'off':>5} {len(mix):>6} {mb:>9.1f} "
        f"{mb / wall:>8.1f} {written / 1e6:>9.1f} {len(mix) / wall:>8.0f} "
        f"{cpu * 1000 / len(mix):>8.2f} {revisits:>8}"
    ]


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    mix = make_mix(n)
    print("WARC write throughput (gzip, ISA-L level 3; response+request+metadata per URI)")
    print(f"{'threads':>7} {'dedup':>5} {'URIs':>6} {'MB in':>9} {'MB/s':>8} {'MB out':>9} "
          f"{'URIs/s':>8} {'CPU ms':>8} {'revisits':>8}")  # fmt: skip
    for threads, dedup in ((1, True), (1, False), (4, True)):
        for line in run(mix, threads, dedup):
            print(line)


if __name__ == "__main__":
    main()
