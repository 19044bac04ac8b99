"""Adding raw links to ``curi.outlinks``: resolution, per-page de-duplication, the outlink cap.

Every extractor funnels its raw values through :func:`add_links`, so the ``max_outlinks`` cap
counts all links of a URI whatever extractor found them, and the links it drops are reported in
one ``dol:<n>`` annotation (Heritrix's "discarded outlinks") summed over the extractors.
Stateless functions; the CrawlURI belongs to the calling thread.
"""

from __future__ import annotations

from collections.abc import Iterable

from crawler import CrawlURI, Link
from processors.extract.link_resolver import LinkResolver

RawLink = tuple[str, str, str]
"""(raw attribute or header value, hop letter, context such as ``a/@href``)."""

EMBED_LINK_RELS = frozenset(
    {
        "stylesheet",
        "icon",
        "apple-touch-icon",
        "apple-touch-icon-precomposed",
        "mask-icon",
        "manifest",
        "modulepreload",
        "prefetch",
        "prerender",
        "preload",
    }
)
"""``rel`` tokens (of ``<link>`` elements and ``Link:`` headers) naming an embed (E), not a
navigational link (L)."""

_DOL = "dol:"


def add_links(curi: CrawlURI, raw: Iterable[RawLink], resolver: LinkResolver, limit: int) -> int:
    """Resolve and append ``raw`` links, each (value, hop) once, while ``curi.outlinks`` holds
    fewer than ``limit``; values that are not crawlable links are skipped. Returns how many
    links were appended; the ones over the cap are added to the ``dol:<n>`` annotation."""
    outlinks = curi.outlinks
    room = limit - len(outlinks)
    seen: set[tuple[str, str]] = set()
    dropped = added = 0
    resolve = resolver.resolve
    append = outlinks.append
    for value, hop, context in raw:
        key = (value, hop)
        if key in seen:
            continue
        seen.add(key)
        uri = resolve(value)
        if uri is None:
            continue
        if room <= 0:
            dropped += 1
            continue
        room -= 1
        added += 1
        append(Link(uri, hop, context))
    if dropped:
        note_dropped(curi, dropped)
    return added


def note_dropped(curi: CrawlURI, count: int) -> None:
    """Add ``count`` to the URI's ``dol:<n>`` annotation (creating it if needed)."""
    notes = curi.annotations
    for i, note in enumerate(notes):
        if note.startswith(_DOL) and note[len(_DOL) :].isdigit():
            notes[i] = f"{_DOL}{int(note[len(_DOL) :]) + count}"
            return
    notes.append(f"{_DOL}{count}")


def text_of(body: bytes, content_type: str | None) -> str:
    """``body`` decoded with the Content-Type charset (UTF-8 when absent or unknown); bad bytes
    become U+FFFD, so this never raises."""
    label = None
    if content_type:
        pos = content_type.lower().find("charset=")
        if pos >= 0:
            label = content_type[pos + 8 :].split(";", 1)[0].strip(" \"'")
    if label:
        try:
            return body.decode(label, "replace")
        except (LookupError, ValueError):
            pass
    return body.decode("utf-8", "replace")


def path_ends_with(uri: str, suffixes: tuple[str, ...]) -> bool:
    """Whether the path of ``uri`` (query and fragment excluded) ends with one of ``suffixes``
    (lower-case)."""
    cut = len(uri)
    for sep in ("?", "#"):
        pos = uri.find(sep)
        if 0 <= pos < cut:
            cut = pos
    return uri[:cut].lower().endswith(suffixes)
