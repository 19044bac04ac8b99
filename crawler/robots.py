"""RobotsRules: one server's parsed robots.txt, the only module that imports protego.

Parsing is defensive: the body is cut at ``max_size_bytes`` (Heritrix reads at most 500 KiB),
decoded as UTF-8 with replacement, and anything protego chokes on yields "allow all" — a hostile
robots.txt must never crash a ToeThread. Instances are immutable after parsing and safe to share
between threads. Heritrix counterpart: ``org.archive.modules.net.Robotstxt``.
"""

from __future__ import annotations

import math
from typing import ClassVar
from urllib.parse import urlsplit

from protego import Protego

DEFAULT_MAX_SIZE_BYTES = 512 * 1024
ROBOTS_PATH = "/robots.txt"


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
        """Parse at most ``max_size_bytes`` of a robots.txt body; garbage gives ALLOW_ALL."""
        if max_size_bytes > 0 and len(body) > max_size_bytes:
            # A directive cut in half at the limit could turn "Disallow: /private" into
            # "Disallow: /", so only complete lines are kept.
            body = body[:max_size_bytes]
            cut = body.rfind(b"\n")
            body = body[: cut + 1] if cut >= 0 else b""
        text = body.decode("utf-8", errors="replace").lstrip("\ufeff")
        # NUL bytes mean a binary file served as robots.txt; protego would read it as text.
        if not text.strip() or "\x00" in text:
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
