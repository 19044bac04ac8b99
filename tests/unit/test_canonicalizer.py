"""Canonicalization: the already-seen key of a normalized URI (Heritrix's default rules and the
optional ones)."""

from __future__ import annotations

import pytest

from crawler.canonicalizer import DEFAULT_CANONICALIZATION_RULES, Canonicalizer, canonicalize


def test_canonicalize_heritrix_example() -> None:
    uri = "http://User@WWW3.Example.com/Cart?x=1&JSESSIONID=0123456789abcdef0123456789ABCDEF"
    assert canonicalize(uri) == "http://example.com/cart?x=1"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("http://www.example.com/", "http://www.example.com/"),
        ("http://www.example.com/a", "http://example.com/a"),
        ("http://www12.example.com/a", "http://example.com/a"),
        ("http://wwwx.example.com/a", "http://wwwx.example.com/a"),
        ("https://user:pw@host.com/a", "https://host.com/a"),
        (
            "http://host.com/a?phpsessid=0123456789abcdef0123456789abcdef&b=1",
            "http://host.com/a?b=1",
        ),
        ("http://host.com/a?sid=0123456789abcdef0123456789abcdef", "http://host.com/a"),
        ("http://host.com/a?sid=short&b=1", "http://host.com/a?sid=short&b=1"),
        (
            "http://host.com/a?x=1&ASPSESSIONIDAbcdEfgh=ABCDEFGHIJKLMNOPQRSTUVWX",
            "http://host.com/a?x=1",
        ),
        ("http://host.com/a?cfid=12&cftoken=34&b=1", "http://host.com/a?b=1"),
        ("http://host.com/a?&b=1&", "http://host.com/a?b=1"),
        ("http://host.com/a?", "http://host.com/a"),
        ("http://host.com/a/b@c", "http://host.com/a/b@c"),
    ],
)
def test_canonicalize_default_rules(raw: str, expected: str) -> None:
    assert canonicalize(raw) == expected


def test_canonicalizer_optional_rules() -> None:
    canon = Canonicalizer([*DEFAULT_CANONICALIZATION_RULES, "sort_query", "strip_extra_slashes"])
    assert canon.canonicalize("http://h.com//a///b?z=1&a=2") == "http://h.com/a/b?a=2&z=1"
    assert Canonicalizer(["strip_www"]).canonicalize("http://www2.h.com/a") == "http://www2.h.com/a"
    assert Canonicalizer(["strip_www"]).canonicalize("http://www.h.com/a") == "http://h.com/a"
    assert Canonicalizer([]).canonicalize("http://WWW.H.com/A") == "http://WWW.H.com/A"


def test_canonicalizer_unknown_rule_is_named() -> None:
    with pytest.raises(ValueError, match="strip_nothing"):
        Canonicalizer(["lowercase", "strip_nothing"])
