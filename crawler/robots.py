"""RobotsRules: one server's parsed robots.txt, the only module that imports protego.

Parsing follows RFC 9309 §2.2: every line is parsed on its own, so whatever a file holds — a
byte-order mark, invalid UTF-8, NUL bytes, lines of 100 KB, unknown fields, an HTML page — the
groups around the junk still apply. The body is cut at ``max_size_bytes`` (default 500 KiB, the
least the RFC asks a crawler to parse; Heritrix reads as much), at the last complete line before
the limit, so the first 500 KiB of a longer file apply. Bytes are decoded as UTF-8 with
replacement (UTF-16 when the file starts with a UTF-16 byte-order mark); a NUL byte ends a line
(it never belongs to a rule, and binary junk must not glue itself to the next line). Anything
protego still chokes on yields "allow all" — a hostile robots.txt must never crash a
ToeThread. Instances are immutable after parsing and safe to share
between threads. Heritrix counterpart: ``org.archive.modules.net.Robotstxt``.
"""

from __future__ import annotations

import math
from typing import ClassVar
from urllib.parse import urlsplit

from protego import Protego

DEFAULT_MAX_SIZE_BYTES = 512 * 1024
ROBOTS_PATH = "/robots.txt"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def complete_lines(body: bytes) -> bytes:
    """``body`` up to its last line end (CR or LF): what is left of a file cut short.

    A directive cut in half could turn ``Disallow: /private`` into ``Disallow: /`` (or
    ``Allow: /public/x`` into ``Allow: /``), so a partial last line is dropped.
    """
    cut = max(body.rfind(b"\n"), body.rfind(b"\r"))
    return body[: cut + 1] if cut >= 0 else b""


def decode_robots(body: bytes) -> str:
    """The text of a robots.txt body: UTF-8 (or BOM-marked UTF-16), junk replaced, NULs as
    line ends, no byte-order mark."""
    if body.startswith(_UTF16_BOMS):
        text = body.decode("utf-16", errors="replace")
    else:
        text = body.decode("utf-8", errors="replace")
    return text.lstrip("\ufeff").replace("\x00", "\n")


def is_robots_uri(uri: str) -> bool:
    """Whether ``uri`` is a server's robots.txt (path exactly ``/robots.txt``, no query)."""
    if not uri.endswith(ROBOTS_PATH):
        return False
    try:
        parts = urlsplit(uri)
    except ValueError:
        return False
    return parts.path == ROBOTS_PATH and not parts.query


class RobotsRules:
    """Directives of one robots.txt: allow/disallow per user agent, crawl-delay, sitemaps.

    ``RobotsRules.ALLOW_ALL`` stands for "no robots" (a 404, a 5xx, a failed fetch accepted
    after retries, or an unparseable file).
    """

    __slots__ = ("_parser", "sitemaps")

    ALLOW_ALL: ClassVar[RobotsRules]

    def __init__(self, parser: Protego | None = None, sitemaps: tuple[str, ...] = ()) -> None:
        self._parser = parser
        self.sitemaps: tuple[str, ...] = sitemaps

    @classmethod
    def parse(cls, body: bytes, max_size_bytes: int = DEFAULT_MAX_SIZE_BYTES) -> RobotsRules:
        """Parse the complete lines within ``max_size_bytes`` of a robots.txt body (0: all).

        Lines that are not directives are skipped; a file without any usable group gives
        ALLOW_ALL.
        """
        if max_size_bytes > 0 and len(body) > max_size_bytes:
            body = complete_lines(body[:max_size_bytes])
        text = decode_robots(body)
        if not text.strip():
            return cls.ALLOW_ALL
        try:
            parser = Protego.parse(text)
            sitemaps = tuple(s.strip() for s in parser.sitemaps if s and s.strip())
        except Exception:  # noqa: BLE001 - protego's failure modes are not documented
            return cls.ALLOW_ALL
        return cls(parser, sitemaps)

    @property
    def allows_all(self) -> bool:
        """True for "no robots" (no parsed directives at all)."""
        return self._parser is None

    def allowed(self, uri: str, user_agent: str) -> bool:
        """Whether ``user_agent`` may fetch ``uri``; the most specific matching group decides."""
        parser = self._parser
        if parser is None:
            return True
        try:
            return bool(parser.can_fetch(uri, user_agent))
        except Exception:  # noqa: BLE001 - a URI protego cannot handle is not a robots ban
            return True

    def crawl_delay_s(self, user_agent: str) -> float | None:
        """The Crawl-delay for ``user_agent`` in seconds, or None when absent or nonsensical."""
        parser = self._parser
        if parser is None:
            return None
        try:
            delay = parser.crawl_delay(user_agent)
        except Exception:  # noqa: BLE001 - see allowed()
            return None
        if delay is None:
            return None
        delay_s = float(delay)
        if not math.isfinite(delay_s) or delay_s < 0:
            return None
        return delay_s

    def __repr__(self) -> str:
        return "RobotsRules(ALLOW_ALL)" if self._parser is None else "RobotsRules(parsed)"


RobotsRules.ALLOW_ALL = RobotsRules()
