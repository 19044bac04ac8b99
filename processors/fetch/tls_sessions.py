"""TlsSessions: the last TLS session of each origin, offered when a new connection to it opens.

A full TLS handshake costs the client a key exchange and a certificate chain to parse; a
resumed one (a TLS 1.2 session ticket or id, a TLS 1.3 pre-shared key) skips both. After each
new connection's first response :class:`~processors.fetch.http11_client.Http11Client` hands the
connection to :meth:`TlsSessions.after_handshake` (by then a TLS 1.3 server's tickets have
arrived), and the next connection to that origin offers the session kept. A server that
declines simply runs a full handshake; a handshake that fails while offering a session drops
the session, so the retry starts afresh.

Reading a connection's session is not free: Python's ``SSLSocket.session`` copies it by
serializing and parsing it again, the server's certificate included (~1.5 M instructions
with OpenSSL 3.0, more than half of what a resumed handshake costs the client). So a
connection that resumed the session offered does not replace it while that session has more
than half its lifetime left (the shorter of its timeout and its ticket's lifetime hint): the
same session is offered again. An origin that refuses a session it accepted before
(single-use tickets, new ticket keys) has every new session read, as before. Where reading
Python's getter leaks its copy (CPython 3.11, 3.12 before 3.12.8), the guarded stream copies the
session through OpenSSL instead (:mod:`~processors.fetch.native_tls_session`: no parse, no leak).

At most ``max_origins`` sessions are kept (each holds the server's certificate, a few KB); the
least recently stored or used goes first. Thread-safety: every method takes one lock for dict
operations only; a session is read from its connection outside it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Final

from processors.fetch.native_tls_session import TlsSession

SessionKey = tuple[str, int]
"""(host, port) of an https origin."""

DEFAULT_MAX_ORIGINS: Final = 2048


class _Kept:
    """An origin's session, whether it resumed a connection, and whether the origin refuses a
    session a second time (then every new session is read)."""

    __slots__ = ("resumed", "session", "single_use")

    def __init__(self, session: TlsSession, single_use: bool) -> None:
        self.session = session
        self.resumed = False
        self.single_use = single_use


def renew_after_s(session: TlsSession) -> float:
    """Seconds since the epoch after which ``session`` is replaced by the next connection's:
    half-way through its lifetime (its timeout, or its ticket's lifetime hint if shorter)."""
    lifetime = float(session.timeout)
    hint = session.ticket_lifetime_hint if session.has_ticket else 0
    if 0 < hint < lifetime:
        lifetime = float(hint)
    return session.time + lifetime / 2


class TlsSessions:
    """A bounded, thread-safe map from origin to its last TLS session (``ssl.SSLSession``, or
    a :class:`~processors.fetch.native_tls_session.NativeTlsSession` where reading Python's
    leaks)."""

    def __init__(self, max_origins: int = DEFAULT_MAX_ORIGINS) -> None:
        self._max = max(1, max_origins)
        self._sessions: OrderedDict[SessionKey, _Kept] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: SessionKey) -> TlsSession | None:
        """The session to offer on a new connection to ``key``, or None."""
        with self._lock:
            kept = self._sessions.get(key)
            if kept is None:
                return None
            self._sessions.move_to_end(key)
            return kept.session

    def put(self, key: SessionKey, session: TlsSession | None) -> None:
        """Keep ``session`` as ``key``'s latest (None is ignored)."""
        if session is None:
            return
        with self._lock:
            old = self._sessions.get(key)
            self._store_locked(key, _Kept(session, old is not None and old.single_use))

    def after_handshake(
        self,
        key: SessionKey,
        offered: TlsSession | None,
        resumed: bool,
        read: Callable[[], TlsSession | None],
        now_s: float,
    ) -> bool:
        """After a new connection's first response: keep its session for the next connection
        to ``key``, read with ``read``, unless the connection ``resumed`` the session
        ``offered``, still kept and not half-way through its lifetime at ``now_s``. Returns
        whether the session was read."""
        with self._lock:
            kept = self._sessions.get(key)
            if kept is not None and offered is not None and kept.session is offered:
                if resumed and not kept.single_use and now_s < renew_after_s(offered):
                    kept.resumed = True
                    self._sessions.move_to_end(key)
                    return False
                if not resumed and kept.resumed:
                    kept.single_use = True  # refused a session it took before
        session = read()
        if session is not None:
            with self._lock:
                old = self._sessions.get(key)
                self._store_locked(key, _Kept(session, old is not None and old.single_use))
        return True

    def _store_locked(self, key: SessionKey, kept: _Kept) -> None:
        self._sessions[key] = kept
        self._sessions.move_to_end(key)
        if len(self._sessions) > self._max:
            self._sessions.popitem(last=False)

    def discard(self, key: SessionKey) -> None:
        """Forget ``key``'s session (its handshake failed)."""
        with self._lock:
            self._sessions.pop(key, None)

    def __len__(self) -> int:
        return len(self._sessions)
