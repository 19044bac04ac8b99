"""Peak RSS of the frontier with 10^7 URIs queued, and the Bloom filter's real false-positive rate.

RSS: a child process schedules N URIs over 10^5 hosts into the LevelDB frontier (default store
and uniq filter), sampling its resident set size every N/10 URIs; its ``ru_maxrss`` is the peak.
Flat means the samples stop growing: the frontier lives on disk, not in RAM.

Bloom: for 10^6 URIs at 1% and 0.01%, the measured false-positive rate over 10^6 URIs never
added, against the target and the formula (1 - e^(-kn/m))^k, and the bytes per URI.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HOSTS = 100_000


def rss_mb() -> tuple[float, float, float]:
    """(resident, anonymous, file-backed) MB of this process, from /proc/self/status."""
    values = {"VmRSS:": 0.0, "RssAnon:": 0.0, "RssFile:": 0.0}
    with open("/proc/self/status") as status:
        for line in status:
            name = line.split(":", 1)[0] + ":"
            if name in values:
                values[name] = int(line.split()[1]) / 1024
    return values["VmRSS:"], values["RssAnon:"], values["RssFile:"]


def rss_child(n: int, out_path: str) -> None:
    """Schedule ``n`` URIs into a fresh LevelDB frontier; write samples and peak to out_path."""
    from frontier_throughput import config  # bench/ is sys.path[0] in the child

    from crawler.curi import CrawlURI
    from crawler.frontier import (
        HostnameQueueAssignmentPolicy,
        LevelDBQueueStore,
        WorkQueueFrontier,
    )
    from crawler.uniq import LevelDBUriUniqFilter

    samples: list[tuple[int, float, float, float, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-rss-") as tmp:
        f = WorkQueueFrontier(
            LevelDBQueueStore(), HostnameQueueAssignmentPolicy(), LevelDBUriUniqFilter(), config()
        )
        f.open(Path(tmp))
        step = max(1, n // 10)
        t0 = time.perf_counter()
        schedule = f.schedule
        for i in range(n):
            h = i % HOSTS
            schedule(CrawlURI(f"http://www{h}.example{h % 7}.com/s{i % 13}/page{i}.html"))
            if (i + 1) % step == 0:
                samples.append((i + 1, *rss_mb(), time.perf_counter() - t0))
        queued = f.snapshot().queued
        f.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    Path(out_path).write_text(json.dumps({"samples": samples, "peak_mb": peak, "queued": queued}))


def rss_run(n: int) -> tuple[str, dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rss.json"
        subprocess.run(
            [sys.executable, __file__, "rss-child", str(n), str(out)],
            check=True,
            cwd=ROOT,
        )
        data: dict[str, Any] = json.loads(out.read_text())
    lines = [
        f"Peak RSS {data['peak_mb']:.0f} MB with {data['queued']:,} URIs queued "
        f"over {HOSTS:,} hosts (goal <= 300 MB, flat).",
        "",
        "RSS = anonymous (the process's heap: Python objects, LevelDB caches and memtables) + "
        "file-backed (LevelDB reads its table files through mmap: clean page cache the kernel "
        "reclaims at will; it grows with the data on disk).",
        "",
        "| URIs scheduled | RSS MB | anon MB | file MB | elapsed s | URIs/s (cumulative) |",
        "|----------------|--------|---------|---------|-----------|---------------------|",
    ]
    for count, mb, anon, file_mb, elapsed in data["samples"]:
        lines.append(
            f"| {count:>14,} | {mb:>6.0f} | {anon:>7.0f} | {file_mb:>7.0f} | {elapsed:>9.0f} "
            f"| {count / elapsed:>19,.0f} |"
        )
    return "\n".join(lines), data


def bloom_run(n: int, probes: int) -> tuple[str, dict[str, Any]]:
    from crawler.uniq import BloomUriUniqFilter, BloomUriUniqFilterParams
    from crawler.uniq.bloom_bits import expected_fpr

    lines = [
        "| n         | target p | m/n bits | k  | formula p | measured p | bytes/URI "
        "| add() us | file MB |",
        "|-----------|----------|----------|----|-----------|------------|-----------"
        "|----------|---------|",
    ]
    results: dict[str, Any] = {}
    for p in (0.01, 1e-4):
        with tempfile.TemporaryDirectory(prefix="bench-bloom-") as tmp:
            f = BloomUriUniqFilter(
                BloomUriUniqFilterParams(expected_items=n, false_positive_rate=p, cache_size=0)
            )
            f.open(Path(tmp))
            add = f.add
            t = time.perf_counter()
            for i in range(n):
                add(f"http://www{i % 1000}.example.com/a/{i}.html")
            add_us = (time.perf_counter() - t) * 1e6 / n
            contains = f.contains
            hits = sum(
                contains(f"http://www{i % 1000}.example.org/b/{i}.html") for i in range(probes)
            )
            bits = f.bits
            assert bits is not None
            formula = expected_fpr(bits.bits, bits.hashes, n)
            measured = hits / probes
            per_uri = bits.size_bytes / n
            f.close()
        results[str(p)] = {
            "m_bits": bits.bits,
            "k": bits.hashes,
            "formula": formula,
            "measured": measured,
            "bytes_per_uri": per_uri,
            "add_us": add_us,
        }
        lines.append(
            f"| {n:>9,} | {p:>8.2%} | {bits.bits / n:>8.2f} | {bits.hashes:>2} | {formula:>9.4%} "
            f"| {measured:>10.4%} | {per_uri:>9.2f} | {add_us:>8.2f} "
            f"| {bits.size_bytes / 2**20:>7.2f} |"
        )
    return "\n".join(lines), results


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "rss-child":
        rss_child(int(sys.argv[2]), sys.argv[3])
    else:
        print(bloom_run(10**6, 10**6)[0])
        print(rss_run(int(sys.argv[1]) if len(sys.argv) > 1 else 10**7)[0])
