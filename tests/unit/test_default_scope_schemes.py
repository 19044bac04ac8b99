"""The default scope lets through only the schemes the crawler fetches (http, https, dns)."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler import CrawlURI, DecideResult, RuleContext, build_rules
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(20)


@pytest.mark.parametrize(
    ("uri", "hops", "expected"),
    [
        ("http://seed.example/page", "L", DecideResult.ACCEPT),
        ("https://seed.example/page", "L", DecideResult.ACCEPT),
        ("dns:seed.example", "P", DecideResult.ACCEPT),
        ("ftp://seed.example/pub/file", "L", DecideResult.REJECT),
        ("sftp://seed.example/file", "L", DecideResult.REJECT),
        ("whois://seed.example/", "P", DecideResult.REJECT),
        ("ftp://seed.example/robots.txt", "P", DecideResult.REJECT),
    ],
)
def test_default_scope_schemes(uri: str, hops: str, expected: DecideResult) -> None:
    order = load_order(ROOT / "jobs" / "example" / "order.yaml", [])
    scope = build_rules(order.scope, "scope")
    scope.bind(RuleContext(seeds=["http://seed.example/"], base_dir=str(ROOT)))
    curi = CrawlURI(uri, via="http://seed.example/", hop_path=hops)
    assert scope.decide(curi) is expected
