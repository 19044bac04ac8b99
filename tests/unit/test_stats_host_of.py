"""host_of: the per-host statistics' host of a URI, cut out directly for plain http(s) URIs."""

from __future__ import annotations

import random
from urllib.parse import urlsplit

import pytest

from crawler.stats import CrawlStats, host_of


def reference(uri: str) -> str:
    """What ``host_of`` answered before its fast path: ``urlsplit``'s authority."""
    if uri.startswith("dns:"):
        return "dns:"
    try:
        return urlsplit(uri).netloc.rsplit("@", 1)[-1].lower() or "-"
    except ValueError:
        return "-"


ODD = [
    "http://Example.COM:8080/a",
    "https://user:pw@Host.example/x?y#z",
    "http://host.example?q=1",
    "http://host.example#frag",
    "http://host.example",
    "http:///path",
    "http://",
    "https://[::1]:8443/x",
    "http://[bad/x",
    "http://ho st.example/",
    "http://ho\tst.example/",
    "http://host.example\n/x",
    " http://host.example/",
    "http://host.example ",
    "http://hôst.example/",
    "http://host.example/\tpath",
    "HTTP://Upper.example/",
    "ftp://files.example/x",
    "dns:host.example",
    "mailto:someone@example.com",
    "http://a@b@c.example/",
    "http://h\x7f.example/",
]


@pytest.mark.timeout(10)
def test_host_of_answers_as_urlsplit_does() -> None:
    rng = random.Random(5)
    alphabet = "aZ09.-:@/?#[] \t%_~é"
    generated = [
        rng.choice(["http://", "https://", "HTTP://", "dns:", "x:"])
        + "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 24)))
        for _ in range(20_000)
    ]
    for uri in ODD + generated:
        assert host_of(uri) == reference(uri), uri


@pytest.mark.timeout(10)
def test_scheduled_uris_count_under_their_host() -> None:
    stats = CrawlStats()
    stats.note_scheduled_many(["http://A.example:81/x", "https://u@a.example:81/y", "dns:a"])
    stats.note_scheduled("http://b.example/")
    hosts = stats.totals().hosts
    scheduled = {h: s.scheduled for h, s in hosts.items()}
    assert scheduled == {"a.example:81": 2, "dns:": 1, "b.example": 1}


@pytest.mark.timeout(10)
def test_host_of_remembered_per_start_answers_as_urlsplit_does() -> None:
    # Many URIs share a start (a host's pages): the remembered answer must be each one's own.
    rng = random.Random(7)
    starts = [u.split("/", 3)[:3] for u in ODD if u.count("/") >= 2]
    tails = ["/", "/a/b", "?q=/x", "#f/g", "@x.example/", ":81/", "/p?x#y", ""]
    uris = ["/".join(s) + t for s in starts for t in tails]
    for _ in range(3):
        rng.shuffle(uris)
        for uri in uris:
            assert host_of(uri) == reference(uri), uri
