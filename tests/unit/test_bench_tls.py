"""The TLS crawl benchmark's logic: https links in the generated site, nginx's TLS config and the
connection log it is scored by."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "crawl"
sys.path.insert(0, str(BENCH))

import gensite  # noqa: E402
from nginx_server import read_connections, render_config  # noqa: E402


def test_https_site_links_other_hosts_over_https_and_http_site_is_unchanged() -> None:
    http = gensite.render_page(1, 30, 500, 4, 18101)
    https = gensite.render_page(1, 30, 500, 4, 18301, scheme="https")
    assert "https://127.0.0.1:183" in https and "http://127.0.0.1:" not in https
    assert http.replace("http://127.0.0.1:181", "https://127.0.0.1:183") == https
    assert gensite.params_of(10, 2, 18101) == {
        "pages": 10,
        "hosts": 2,
        "port_base": 18101,
        "version": 1,
    }
    assert gensite.params_of(10, 2, 18301, "https")["scheme"] == "https"


def test_tls_ports_get_certificates_and_a_connection_log(tmp_path: Path) -> None:
    certs = (tmp_path / "chain.pem", tmp_path / "key.pem")
    conf = render_config(
        tmp_path,
        {18101: tmp_path / "a", 18301: tmp_path / "b"},
        1,
        certs,
        frozenset({18301}),
        keepalive_requests=100,
    )
    assert "listen 127.0.0.1:18101;" in conf
    assert "listen 127.0.0.1:18301 ssl;" in conf
    assert conf.count("ssl_certificate ") == 1
    assert f"access_log {tmp_path}/connections.log conn;" in conf
    assert "keepalive_requests 100;" in conf
    plain = render_config(tmp_path, {18101: tmp_path / "a"}, 1)
    assert "ssl" not in plain and "keepalive_requests 1000000;" in plain


def test_connection_log_counts_connections_requests_and_resumed_sessions(
    tmp_path: Path,
) -> None:
    log = tmp_path / "connections.log"
    log.write_text(
        "7 3 https .\n"  # a connection opened before the slice
        "9 1 https .\n9 2 https .\n"
        "10 1 https r\n10 2 https r\n"
        "11 1 http -\n"
        "garbled\n"
    )
    start = len("7 3 https .\n")
    counts = read_connections(log, 0)
    assert (counts.requests, counts.connections, counts.resumed) == (6, 4, 1)
    later = read_connections(log, start)
    assert (later.requests, later.connections, later.resumed) == (5, 3, 1)
