"""Client CPU per TLS reconnect: GETs of one small page by this tree's Http11Client (or another
checkout's, ``--source``), each over a new connection that resumes the origin's TLS session
(``--full``: forgets it first, so each one runs a full handshake).

nginx (``nginx_server.py``, TLS 1.2/1.3 with session tickets, the CA-signed certificate of
``tls_bench.py``) closes every connection after one request (``keepalive_requests 1``), so each
GET pays a TCP connect, a resumed handshake and the session bookkeeping after it. Prints the
client thread's CPU-µs per GET (``time.thread_time``, median of ``--rounds``) and how many
handshakes resumed. For a figure that does not depend on the machine's load, run it under
callgrind at two sample counts and divide the difference::

    valgrind --tool=callgrind --callgrind-out-file=/tmp/a.out \\
        .venv/bin/python bench/crawl/tls_reconnect.py --samples 50 --rounds 1
    (again with --samples 250; per GET = (Ir(250) - Ir(50)) / 200)

Usage: ``.venv/bin/python bench/crawl/tls_reconnect.py [--samples 300] [--rounds 3]
[--port 18391] [--source PATH]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run_bench  # noqa: E402
from nginx_server import NginxServer, read_connections  # noqa: E402
from tls_bench import make_certificates  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=300, help="GETs per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--port", type=int, default=18391)
    ap.add_argument(
        "--full", action="store_true", help="forget the session before each GET: full handshakes"
    )
    ap.add_argument("--source", default=str(HERE.parents[1]), help="crawler checkout to import")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(args.source).resolve()))
    from processors.fetch.fetch_clients import archival_tls_context
    from processors.fetch.guarded_backend import GuardedBackend
    from processors.fetch.http11_client import Http11Client

    site = run_bench.OUT / "tls-reconnect-site"
    site.mkdir(parents=True, exist_ok=True)
    (site / "p.html").write_bytes(b"<html><body>" + b"x" * 4000 + b"</body></html>")
    certs = make_certificates(run_bench.OUT / "tls")
    server = NginxServer(
        run_bench.OUT / "nginx-tls-reconnect",
        {args.port: site},
        tls=certs,
        tls_ports=frozenset([args.port]),
        keepalive_requests=1,
    )
    server.start()
    log = server.connections_log
    start = log.stat().st_size if log.exists() else 0
    try:
        client = Http11Client(
            GuardedBackend(None, threading.Event()),
            archival_tls_context(),
            connect_timeout_s=10,
            read_timeout_s=10,
            keepalive_expiry_s=60,
            max_idle=4,
        )
        uri = f"https://localhost:{args.port}/p.html"

        def get() -> None:
            if args.full:
                client.tls_sessions.discard(("localhost", args.port))
            response = client.send(uri, [])
            for _chunk in response.iter_raw():
                pass
            response.close()

        get()  # the full handshake: the session every later connection offers
        per_get: list[float] = []
        for _ in range(args.rounds):
            began = time.thread_time()
            for _ in range(args.samples):
                get()
            per_get.append(1e6 * (time.thread_time() - began) / max(1, args.samples))
        client.close()
    finally:
        server.stop()
    counts = read_connections(log, start)
    kind = "full" if args.full else "resumed"
    print(
        f"client CPU-µs per GET on a new TLS connection ({kind}): {statistics.median(per_get):.0f}"
        f" (rounds: {', '.join(f'{v:.0f}' for v in per_get)}); nginx: {counts.requests} "
        f"requests, {counts.connections} connections, {counts.resumed} resumed"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
