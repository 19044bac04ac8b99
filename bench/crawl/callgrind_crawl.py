"""Instructions per page of the crawler on the generated site, counted by callgrind.

Wall and CPU time on a shared 2-core VM drift by ±15% with the load; the number of instructions
a crawl executes does not. This runs ``crawler run bench/crawl/order.yaml`` under
``valgrind --tool=callgrind`` (threads serialized, every instruction counted, ~50x slower) on
two sizes of the generated corpus and reports the instructions of each crawl and, from their
difference, the instructions per page with start-up and shut-down taken out::

    per page = (Ir(large) - Ir(small)) / (pages(large) - pages(small))

Idle polling still adds noise: threads waiting on timeouts run more loops when the crawl runs
longer under callgrind (a busier machine), and four runs on a loaded VM varied by a few percent
more than their code changes explained. Compare trees run back to back at a similar load and
measure a small cut alone (callgrind of the function itself). Usage::

    .venv/bin/python bench/crawl/callgrind_crawl.py [--pages 200,1000] [--port-base 18701]

Writes ``bench/out/callgrind/<pages>.out`` (for ``callgrind_annotate``) and prints one line
per crawl and the per-page figure.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gensite
import peers
import run_bench
from nginx_server import NginxServer

_TOTALS = re.compile(rb"^(?:summary|totals):\s+(\d+)", re.M)


def instructions(out_file: Path) -> int:
    """The total instruction count (Ir) in a callgrind output file."""
    m = _TOTALS.search(out_file.read_bytes())
    if m is None:
        raise SystemExit(f"{out_file}: no totals line (did valgrind finish?)")
    return int(m.group(1))


def crawl(pages: int, port_base: int, hosts: int) -> tuple[int, int, float]:
    """(instructions, pages fetched with 200, wall seconds) of one crawl under callgrind."""
    site = run_bench.OUT / f"gensite-{pages}-{port_base}"
    gensite.generate(site, pages, hosts, port_base)
    roots = {
        f"http://127.0.0.1:{port_base + h}": (site / f"h{h:02d}").resolve() for h in range(hosts)
    }
    corpus = peers.Corpus("gen", [o + "/" for o in roots], roots)
    out_dir = run_bench.OUT / "runs" / f"callgrind-{pages}"
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    cg_dir = run_bench.OUT / "callgrind"
    cg_dir.mkdir(parents=True, exist_ok=True)
    cg_out = cg_dir / f"{pages}.out"
    argv = peers.command("crawler", corpus, out_dir)
    # the console script is a Python file: valgrind runs the interpreter on it
    argv = [
        "valgrind",
        "--tool=callgrind",
        "--trace-children=no",
        f"--callgrind-out-file={cg_out}",
        sys.executable,
        *argv,
    ]
    sites = {port_base + h: root for h, root in enumerate(roots.values())}
    server = NginxServer(run_bench.OUT / f"nginx-callgrind-{port_base}", sites)
    server.start()
    started = time.monotonic()
    try:
        start = server.log_offset()
        measured = run_bench.measure(argv, out_dir / "peer.log", 7200)
        time.sleep(0.3)
        scored = run_bench.score(server.read_log(start), set())
    finally:
        server.stop()
    if measured["exit_code"] != 0:
        raise SystemExit(
            f"crawl of {pages} pages exited {measured['exit_code']}: {out_dir}/peer.log"
        )
    shutil.rmtree(out_dir, ignore_errors=True)
    return instructions(cg_out), int(scored["pages"]), time.monotonic() - started


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--pages", default="200,1000", help="the two corpus sizes (small,large)")
    ap.add_argument("--port-base", type=int, default=18701, help="first nginx port")
    ap.add_argument("--hosts", type=int, default=4, help="hosts (ports) of each corpus")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    small, large = (int(x) for x in args.pages.split(","))
    results = []
    for n in (small, large):
        ir, pages, wall = crawl(n, args.port_base, args.hosts)
        results.append((ir, pages))
        print(
            f"{n} pages: {pages} fetched, {ir:,} instructions ({ir / max(1, pages):,.0f} a page "
            f"all in), {wall:.0f}s under callgrind",
            flush=True,
        )
    (ir_s, p_s), (ir_l, p_l) = results
    per_page = (ir_l - ir_s) / max(1, p_l - p_s)
    print(
        f"per page, start-up and shut-down taken out: {per_page:,.0f} instructions "
        f"(start-up and shut-down: {ir_s - per_page * p_s:,.0f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
