"""The bundled sample site serves what it claims, and its ground truth matches what it serves."""

from __future__ import annotations

import contextlib
import http.client
import re
import signal
import socket
import struct
import subprocess
import sys
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlsplit

import httpx
import pytest
from protego import Protego

from crawler.demo import DISALLOWED_PREFIX, SampleSite
from crawler.demo.site_generator import generate_site

pytestmark = pytest.mark.integration

_LINK_ATTRS = {"a": "href", "link": "href", "img": "src", "script": "src", "iframe": "src"}
_CSS_URL = re.compile(r"url\(\s*['\"]?([^'\")]+)")
_UA = "Mozilla/5.0 (compatible; crawler/0.1; +http://127.0.0.1/contact)"


class _LinkParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        wanted = _LINK_ATTRS.get(tag)
        self.refs.extend(v for k, v in attrs if k == wanted and v is not None)


def _outlinks(url: str, response: httpx.Response) -> set[str]:
    """What a correct extractor finds: HTML links, CSS url(), Location; fragments dropped."""
    refs: list[str] = []
    if "location" in response.headers:
        refs.append(response.headers["location"])
    kind = response.headers.get("content-type", "")
    if kind.startswith("text/html"):
        parser = _LinkParser()
        parser.feed(response.text)
        refs += parser.refs
    elif kind.startswith("text/css"):
        refs += _CSS_URL.findall(response.text)
    return {urldefrag(urljoin(url, ref))[0] for ref in refs}


def _reference_crawl(site: SampleSite, obey_robots: bool) -> tuple[set[str], dict[str, int]]:
    """Breadth-first crawl from the main host's / with stdlib parsing; returns (fetched, status).

    Also checks that each response's links are exactly the ones the generator declared."""
    robots: dict[str, Protego] = {}
    fetched: set[str] = set()
    statuses: dict[str, int] = {}
    queue, seen = deque([site.base_urls[0]]), {site.base_urls[0]}
    with httpx.Client(follow_redirects=False, timeout=10) as client:
        while queue:
            url = queue.popleft()
            origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
            if origin not in robots:
                response = client.get(origin + "/robots.txt")
                fetched.add(origin + "/robots.txt")
                robots[origin] = Protego.parse(response.text)
            if obey_robots and not robots[origin].can_fetch(url, _UA):
                continue
            response = client.get(url)
            fetched.add(url)
            statuses[url] = response.status_code
            if response.status_code >= 400:
                continue
            links = _outlinks(url, response)
            assert links == set(site.content.resource(url).links), url
            for link in links - seen:
                seen.add(link)
                queue.append(link)
    return fetched, statuses


def test_reference_crawl_fetches_exactly_the_expected_urls(sample_site: SampleSite) -> None:
    for obey in (True, False):
        fetched, statuses = _reference_crawl(sample_site, obey_robots=obey)
        assert fetched == sample_site.expected_urls(obey_robots=obey)
        assert all(status in (200, 301, 302, 404) for status in statuses.values())


def test_expected_urls_cover_every_host_and_every_kind_of_resource(sample_site: SampleSite) -> None:
    obeyed = sample_site.expected_urls()
    ignored = sample_site.expected_urls(obey_robots=False)
    assert not any(urlsplit(u).path.startswith(DISALLOWED_PREFIX) for u in obeyed)
    assert obeyed < ignored
    for base in sample_site.base_urls:
        for path in (
            "",
            "robots.txt",
            "favicon.ico",
            "old-page",
            "go?to=blog",
            "static/css/site.css",
            "static/js/site.js",
            "static/img/bg.png",
            "missing-page.html",
            "news/?page=2",
        ):
            assert base + path in obeyed
        assert {base + "private/", base + "unlisted/preview.html"} <= ignored - obeyed
    assert not any("#" in u for u in ignored)
    assert any("&variant=" in u for u in obeyed)
    assert 300 < len(obeyed) < 400  # 3 hosts x 100 pages, plus assets
    main_host = sample_site.hosts[0]
    assert sample_site.expected_urls(hosts=[main_host]) == {
        u for u in obeyed if urlsplit(u).netloc == main_host
    }
    assert sample_site.base_urls[0] + "robots.txt" not in sample_site.expected_urls(
        include_robots_txt=False
    )


def test_serves_status_codes_content_types_and_lengths(sample_site: SampleSite) -> None:
    base = sample_site.base_urls[1]
    cases = {
        "": (200, "text/html; charset=utf-8"),
        "robots.txt": (200, "text/plain; charset=utf-8"),
        "static/css/site.css": (200, "text/css; charset=utf-8"),
        "static/js/site.js": (200, "text/javascript; charset=utf-8"),
        "static/img/photo-1.png": (200, "image/png"),
        "static/img/icon-1.gif": (200, "image/gif"),
        "favicon.ico": (200, "image/x-icon"),
        "old-page": (301, "text/html; charset=utf-8"),
        "go?to=blog": (302, "text/html; charset=utf-8"),
        "missing-page.html": (404, "text/html; charset=utf-8"),
        "no/such/page": (404, "text/html; charset=utf-8"),
        "news/?page=99": (404, "text/html; charset=utf-8"),
    }
    with httpx.Client(follow_redirects=False) as client:
        for path, (status, kind) in cases.items():
            response = client.get(base + path)
            assert (response.status_code, response.headers["content-type"]) == (status, kind), path
            assert int(response.headers["content-length"]) == len(response.content), path
            assert "date" in response.headers
        old = client.get(base + "old-page")
        assert old.headers["location"].startswith(base.rstrip("/") + "/news/")
        assert client.get(old.headers["location"]).status_code == 200
        assert client.get(base + "go?to=blog").headers["location"] == "/blog/"
        head = client.head(base)
        assert head.status_code == 200 and head.content == b""
        assert int(head.headers["content-length"]) == len(client.get(base).content)
        assert client.post(base, content=b"x").status_code == 501


def test_pages_are_real_html_of_realistic_size(sample_site: SampleSite) -> None:
    content = sample_site.content
    for origin, table in content.hosts.items():
        pages = [
            r
            for p, r in table.items()
            if r.status == 200 and r.content_type.startswith("text/html")
        ]
        assert len(pages) == sample_site.pages_per_host, origin
        sizes = sorted(len(r.body) for r in pages)
        assert 4_000 < sizes[len(sizes) // 2] < 12_000 and sizes[-1] < 16_000
        assert all(r.body.startswith(b"<!DOCTYPE html>") for r in pages)


def test_robots_txt_disallows_the_private_section_which_pages_link_to(
    sample_site: SampleSite,
) -> None:
    with httpx.Client() as client:
        for base in sample_site.base_urls:
            robots = Protego.parse(client.get(base + "robots.txt").text)
            assert not robots.can_fetch(base + "private/members.html", _UA)
            assert robots.can_fetch(base + "news/", _UA)
            assert not robots.can_fetch(base + "news/", "ExampleBadBot/2.0")
            assert 'href="/private/"' in client.get(base).text


def test_keep_alive_serves_many_requests_on_one_connection(sample_site: SampleSite) -> None:
    port = int(sample_site.hosts[0].rsplit(":", 1)[1])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        paths = ["/", "/robots.txt", "/missing-page.html", "/old-page", "/static/img/bg.png"] * 4
        first_socket = None
        for path in paths:
            connection.request("GET", path)
            response = connection.getresponse()
            body = response.read()
            assert len(body) == int(response.headers["Content-Length"])
            assert response.headers.get("Connection") is None
            first_socket = first_socket or connection.sock
            assert connection.sock is first_socket, "the server closed a keep-alive connection"
        connection.request("GET", "/", headers={"Connection": "close"})
        response = connection.getresponse()
        response.read()
        assert response.headers["Connection"] == "close"
    finally:
        connection.close()


def test_request_log_and_counts_record_every_request(sample_site: SampleSite) -> None:
    base = sample_site.base_urls[2]
    with httpx.Client() as client:
        client.get(base + "news/?page=2#frag")
        client.get(base + "news/?page=2")
        client.head(base + "robots.txt")
        client.get(base + "nothing-here")
    host = sample_site.hosts[2]
    assert [tuple(e) for e in sample_site.request_log] == [
        (host, "GET", "/news/?page=2", 200),
        (host, "GET", "/news/?page=2", 200),
        (host, "HEAD", "/robots.txt", 200),
        (host, "GET", "/nothing-here", 404),
    ]
    assert sample_site.counts() == {base + "news/?page=2": 2, base + "nothing-here": 1}
    assert sample_site.counts(methods=("HEAD",)) == {base + "robots.txt": 1}
    sample_site.clear_log()
    assert sample_site.request_log == []


def test_content_is_deterministic_and_independent_of_ports() -> None:
    a = generate_site(("http://127.0.0.1:1000", "http://127.0.0.1:1001"), 40, seed=7)
    b = generate_site(("http://127.0.0.1:2000", "http://127.0.0.1:2001"), 40, seed=7)
    c = generate_site(("http://127.0.0.1:1000", "http://127.0.0.1:1001"), 40, seed=8)
    for origin_a, origin_b in zip(a.origins, b.origins, strict=True):
        table_a, table_b = a.hosts[origin_a], b.hosts[origin_b]
        assert list(table_a) == list(table_b)
        for path, resource in table_a.items():
            moved = resource.body.replace(b"127.0.0.1:100", b"127.0.0.1:200")
            assert moved == table_b[path].body, path
    assert a.hosts[a.origins[0]]["/"].body != c.hosts[c.origins[0]]["/"].body
    with pytest.raises(ValueError):
        generate_site(("http://127.0.0.1:1000",), 5)


def _lzw_decode(data: bytes, min_code_size: int) -> list[int]:
    clear, end = 1 << min_code_size, (1 << min_code_size) + 1
    table: list[list[int]] = []
    out: list[int] = []
    previous: list[int] = []
    width, bits, value, position = min_code_size + 1, 0, 0, 0
    while True:
        while bits < width:
            value |= data[position] << bits
            position, bits = position + 1, bits + 8
        code, value, bits = value & ((1 << width) - 1), value >> width, bits - width
        if code == clear:
            table = [[i] for i in range(clear)] + [[], []]
            width, previous = min_code_size + 1, []
            continue
        if code == end:
            return out
        entry = table[code] if code < len(table) else previous + previous[:1]
        out += entry
        if previous:
            table.append(previous + entry[:1])
            if len(table) == 1 << width and width < 12:
                width += 1
        previous = entry


def test_images_are_valid_png_gif_and_ico(sample_site: SampleSite) -> None:
    table = sample_site.content.hosts[sample_site.content.origins[0]]
    png = table["/static/img/photo-2.png"].body
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", png[16:24])
    idat_length = struct.unpack(">I", png[33:37])[0]
    assert png[37:41] == b"IDAT"
    assert len(zlib.decompress(png[41 : 41 + idat_length])) == height * (1 + 3 * width)
    gif = table["/static/img/icon-3.gif"].body
    assert gif.startswith(b"GIF89a") and gif.endswith(b";")
    gif_width, gif_height = struct.unpack("<HH", gif[6:10])
    image_start = 13 + 12  # header, screen descriptor, 4-colour table
    assert gif[image_start] == 0x2C
    stream, position = b"", image_start + 11
    while gif[position]:
        stream += gif[position + 1 : position + 1 + gif[position]]
        position += 1 + gif[position]
    pixels = _lzw_decode(stream, gif[image_start + 10])
    assert len(pixels) == gif_width * gif_height and set(pixels) <= {0, 1, 2, 3}
    ico = table["/favicon.ico"].body
    assert ico[:6] == b"\x00\x00\x01\x00\x01\x00" and ico[22:30] == b"\x89PNG\r\n\x1a\n"


def test_latency_delays_every_response(sample_site_factory: Callable[..., SampleSite]) -> None:
    site = sample_site_factory(ports=(0,), pages_per_host=20, latency_s=0.2)
    started = time.monotonic()
    assert httpx.get(site.base_urls[0] + "robots.txt").status_code == 200
    assert time.monotonic() - started >= 0.2


def test_settle_waits_for_the_requests_a_vanished_client_left(
    sample_site_factory: Callable[..., SampleSite],
) -> None:
    site = sample_site_factory(ports=(0,), pages_per_host=20, latency_s=0.3)
    host, port = site.hosts[0].split(":")
    for _ in range(3):  # sent, then the client is gone before any answer
        with socket.create_connection((host, int(port)), timeout=10) as client:
            client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    site.settle(timeout_s=60)
    assert site.counts()[site.base_urls[0]] == 3
    connected = socket.create_connection((host, int(port)), timeout=10)  # a client stays
    with connected, pytest.raises(TimeoutError, match="still open"):
        site.settle(timeout_s=0.5)


def test_a_taken_port_fails_start_and_releases_the_others(free_port: int) -> None:
    with SampleSite(ports=(0,)) as holder:
        taken = int(holder.hosts[0].rsplit(":", 1)[1])
        with pytest.raises(OSError):
            SampleSite(ports=(free_port, taken)).start()
        with SampleSite(ports=(free_port,)) as site:  # free_port was released
            assert site.base_urls == [f"http://127.0.0.1:{free_port}/"]


def test_stop_closes_open_keep_alive_connections() -> None:
    site = SampleSite(ports=(0,), pages_per_host=20)
    site.start()
    port = int(site.hosts[0].rsplit(":", 1)[1])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    connection.request("GET", "/")
    connection.getresponse().read()
    site.stop()
    site.stop()
    with pytest.raises((ConnectionError, http.client.HTTPException, OSError)):
        connection.request("GET", "/robots.txt")
        connection.getresponse()
    connection.close()


@contextlib.contextmanager
def _module(*args: str) -> Iterator[subprocess.Popen[str]]:
    """``python -m crawler.demo.sample_site ARGS`` from the checkout, killed if still running."""
    process = subprocess.Popen(
        [sys.executable, "-m", "crawler.demo.sample_site", *args],
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _interrupt_exits_cleanly(process: subprocess.Popen[str]) -> None:
    """Ctrl-C stops it with exit code 0 and nothing on stderr."""
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=10) == 0
    assert process.stderr is not None and process.stderr.read() == ""


def test_module_serves_until_interrupted() -> None:
    with _module("--ports", "0,0", "--pages-per-host", "30") as process:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(3)]
        urls = [line.strip() for line in lines[1:]]
        assert all(url.startswith("http://127.0.0.1:") for url in urls), lines
        assert httpx.get(urls[1] + "robots.txt").status_code == 200
        _interrupt_exits_cleanly(process)


def test_module_interrupted_as_it_prints_its_first_line_exits_cleanly() -> None:
    with _module("--ports", "0,0") as process:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("Serving the sample site")
        _interrupt_exits_cleanly(process)  # while it still prints the URLs and their count
