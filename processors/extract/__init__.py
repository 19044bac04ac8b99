"""Extract processors: links from HTTP headers and HTML pages."""

from processors.extract.extractor_html import ExtractorHTML, ExtractorHTMLParams
from processors.extract.extractor_http import ExtractorHTTP, ExtractorHTTPParams
from processors.extract.link_resolver import LinkResolver

__all__ = [
    "ExtractorHTML",
    "ExtractorHTMLParams",
    "ExtractorHTTP",
    "ExtractorHTTPParams",
    "LinkResolver",
]
