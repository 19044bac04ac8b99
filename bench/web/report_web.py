"""Tables and the plot of the synthetic-web benchmark, from ``results-<label>.json`` files.

``python bench/web/report_web.py bench/out/web/results-*.json`` prints the markdown tables and
writes ``bench/web-results.png`` (pages/s and RSS over time, one line per result).
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from pathlib import Path
from typing import Any

import yardstick  # bench/web/yardstick.py, beside this file


def threads(r: dict[str, Any]) -> str:
    """Toe threads of a run: ``N`` or, with workers, ``workers x N``."""
    n = r["config"]["threads"]
    return f"{r['workers']} x {n}" if r.get("workers") else str(n)


def markdown(results: list[dict[str, Any]]) -> str:
    lines = [
        "| run | threads | minutes | hosts fetched | fetches | sustained fetches/s | mean /s "
        "| crawler CPU-ms/fetch | nginx CPU-ms/fetch | peak RSS MB | final RSS MB "
        "| state B/seen URL | state B/queued URL | all state B/discovered |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r['label']} | {threads(r)} | {r['wall_s'] / 60:.1f} | {r['hosts_fetched']} "
            f"| {r['fetches']} | {r['pages_per_s_sustained']} | {r['pages_per_s_mean']} "
            f"| {r['cpu_ms_per_fetch']:.2f} | {r['nginx_cpu_ms_per_fetch']:.2f} "
            f"| {r['peak_rss_mb']:.0f} | {r['final_rss_mb']:.0f} | {r['bytes_per_seen_url']} "
            f"| {r['bytes_per_queued_url']} | {r['state_bytes_per_discovered_url']} |"
        )
    lines += [
        "",
        "| run | discovered | queued at end | gaps measured | lateness p50 ms | p90 ms | p99 ms "
        "| p50 / delay | p99 / delay | gaps shorter than configured |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        p = r["politeness"]
        lines.append(
            f"| {r['label']} | {r['discovered']} | {r['queued']} | {p['gaps']} "
            f"| {p['lateness_ms_p50']:.0f} | {p['lateness_ms_p90']:.0f} "
            f"| {p['lateness_ms_p99']:.0f} | {100 * p['lateness_share_p50']:.1f}% "
            f"| {100 * p['lateness_share_p99']:.1f}% | {p['violations']} |"
        )
    split = [r for r in results if r.get("politeness_in_rotation")]
    if split:
        lines += [
            "",
            "| run | in rotation: gaps | p50 / delay | p99 / delay | p99 ms "
            "| back after the queue ran empty: gaps | p50 / delay | p99 / delay | p99 ms "
            "| back after rotated out: gaps | p50 / delay | p99 / delay | p99 ms |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        empty = {"gaps": 0, "lateness_share_p50": math.nan, "lateness_share_p99": math.nan}
        for r in split:
            row = f"| {r['label']} "
            kinds = ("politeness_in_rotation", "politeness_returned", "politeness_rotated")
            for p in (r.get(k) or empty | {"lateness_ms_p99": math.nan} for k in kinds):
                row += (
                    f"| {p['gaps']} | {100 * p['lateness_share_p50']:.1f}% "
                    f"| {100 * p['lateness_share_p99']:.1f}% | {p['lateness_ms_p99']:.0f} "
                )
            lines.append(row + "|")
    shared = [r for r in results if r.get("workers")]
    if shared:
        lines += [
            "",
            "| run | workers | Redis CPU-ms/fetch | Redis MB at end (peak) "
            "| Redis B/discovered URL |",
            "|---|---:|---:|---:|---:|",
        ]
        for r in shared:
            lines.append(
                f"| {r['label']} | {r['workers']} | {r['redis_cpu_ms_per_fetch']:.2f} "
                f"| {r['redis_used_memory'] / 2**20:.0f} "
                f"({r['redis_peak_used_memory'] / 2**20:.0f}) "
                f"| {r['redis_bytes_per_discovered_url']} |"
            )
    lines += ["", "| run | requests | TLS connections | resumed | requests / connection |"]
    lines += ["|---|---:|---:|---:|---:|"]
    for r in results:
        n = r.get("nginx_connections")
        if n:
            per = n["requests"] / max(1, n["connections"])
            lines.append(
                f"| {r['label']} | {n['requests']} | {n['connections']} | {n['resumed']} "
                f"| {per:.2f} |"
            )
    trended = [r for r in results if r.get("memory_last_half", {}).get("rss")]
    if trended:
        lines += [
            "",
            "| run | last half of the run | RSS MB first → last (min-max) | RSS slope MB/min "
            "| anon MB first → last (min-max) | anon slope MB/min | anon spread |",
            "|---|---|---:|---:|---:|---:|---:|",
        ]
        for r in trended:
            rss, anon = r["memory_last_half"]["rss"], r["memory_last_half"]["anon"]
            lines.append(
                f"| {r['label']} | {rss['from_s'] / 60:.1f}-{rss['to_s'] / 60:.1f} min "
                f"| {rss['first_mb']:.0f} → {rss['last_mb']:.0f} ({rss['min_mb']:.0f}-"
                f"{rss['max_mb']:.0f}) | {rss['slope_mb_per_min']:+.2f} "
                f"| {anon['first_mb']:.0f} → {anon['last_mb']:.0f} ({anon['min_mb']:.0f}-"
                f"{anon['max_mb']:.0f}) | {anon['slope_mb_per_min']:+.2f} "
                f"| {100 * anon['spread_share']:.1f}% |"
            )
    lines += ["", "| run | statuses (code: count) |", "|---|---|"]
    for r in results:
        st = ", ".join(f"{k}: {v}" for k, v in r["statuses"].items())
        lines.append(f"| {r['label']} | {st} |")
    return "\n".join(lines)


def machine_markdown(results: list[dict[str, Any]]) -> str:
    """Each run's CPU per fetch beside the machine's speed at the time (``yardstick``): the
    crawler's CPU per fetch over nginx's, and the two fixed workloads' CPU-ms before and after
    the crawl (runs recorded before those were taken show a dash)."""
    rows = [
        "| run | crawler CPU-ms/fetch | nginx CPU-ms/fetch | crawler ÷ nginx "
        "| loop ms before / after | walk ms before / after |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for r in results:
        ratio = yardstick.per_nginx(r)
        machine = r.get("yardstick") or {}
        rows.append(
            f"| {r['label']} | {r['cpu_ms_per_fetch']:.2f} | {r['nginx_cpu_ms_per_fetch']:.2f} "
            f"| {'-' if ratio is None else f'{ratio:.1f}'} | {_before_after(machine, 'loop_ms')} "
            f"| {_before_after(machine, 'walk_ms')} |"
        )
    return "\n".join(rows)


def _before_after(machine: dict[str, Any], key: str) -> str:
    before, after = machine.get("before") or {}, machine.get("after") or {}
    if key not in before or key not in after:
        return "-"
    return f"{before[key]:.0f} / {after[key]:.0f}"


def faults_markdown(result: dict[str, Any], window_s: float = 60.0) -> str:
    """Per ``window_s`` of a run: URIs ended a second (crawl.log lines), and per URI the
    crawler's minor page faults, its system CPU-ms, all its CPU-ms and its threads' context
    switches, voluntary / involuntary (samples' ``minflt``, ``sys_cpu_s``, ``cpu_s``, ``vcsw``
    and ``nvcsw``; runs recorded before those were sampled say so, or show ``-``)."""
    samples = [s for s in result["samples"] if "minflt" in s]
    if len(samples) < 2:
        return "(no page-fault samples in this run)"
    head = (
        "| minute | URIs/s | minor faults/URI | system CPU-ms/URI | CPU-ms/URI "
        "| switches/URI (voluntary / involuntary) |"
    )
    rows = [head, "|---|--:|--:|--:|--:|--:|"]
    start = samples[0]
    for sample in samples[1:]:
        last = sample is samples[-1]
        if sample["t_s"] - start["t_s"] < window_s and not last:
            continue
        uris = sample["crawl_log_lines"] - start["crawl_log_lines"]
        seconds = sample["t_s"] - start["t_s"]
        if uris > 0 and seconds > 0:
            switches = "-"
            if "vcsw" in sample and "vcsw" in start:
                switches = (
                    f"{(sample['vcsw'] - start['vcsw']) / uris:.1f} / "
                    f"{(sample['nvcsw'] - start['nvcsw']) / uris:.1f}"
                )
            rows.append(
                f"| {start['t_s'] / 60:.1f}-{sample['t_s'] / 60:.1f} | {uris / seconds:.1f} "
                f"| {(sample['minflt'] - start['minflt']) / uris:.1f} "
                f"| {1000 * (sample['sys_cpu_s'] - start['sys_cpu_s']) / uris:.2f} "
                f"| {1000 * (sample['cpu_s'] - start['cpu_s']) / uris:.2f} | {switches} |"
            )
        start = sample
    return "\n".join(rows)


def plot(results: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for r in results:
        s = r["samples"]
        t = [b["t_s"] for b in s[1:]]
        rate = [
            (b["crawl_log_lines"] - a["crawl_log_lines"]) / max(1e-6, b["t_s"] - a["t_s"])
            for a, b in itertools.pairwise(s)
        ]
        ax1.plot(t, rate, label=r["label"])
        ax2.plot([b["t_s"] for b in s], [b["rss_mb"] for b in s], label=r["label"])
    ax1.set_ylabel("fetches/s")
    ax2.set_ylabel("crawler RSS (MiB, all workers)")
    ax2.set_xlabel("seconds since start")
    ax1.set_title("Synthetic web over TLS, DNS from dnsmasq, politeness 1-3 s")
    ax1.legend()
    ax1.grid(alpha=0.3)
    ax2.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main() -> int:
    results = [json.loads(Path(p).read_text()) for p in sys.argv[1:]]
    print(markdown(results))
    print("\nThe machine's speed at the time of each run (bench/web/yardstick.py)\n")
    print(machine_markdown(results))
    for result in results:
        print(f"\n{result['label']}: page faults and system CPU per minute\n")
        print(faults_markdown(result))
    out = Path(__file__).resolve().parents[1] / "web-results.png"
    plot(results, out)
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
