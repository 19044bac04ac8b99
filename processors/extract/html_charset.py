"""Choosing the character encoding of an HTML page: BOM, then HTTP header, then ``<meta>``.

The order is the HTML standard's (a BOM beats the Content-Type charset, which beats a
``<meta charset>`` / ``http-equiv`` declaration in the first 1 KiB); WHATWG labels that name a
superset in practice (``iso-8859-1`` → windows-1252, ``gb2312`` → gb18030) are widened; a page
claiming UTF-16 without a BOM is ASCII-compatible in practice and read as UTF-8. Annotations
follow Heritrix: ``unsatisfiableCharsetInHeader:<label>`` when the header names an unknown
charset, ``usingCharsetInHTML:<name>`` when the page's own declaration decided.
Pure functions, thread-safe.
"""

from __future__ import annotations

import codecs
import re

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_META_CHARSET_RE = re.compile(rb"<meta[^>]{0,512}?charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:\-]+)", re.I)
_CHARSET_ALIASES = {
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-sjis": "shift_jis",
    "utf-16": "utf-8",
    "utf-16le": "utf-8",
    "utf-16be": "utf-8",
}


def _codec(label: str) -> str | None:
    label = label.strip(" \"'").lower()
    label = _CHARSET_ALIASES.get(label, label)
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def choose_charset(body: bytes, content_type: str | None) -> tuple[str, list[str]]:
    """The Python codec name to decode ``body`` with, and the annotations explaining it."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name, []
    notes: list[str] = []
    if content_type:
        pos = content_type.lower().find("charset=")
        if pos >= 0:
            label = content_type[pos + 8 :].split(";", 1)[0].strip(" \"'")
            if label:
                from_header = _codec(label)
                if from_header is not None:
                    return from_header, notes
                notes.append(f"unsatisfiableCharsetInHeader:{label[:64]}")
    m = _META_CHARSET_RE.search(body, 0, 1024)
    if m is not None:
        from_meta = _codec(m.group(1).decode("ascii"))
        if from_meta is not None:
            notes.append(f"usingCharsetInHTML:{from_meta}")
            return from_meta, notes
    return "utf-8", notes


def decode_html(body: bytes, content_type: str | None) -> tuple[str | bytes, list[str]]:
    """The page as text, or as UTF-8 bytes (which lexbor parses without a Python copy), and the
    charset annotations. Undecodable bytes become U+FFFD; never raises."""
    name, notes = choose_charset(body, content_type)
    if name == "utf-8":
        return body, notes
    try:
        return body.decode(name, "replace"), notes
    except (LookupError, ValueError):
        return body, notes
