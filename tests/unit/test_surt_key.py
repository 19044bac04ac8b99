"""surt_urlkey: the CDXJ key pywb looks URLs up with; the fast path agrees with ``surt.surt``."""

from __future__ import annotations

import random

import pytest
import surt

from crawler.archive.surt_key import plain_key, surt_urlkey

pytestmark = pytest.mark.timeout(60)

# Pieces that the fast path must either handle exactly as surt does or hand over to it.
_SCHEMES = ["http", "https", "HTTP", "ftp"]
_LABELS = ["example", "a", "b-c", "www", "www2", "wwwx", "xn--bcher-kva", "0", "1", "127",
           "255", "256", "00", "0x7f", "Ex", "com", "test", "a_b", "-a", "9z", "web"]  # fmt: skip
_PORTS = ["", ":80", ":443", ":8080", ":0", ":08", ":65535", ":65536", ":99999", ":"]
_SEGMENTS = ["", "a", "B", ".", "..", "..a", "a.b", "~u", "_x", "p-1.html", "%41", "a;b",
             "index.html", "a b", "é"]  # fmt: skip
_TAILS = ["", "/", "?", "?b=1&a=2", "#f", "?jsessionid=1", "/."]
# Half the URLs from pieces of the plain shape only (still with its edge cases: addresses,
# trailing slashes, default ports, dots inside segments).
_PLAIN = (
    ["http", "https"],
    ["example", "a", "b-c", "com", "test", "web", "9z", "wwwx", "0", "1", "127", "255"],
    ["", ":80", ":443", ":8080", ":65535", ":65536"],
    ["", "a", "..a", "a.b", "~u", "_x", "p-1.html", "a--b"],
    ["", "/"],
)


def _url(rng: random.Random) -> str:
    pieces = _PLAIN if rng.random() < 0.5 else (_SCHEMES, _LABELS, _PORTS, _SEGMENTS, _TAILS)
    schemes, labels, ports, segments, tails = pieces
    host = ".".join(rng.choice(labels) for _ in range(rng.randint(1, 4)))
    path = "".join("/" + rng.choice(segments) for _ in range(rng.randint(0, 4)))
    return f"{rng.choice(schemes)}://{host}{rng.choice(ports)}{path}{rng.choice(tails)}"


def _reference(url: str) -> str:
    try:
        return str(surt.surt(url))
    except Exception:  # noqa: BLE001 - as cdxj-indexer
        return url


def test_the_fast_path_gives_surts_key_for_every_url_it_takes() -> None:
    rng = random.Random(28)
    taken = 0
    for _ in range(20_000):
        url = _url(rng)
        key = plain_key(url)
        if key is not None:
            taken += 1
            assert key == _reference(url), url
        assert surt_urlkey(url) == _reference(url), url
    assert taken > 2_000  # the plain shapes are common enough to be exercised


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("http://127.0.0.1:18101/d000/p17.html", "1,0,0,127:18101)/d000/p17.html"),
        ("https://a.web.test:8443/p1.html", "test,web,a:8443)/p1.html"),
        ("https://example.com:443/a/b/", "com,example)/a/b"),
        ("http://example.com", "com,example)/"),
    ],
)
def test_crawled_shapes_take_the_fast_path(url: str, key: str) -> None:
    assert plain_key(url) == key == _reference(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://www.example.com/a",  # www dropped by surt
        "http://127.1/",  # an address surt normalizes
        "http://example.com/a?b=2&a=1",  # query sorted by surt
        "http://example.com/A",  # path lowered by surt
        "http://example.com/a//b/../c",
    ],
)
def test_other_shapes_go_to_surt(url: str) -> None:
    assert plain_key(url) is None
    assert surt_urlkey(url) == _reference(url)
