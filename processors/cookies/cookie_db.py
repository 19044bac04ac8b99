"""CookieDB: the cookie jar's rows in ``state/cookies.sqlite``, so cookies outlive the process.

One row per cookie, keyed by its partition (the last two labels of its domain, see
:func:`~processors.cookies.cookie_store.partition_of`) and its ``(domain, path, name)``; the
columns hold every attribute ``http.cookiejar.Cookie`` needs (as JSON). A partition is written
whole (:meth:`CookieDB.replace_partition`), in one transaction, after a response changed it:
deletions and replacements need no bookkeeping. The database runs in WAL mode with
``synchronous=NORMAL``: a committed change is in the WAL file when the call returns, so it
survives ``kill -9`` of the crawl (a power cut may lose the last ones). Session cookies (no
expiry) are kept too: a resumed crawl continues its login sessions.

Thread-safe: one connection, guarded by one lock held for the statement only.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from http.cookiejar import Cookie
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cookies (
    part TEXT NOT NULL, domain TEXT NOT NULL, path TEXT NOT NULL, name TEXT NOT NULL,
    data TEXT NOT NULL, PRIMARY KEY (part, domain, path, name));
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def cookie_to_json(cookie: Cookie) -> str:
    """Every attribute of ``cookie`` as a JSON object."""
    return json.dumps(
        {
            "version": cookie.version,
            "name": cookie.name,
            "value": cookie.value,
            "port": cookie.port,
            "port_specified": cookie.port_specified,
            "domain": cookie.domain,
            "domain_specified": cookie.domain_specified,
            "domain_initial_dot": cookie.domain_initial_dot,
            "path": cookie.path,
            "path_specified": cookie.path_specified,
            "secure": cookie.secure,
            "expires": cookie.expires,
            "discard": cookie.discard,
            "rest": dict(getattr(cookie, "_rest", {})),
            "rfc2109": cookie.rfc2109,
        },
        separators=(",", ":"),
    )


def cookie_from_json(text: str) -> Cookie:
    """The cookie :func:`cookie_to_json` wrote."""
    d: dict[str, Any] = json.loads(text)
    return Cookie(
        d["version"],
        d["name"],
        d["value"],
        d["port"],
        d["port_specified"],
        d["domain"],
        d["domain_specified"],
        d["domain_initial_dot"],
        d["path"],
        d["path_specified"],
        d["secure"],
        d["expires"],
        d["discard"],
        None,
        None,
        d["rest"],
        d["rfc2109"],
    )


class CookieDB:
    """The sqlite file at ``path`` (created with its directory if missing)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.executescript(_SCHEMA)

    def rows(self) -> Iterator[tuple[str, Cookie]]:
        """``(partition, cookie)`` of every stored cookie; a row that does not parse is skipped."""
        with self._lock:
            found = self._conn.execute("SELECT part, data FROM cookies").fetchall()
        for part, data in found:
            try:
                yield str(part), cookie_from_json(str(data))
            except (ValueError, KeyError, TypeError):
                continue

    def partitions(self) -> set[str]:
        """The partitions that have stored cookies."""
        with self._lock:
            found = self._conn.execute("SELECT DISTINCT part FROM cookies").fetchall()
        return {str(row[0]) for row in found}

    def partition(self, part: str) -> list[Cookie]:
        """The stored cookies of ``part``; a row that does not parse is skipped."""
        with self._lock:
            found = self._conn.execute(
                "SELECT data FROM cookies WHERE part = ? ORDER BY rowid", (part,)
            ).fetchall()
        cookies = []
        for (data,) in found:
            try:
                cookies.append(cookie_from_json(str(data)))
            except (ValueError, KeyError, TypeError):
                continue
        return cookies

    def replace_partition(self, part: str, cookies: Iterable[Cookie]) -> None:
        """Make the stored cookies of ``part`` exactly ``cookies``, in one transaction."""
        rows = [(part, c.domain, c.path, c.name, cookie_to_json(c)) for c in cookies]
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN")
            try:
                conn.execute("DELETE FROM cookies WHERE part = ?", (part,))
                conn.executemany("INSERT OR REPLACE INTO cookies VALUES (?, ?, ?, ?, ?)", rows)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def get_meta(self, key: str) -> str | None:
        """A value of the ``meta`` table (e.g. that cookies.txt was loaded)."""
        with self._lock:
            row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Set a value of the ``meta`` table."""
        with self._lock:
            self._conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def close(self) -> None:
        """Close the connection. Idempotent."""
        with self._lock:
            self._conn.close()
