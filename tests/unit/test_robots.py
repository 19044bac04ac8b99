"""RobotsRules: protego wrapped so that hostile robots.txt files never crash a crawl."""

from __future__ import annotations

import random

import pytest

from crawler.robots import RobotsRules, complete_lines, is_robots_uri

UA = "Mozilla/5.0 (compatible; crawler/0.1.0; +http://example.org/about)"


def test_disallow_for_all_agents() -> None:
    rules = RobotsRules.parse(b"User-agent: *\nDisallow: /private/\n")
    assert not rules.allowed("http://a.example/private/x.html", UA)
    assert rules.allowed("http://a.example/public.html", UA)


def test_group_for_our_product_token_wins_over_star() -> None:
    body = b"User-agent: *\nDisallow: /\n\nUser-agent: crawler\nDisallow: /cgi-bin/\n"
    rules = RobotsRules.parse(body)
    assert rules.allowed("http://a.example/page", UA)
    assert not rules.allowed("http://a.example/cgi-bin/x", UA)
    assert not rules.allowed("http://a.example/page", "otherbot/1.0")


def test_token_inside_another_word_does_not_match() -> None:
    rules = RobotsRules.parse(b"User-agent: bot\nDisallow: /\n")
    assert rules.allowed("http://a.example/", "Mozilla/5.0 (compatible; robot/1.0)")


def test_crawl_delay_and_sitemaps() -> None:
    body = b"Sitemap: http://a.example/sitemap.xml\nUser-agent: *\nCrawl-delay: 7.5\nDisallow:\n"
    rules = RobotsRules.parse(body)
    assert rules.crawl_delay_s(UA) == 7.5
    assert rules.sitemaps == ("http://a.example/sitemap.xml",)


@pytest.mark.parametrize("delay", [b"-3", b"nan", b"inf", b"soon"])
def test_nonsensical_crawl_delay_is_ignored(delay: bytes) -> None:
    rules = RobotsRules.parse(b"User-agent: *\nCrawl-delay: " + delay + b"\n")
    assert rules.crawl_delay_s(UA) is None


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"\x00\x01\x02\xff\xfe binary junk \x00",
        b"<html><body>Not a robots file</body></html>",
        b"\xef\xbb\xbf\xff\xfeUser-agent: *\nDisallow: /\xc3(",
        b"Disallow: /\n" * 3,
        b"User-agent: *\nDisallow: " + b"*" * 100_000 + b"\n",
        b"User-agent: *\nAllow: /%\nDisallow: /%zz\n",
    ],
)
def test_garbage_never_raises(body: bytes) -> None:
    rules = RobotsRules.parse(body)
    for uri in ("http://a.example/", "http://a.example/%zz", "http://a.example/" + "a" * 5000):
        assert isinstance(rules.allowed(uri, UA), bool)
    delay_s = rules.crawl_delay_s(UA)
    assert delay_s is None or delay_s >= 0


def test_binary_noise_without_a_group_allows_everything() -> None:
    noise = b"\x00\xff" + random.Random(3).randbytes(65536) + b"\nDisallow: /\n"
    assert RobotsRules.parse(noise).allowed("http://a.example/x", UA)


def test_a_nul_byte_ends_a_line() -> None:
    rules = RobotsRules.parse(b"\x00\x00User-agent: *\x00Disallow: /x\x00junk\n")
    assert not rules.allowed("http://a.example/x", UA)
    assert rules.allowed("http://a.example/y", UA)


def test_utf8_bom_is_ignored() -> None:
    rules = RobotsRules.parse(b"\xef\xbb\xbfUser-agent: *\nDisallow: /x\n")
    assert not rules.allowed("http://a.example/x", UA)


def test_parsing_stops_at_max_size_without_a_cut_line() -> None:
    head = b"User-agent: *\nDisallow: /a\n"
    # The size limit falls inside "Disallow: /private": a cut line would read "Disallow: /".
    body = head + b"Disallow: /private\n"
    rules = RobotsRules.parse(body, max_size_bytes=len(head) + 11)
    assert not rules.allowed("http://a.example/a", UA)
    assert rules.allowed("http://a.example/other", UA)
    assert rules.allowed("http://a.example/private", UA)


def test_is_robots_uri() -> None:
    assert is_robots_uri("http://a.example/robots.txt")
    assert is_robots_uri("https://a.example:8443/robots.txt")
    assert not is_robots_uri("http://a.example/robots.txt?x=1")
    assert not is_robots_uri("http://a.example/dir/robots.txt")
    assert not is_robots_uri("http://a.example/")


LAST_GROUP = b"\nUser-agent: *\nDisallow: /private/\n"
JUNK_KIB = 400


def _junk(kind: str) -> bytes:
    """About 400 KB of one kind of junk."""
    size = JUNK_KIB * 1024
    rng = random.Random(kind)
    if kind == "bom":
        return b"\xef\xbb\xbf# nothing but a comment\n"
    if kind == "invalid-utf8":
        return bytes(rng.randrange(0x80, 0x100) for _ in range(size))
    if kind == "nul":
        return b"\x00" * size
    if kind == "binary":
        return rng.randbytes(size)
    if kind == "long-lines":
        return (b"Disallow-ish " + b"a" * 100_000 + b"\n") * 4
    if kind == "unknown-fields":
        return b"".join(f"X-Field-{n}: value {n}\n".encode() for n in range(size // 24))
    if kind == "html":
        row = b'<tr><td class="x">User agent</td><td><a href="/a:b">Disallow</a></td></tr>\n'
        return b"<!DOCTYPE html><html><body><table>\n" + row * (size // len(row))
    if kind == "cr-only":
        return b"Unknown: field\r" * (size // 15)
    raise AssertionError(kind)


@pytest.mark.parametrize(
    "kind",
    [
        "bom",
        "invalid-utf8",
        "nul",
        "binary",
        "long-lines",
        "unknown-fields",
        "html",
        "cr-only",
    ],
)
def test_the_group_after_400_kb_of_junk_applies(kind: str) -> None:
    body = _junk(kind) + LAST_GROUP
    assert 0 < len(body) <= 512 * 1024
    rules = RobotsRules.parse(body)
    assert not rules.allowed("http://a.example/private/page.html", UA)
    assert rules.allowed("http://a.example/public/page.html", UA)


def test_groups_around_junk_merge_for_the_same_agent() -> None:
    body = b"User-agent: *\nDisallow: /early/\n" + _junk("html") + LAST_GROUP
    rules = RobotsRules.parse(body)
    assert not rules.allowed("http://a.example/early/x", UA)
    assert not rules.allowed("http://a.example/private/x", UA)


def test_utf16_with_a_bom_is_decoded() -> None:
    body = "\ufeffUser-agent: *\r\nDisallow: /private/\r\n".encode("utf-16-le")
    assert not RobotsRules.parse(body).allowed("http://a.example/private/x", UA)


def test_past_the_limit_only_the_first_500_kib_apply() -> None:
    early = b"User-agent: *\nDisallow: /early/\n"
    filler = b"# filler\n" * (600 * 1024 // 9)
    late = b"Disallow: /late/\n"
    rules = RobotsRules.parse(early + filler + late)
    assert not rules.allowed("http://a.example/early/x", UA)
    assert rules.allowed("http://a.example/late/x", UA)
    # The limit is counted in bytes of the file as served, cut at a line end (CR counts).
    cr_file = early.replace(b"\n", b"\r") + b"# filler\r" * (600 * 1024 // 9)
    assert not RobotsRules.parse(cr_file).allowed("http://a.example/early/x", UA)


def test_complete_lines_drops_a_partial_last_line() -> None:
    assert complete_lines(b"Allow: /a\nDisallow: /priv") == b"Allow: /a\n"
    assert complete_lines(b"Allow: /a\rDisallow: /b\r") == b"Allow: /a\rDisallow: /b\r"
    assert complete_lines(b"no line end") == b""
