"""ExtractorHTTP: Location, Refresh and Content-Location headers become R and I outlinks."""

from __future__ import annotations

from crawler import CrawlURI
from processors.extract import ExtractorHTTP, ExtractorHTTPParams


def responded(headers: list[tuple[str, str]], status: int = 301) -> CrawlURI:
    return CrawlURI(
        "http://site.example/dir/old", status=status, http_status=status, response_headers=headers
    )


def test_location_and_content_location_are_resolved_against_the_uri() -> None:
    curi = responded(
        [
            ("Content-Type", "text/html"),
            ("location", "new/place?x=1"),
            ("Content-Location", "/canonical"),
            ("Refresh", "0; url=http://other.example/r"),
        ]
    )
    ExtractorHTTP("http").process(curi)
    assert [(link.uri, link.hop, link.context) for link in curi.outlinks] == [
        ("http://site.example/dir/new/place?x=1", "R", "Location:"),
        ("http://site.example/canonical", "I", "Content-Location:"),
        ("http://other.example/r", "R", "Refresh:"),
    ]


def test_unresolvable_values_are_passed_on_for_normalization_to_report() -> None:
    curi = responded([("Location", "http://[::1/broken")])
    ExtractorHTTP("http").process(curi)
    assert [link.uri for link in curi.outlinks] == ["http://[::1/broken"]


def test_nothing_without_a_response_and_favicon_only_when_asked() -> None:
    failed = responded([("Location", "/x")], status=-2)
    ExtractorHTTP("http").process(failed)
    assert failed.outlinks == []
    ok = responded([], status=200)
    ExtractorHTTP("http", ExtractorHTTPParams(infer_favicon=True)).process(ok)
    assert [(link.uri, link.hop) for link in ok.outlinks] == [
        ("http://site.example/favicon.ico", "I")
    ]
