"""The cost of TLS per page: the crawler on the generated site over HTTP and over HTTPS.

Run by ``make bench-crawl-tls``. Generates corpus (b) twice (``BENCH_PAGES`` pages over
``BENCH_HOSTS`` hosts): with its other-host links as ``http://`` on ports from 18101 and as
``https://`` on ports from 18301; makes a CA and a server certificate signed by it (RSA 2048,
the openssl CLI) and serves both sites from one nginx (``nginx_server.py``: HTTPS with TLS 1.2
and 1.3 and nginx's default session tickets). Then, for each run, crawler source and scheme,
crawls the site with the benchmark's order (politeness off, 16 threads, WARC on) and reports
pages/s, the crawler's CPU-ms per page, nginx's CPU-ms per page, and from nginx's connection
log the connections per request and the share of TLS handshakes that resumed a session.

``BENCH_SOURCES`` names the crawler checkouts to compare, ``label=path`` comma-separated
(default ``this=<this tree>``), e.g. ``before=/tmp/old,after=.``: each runs with this tree's
virtualenv and ``PYTHONPATH`` set to its path, interleaved run by run so that the machine's
load falls alike on all. Finally a client-side breakdown (this tree's client, one thread,
``time.process_time``): a full handshake, a resumed one, and a keep-alive GET of a page over
TLS against one over plain HTTP — the TLS cost per request.

Environment: BENCH_RUNS=1, BENCH_PAGES=2000, BENCH_HOSTS=20, BENCH_SOURCES,
BENCH_SCHEMES=http,https, BENCH_TLS_SAMPLES=300 (handshakes and GETs of the breakdown),
BENCH_KEEPALIVE_REQUESTS=1000000 (nginx closes a connection after that many requests: lower it
to see new connections resume sessions). Writes
``bench/out/tls-results.json`` and prints the tables (markdown).
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import gensite
import linkgraph
import peers
import run_bench
from nginx_server import NginxServer, read_connections

OUT = run_bench.OUT
PORT_BASE = {"http": 18101, "https": 18301}


def make_certificates(directory: Path) -> tuple[Path, Path]:
    """A CA and a server certificate for 127.0.0.1/localhost it signed: (chain, key)."""
    chain, key = directory / "server-chain.pem", directory / "server.key"
    if chain.exists() and key.exists():
        return chain, key
    directory.mkdir(parents=True, exist_ok=True)
    ca, ca_key, csr, leaf = (directory / n for n in ("ca.pem", "ca.key", "server.csr", "leaf.pem"))
    ext = directory / "leaf.ext"
    ext.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    quiet = {"check": True, "capture_output": True}
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30",
         "-keyout", ca_key, "-out", ca, "-subj", "/CN=crawler bench CA"],
        **quiet,
    )  # fmt: skip
    subprocess.run(
        ["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
         "-subj", "/CN=127.0.0.1"],
        **quiet,
    )  # fmt: skip
    subprocess.run(
        ["openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
         "-days", "30", "-out", leaf, "-extfile", ext],
        **quiet,
    )  # fmt: skip
    chain.write_bytes(leaf.read_bytes() + ca.read_bytes())
    return chain, key


def build_corpus(scheme: str, pages: int, hosts: int) -> peers.Corpus:
    base = PORT_BASE[scheme]
    site = OUT / (f"gensite-{pages}" if scheme == "http" else f"gensite-{scheme}-{pages}")
    if scheme == "http" and hosts == 20 and base == 18101:
        gensite.generate(site, pages, hosts, base)  # the same site as run_bench.py's
    else:
        gensite.generate(site, pages, hosts, base, scheme=scheme)
    roots = {
        f"{scheme}://127.0.0.1:{base + h}": (site / f"h{h:02d}").resolve() for h in range(hosts)
    }
    return peers.Corpus(f"gen-{scheme}", [o + "/" for o in roots], roots)


def nginx_cpu_s(server: NginxServer) -> float:
    """CPU seconds nginx's master and worker processes have run so far (schedstat: ns)."""
    assert server.proc is not None
    pids = [server.proc.pid]
    children = Path(f"/proc/{server.proc.pid}/task/{server.proc.pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    total = 0.0
    for pid in pids:
        try:
            total += int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            continue
    return total


def crawl(
    server: NginxServer, corpus: peers.Corpus, label: str, source: Path, run: int, truth: set[str]
) -> dict[str, Any]:
    out_dir = OUT / "runs" / f"tls-{label}-{corpus.name}-{run}"
    subprocess.run(["rm", "-rf", str(out_dir)], check=True)
    out_dir.mkdir(parents=True)
    argv = peers.command("crawler", corpus, out_dir)
    argv[:1] = [str(peers.ROOT / ".venv" / "bin" / "python"), "-m", "crawler"]
    load_1m = os.getloadavg()[0]
    log_start, conn_start = server.log_offset(), server.connections_log.stat().st_size
    nginx_before = nginx_cpu_s(server)
    os.environ["PYTHONPATH"] = str(source)
    try:
        result = run_bench.measure(argv, out_dir / "peer.log", 1800)
    finally:
        os.environ.pop("PYTHONPATH", None)
    time.sleep(0.3)  # nginx logs after a response's last byte
    nginx_s = nginx_cpu_s(server) - nginx_before
    scheme = corpus.name.split("-", 1)[1]
    entries = server.read_log(log_start)
    if scheme != "http":  # the access log writes every URL as http://
        entries = [e.__class__(e.time_s, e.method, scheme + e.url[4:], e.status, e.body_bytes)
                   for e in entries]  # fmt: skip
    result.update(run_bench.score(entries, truth))
    counts = read_connections(server.connections_log, conn_start)
    pages = max(1, result["pages"])
    result.update(
        label=label,
        scheme=scheme,
        load_1m_before=load_1m,
        run=run,
        pages_per_s=round(result["pages"] / result["wall_s"], 1),
        cpu_ms_per_page=round(1000 * result["cpu_s"] / pages, 3),
        nginx_cpu_ms_per_page=round(1000 * nginx_s / pages, 3),
        connections=counts.connections,
        connections_per_request=round(counts.connections / max(1, counts.requests), 4),
        resumed=counts.resumed,
    )
    subprocess.run(["rm", "-rf", str(out_dir)], check=True)
    return result


def client_breakdown(
    server: NginxServer, http_port: int, https_port: int, samples: int
) -> dict[str, float]:
    """CPU-µs of a full and a resumed TLS handshake (the client's, and nginx's apart) and of
    a keep-alive GET of one page over HTTPS and over HTTP (this tree's Http11Client)."""
    from processors.fetch.fetch_clients import archival_tls_context
    from processors.fetch.guarded_backend import GuardedBackend
    from processors.fetch.http11_client import Http11Client

    backend = GuardedBackend(None, threading.Event())
    context = archival_tls_context()
    context.set_alpn_protocols(["http/1.1"])

    def handshakes(resume: bool) -> tuple[float, float]:
        session = None
        if resume:
            tls = backend.connect_tcp("127.0.0.1", https_port, 10).start_tls(
                context, "localhost", 10
            )
            tls.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 10)
            tls.read(65536, 10)  # TLS 1.3 tickets come after the handshake
            session = tls.tls_session()[0]  # type: ignore[attr-defined]
            tls.close()
        began, nginx_began = time.process_time(), nginx_cpu_s(server)
        for _ in range(samples):
            plain = backend.connect_tcp("127.0.0.1", https_port, timeout=10)
            tls = plain.start_tls(context, "localhost", timeout=10, session=session)
            tls.close()
        spent = 1e6 * (time.process_time() - began) / samples
        time.sleep(0.2)  # nginx finishes the last ones
        return spent, 1e6 * (nginx_cpu_s(server) - nginx_began) / samples

    def gets(scheme: str, port: int) -> float:
        client = Http11Client(
            backend,
            context,
            connect_timeout_s=10,
            read_timeout_s=10,
            keepalive_expiry_s=60,
            max_idle=4,
        )
        uri = f"{scheme}://127.0.0.1:{port}/d000/p1.html"
        for _ in range(3):  # connect and warm up
            response = client.send(uri, [])
            for _chunk in response.iter_raw():
                pass
            response.close()
        began = time.process_time()
        for _ in range(samples):
            response = client.send(uri, [])
            for _chunk in response.iter_raw():
                pass
            response.close()
        spent = 1e6 * (time.process_time() - began) / samples
        client.close()
        return spent

    http_get = statistics.median(gets("http", http_port) for _ in range(3))
    https_get = statistics.median(gets("https", https_port) for _ in range(3))
    full = sorted(handshakes(False) for _ in range(3))[1]
    resumed = sorted(handshakes(True) for _ in range(3))[1]
    return {
        "full_handshake_us": round(full[0], 1),
        "full_handshake_nginx_us": round(full[1], 1),
        "resumed_handshake_us": round(resumed[0], 1),
        "resumed_handshake_nginx_us": round(resumed[1], 1),
        "get_http_us": round(http_get, 1),
        "get_https_us": round(https_get, 1),
        "tls_per_request_us": round(https_get - http_get, 1),
    }


def main() -> int:
    runs_n = run_bench.env_int("BENCH_RUNS", 1)
    pages = run_bench.env_int("BENCH_PAGES", 2000)
    hosts = run_bench.env_int("BENCH_HOSTS", 20)
    schemes = run_bench.env_list("BENCH_SCHEMES", ("http", "https"))
    sources: dict[str, Path] = {}
    for item in run_bench.env_list("BENCH_SOURCES", (f"this={peers.ROOT}",)):
        label, _, path = item.partition("=")
        sources[label] = Path(path or label).resolve()
    OUT.mkdir(parents=True, exist_ok=True)
    certs = make_certificates(OUT / "tls")
    corpora = {s: build_corpus(s, pages, hosts) for s in schemes}
    truths = {s: linkgraph.walk(c.roots, c.starts).ok for s, c in corpora.items()}
    sites = {int(o.rsplit(":", 1)[1]): r for c in corpora.values() for o, r in c.roots.items()}
    tls_ports = frozenset(p for p in sites if p >= PORT_BASE["https"])
    keepalive = run_bench.env_int("BENCH_KEEPALIVE_REQUESTS", 1_000_000)
    server = NginxServer(
        OUT / "nginx-tls", sites, tls=certs, tls_ports=tls_ports, keepalive_requests=keepalive
    )
    server.start()
    results: list[dict[str, Any]] = []
    try:
        for run in range(1, runs_n + 1):
            for label, source in sources.items():
                for scheme in schemes:
                    r = crawl(server, corpora[scheme], label, source, run, truths[scheme])
                    results.append(r)
                    print(
                        f"run {run} {label:8} {scheme:5} {r['pages']:>6} pages "
                        f"{100 * r['coverage']:6.2f}% {r['pages_per_s']:8.1f}/s "
                        f"{r['cpu_ms_per_page']:6.2f} CPU-ms/page, nginx "
                        f"{r['nginx_cpu_ms_per_page']:5.2f}; {r['connections']} connections "
                        f"for {r['requests']} requests, {r['resumed']} resumed; "
                        f"load {r['load_1m_before']:.1f}",
                        flush=True,
                    )
        breakdown = {}
        if "http" in schemes and "https" in schemes:
            breakdown = client_breakdown(
                server,
                PORT_BASE["http"],
                PORT_BASE["https"],
                run_bench.env_int("BENCH_TLS_SAMPLES", 300),
            )
    finally:
        server.stop()
    report = {
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "load_avg_at_end": os.getloadavg(),
        },
        "config": {
            "runs": runs_n,
            "keepalive_requests": keepalive,
            "pages": pages,
            "hosts": hosts,
            "sources": {k: str(v) for k, v in sources.items()},
        },
        "runs": results,
        "client_breakdown": breakdown,
    }
    (OUT / "tls-results.json").write_text(json.dumps(report, indent=1))
    print()
    print(markdown(results, breakdown))
    print(f"\nwrote {OUT / 'tls-results.json'}")
    return 0


def markdown(results: list[dict[str, Any]], breakdown: dict[str, float]) -> str:
    """The medians per (source, scheme) and the breakdown as markdown tables."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in results:
        groups.setdefault((r["label"], r["scheme"]), []).append(r)
    lines = [
        "| crawler | scheme | pages | pages/s | crawler CPU-ms/page | nginx CPU-ms/page "
        "| connections / request | TLS sessions resumed |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for (label, scheme), rs in groups.items():

        def med(key: str, rs: list[dict[str, Any]] = rs) -> float:
            return float(statistics.median(r[key] for r in rs))

        resumed = f"{med('resumed'):.0f} of {med('connections'):.0f}" if scheme == "https" else "—"
        lines.append(
            f"| {label} | {scheme} | {med('pages'):.0f} | {med('pages_per_s'):.0f} "
            f"| {med('cpu_ms_per_page'):.2f} | {med('nginx_cpu_ms_per_page'):.2f} "
            f"| {med('connections'):.0f} / {med('requests'):.0f} "
            f"({med('connections_per_request'):.3f}) | {resumed} |"
        )
    if breakdown:
        lines += [
            "",
            "| CPU µs (client: one thread) | client | nginx |",
            "|---|---:|---:|",
            f"| full TLS handshake (with connect; RSA 2048 chain) "
            f"| {breakdown['full_handshake_us']} | {breakdown['full_handshake_nginx_us']} |",
            f"| resumed TLS handshake (session ticket) "
            f"| {breakdown['resumed_handshake_us']} | {breakdown['resumed_handshake_nginx_us']} |",
            f"| keep-alive GET of a 15 KB page over HTTP | {breakdown['get_http_us']} | |",
            f"| the same over HTTPS | {breakdown['get_https_us']} | |",
            f"| TLS cost per request (difference) | {breakdown['tls_per_request_us']} | |",
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
