"""SURT forms, implied seed prefixes and SurtPrefixSet matching."""

from __future__ import annotations

import pytest

from crawler.surt import SurtPrefixSet, prefix_from_directive, surt, surt_prefix_from_seed
from crawler.urls import UriError


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("http://www.archive.org/movies/x.html", "http://(org,archive,www,)/movies/x.html"),
        ("http://192.168.1.5:8080/", "http://(192.168.1.5:8080)/"),
        ("https://u:p@WWW.Example.com:81/A?B", "https://(com,example,www,:81@u:p)/a?b"),
        ("http://[::1]:8080/", "http://([::1]:8080)/"),
        ("dns:www.archive.org", "dns:(org,archive,www,)"),
        ("http://localhost/", "http://(localhost,)/"),
    ],
)
def test_surt(uri: str, expected: str) -> None:
    assert surt(uri) == expected


@pytest.mark.parametrize(
    ("seed", "prefix"),
    [
        ("http://www.archive.org/", "http://(org,archive,www,)/"),
        ("http://archive.org", "http://(org,archive,"),
        ("archive.org", "http://(org,archive,"),
        ("http://www.archive.org/movies/index.html", "http://(org,archive,www,)/movies/"),
        ("https://www.archive.org/movies/", "http://(org,archive,www,)/movies/"),
        ("HTTP://Archive.ORG/A/b", "http://(org,archive,)/a/"),
        ("http://127.0.0.1:8080/", "http://(127.0.0.1:8080)/"),
    ],
)
def test_surt_prefix_from_seed(seed: str, prefix: str) -> None:
    assert surt_prefix_from_seed(seed) == prefix


def test_bad_seed_raises_urierror() -> None:
    with pytest.raises(UriError):
        surt_prefix_from_seed("mailto:x@example.com")


def test_directives() -> None:
    assert prefix_from_directive("http://(org,archive,") == "http://(org,archive,"
    assert prefix_from_directive("https://(ORG,archive,)/a") == "http://(org,archive,)/a"
    assert prefix_from_directive("(net,") == "http://(net,"
    assert prefix_from_directive("example.com") == "http://(com,example,"


def test_domain_prefix_covers_subdomains_but_host_prefix_does_not() -> None:
    prefixes = SurtPrefixSet([surt_prefix_from_seed("http://archive.org")])
    prefixes.add(surt_prefix_from_seed("http://www.example.com/"))
    assert prefixes.matches_uri("http://archive.org/x")
    assert prefixes.matches_uri("https://web.archive.org/x")
    assert not prefixes.matches_uri("http://archive.org.evil.com/")
    assert not prefixes.matches_uri("http://notarchive.org/")
    assert prefixes.matches_uri("http://www.example.com/a")
    assert not prefixes.matches_uri("http://cdn.example.com/a")
    assert not prefixes.matches_uri("http://www.example.com:8080/a")


def test_path_prefix() -> None:
    prefixes = SurtPrefixSet([surt_prefix_from_seed("http://h.org/docs/index.html")])
    assert prefixes.matches_uri("http://h.org/docs/a/b.html")
    assert not prefixes.matches_uri("http://h.org/other")
    assert not prefixes.matches_uri("http://h.org/docsx")


def test_set_stays_reduced_and_matches_every_member() -> None:
    prefixes = SurtPrefixSet()
    assert prefixes.add("http://(org,archive,)/a/")
    assert prefixes.add("http://(org,archive,)/b/")
    assert prefixes.add("http://(org,archive,")  # covers both above
    assert not prefixes.add("http://(org,archive,www,)/")
    assert list(prefixes) == ["http://(org,archive,"]
    assert "http://(org,archive," in prefixes
    many = SurtPrefixSet(surt_prefix_from_seed(f"http://h{i}.example.com/") for i in range(5000))
    assert len(many) == 5000
    assert all(many.matches_uri(f"http://h{i}.example.com/x/y") for i in range(0, 5000, 7))
    assert not many.matches_uri("http://h5000.example.com/")
    assert not many.matches_uri("http://example.com/")


def test_import_lines() -> None:
    lines = [
        "# comment",
        "",
        "http://archive.org",
        "+http://(com,example,)/a/",
        "-http://(com,example,)/a/b/",
        "www.x.org/foo/ trailing-words",
        "mailto:broken@x",
    ]
    prefixes = SurtPrefixSet()
    bad = prefixes.import_lines(lines)
    assert bad == ["mailto:broken@x"]
    assert sorted(prefixes) == [
        "http://(com,example,)/a/",
        "http://(org,archive,",
        "http://(org,x,www,)/foo/",
    ]
    only_directives = SurtPrefixSet.from_lines(lines, plain_lines=False)
    assert list(only_directives) == ["http://(com,example,)/a/"]
