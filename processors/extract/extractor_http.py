"""ExtractorHTTP: links named by HTTP response headers.

For every http(s) URI that got a response (status > 0), reads ``curi.response_headers`` and
appends to ``curi.outlinks``, resolved against the URI (absolute, not yet normalized: the
CandidatesProcessor normalizes):

* ``Location`` and the ``url=`` part of ``Refresh`` as R (redirect) links;
* ``Content-Location`` as an I (inferred) link;
* each target of ``Link`` (RFC 8288: ``<uri>; rel="…"``, several per header): E when a ``rel``
  token names an embed (preload, stylesheet, icon, modulepreload, …), else L;
* with ``infer_favicon`` (default, as Heritrix always does) ``/favicon.ico`` of the host as I.

Contexts are the header names (``Location:``, ``Link:``…) and ``=INFERRED_MISC`` for the
favicon. A value that cannot be resolved is passed on as it is, so normalization reports it in
uri-errors.log. Links count against ``max_outlinks`` like every extractor's (``dol:<n>``).

Thread-safety: stateless. Heritrix counterpart: ``org.archive.modules.extractor.ExtractorHTTP``.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin

from pydantic import Field

from crawler import CrawlURI, Hop, Link, Params, Processor
from processors.extract.outlinks import EMBED_LINK_RELS, note_dropped

_REFRESH_URL_RE = re.compile(r"url\s*=\s*[\"']?([^\"'\s]+)", re.I)
_HEADER_HOPS = {"location": Hop.REFER, "content-location": Hop.INFERRED}
# One link-value of a Link header: <target> then its parameters up to the next link-value.
_LINK_VALUE_RE = re.compile(r"<([^<>]{0,16384})>((?:[^<,\"]|\"[^\"]{0,4096}\")*)")
_REL_RE = re.compile(r";\s*rel\s*=\s*(?:\"([^\"]*)\"|([^\s;,\"]+))", re.I)
_MAX_HEADER_LINKS = 1000


class ExtractorHTTPParams(Params):
    """Parameters of :class:`ExtractorHTTP`."""

    infer_favicon: bool = Field(
        True, description="add /favicon.ico of the host as an I link (as Heritrix does)"
    )
    max_outlinks: int = Field(
        6000, ge=0, description="links kept per URI; extra ones are counted as dol:<n>"
    )


class ExtractorHTTP(Processor[ExtractorHTTPParams]):
    """Extracts links from response headers (see the module docstring)."""

    def should_process(self, curi: CrawlURI) -> bool:
        return curi.status > 0 and curi.uri.startswith(("http://", "https://"))

    def inner_process(self, curi: CrawlURI) -> None:
        base = curi.uri
        found: list[tuple[str, str, str]] = []
        for name, value in curi.response_headers:
            lname = name.lower()
            hop = _HEADER_HOPS.get(lname)
            if hop is not None:
                found.append((value, hop, name.title() + ":"))
            elif lname == "refresh":
                m = _REFRESH_URL_RE.search(value)
                if m is not None:
                    found.append((m.group(1), Hop.REFER, "Refresh:"))
            elif lname == "link":
                found.extend(link_header_targets(value))
        if self.params.infer_favicon:
            found.append(("/favicon.ico", Hop.INFERRED, "=INFERRED_MISC"))
        room = self.params.max_outlinks - len(curi.outlinks)
        for value, hop, context in found:
            value = value.strip()
            if not value:
                continue
            if room <= 0:
                note_dropped(curi, 1)
                continue
            try:
                uri = urljoin(base, value)
            except ValueError:
                uri = value
            curi.outlinks.append(Link(uri, hop, context))
            room -= 1


def link_header_targets(value: str) -> list[tuple[str, str, str]]:
    """(target, hop, ``Link:``) for each link-value of a ``Link`` header, at most 1000."""
    targets = []
    for m in _LINK_VALUE_RE.finditer(value):
        rels: list[str] = []
        for rel in _REL_RE.finditer(m.group(2)):
            rels.extend((rel.group(1) or rel.group(2) or "").lower().split())
        hop = Hop.EMBED if any(rel in EMBED_LINK_RELS for rel in rels) else Hop.LINK
        targets.append((m.group(1), hop, "Link:"))
        if len(targets) >= _MAX_HEADER_LINKS:
            break
    return targets
