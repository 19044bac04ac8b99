"""What CDXJ indexing costs beside a crawl: the crawler's CPU seconds crawling the generated
corpus (bench/crawl/gensite.py, served by nginx, the crawl benchmark's order) with indexing off,
the CPU seconds of indexing the WARCs it wrote by reading them (``crawler index``: WarcScanner,
the import excluded), and, crawling again with indexing on, the CPU seconds the background
indexer spent making the indexes from the writer's entries (its ``warc_indexed`` log events).

Run: ``python bench/index_cost.py [--pages 5000] [--hosts 10] [--runs 1]``. Needs nginx.
Prints a table; bench/RESULTS.md quotes it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE / "crawl"))

import gensite  # noqa: E402
from nginx_server import NginxServer  # noqa: E402

from crawler.archive.indexer import CdxjIndexer, _indexer_class  # noqa: E402
from crawler.archive.run_layout import warc_dirs  # noqa: E402

CRAWLER = ROOT / ".venv" / "bin" / "crawler"


def crawl_cpu_s(starts: list[str], run_dir: Path, index: bool) -> tuple[float, float]:
    """Run the crawl in a child process; its (CPU seconds, wall seconds)."""
    argv = [
        str(CRAWLER), "run", str(HERE / "crawl" / "order.yaml"), "--no-display",
        "--set", f"seeds.urls={json.dumps(starts)}", "--set", "toe_threads=16",
        "--set", f"archive.index={'true' if index else 'false'}", "--run-dir", str(run_dir),
    ]  # fmt: skip
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"crawl failed ({status}): {' '.join(argv)}")
    return usage.ru_utime + usage.ru_stime, time.monotonic() - started


def writer_index_cpu_s(run_dir: Path) -> float:
    """CPU seconds the crawl's background indexer logged (``warc_indexed`` events)."""
    total = 0.0
    for line in (run_dir / "logs" / "crawler.jsonl").read_text().splitlines():
        if '"warc_indexed"' in line:
            total += float(json.loads(line)["cpu_s"])
    return total


def index_cpu_s(run_dir: Path) -> tuple[float, int, int]:
    """CPU seconds to index every WARC of the run again; (seconds, records, WARC bytes)."""
    _indexer_class()  # the library's import is paid once per process, not per WARC
    indexer = CdxjIndexer()
    records = size = 0
    with tempfile.TemporaryDirectory() as scratch:
        started = time.process_time()
        for wdir in warc_dirs(run_dir):
            for warc in wdir.warc_files():
                records += indexer.index(warc, Path(scratch)).records
                size += warc.stat().st_size
        return time.process_time() - started, records, size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=5000)
    parser.add_argument("--hosts", type=int, default=10)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--port-base", type=int, default=18301)
    args = parser.parse_args()
    out = ROOT / "bench" / "out"
    site = out / f"gensite-{args.pages}-{args.hosts}"
    gensite.generate(site, args.pages, args.hosts, args.port_base)
    roots = {args.port_base + h: (site / f"h{h:02d}").resolve() for h in range(args.hosts)}
    starts = [f"http://127.0.0.1:{port}/" for port in roots]
    server = NginxServer(out / "nginx-index-cost", roots)
    server.start()
    rows = []
    try:
        for _ in range(args.runs):
            work = Path(tempfile.mkdtemp(prefix="index-cost-"))
            try:
                off_cpu, off_wall = crawl_cpu_s(starts, work / "off", index=False)
                idx_cpu, records, size = index_cpu_s(work / "off")
                on_cpu, on_wall = crawl_cpu_s(starts, work / "on", index=True)
                bg_cpu = writer_index_cpu_s(work / "on")
                rows.append((off_cpu, off_wall, idx_cpu, records, size, on_cpu, on_wall, bg_cpu))
            finally:
                shutil.rmtree(work, ignore_errors=True)
    finally:
        server.stop()
    print(f"generated corpus: {args.pages} pages on {args.hosts} hosts (nginx), 16 threads")
    print("| crawl CPU s (index off) | records | WARC MB | reading the WARCs: CPU s, share "
          "| during the crawl (writer's entries): CPU s, share | crawl CPU s (index on) "
          "| wall s off / on |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for off_cpu, off_wall, idx_cpu, records, size, on_cpu, on_wall, bg_cpu in rows:
        print(
            f"| {off_cpu:.2f} | {records} | {size / 1e6:.1f} | {idx_cpu:.2f}, "
            f"{100 * idx_cpu / off_cpu:.1f}% | {bg_cpu:.2f}, {100 * bg_cpu / off_cpu:.1f}% | "
            f"{on_cpu:.2f} | {off_wall:.1f} / {on_wall:.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
