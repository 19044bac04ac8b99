"""RobotsRules: protego wrapped so that hostile robots.txt files never crash a crawl."""

from __future__ import annotations

import pytest

from crawler.robots import RobotsRules, is_robots_uri

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


def test_binary_file_allows_all() -> None:
    assert RobotsRules.parse(b"\x00User-agent: *\nDisallow: /\n").allows_all


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
