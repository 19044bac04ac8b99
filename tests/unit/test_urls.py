"""URI normalization (Heritrix UURI rules) and the host helpers."""

from __future__ import annotations

import contextlib
import random

import pytest

from crawler.urls import (
    MAX_URI_LENGTH,
    UriError,
    _normalize_slow,
    host_port,
    normalize,
    scheme_authority,
    server_key,
)

NORMALIZED = [
    ("http://Example.COM", "http://example.com/"),
    ("HTTP://www.Example.com:80/a/./b/../c#frag", "http://www.example.com/a/c"),
    ("https://example.com:443/x", "https://example.com/x"),
    ("https://example.com:80/x", "https://example.com:80/x"),
    ("http://example.com:8080/", "http://example.com:8080/"),
    ("http://example.com:008080/", "http://example.com:8080/"),
    ("http://example.com:/x", "http://example.com/x"),
    ("http://example.com/?", "http://example.com/"),
    ("http://example.com/page#section", "http://example.com/page"),
    ("  http://example.com/\tpa\nth\r  ", "http://example.com/path"),
    ("http://example.com/\xa0", "http://example.com/"),
    ("http:\\\\example.com\\a\\b?c\\d", "http://example.com/a/b?c%5Cd"),
    ("http:///example.com/", "http://example.com/"),
    ("http://.example.com./", "http://example.com/"),
    ("http://example.com%20%20/", "http://example.com/"),
    ("http://User:Pw@Example.com/", "http://User:Pw@example.com/"),
    ("http://münchen.de/straße", "http://xn--mnchen-3ya.de/stra%C3%9Fe"),
    ("http://example.com/a b?q=a b", "http://example.com/a%20b?q=a%20b"),
    ("http://example.com/é?q=ü", "http://example.com/%C3%A9?q=%C3%BC"),
    ("http://example.com/%41%zz%", "http://example.com/%41%25zz%25"),
    ("http://example.com/a%2Fb", "http://example.com/a%2Fb"),
    ('http://example.com/<"x">`', "http://example.com/%3C%22x%22%3E%60"),
    ("http://example.com/a|b'c(d)*e", "http://example.com/a|b'c(d)*e"),
    ("http://example.com/[a]{b}^?q=[a]{b}^", "http://example.com/%5Ba%5D%7Bb%7D%5E?q=[a]{b}^"),
    ("http://example.com/../../a", "http://example.com/a"),
    ("http://example.com/a/b/..", "http://example.com/a/"),
    ("http://example.com/a/./", "http://example.com/a/"),
    ("http://example.com/.well-known/x", "http://example.com/.well-known/x"),
    ("http://example.com/a?b=/../c", "http://example.com/a?b=/../c"),
    ("http://[::1]:8080/a", "http://[::1]:8080/a"),
    ("http://[2001:DB8::1]/", "http://[2001:db8::1]/"),
    ("http://192.168.1.5:80/", "http://192.168.1.5/"),
    ("dns:WWW.Example.com", "dns:www.example.com"),
]


@pytest.mark.parametrize(("raw", "expected"), NORMALIZED)
def test_normalize(raw: str, expected: str) -> None:
    assert normalize(raw) == expected


@pytest.mark.parametrize(("raw", "expected"), NORMALIZED)
def test_normalize_is_idempotent(raw: str, expected: str) -> None:
    assert normalize(expected) == expected


CLEAN = [
    "http://example.com/",
    "https://www.example.com/a/b.html?x=1&y=2",
    "http://127.0.0.1:8080/site/page-1.html",
    "http://example.com/a%20b?q=%C3%BC",
    "http://a_b.example-x.com/~user/(1)*,;:@$!+=|'",
    "http://example.com/?q={a}[b]^c?d",
]


@pytest.mark.parametrize("uri", CLEAN)
def test_clean_uris_pass_unchanged_by_fast_and_full_paths(uri: str) -> None:
    assert normalize(uri) == uri
    assert _normalize_slow(uri, None) == uri


BASE = "http://example.com/dir/page.html?x=1"


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        ("other.html", "http://example.com/dir/other.html"),
        ("/abs/path", "http://example.com/abs/path"),
        ("../up.html", "http://example.com/up.html"),
        ("./sub/../same.html", "http://example.com/dir/same.html"),
        ("?q=2", "http://example.com/dir/page.html?q=2"),
        ("#frag", "http://example.com/dir/page.html?x=1"),
        ("", "http://example.com/dir/page.html?x=1"),
        ("//other.org/x", "http://other.org/x"),
        ("https://Secure.example.com", "https://secure.example.com/"),
        ("  spaced page.html ", "http://example.com/dir/spaced%20page.html"),
        ("\\back\\slash", "http://example.com/back/slash"),
        ("/a b", "http://example.com/a%20b"),
        ("/\\evil.org/x", "http://evil.org/x"),  # backslashes become slashes before resolving
        ("/\t/evil.org/x", "http://evil.org/x"),  # so do tabs vanish
        ("page.html?a=1#top", "http://example.com/dir/page.html?a=1"),
        ("a:b/c", "UriError"),
    ],
)
def test_normalize_resolves_against_base(rel: str, expected: str) -> None:
    if expected == "UriError":
        with pytest.raises(UriError, match="unsupported scheme"):
            normalize(rel, BASE)
    else:
        assert normalize(rel, BASE) == expected


def test_relative_with_port_base() -> None:
    assert normalize("img/a.png", "http://127.0.0.1:8080/x/") == "http://127.0.0.1:8080/x/img/a.png"
    assert normalize("/", "https://h.org:8443/a/b") == "https://h.org:8443/"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("relative/path.html", "relative URI without a base"),
        ("mailto:someone@example.com", "unsupported scheme 'mailto'"),
        ("javascript:void(0)", "unsupported scheme 'javascript'"),
        ("data:text/plain,hi", "unsupported scheme 'data'"),
        ("tel:+123", "unsupported scheme 'tel'"),
        ("about:blank", "unsupported scheme 'about'"),
        ("ftp://example.com/", "unsupported scheme 'ftp'"),
        ("http://", "no host"),
        ("http:/path-only", "no host"),
        ("http://:8080/", "no host"),
        ("http://example.com:0/", "port 0 out of range"),
        ("http://example.com:65536/", "port 65536 out of range"),
        ("http://example.com:80x/", "invalid port"),
        ("http://exa mple.com/", "invalid host"),
        ("http://a..b/", "invalid host"),
        ("http://[::1/", "unterminated IPv6"),
        ("http://example.com/" + "a" * MAX_URI_LENGTH, "longer than 2083"),
        ("http://example.com/" + "é" * 500, "once escaped"),
    ],
)
def test_normalize_rejects_with_reason(raw: str, message: str) -> None:
    with pytest.raises(UriError, match=message):
        normalize(raw)


@pytest.mark.parametrize(
    "junk",
    ["http://[", "http://%", "http://\udcff/", "http://xn--/", "\x00", "http://a/\udcff", "::::"],
)
def test_normalize_only_ever_raises_urierror(junk: str) -> None:
    with contextlib.suppress(UriError):
        normalize(junk, "http://example.com/")


def test_bad_base_is_a_urierror() -> None:
    with pytest.raises(UriError):
        normalize("page.html", "mailto:x@y")


def test_host_helpers() -> None:
    assert host_port("http://u:p@example.com:8080/a") == ("example.com", 8080)
    assert host_port("https://example.com/") == ("example.com", 443)
    assert host_port("http://example.com?q") == ("example.com", 80)
    assert host_port("http://[::1]:81/") == ("[::1]", 81)
    assert host_port("http://[::1]/") == ("[::1]", 80)
    assert host_port("dns:example.com") == ("example.com", 53)
    assert scheme_authority("http://u@example.com:8080/a?b") == "http://example.com:8080"
    assert scheme_authority("https://example.com/") == "https://example.com"
    assert server_key("http://example.com/robots.txt") == "example.com:80"
    assert server_key("https://example.com:8443/") == "example.com:8443"
    with pytest.raises(UriError):
        host_port("not a uri")


def test_random_input_never_crashes_and_normal_form_is_stable() -> None:
    rng = random.Random(1)
    pieces = [*"aX9-._~!$&'()*+,;=:@/?#%[]{}|\\^`\"<> \t\né\xa0\udc80"]
    pieces += ["http://", "//", "/..", "/.", "%2", "%41", "www.", ":80", ":0", "h.com"]
    for _ in range(5000):
        raw = rng.choice(["http://", "HTTPS://", "http:", ""])
        raw += "".join(rng.choice(pieces) for _ in range(rng.randint(0, 20)))
        base = rng.choice([None, "http://example.com/a/b?c", "https://h.org:8443/x/"])
        try:
            result = normalize(raw, base)
        except UriError:
            continue
        assert normalize(result) == result, raw
        assert _normalize_slow(result, None) == result, raw


def test_host_port_remembered_per_start_answers_for_each_uri() -> None:
    # host_port remembers its answer per "scheme://authority" start: every URI sharing a start
    # (a host's pages), and those whose start has a "?" or "#" in it, get their own answer.
    from crawler import urls

    starts = [
        "http://example.com",
        "http://u:p@Example.com:8080",
        "https://example.com:443",
        "http://[::1]:81",
        "http://example.com?q=",
        "http://example.com#f",
        "dns:",
        "dns://example.com",
    ]
    tails = ["/", "/a/b", "/x?y=/z", "?q=/x", "#f/g", ""]
    uris = [start + tail for start in starts for tail in tails]
    for _ in range(2):
        for uri in uris:
            try:
                want: tuple[str, int] | None = urls._host_port(uri)
            except UriError:
                want = None
            try:
                got: tuple[str, int] | None = host_port(uri)
            except UriError:
                got = None
            assert got == want, uri
    assert host_port("http://example.com?q=/a") == ("example.com", 80)
    assert host_port("dns://example.com/x") == ("//example.com/x", 53)


def test_host_port_memo_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from crawler import urls

    monkeypatch.setattr(urls, "HOST_PORTS_KEPT", 50)
    for i in range(500):
        assert host_port(f"http://h{i}.example/p") == (f"h{i}.example", 80)
    assert len(urls._host_ports) <= 50
