"""Where one profile spends more CPU per fetch than another (py-spy raw collapsed stacks).

``python bench/profile_compare.py BASE.txt BASE_MS OTHER.txt OTHER_MS [--top 10]``: BASE/OTHER
are ``py-spy record --format raw --gil`` outputs (e.g. ``profile-single-gil.txt`` and
``profile-redis2-gil.txt`` from ``bench/workers_scale.py --profile``), BASE_MS/OTHER_MS the
profiled process's CPU-ms per fetch of its own. Each frame's share of the samples times that
figure is its CPU-ms per fetch; the tables list the frames (function and file, line numbers
dropped) by how much more OTHER spends in them than BASE, self (the frame is the leaf) and
cumulative (the frame is anywhere on the stack, counted once per sample).
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

_LINE = re.compile(r":\d+\)$")


def frame_name(frame: str) -> str:
    """``func (path:123)`` -> ``func (path)``."""
    return _LINE.sub(")", frame)


def load(path: Path) -> tuple[int, Counter[str], Counter[str]]:
    """Total samples, samples by leaf frame, samples by frame anywhere on the stack."""
    total = 0
    self_: Counter[str] = Counter()
    cum: Counter[str] = Counter()
    for line in path.read_text().splitlines():
        stack, _, count_s = line.rpartition(" ")
        if not count_s.isdigit():
            continue
        count = int(count_s)
        frames = [frame_name(f) for f in stack.split(";")]
        total += count
        self_[frames[-1]] += count
        for name in set(frames):
            cum[name] += count
    return total, self_, cum


def per_fetch(counts: Counter[str], total: int, ms: float) -> dict[str, float]:
    return {k: v / max(1, total) * ms for k, v in counts.items()}


def table(title: str, base: dict[str, float], other: dict[str, float], top: int) -> str:
    rows = sorted(
        ((other.get(k, 0.0) - base.get(k, 0.0), k) for k in set(base) | set(other)),
        reverse=True,
    )[:top]
    out = [f"{title}\n| frame | base µs/fetch | other µs/fetch | more |\n|---|---:|---:|---:|"]
    for delta, k in rows:
        out.append(
            f"| `{k}` | {base.get(k, 0.0) * 1000:.0f} | {other.get(k, 0.0) * 1000:.0f} "
            f"| {delta * 1000:+.0f} |"
        )
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("base", type=Path)
    parser.add_argument("base_ms", type=float)
    parser.add_argument("other", type=Path)
    parser.add_argument("other_ms", type=float)
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    bt, bs, bc = load(args.base)
    ot, os_, oc = load(args.other)
    print(f"samples: base {bt}, other {ot}")
    print(
        table("self", per_fetch(bs, bt, args.base_ms), per_fetch(os_, ot, args.other_ms), args.top)
    )
    print()
    print(
        table(
            "cumulative",
            per_fetch(bc, bt, args.base_ms),
            per_fetch(oc, ot, args.other_ms),
            args.top,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
