"""ExtractorHTTP: links named by HTTP response headers.

For every http(s) URI that got a response (status > 0), reads ``curi.response_headers`` and
appends to ``curi.outlinks``: ``Location`` and the ``url=`` part of ``Refresh`` as R (redirect)
links, ``Content-Location`` as an I (inferred) link, each resolved against the URI (absolute,
not yet normalized: the CandidatesProcessor normalizes). With ``infer_favicon`` it also adds
``/favicon.ico`` as I, as Heritrix does (off by default: one more URI per host).
A value that cannot be resolved is passed on as it is, so normalization reports it in
uri-errors.log.

Thread-safety: stateless. Heritrix counterpart: ``org.archive.modules.extractor.ExtractorHTTP``.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin

from pydantic import Field

from crawler import CrawlURI, Hop, Link, Params, Processor

_REFRESH_URL_RE = re.compile(r"url\s*=\s*[\"']?([^\"'\s]+)", re.I)
_HEADER_HOPS = {"location": Hop.REFER, "content-location": Hop.INFERRED}


class ExtractorHTTPParams(Params):
    """Parameters of :class:`ExtractorHTTP`."""

    infer_favicon: bool = Field(False, description="add /favicon.ico of the host as an I link")


class ExtractorHTTP(Processor[ExtractorHTTPParams]):
    """Extracts links from response headers (see the module docstring)."""

    def should_process(self, curi: CrawlURI) -> bool:
        return curi.status > 0 and curi.uri.startswith(("http://", "https://"))

    def inner_process(self, curi: CrawlURI) -> None:
        base = curi.uri
        for name, value in curi.response_headers:
            lname = name.lower()
            hop = _HEADER_HOPS.get(lname)
            if hop is not None:
                _add(curi, base, value, hop, name.title() + ":")
            elif lname == "refresh":
                m = _REFRESH_URL_RE.search(value)
                if m is not None:
                    _add(curi, base, m.group(1), Hop.REFER, "Refresh:")
        if self.params.infer_favicon:
            _add(curi, base, "/favicon.ico", Hop.INFERRED, "=INFERRED_MISC")


def _add(curi: CrawlURI, base: str, value: str, hop: str, context: str) -> None:
    value = value.strip()
    if not value:
        return
    try:
        uri = urljoin(base, value)
    except ValueError:
        uri = value
    curi.outlinks.append(Link(uri, hop, context))
