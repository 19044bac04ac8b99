"""Profile the crawler on the generated corpus with py-spy; print the top functions.

Run by ``make bench-crawl-profile``. Serves corpus (b) with nginx (``BENCH_PAGES`` pages, default
20000), runs ``py-spy record --format raw`` around ``crawler run`` with the benchmark's order,
and folds the sampled stacks into, per function, the share of samples in which it is on the
stack (cumulative %) and at the top of it (self %). The thread holding the interpreter is
sampled, so the shares are of the interpreter's time across the crawler's threads (the CPU
spent outside it — deflate, parsing in lexbor, LevelDB, the kernel — is not in them). Writes
``bench/out/profile.raw`` (collapsed stacks, for flamegraph tools) and
``bench/out/profile-top.txt``.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers
import run_bench
from nginx_server import NginxServer

_FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^()]*?)(?::\d+)?\)$")
_ROOT = str(peers.ROOT) + "/"


def frame_key(frame: str) -> str:
    """``module/path.py:function`` of a py-spy frame ``func (file:line)``; paths shortened."""
    m = _FRAME.match(frame)
    if not m:
        return frame
    path = m.group("file").replace(_ROOT, "")
    cut = path.find("site-packages/")
    if cut >= 0:
        path = path[cut + len("site-packages/") :]
    elif "/lib/python3" in path:
        path = "stdlib/" + path.rsplit("/", 1)[-1]
    return f"{path}:{m.group('func')}"


def fold(raw: str) -> tuple[int, Counter[str], Counter[str]]:
    """Total samples, cumulative and self sample counts per function key."""
    total = 0
    cumulative: Counter[str] = Counter()
    own: Counter[str] = Counter()
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        keys = [frame_key(f) for f in stack.split(";")]
        total += count
        for key in set(keys):
            cumulative[key] += count
        own[keys[-1]] += count
    return total, cumulative, own


def report(total: int, cumulative: Counter[str], own: Counter[str], top: int = 30) -> str:
    lines = [f"{total} samples", "", f"{'cum %':>6} {'self %':>6}  function (by cumulative)"]
    for key, n in cumulative.most_common(top):
        lines.append(f"{100 * n / total:6.1f} {100 * own[key] / total:6.1f}  {key}")
    lines += ["", f"{'self %':>6} {'cum %':>6}  function (by self)"]
    for key, n in own.most_common(top):
        lines.append(f"{100 * n / total:6.1f} {100 * cumulative[key] / total:6.1f}  {key}")
    return "\n".join(lines)


def main() -> int:
    (corpus,) = run_bench.build_corpora(["gen"])
    truth = run_bench.ground_truth(corpus)
    sites = {int(o.rsplit(":", 1)[1]): root for o, root in corpus.roots.items()}
    server = NginxServer(run_bench.OUT / "nginx", sites)
    out_dir = run_bench.OUT / "runs" / "profile"
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    raw_path = run_bench.OUT / "profile.raw"
    py_spy = peers.BENCH_VENV / "bin" / "py-spy"
    argv = [
        str(py_spy),
        "record",
        "--gil",
        "--format",
        "raw",
        "--rate",
        "250",
        "-o",
        str(raw_path),
        "--",
    ]
    # Unpinned: py-spy's --gil sampling misreads which thread holds the interpreter when all of
    # them share one CPU, so the profile is taken with the threads free to move (the shares of
    # the interpreter's time are the same; the CPU per page is not: see RESULTS.md).
    argv += [*peers.command("crawler", corpus, out_dir), "--set", "cpu_affinity=none"]
    server.start()
    try:
        start = server.log_offset()
        measured = run_bench.measure(argv, out_dir / "peer.log", 3600)
        scored = run_bench.score(server.read_log(start), set(truth["ok"]))
    finally:
        server.stop()
    total, cumulative, own = fold(raw_path.read_text())
    text = report(total, cumulative, own)
    head = (
        f"profiled crawl: {scored['pages']} pages, coverage {100 * scored['coverage']:.2f}%, "
        f"{scored['duplicates']} duplicates, wall {measured['wall_s']:.1f}s "
        f"(CPU includes py-spy: {measured['cpu_s']:.1f}s)"
    )
    (run_bench.OUT / "profile-top.txt").write_text(head + "\n" + text + "\n")
    print(head)
    print(text)
    if not os.environ.get("BENCH_KEEP"):
        shutil.rmtree(out_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
