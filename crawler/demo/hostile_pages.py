"""Bodies of the hostile site (:mod:`crawler.demo.hostile_site`): bombs, monsters and traps.

Pure, deterministic byte builders; the expensive ones are cached, so a test session builds each
once. Every function documents what a crawler is expected to make of its output.
"""

from __future__ import annotations

import functools
import random
import struct
import zlib

import brotlicffi as brotli  # type: ignore[import-untyped]

MIB = 1 << 20
BOMB_INFLATED_BYTES = 1 << 30
"""What each decompression bomb inflates to: 1 GiB of zeros."""
OFFSITE = "http://offsite.invalid"
"""Links to this host are out of any test scope: extracted, never fetched."""


def page(title: str, body: str) -> bytes:
    """A small well-formed UTF-8 HTML page."""
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>{title}</title></head>'
        f"<body><h1>{title}</h1>{body}</body></html>"
    ).encode()


def links(paths: list[str]) -> str:
    """``<a href>`` for each path, one per line."""
    return "".join(f'<p><a href="{path}">{path}</a></p>\n' for path in paths)


@functools.cache
def gzip_bomb() -> bytes:
    """1 GiB of zeros as one gzip member, about 1 MB on the wire.

    Built from one 1 MiB deflate segment ended by a full flush (which resets the dictionary,
    so the segment can be repeated verbatim) in a fraction of a second instead of compressing
    a gigabyte.
    """
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = bytes(MIB)
    segment = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    tail = compressor.flush()
    crc = 0
    for _ in range(BOMB_INFLATED_BYTES // MIB):
        crc = zlib.crc32(block, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = struct.pack("<II", crc, BOMB_INFLATED_BYTES & 0xFFFFFFFF)
    return header + segment * (BOMB_INFLATED_BYTES // MIB) + tail + trailer


@functools.cache
def double_gzip_bomb() -> bytes:
    """:func:`gzip_bomb` gzipped again (``Content-Encoding: gzip, gzip``): about 2 KB on the
    wire for 1 GiB — the body that makes a one-call inflater allocate a gigabyte."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return compressor.compress(gzip_bomb()) + compressor.flush()


@functools.cache
def brotli_bomb() -> bytes:
    """1 GiB of zeros as brotli (``Content-Encoding: br``), about 200 KB on the wire."""
    compressor = brotli.Compressor(quality=1)
    block = bytes(MIB)
    chunks = [compressor.process(block) for _ in range(BOMB_INFLATED_BYTES // MIB)]
    return bytes(b"".join(chunks) + compressor.finish())


@functools.cache
def big_html(size_bytes: int, tail_link: str, offsite_links: int) -> bytes:
    """Malformed HTML of about ``size_bytes``: unclosed ``<div><p><b><table><td>``, stray
    ``</i>``, attributes without quotes or ``=``, comments never closed until the end, and
    ``offsite_links`` links to :data:`OFFSITE` spread through it. ``tail_link`` is the very last
    link: an extractor that read the whole page finds it."""
    rng = random.Random(size_bytes)
    filler = (
        "<div class=x><p>Lorem <b>ipsum <i>dolor</b> sit</i> amet <table><tr><td>cell"
        "<font face=arial size=+1>text <span title='no close>more\n"
    )
    parts = ["<html><head><title>big</title><body>"]
    total = len(parts[0])
    link_every = max(1, size_bytes // (len(filler) * max(1, offsite_links)))
    n = 0
    made = 0
    while total < size_bytes:
        part = filler
        if n % link_every == 0 and made < offsite_links:
            part += f"<a href={OFFSITE}/big/{made}?r={rng.randrange(1 << 30)}>l</a>"
            made += 1
        parts.append(part)
        total += len(part)
        n += 1
    parts.append(f'<a href="{tail_link}">the end</a><!-- never closed')
    return "".join(parts).encode()


@functools.cache
def deep_html(depth: int, tag: str, tail_link: str) -> bytes:
    """``depth`` nested, never closed ``<tag>`` elements, then ``tail_link``."""
    return b"<html><body>" + f"<{tag}>".encode() * depth + f'<a href="{tail_link}">end</a>'.encode()


@functools.cache
def binary_junk(size_bytes: int) -> bytes:
    """Deterministic random bytes (NULs, invalid UTF-8, stray ``<``) to serve as text/html."""
    return random.Random(7).randbytes(size_bytes)


def charset_page(title: str, link: str, encoding: str, meta: str | None) -> bytes:
    """A page with a non-ASCII ``link`` encoded in ``encoding``, optionally declaring ``meta``
    as its charset in a ``<meta>``."""
    head = f'<meta charset="{meta}">' if meta else ""
    text = f"<html><head>{head}<title>{title}</title></head><body><a href='{link}'>x</a></body>"
    return text.encode(encoding)


def calendar_page(month: int) -> bytes:
    """One month of an endless calendar: links to the month before and after, forever."""
    return page(
        f"month {month}",
        links([f"/calendar?month={month - 1}", f"/calendar?month={month + 1}"]),
    )


def odd_links_page(long_url_chars: int, tail_link: str) -> bytes:
    """Links that must not be fetched (javascript:, mailto:, data:, tel:, malformed hosts and
    ports, a URI over ``long_url_chars``), then one good ``tail_link``."""
    odd = [
        "javascript:alert(document.cookie)",
        "JavaScript:void(0)",
        "mailto:webmaster@example.org?subject=hi",
        "data:text/html;base64,PGEgaHJlZj0iL2RhdGEtbGluayI+eDwvYT4=",
        "data:text/html,<a href=/from-data-uri>x</a>",
        "tel:+1-555-0100",
        "http://[::1/broken-ipv6",
        "http://127.0.0.1:99999/bad-port",
        "http://exa mple.invalid/space in host",
        "http://%zz%zz/bad-escape",
        "http:///no-host",
        "/too-long?" + "q" * long_url_chars,
        "\x00\x01/control-chars",
    ]
    anchors = "".join(f'<a href="{value}">odd</a>\n' for value in odd)
    return page("odd links", anchors + f'<a href="{tail_link}">good</a>')


def huge_robots(size_bytes: int, cap_rule: str, late_rule: str) -> bytes:
    """A robots.txt of ``size_bytes``: ``cap_rule`` first, comment filler, ``late_rule`` past
    any sane size cap (Heritrix reads 500 KiB; rules beyond are ignored)."""
    head = f"User-agent: *\nDisallow: {cap_rule}\n".encode()
    tail = f"Disallow: {late_rule}\n".encode()
    line = b"# " + b"x" * 77 + b"\n"
    count = max(0, (size_bytes - len(head) - len(tail)) // len(line))
    return head + line * count + tail


def garbage_robots(size_bytes: int) -> bytes:
    """Binary noise served as robots.txt (a misconfigured server): it holds no group (its
    "Disallow: /" has no User-agent line), so it allows everything."""
    return b"\x00\xff" + random.Random(11).randbytes(size_bytes) + b"\nDisallow: /\n"


def many_links_page(count: int) -> bytes:
    """``count`` distinct links to :data:`OFFSITE`: more than any per-page outlink cap."""
    anchors = "".join(f'<a href="{OFFSITE}/many/{i}">{i}</a>\n' for i in range(count))
    return page("many links", anchors)
