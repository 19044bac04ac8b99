"""TlsSessions: the last TLS session of each origin, offered when a new connection to it opens.

A full TLS handshake costs the client a key exchange and a certificate chain to parse; a
resumed one (a TLS 1.2 session ticket or id, a TLS 1.3 pre-shared key) skips both. After each
new connection's first response :class:`~processors.fetch.http11_client.Http11Client` stores
the connection's ``ssl.SSLSession`` here (by then a TLS 1.3 server's tickets have arrived), and
the next connection to that origin offers it. A server that declines simply runs a full
handshake; a handshake that fails while offering a session drops the session, so the retry
starts afresh.

At most ``max_origins`` sessions are kept (each holds the server's certificate, a few KB); the
least recently stored or used goes first. Thread-safety: every method takes one lock for a
dict operation only.
"""

from __future__ import annotations

import ssl
import threading
from collections import OrderedDict
from typing import Final

SessionKey = tuple[str, int]
"""(host, port) of an https origin."""

DEFAULT_MAX_ORIGINS: Final = 2048


class TlsSessions:
    """A bounded, thread-safe map from origin to its last ``ssl.SSLSession``."""

    def __init__(self, max_origins: int = DEFAULT_MAX_ORIGINS) -> None:
        self._max = max(1, max_origins)
        self._sessions: OrderedDict[SessionKey, ssl.SSLSession] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: SessionKey) -> ssl.SSLSession | None:
        """The session to offer on a new connection to ``key``, or None."""
        with self._lock:
            session = self._sessions.get(key)
            if session is not None:
                self._sessions.move_to_end(key)
            return session

    def put(self, key: SessionKey, session: ssl.SSLSession | None) -> None:
        """Keep ``session`` as ``key``'s latest (None is ignored)."""
        if session is None:
            return
        with self._lock:
            self._sessions[key] = session
            self._sessions.move_to_end(key)
            if len(self._sessions) > self._max:
                self._sessions.popitem(last=False)

    def discard(self, key: SessionKey) -> None:
        """Forget ``key``'s session (its handshake failed)."""
        with self._lock:
            self._sessions.pop(key, None)

    def __len__(self) -> int:
        return len(self._sessions)
