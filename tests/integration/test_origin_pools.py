"""OriginPools: one keep-alive pool per origin, the least recently used idle ones closed."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import httpx
import pytest

from processors.fetch.origin_pools import OriginPools

pytestmark = pytest.mark.integration


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        body = self.server.server_address[1].to_bytes(4, "big") * 65536  # type: ignore[union-attr]
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def ports() -> Iterator[list[int]]:
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler) for _ in range(3)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield [s.server_address[1] for s in servers]
    for server in servers:
        server.shutdown()
        server.server_close()


def get(pools: OriginPools, port: int, path: str = "/") -> httpx.Response:
    return pools.handle_request(httpx.Request("GET", f"http://127.0.0.1:{port}{path}"))


def test_each_origin_gets_its_own_pool_and_idle_ones_are_closed_past_the_cap(
    ports: list[int],
) -> None:
    pools = OriginPools(httpx.HTTPTransport, max_origins=2)
    try:
        for _ in range(2):  # the second round reuses the kept-alive connections
            for port in ports[:2]:
                response = get(pools, port)
                assert response.read() == port.to_bytes(4, "big") * 65536
                response.close()
        assert pools.pool_count() == 2
        response = get(pools, ports[2])  # a third origin: the oldest idle pool goes
        assert response.read() == ports[2].to_bytes(4, "big") * 65536
        response.close()
        assert pools.pool_count() == 2
    finally:
        pools.close()


def test_a_pool_with_a_response_in_flight_is_never_closed(ports: list[int]) -> None:
    pools = OriginPools(httpx.HTTPTransport, max_origins=1)
    try:
        open_response = get(pools, ports[0])  # head read, body not yet
        other = get(pools, ports[1])
        other.read()
        other.close()
        assert open_response.read() == ports[0].to_bytes(4, "big") * 65536  # still readable
        open_response.close()
    finally:
        pools.close()
