"""ExtractorHTTP: links from Location, Content-Location, Refresh and Link headers; /favicon.ico."""

from __future__ import annotations

from crawler import CrawlURI
from processors.extract import ExtractorHTTP, ExtractorHTTPParams

NO_FAVICON = ExtractorHTTPParams(infer_favicon=False)


def responded(headers: list[tuple[str, str]], status: int = 301) -> CrawlURI:
    return CrawlURI(
        "http://site.example/dir/page?q=1", status=status, http_status=status,
        response_headers=headers,
    )  # fmt: skip


def found(curi: CrawlURI) -> list[tuple[str, str, str]]:
    return [(link.uri, link.hop, link.context) for link in curi.outlinks]


def test_location_content_location_and_refresh_are_resolved_against_the_uri() -> None:
    curi = responded(
        [
            ("Location", "new/place?x=1"),
            ("content-location", "/canonical"),
            ("Refresh", "0; url=http://other.example/r"),
            ("Server", "x"),
        ]
    )
    ExtractorHTTP("http", NO_FAVICON).process(curi)
    assert found(curi) == [
        ("http://site.example/dir/new/place?x=1", "R", "Location:"),
        ("http://site.example/canonical", "I", "Content-Location:"),
        ("http://other.example/r", "R", "Refresh:"),
    ]


def test_link_header_targets_are_embeds_or_links_by_rel() -> None:
    curi = responded(
        [
            ("Link", '</s.css>; rel=preload; as=style, <https://cdn.example/i.ico>; rel="icon"'),
            ("Link", '</page/2>; rel="next"; title="a, <b>", </m.js>; rel="modulepreload"'),
            ("Link", '<https://site.example/api>; rel="https://api.w.org/"'),
            ("Link", "<<<<< not a link"),
        ],
        status=200,
    )
    ExtractorHTTP("http", NO_FAVICON).process(curi)
    assert found(curi) == [
        ("http://site.example/s.css", "E", "Link:"),
        ("https://cdn.example/i.ico", "E", "Link:"),
        ("http://site.example/page/2", "L", "Link:"),
        ("http://site.example/m.js", "E", "Link:"),
        ("https://site.example/api", "L", "Link:"),
    ]


def test_favicon_is_inferred_by_default_for_any_response() -> None:
    curi = responded([], status=404)
    ExtractorHTTP("http").process(curi)
    assert found(curi) == [("http://site.example/favicon.ico", "I", "=INFERRED_MISC")]


def test_nothing_without_a_response_or_for_other_schemes() -> None:
    failed = responded([("Location", "/x")], status=-2)
    ExtractorHTTP("http").process(failed)
    dns = CrawlURI("dns:site.example", status=1)
    ExtractorHTTP("http").process(dns)
    assert failed.outlinks == [] and dns.outlinks == []


def test_unresolvable_values_are_passed_on_for_normalization_to_report() -> None:
    curi = responded([("Location", "http://[::1/broken")])
    ExtractorHTTP("http", NO_FAVICON).process(curi)
    assert [link.uri for link in curi.outlinks] == ["http://[::1/broken"]


def test_max_outlinks_counts_the_links_already_found_and_reports_the_rest() -> None:
    curi = responded([("Location", "/a"), ("Link", "</b>; rel=next, </c>; rel=next")])
    curi.annotate("dol:2")
    ExtractorHTTP("http", ExtractorHTTPParams(max_outlinks=1)).process(curi)
    assert [link.uri for link in curi.outlinks] == ["http://site.example/a"]
    assert curi.annotations == ["dol:5"]


def test_a_huge_hostile_link_header_is_bounded_and_fast() -> None:
    curi = responded([("Link", "<" * 200_000), ("Link", "</x>; rel=next, " * 5000)])
    ExtractorHTTP("http", NO_FAVICON).process(curi)
    assert len(curi.outlinks) == 1000
