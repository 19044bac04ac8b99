"""Browser block rules: regexes and ``surt:`` prefixes (with their errors at order load), the
bundled ``ads`` list, the crawl.log annotation and the block report."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.decide.url_pattern import parse_url_pattern
from crawler.order.errors import OrderError
from crawler.order.loader import load_order
from processors.browser.block_rules import BrowserBlockRules

pytestmark = pytest.mark.timeout(10)
EXAMPLE = Path(__file__).resolve().parents[2] / "jobs" / "example" / "order.yaml"


def test_a_regex_is_searched_anywhere_and_a_surt_prefix_covers_subdomains() -> None:
    regex = parse_url_pattern(r"/track(er)?\.js")
    assert regex.matches("https://cdn.example.com/js/tracker.js?v=2")
    assert not regex.matches("https://cdn.example.com/js/app.js")
    domain = parse_url_pattern("surt:doubleclick.net")
    assert domain.surt_prefix == "http://(net,doubleclick,"
    assert domain.matches("https://securepubads.g.doubleclick.net:8443/tag")
    assert not domain.matches("http://notdoubleclick.net/")
    directory = parse_url_pattern("surt:http://(org,example,www,)/ads/")
    assert directory.matches("https://www.example.org/ads/banner.png")
    assert not directory.matches("https://www.example.org/news/")


@pytest.mark.parametrize("bad", ["", "a(", "surt:", "two\nlines"])
def test_an_unusable_pattern_says_why(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_url_pattern(bad)


def test_a_bad_block_entry_is_an_order_error_naming_it() -> None:
    with pytest.raises(OrderError) as exc:
        load_order(EXAMPLE, ["browser.block=['ok', 'ads(']", "browser.block_lists=[adds]"])
    text = str(exc.value)
    assert "browser.block: value error, entry 1: invalid regular expression 'ads('" in text
    assert "browser.block_lists[0]" in text


def test_patterns_come_first_then_lists_and_the_report_counts_each_rule() -> None:
    rules = BrowserBlockRules(["/ads/", "surt:example.com"], ["ads"])
    assert rules.match("http://example.com/ads/x.js") == "/ads/"
    assert rules.match("http://www.example.com/x.js") == "surt:example.com"
    assert rules.match("https://www.google-analytics.com/collect") == "ads"
    assert rules.match("https://example.org/") is None
    rules.note("ads", new_url=True)
    rules.note("ads", new_url=False)
    rules.note("/ads/", new_url=True)
    assert rules.report().splitlines() == [
        "[requests] [urls] [rule]",
        "2 1 ads",
        "1 1 /ads/",
        "0 0 surt:example.com",
    ]
    assert not BrowserBlockRules()
    with pytest.raises(ValueError, match="no block list named 'adz'"):
        BrowserBlockRules([], ["adz"])


def test_the_annotation_keeps_crawl_log_columns_intact() -> None:
    note = BrowserBlockRules.annotation(r"a{1,3} b%")
    assert note == "browser:blocked:a{1%2C3}%20b%25"
