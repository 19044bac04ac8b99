"""CookieStore: the crawl's cookie jar, kept per host, persisted in the run's ``state/``.

Browser rules decide which cookie goes where (``http.cookiejar``'s ``DefaultCookiePolicy``): a
cookie set without a ``Domain`` attribute goes back to the host that set it only; with one, to
that domain and its subdomains, and only if the setting host is inside it (a host cannot set a
cookie for another site or for a bare TLD); ``Path``, ``Secure``, ``Max-Age``/``Expires`` as
browsers read them. Ports do not separate cookies (as in browsers).

The jar is split into partitions — the last two labels of a host (``www.example.com`` and
``example.com`` share ``example.com``; an IP address is its own) — so a request looks at the
few cookies of its own site, never at every cookie of the crawl: any cookie a host may receive
has a domain inside the host's partition. A crawl whose sites set no cookies pays one empty
dict check per request.

Persistence (:class:`~processors.cookies.cookie_db.CookieDB`, ``state/cookies.sqlite``): a
partition changed by a response is written whole before :meth:`set_from_response` returns, so
``crawler resume`` — after a clean stop or ``kill -9`` — sends the same cookies. Session cookies
(no expiry) are kept across a resume: for the crawl, one crawl is one browser session. A
Netscape ``cookies.txt`` can be loaded into a fresh store (:meth:`load_netscape`).

Memory: with a database, at most ``max_jars`` partitions are held in memory (a crawl of
millions of sites that set cookies would otherwise keep every one); past the bound the partition
loaded or changed longest ago, once written, leaves memory and is read back from the database
when one of its hosts is fetched again. Partitions whose last change is not written yet (a
failing disk) stay. Without a database every partition stays.

The interface other fetchers (the browser pool) share: :meth:`cookie_header` (the ``Cookie``
value for a URL), :meth:`cookies_for` (the cookies a URL gets, as :class:`CookieRecord`),
:meth:`set_from_response` (a response's ``Set-Cookie`` headers), :meth:`add` (a cookie learnt
elsewhere, e.g. set by a page's script). Thread-safe: each partition's jar has its own lock; the
partition map and the write generations share one lock held for dict updates only.
"""

from __future__ import annotations

import contextlib
import email.message
import ipaddress
import sqlite3
import threading
import time
import urllib.request
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from http.cookiejar import Cookie, CookieJar, DefaultCookiePolicy
from pathlib import Path
from urllib.parse import urlsplit

from processors.cookies.cookie_db import CookieDB
from processors.cookies.netscape import read_netscape

DEFAULT_MAX_JARS = 10_000
"""Cookie partitions (sites) held in memory by a store with a database."""
PRELOADED_KEY = "preloaded_from"
REQUEST_COOKIE = "request_cookie"
"""``CrawlURI.data`` key: a ``Cookie`` header sent on top of the jar's, its values winning (the
cookies a browser page would send, script-set ones included)."""


def merge_cookie_headers(base: str | None, extra: str) -> str:
    """``base`` and ``extra`` (``Cookie`` header values) as one; a name in both takes
    ``extra``'s value. Order: ``base``'s cookies first."""
    pairs: dict[str, str] = {}
    for header in (base or "", extra):
        for part in header.split(";"):
            name, sep, value = part.strip().partition("=")
            if name or sep:
                pairs[name] = value
    return "; ".join(f"{name}={value}" if name else value for name, value in pairs.items())


@dataclass(frozen=True, slots=True)
class CookieRecord:
    """One cookie as a browser API wants it. ``domain`` has a leading dot for a domain cookie
    (sent to subdomains too) and none for a host-only one; ``expires`` is epoch seconds, None
    for a session cookie."""

    name: str
    value: str
    domain: str
    path: str
    secure: bool
    http_only: bool
    expires: int | None

    @property
    def host_only(self) -> bool:
        """Sent to exactly ``domain``, not its subdomains."""
        return not self.domain.startswith(".")


def partition_of(host: str) -> str:
    """The partition of a host or cookie domain: its last two labels, or the IP address."""
    host = host.strip(".").lower()
    if not host:
        return ""
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return ".".join(host.rsplit(".", 2)[-2:])
    return host


class _Headers:
    """What ``CookieJar.extract_cookies`` reads of a response: ``info().get_all``."""

    def __init__(self, headers: Iterable[tuple[str, str]]) -> None:
        self._msg = email.message.Message()
        for name, value in headers:
            if name.lower() in ("set-cookie", "set-cookie2"):
                self._msg[name] = value

    def info(self) -> email.message.Message:
        return self._msg


class CookieStore:
    """Cookies of one crawl (see the module docstring). ``db`` None: in memory only."""

    def __init__(self, db: CookieDB | None = None, max_jars: int = DEFAULT_MAX_JARS) -> None:
        self._db = db
        self._max_jars = max_jars if db is not None else 0
        self.evicted_jars = 0
        # RFC 6265, as browsers: a cookie set without Domain goes to its host only (the older
        # Netscape rule would send it to subdomains too).
        self._policy = DefaultCookiePolicy(
            strict_ns_domain=DefaultCookiePolicy.DomainStrictNonDomain
        )
        # Oldest load or change first: the order partitions leave memory in.
        self._jars: OrderedDict[str, CookieJar] = OrderedDict()
        # Partitions with cookies in the database (held in memory or not).
        self._stored: set[str] = set()
        self._lock = threading.Lock()
        self._generation: dict[str, int] = {}
        self._written: dict[str, int] = {}
        self._write_lock = threading.Lock()
        self.write_failures = 0
        if db is not None:
            self._stored = db.partitions()

    @classmethod
    def open(cls, path: Path, max_jars: int = DEFAULT_MAX_JARS) -> CookieStore:
        """The store persisted in the sqlite file ``path`` (created if missing)."""
        return cls(CookieDB(path), max_jars)

    @property
    def preloaded(self) -> bool:
        """Whether a cookies.txt was ever loaded into this store (by this crawl or before a
        resume)."""
        return self._db is not None and self._db.get_meta(PRELOADED_KEY) is not None

    def __len__(self) -> int:
        return sum(len(jar) for jar in self._all_jars())

    def _all_jars(self) -> list[CookieJar]:
        """Every partition's jar, those out of memory read back for the call only."""
        with self._lock:
            held = dict(self._jars)
            stored = [part for part in self._stored if part not in held]
        jars = list(held.values())
        if self._db is not None:
            for part in stored:
                jar = CookieJar(self._policy)
                for cookie in self._db.partition(part):
                    jar.set_cookie(cookie)
                jars.append(jar)
        return jars

    def _jar(self, part: str, create: bool = False) -> CookieJar | None:
        """``part``'s jar: in memory, else read back from the database if it has cookies there,
        else a new one (``create``) or None."""
        jar = self._jars.get(part)
        if jar is not None:
            return jar
        if part not in self._stored and not create:
            return None
        loaded = CookieJar(self._policy)
        if part in self._stored and self._db is not None:
            for cookie in self._db.partition(part):
                loaded.set_cookie(cookie)
        with self._lock:
            jar = self._jars.get(part)
            if jar is None:
                jar = self._jars[part] = loaded
                self._evict_locked()
        return jar

    def _evict_locked(self) -> None:
        """Past ``max_jars``, let the oldest written partitions leave memory. Lock held."""
        excess = len(self._jars) - self._max_jars
        if not self._max_jars or excess <= 0:
            return
        for part in list(self._jars)[:excess]:
            if self._written.get(part, 0) >= self._generation.get(part, 0):
                del self._jars[part]
                self.evicted_jars += 1

    # --------------------------------------------------------------------- reads
    def cookie_header(self, url: str) -> str | None:
        """The ``Cookie`` request header ``url`` gets, or None. Cheap when no cookie could match."""
        if not self._jars and not self._stored:
            return None
        host = urlsplit(url).hostname
        jar = self._jar(partition_of(host or ""))
        if jar is None or not len(jar):
            return None
        request = urllib.request.Request(url)
        jar.add_cookie_header(request)
        return request.get_header("Cookie")

    def cookies_for(self, url: str) -> list[CookieRecord]:
        """The cookies a request for ``url`` carries, longest path first."""
        if not self._jars and not self._stored:
            return []
        jar = self._jar(partition_of(urlsplit(url).hostname or ""))
        if jar is None:
            return []
        request = urllib.request.Request(url)
        policy = self._policy
        now = int(time.time())
        policy._now = now  # type: ignore[attr-defined]  # the policy reads it for expiry checks
        found = [
            c
            for c in list(jar)
            if policy.path_return_ok(c.path, request) and policy.return_ok(c, request)
        ]
        found.sort(key=lambda c: len(c.path), reverse=True)
        return [_record(c) for c in found]

    def records(self) -> list[CookieRecord]:
        """Every cookie of the store."""
        return [_record(c) for jar in self._all_jars() for c in list(jar)]

    # -------------------------------------------------------------------- writes
    def set_from_response(self, url: str, headers: Iterable[tuple[str, str]]) -> bool:
        """Store the ``Set-Cookie`` headers of a response to ``url`` (cookies the policy refuses
        are dropped, expired ones deleted); True if the response had any. Persisted on return."""
        response = _Headers(headers)
        if not response.info().get_all("Set-Cookie") and not response.info().get_all("Set-Cookie2"):
            return False
        host = urlsplit(url).hostname or ""
        part = partition_of(host)
        jar = self._jar(part, create=True)
        assert jar is not None
        jar.extract_cookies(response, urllib.request.Request(url))  # type: ignore[arg-type]
        self._persist(part, jar)
        return True

    def add(self, record: CookieRecord) -> None:
        """Store a cookie learnt elsewhere (a browser page's script), replacing its namesake."""
        domain = record.domain.lower()
        cookie = Cookie(
            0,
            record.name,
            record.value,
            None,
            False,
            domain,
            domain.startswith("."),
            domain.startswith("."),
            record.path or "/",
            True,
            record.secure,
            record.expires,
            record.expires is None,
            None,
            None,
            {"HttpOnly": ""} if record.http_only else {},
        )
        self._add_cookies([cookie])

    def load_netscape(self, path: Path) -> int:
        """Load a Netscape ``cookies.txt`` (:mod:`~processors.cookies.netscape`; session and
        ``#HttpOnly_`` lines too, expired ones skipped); returns how many were loaded. Raises
        OSError or :class:`~processors.cookies.netscape.CookieFileError` for a missing or
        malformed file."""
        cookies = read_netscape(path)
        self._add_cookies(cookies)
        if self._db is not None:
            self._db.set_meta(PRELOADED_KEY, str(path))
        return len(cookies)

    def _add_cookies(self, cookies: list[Cookie]) -> None:
        touched: dict[str, CookieJar] = {}
        for cookie in cookies:
            part = partition_of(cookie.domain)
            jar = self._jar(part, create=True)
            assert jar is not None
            jar.set_cookie(cookie)
            touched[part] = jar
        for part, jar in touched.items():
            self._persist(part, jar)

    def _persist(self, part: str, jar: CookieJar) -> None:
        if self._db is None:
            return
        with self._lock:
            generation = self._generation.get(part, 0) + 1
            self._generation[part] = generation
            if part in self._jars:
                self._jars.move_to_end(part)
        snapshot = list(jar)
        with self._write_lock:
            # A later snapshot of this partition may have been written meanwhile: keep it.
            if self._written.get(part, 0) >= generation:
                return
            try:
                self._db.replace_partition(part, snapshot)
            except sqlite3.Error:
                # A full or failing disk: the cookies stay in memory and the partition is
                # written whole by its next change or by close().
                self.write_failures += 1
                return
            self._written[part] = generation
            with self._lock:
                if snapshot:
                    self._stored.add(part)
                else:
                    self._stored.discard(part)
                self._evict_locked()

    def flush(self) -> None:
        """Write the partitions whose last change could not be written."""
        if self._db is None:
            return
        with self._lock:
            pending = [
                (part, self._jars[part])
                for part, gen in self._generation.items()
                if self._written.get(part, 0) < gen and part in self._jars
            ]
        for part, jar in pending:
            self._persist(part, jar)

    def close(self) -> None:
        """Write what could not be written yet, close the database. Idempotent; never raises."""
        if self._db is not None:
            with contextlib.suppress(Exception):
                self.flush()
            with contextlib.suppress(Exception):
                self._db.close()


def _record(cookie: Cookie) -> CookieRecord:
    return CookieRecord(
        name=cookie.name,
        value=cookie.value or "",
        domain=cookie.domain,
        path=cookie.path,
        secure=cookie.secure,
        http_only=cookie.has_nonstandard_attr("HttpOnly")
        or cookie.has_nonstandard_attr("HTTPOnly"),
        expires=cookie.expires,
    )
