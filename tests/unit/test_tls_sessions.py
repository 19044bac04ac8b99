"""TlsSessions: the last session per origin, bounded, least recently used dropped first."""

from __future__ import annotations

import ssl
from typing import cast

from processors.fetch.tls_sessions import TlsSessions


def session(name: str) -> ssl.SSLSession:
    return cast(ssl.SSLSession, name)  # the cache never looks inside a session


def test_latest_session_per_origin_is_offered() -> None:
    sessions = TlsSessions()
    assert sessions.get(("a.example", 443)) is None
    sessions.put(("a.example", 443), session("first"))
    sessions.put(("a.example", 443), session("second"))
    sessions.put(("a.example", 8443), session("other port"))
    sessions.put(("b.example", 443), None)
    assert sessions.get(("a.example", 443)) == "second"
    assert sessions.get(("a.example", 8443)) == "other port"
    assert sessions.get(("b.example", 443)) is None


def test_bounded_least_recently_used_dropped() -> None:
    sessions = TlsSessions(max_origins=2)
    sessions.put(("a", 443), session("a"))
    sessions.put(("b", 443), session("b"))
    assert sessions.get(("a", 443)) == "a"  # now b is the least recently used
    sessions.put(("c", 443), session("c"))
    assert len(sessions) == 2
    assert sessions.get(("b", 443)) is None
    assert (sessions.get(("a", 443)), sessions.get(("c", 443))) == ("a", "c")


def test_discarded_session_is_not_offered() -> None:
    sessions = TlsSessions()
    sessions.put(("a", 443), session("a"))
    sessions.discard(("a", 443))
    sessions.discard(("never", 443))
    assert sessions.get(("a", 443)) is None
