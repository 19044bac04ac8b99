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


class FakeSession:
    """What TlsSessions reads of a session: its creation time and lifetimes."""

    def __init__(self, time: int, timeout: int = 7200, hint: int = 300) -> None:
        self.time, self.timeout = time, timeout
        self.has_ticket, self.ticket_lifetime_hint = hint > 0, hint


def test_a_resumed_session_is_kept_until_half_its_ticket_lifetime() -> None:
    sessions = TlsSessions()
    first = session_of(FakeSession(time=1000, hint=300))
    sessions.put(("a", 443), first)
    reads: list[str] = []

    def read() -> ssl.SSLSession:
        reads.append("read")
        return session_of(FakeSession(time=2000))

    assert not sessions.after_handshake(("a", 443), first, True, read, now_s=1149.0)
    assert sessions.get(("a", 443)) is first
    assert sessions.after_handshake(("a", 443), first, True, read, now_s=1150.0)
    assert reads == ["read"] and sessions.get(("a", 443)) is not first


def test_a_full_handshake_or_another_offer_reads_the_new_session() -> None:
    sessions = TlsSessions()
    kept = session_of(FakeSession(time=1000))
    sessions.put(("a", 443), kept)
    new = session_of(FakeSession(time=1001))
    assert sessions.after_handshake(("a", 443), kept, False, lambda: new, now_s=1001.0)
    assert sessions.get(("a", 443)) is new
    other = session_of(FakeSession(time=1002))
    assert sessions.after_handshake(("a", 443), kept, True, lambda: other, now_s=1002.0)
    assert sessions.get(("a", 443)) is other


def session_of(fake: FakeSession) -> ssl.SSLSession:
    return cast(ssl.SSLSession, fake)
