"""The crawl benchmark: the crawler, Scrapy, wget2 and wget crawl the same corpora from nginx.

Run by ``make bench-crawl`` (which installs nginx, wget, wget2, python3-doc and Scrapy first).
Steps: generate corpus (b) once, compute each corpus's ground truth from the files
(``linkgraph.py``), start nginx (``nginx_server.py``), then for each run, corpus and peer: crawl
(``peers.py``), measure wall time and the CPU time and peak RSS of the peer's process tree
(``os.wait4``), and score its slice of nginx's access log against the ground truth. Prints a
table of medians and writes ``bench/out/results.json`` and ``bench/out/crawl-results.png``.

Environment:
  BENCH_RUNS=3         runs of every (corpus, peer); the table shows medians
  BENCH_PAGES=20000    pages of the generated corpus (spread over BENCH_HOSTS=20 hosts/ports)
  BENCH_CORPORA=docs,gen   BENCH_PEERS=crawler,scrapy,scrapy-jobdir,wget2,wget
  BENCH_DOCS_PORT=18080  BENCH_PORT_BASE=18101  BENCH_TIMEOUT_S=1800 (per crawl)
  BENCH_KEEP=1         keep each crawl's output under bench/out/runs/ (default: deleted)
"""

from __future__ import annotations

import gzip
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gensite
import linkgraph
import peers
from nginx_server import LogEntry, NginxServer

OUT = peers.ROOT / "bench" / "out"
# 20,000 keeps three runs of every peer under ~30 minutes on 2 cores (Scrapy needs ~8 CPU-ms a
# page); BENCH_PAGES=100000 is the full size (~35 minutes a run).
DEFAULT_PAGES = 20_000
DOCS_CANDIDATES = (
    "/usr/share/doc/python3-doc/html",
    "/usr/share/doc/python3.11-doc/html",
    "/usr/share/doc/python3.11/html",
)


def env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


def env_list(name: str, default: tuple[str, ...]) -> list[str]:
    raw = os.environ.get(name, "")
    return [x.strip() for x in raw.split(",") if x.strip()] or list(default)


def docs_root() -> Path:
    for candidate in DOCS_CANDIDATES:
        path = Path(candidate)
        if (path / "index.html").exists():
            return path.resolve()
    raise SystemExit("python3-doc is not installed (apt-get install python3-doc)")


def build_corpora(names: list[str]) -> list[peers.Corpus]:
    corpora = []
    if "docs" in names:
        port = env_int("BENCH_DOCS_PORT", 18080)
        origin = f"http://127.0.0.1:{port}"
        corpora.append(peers.Corpus("docs", [origin + "/"], {origin: docs_root()}))
    if "gen" in names:
        pages, hosts = env_int("BENCH_PAGES", DEFAULT_PAGES), env_int("BENCH_HOSTS", 20)
        base = env_int("BENCH_PORT_BASE", 18101)
        site = OUT / f"gensite-{pages}"
        gensite.generate(site, pages, hosts, base)
        roots = {
            f"http://127.0.0.1:{base + h}": (site / f"h{h:02d}").resolve() for h in range(hosts)
        }
        corpora.append(peers.Corpus("gen", [o + "/" for o in roots], roots))
    return corpora


def ground_truth(corpus: peers.Corpus) -> dict[str, Any]:
    """The corpus's reachable URLs, cached for the generated site (keyed by its parameters)."""
    site = next(iter(corpus.roots.values())).parent.name if corpus.name == "gen" else "docs"
    cache = OUT / f"truth-{corpus.name}-{site}.json.gz"
    key = {"starts": corpus.starts, "roots": {o: str(p) for o, p in corpus.roots.items()}}
    if corpus.name == "gen":
        first_root = next(iter(corpus.roots.values()))
        key["site"] = json.loads((first_root.parent / ".complete").read_text())
        if cache.exists():
            cached = json.loads(gzip.decompress(cache.read_bytes()))
            if cached["key"] == key:
                return dict(cached)
    truth = linkgraph.walk(corpus.roots, corpus.starts)
    result = {
        "key": key,
        "ok": sorted(truth.ok),
        "missing": sorted(truth.missing),
        "html_pages": truth.html_pages,
        "seconds": round(truth.seconds, 1),
    }
    cache.write_bytes(gzip.compress(json.dumps(result).encode(), 3))
    return result


def score(entries: list[LogEntry], truth_ok: set[str]) -> dict[str, Any]:
    """Pages fetched, duplicates and coverage from one crawl's access-log lines."""
    seen: set[str] = set()
    ok: set[str] = set()
    statuses: dict[str, int] = {}
    body_bytes = 0
    for entry in entries:
        url = linkgraph.canonical(entry.url)
        seen.add(url)
        if entry.status == 200:
            ok.add(url)
        statuses[str(entry.status)] = statuses.get(str(entry.status), 0) + 1
        body_bytes += entry.body_bytes
    covered = len(ok & truth_ok)
    return {
        "requests": len(entries),
        "unique_urls": len(seen),
        "duplicates": len(entries) - len(seen),
        "pages": len(ok),
        "covered": covered,
        "coverage": covered / len(truth_ok) if truth_ok else 0.0,
        "extra_ok": len(ok - truth_ok),
        "statuses": statuses,
        "body_mb": round(body_bytes / 1e6, 1),
    }


def measure(argv: list[str], log_path: Path, timeout_s: float) -> dict[str, Any]:
    """Run ``argv``; wall time, user+sys CPU seconds and peak RSS of its whole process tree."""
    started = time.monotonic()
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=log_path.parent,
        )
        timed_out = False
        try:
            while True:
                # wait4 reports the child's rusage including its reaped descendants.
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() - started > timeout_s and not timed_out:
                    timed_out = True
                    os.killpg(proc.pid, signal.SIGKILL)
                time.sleep(0.02)
        except BaseException:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - started
    return {
        "wall_s": round(wall, 3),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "user_s": round(usage.ru_utime, 3),
        "sys_s": round(usage.ru_stime, 3),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "exit_code": proc.returncode,
        "timed_out": timed_out,
    }


def crawl_once(
    server: NginxServer, corpus: peers.Corpus, peer: str, run: int, truth_ok: set[str]
) -> dict[str, Any]:
    out_dir = OUT / "runs" / f"{corpus.name}-{peer}-{run}"
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    subprocess.run(["sync"], check=False)
    load_1m = os.getloadavg()[0]
    start = server.log_offset()
    result = measure(
        peers.command(peer, corpus, out_dir), out_dir / "peer.log", env_int("BENCH_TIMEOUT_S", 1800)
    )
    time.sleep(0.3)  # nginx writes a log line after the response's last byte
    result.update(score(server.read_log(start), truth_ok))
    result.update(corpus=corpus.name, peer=peer, run=run, load_1m_before=load_1m)
    result["pages_per_s"] = round(result["pages"] / result["wall_s"], 1)
    result["cpu_ms_per_page"] = round(1000 * result["cpu_s"] / max(1, result["pages"]), 3)
    if not os.environ.get("BENCH_KEEP"):
        shutil.rmtree(out_dir, ignore_errors=True)
    return result


MEDIAN_KEYS = (
    "wall_s",
    "cpu_s",
    "peak_rss_mb",
    "pages",
    "duplicates",
    "coverage",
    "pages_per_s",
    "cpu_ms_per_page",
    "requests",
    "extra_ok",
)


def summarize(runs: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Medians per (corpus, peer); each peer's pages/s and CPU per page against the crawler's."""
    summary: dict[str, dict[str, dict[str, Any]]] = {}
    for r in runs:
        summary.setdefault(r["corpus"], {}).setdefault(r["peer"], {"runs": []})["runs"].append(r)
    for by_peer in summary.values():
        for stats in by_peer.values():
            rs = stats.pop("runs")
            stats["n"] = len(rs)
            for key in MEDIAN_KEYS:
                stats[key] = statistics.median(r[key] for r in rs)
            stats["max_duplicates"] = max(r["duplicates"] for r in rs)
            stats["min_coverage"] = min(r["coverage"] for r in rs)
        base = by_peer.get("crawler")
        for stats in by_peer.values():
            if base and base["pages_per_s"] and stats["pages_per_s"]:
                stats["speed_vs_crawler"] = round(stats["pages_per_s"] / base["pages_per_s"], 3)
                stats["crawler_speedup"] = round(base["pages_per_s"] / stats["pages_per_s"], 3)
                stats["cpu_vs_crawler"] = round(
                    stats["cpu_ms_per_page"] / base["cpu_ms_per_page"], 3
                )
    return summary


def table(summary: dict[str, dict[str, dict[str, Any]]], truths: dict[str, Any]) -> str:
    head = (
        f"{'corpus':6} {'peer':14} {'pages':>7} {'dups':>6} {'cover%':>7} {'wall s':>8} "
        f"{'pages/s':>8} {'CPU s':>8} {'CPU ms/p':>8} {'RSS MB':>7} {'crawler x':>9}"
    )
    lines = [head, "-" * len(head)]
    for corpus, by_peer in summary.items():
        for peer in [p for p in peers.PEERS if p in by_peer]:
            s = by_peer[peer]
            lines.append(
                f"{corpus:6} {peer:14} {s['pages']:>7.0f} {s['duplicates']:>6.0f} "
                f"{100 * s['coverage']:>7.2f} {s['wall_s']:>8.2f} {s['pages_per_s']:>8.1f} "
                f"{s['cpu_s']:>8.2f} {s['cpu_ms_per_page']:>8.2f} {s['peak_rss_mb']:>7.0f} "
                f"{s.get('crawler_speedup', 0):>9.2f}"
            )
        t = truths[corpus]
        lines.append(
            f"{'':6} ground truth: {len(t['ok'])} URLs answering 200 "
            f"({t['html_pages']} HTML), {len(t['missing'])} linked but missing"
        )
    lines.append(
        "medians; 'crawler x' = the crawler's pages/s divided by the peer's (>1: crawler faster)"
    )
    return "\n".join(lines)


def main() -> int:
    runs_n = env_int("BENCH_RUNS", 3)
    corpus_names = env_list("BENCH_CORPORA", ("docs", "gen"))
    peer_names = env_list("BENCH_PEERS", peers.PEERS)
    for p in peer_names:
        if p not in peers.PEERS:
            raise SystemExit(f"unknown peer {p!r}; known: {', '.join(peers.PEERS)}")
    OUT.mkdir(parents=True, exist_ok=True)
    corpora = build_corpora(corpus_names)
    truths = {}
    for corpus in corpora:
        truths[corpus.name] = ground_truth(corpus)
        print(f"{corpus.name}: ground truth {len(truths[corpus.name]['ok'])} URLs", flush=True)
    sites = {
        int(origin.rsplit(":", 1)[1]): root for c in corpora for origin, root in c.roots.items()
    }
    server = NginxServer(OUT / "nginx", sites)
    server.start()
    results: list[dict[str, Any]] = []
    started = time.monotonic()
    try:
        for run in range(1, runs_n + 1):
            for corpus in corpora:
                truth_ok = set(truths[corpus.name]["ok"])
                for peer in peer_names:
                    r = crawl_once(server, corpus, peer, run, truth_ok)
                    results.append(r)
                    print(
                        f"run {run} {corpus.name:4} {peer:14} {r['pages']:>7} pages "
                        f"{r['duplicates']:>5} dups {100 * r['coverage']:6.2f}% "
                        f"{r['wall_s']:8.2f}s {r['pages_per_s']:8.1f}/s "
                        f"{r['cpu_ms_per_page']:6.2f} CPU-ms/page exit {r['exit_code']}",
                        flush=True,
                    )
    finally:
        server.stop()
    summary = summarize(results)
    report = {
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "load_avg_at_end": os.getloadavg(),
        },
        "versions": {p: peers.version(p) for p in peer_names},
        "config": {
            "runs": runs_n,
            "concurrency": peers.CONCURRENCY,
            "pages": env_int("BENCH_PAGES", DEFAULT_PAGES),
            "hosts": env_int("BENCH_HOSTS", 20),
            "seconds": round(time.monotonic() - started, 1),
        },
        "ground_truth": {
            name: {
                "urls": len(t["ok"]),
                "html_pages": t["html_pages"],
                "missing": len(t["missing"]),
            }
            for name, t in truths.items()
        },
        "summary": summary,
        "runs": results,
    }
    (OUT / "results.json").write_text(json.dumps(report, indent=1))
    print()
    print(table(summary, truths))
    import report_md

    (OUT / "results.md").write_text(report_md.markdown(report))
    print(f"\nwrote {OUT / 'results.json'} and results.md")
    try:
        import chart

        chart.plot(report, OUT / "crawl-results.png")
        print(f"wrote {OUT / 'crawl-results.png'}")
    except ImportError as error:
        print(f"no chart: {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
