"""NativeTlsSession: TLS sessions kept by OpenSSL where reading ``SSLSocket.session`` leaks.

CPython 3.11, and 3.12 before 3.12.8, leak a copy of the session each time
``SSLSocket.session`` is read (CPython issue gh-116810: the getter makes a copy for an old
OpenSSL bug, then takes a counted reference to the original too, and the copy is never freed).
A copy holds the server's certificate: ~5 KB a read with a 2048-bit RSA certificate. The HTTP
client reads the session of every new TLS connection it keeps one from, so a crawl that opens
a few connections a second grows by tens of MB an hour, without end (heaptrack on a 40-minute
run of the 10,000-host TLS benchmark: half of the C heap's growth).

Where the running Python has that leak (:data:`PYTHON_SESSION_LEAKS`), the client keeps its
sessions through OpenSSL itself: :func:`read` copies the connection's session with
``SSL_SESSION_dup`` (freed with ``SSL_SESSION_free`` when the :class:`NativeTlsSession` goes;
a copy, because closing a connection without a TLS shutdown marks its own session not
resumable), and :func:`offer` gives it to a new connection with ``SSL_set_session`` before its
handshake, which is what the ``session=`` argument of ``wrap_socket`` does. The functions are
those of the libssl that Python's ``_ssl`` module is linked with, found through that module.

The ``SSL*`` of a Python ``SSLSocket`` is read from the C object behind ``SSLSocket._sslobj``:
CPython 3.11 and 3.12 lay it out as (object header, weak reference to the socket, ``SSL*``,
context). Before the pointer is used, the layout is checked on each call with plain integer
comparisons: the word after it must be the address of the socket's context object, and the
``SSL_CTX`` that OpenSSL says the ``SSL*`` belongs to must be that context's. If either check
fails, :func:`read` returns None (no session kept: a full handshake next time) and nothing is
dereferenced. A session is offered only to a connection of the context it was made in, as
Python requires (a session made without certificate checks must not let a checked connection
skip them).

Thread-safety: OpenSSL counts a session's references atomically; a session may be offered to
several connections at once. Each function touches only the objects it is given.
"""

from __future__ import annotations

import ctypes
import ssl
import sys
from typing import Any, Final

PYTHON_SESSION_LEAKS: Final = (3, 11) <= sys.version_info[:3] < (3, 12, 8)
"""Whether reading ``SSLSocket.session`` leaks a copy of the session (CPython gh-116810)."""

_WORD: Final = ctypes.sizeof(ctypes.c_void_p)
_HEAD: Final = 2 * _WORD  # PyObject_HEAD: reference count, type
_SSL_AT: Final = _HEAD + _WORD  # after the weak reference to the socket
_CTX_AT: Final = _HEAD + 2 * _WORD  # PySSLSocket.ctx, the PySSLContext
_SSL_CTX_AT: Final = _HEAD  # PySSLContext.ctx, the SSL_CTX


def _load() -> Any:
    """libssl's session functions, as the ``_ssl`` module links them; None if not found."""
    try:
        import _ssl

        lib = ctypes.CDLL(_ssl.__file__)
        pointer, long = ctypes.c_void_p, ctypes.c_long
        for name, args, result in (
            ("SSL_get1_session", [pointer], pointer),
            ("SSL_SESSION_dup", [pointer], pointer),
            ("SSL_set_session", [pointer, pointer], ctypes.c_int),
            ("SSL_get_SSL_CTX", [pointer], pointer),
            ("SSL_SESSION_free", [pointer], None),
            ("SSL_SESSION_get_time", [pointer], long),
            ("SSL_SESSION_get_timeout", [pointer], long),
            ("SSL_SESSION_get_ticket_lifetime_hint", [pointer], ctypes.c_ulong),
            ("SSL_SESSION_has_ticket", [pointer], ctypes.c_int),
        ):
            func = getattr(lib, name)
            func.argtypes, func.restype = args, result
        return lib
    except (ImportError, OSError, AttributeError):
        return None


_LIB: Final[Any] = _load() if PYTHON_SESSION_LEAKS else None


class NativeTlsSession:
    """A counted reference to an OpenSSL ``SSL_SESSION`` and the context it was made in.

    Offers what :class:`~processors.fetch.tls_sessions.TlsSessions` reads of an
    ``ssl.SSLSession``: ``time``, ``timeout``, ``ticket_lifetime_hint``, ``has_ticket``. The
    reference is released when the object is collected. Immutable; safe to share.
    """

    __slots__ = ("_ptr", "context")

    def __init__(self, ptr: int, context: ssl.SSLContext) -> None:
        self._ptr = ptr
        self.context = context

    @property
    def pointer(self) -> int:
        """The ``SSL_SESSION*`` (for :func:`offer`)."""
        return self._ptr

    @property
    def time(self) -> int:
        """When the session was made (seconds since the epoch)."""
        return int(_LIB.SSL_SESSION_get_time(self._ptr))

    @property
    def timeout(self) -> int:
        """The session's lifetime in seconds."""
        return int(_LIB.SSL_SESSION_get_timeout(self._ptr))

    @property
    def ticket_lifetime_hint(self) -> int:
        """The server's ticket lifetime hint in seconds (0: none)."""
        return int(_LIB.SSL_SESSION_get_ticket_lifetime_hint(self._ptr))

    @property
    def has_ticket(self) -> bool:
        """Whether the server sent a session ticket."""
        return bool(_LIB.SSL_SESSION_has_ticket(self._ptr))

    def __del__(self) -> None:
        lib = _LIB
        if lib is not None and self._ptr:
            lib.SSL_SESSION_free(self._ptr)
            self._ptr = 0


TlsSession = ssl.SSLSession | NativeTlsSession
"""A TLS session to offer on a new connection: Python's own, or OpenSSL's where Python's leak."""


def _ssl_pointer(tls: ssl.SSLSocket) -> int | None:
    """The ``SSL*`` behind ``tls``, or None if the C layout is not the one expected."""
    if _LIB is None:
        return None
    obj = getattr(tls, "_sslobj", None)
    context = getattr(obj, "context", None)
    if obj is None or context is None or type(obj).__basicsize__ < _CTX_AT + _WORD:
        return None
    base = id(obj)
    if ctypes.c_void_p.from_address(base + _CTX_AT).value != id(context):
        return None
    ssl_ptr = ctypes.c_void_p.from_address(base + _SSL_AT).value
    if not ssl_ptr:
        return None
    ssl_ctx = ctypes.c_void_p.from_address(id(context) + _SSL_CTX_AT).value
    if not ssl_ctx or _LIB.SSL_get_SSL_CTX(ssl_ptr) != ssl_ctx:
        return None
    return int(ssl_ptr)


def read(tls: ssl.SSLSocket) -> NativeTlsSession | None:
    """``tls``'s current session as a counted OpenSSL reference (no copy, no leak), or None if
    it has none or the layout check fails."""
    ssl_ptr = _ssl_pointer(tls)
    if ssl_ptr is None:
        return None
    current = _LIB.SSL_get1_session(ssl_ptr)
    if not current:
        return None
    # A copy, as Python makes one: closing a connection without a TLS shutdown (the crawler's
    # way) marks its own session not resumable, and a copy made before keeps its flag clear.
    session = _LIB.SSL_SESSION_dup(current)
    _LIB.SSL_SESSION_free(current)
    if not session:
        return None
    return NativeTlsSession(int(session), tls.context)


def offer(tls: ssl.SSLSocket, session: NativeTlsSession) -> bool:
    """Offer ``session`` on ``tls`` (a client connection before its handshake); False if it
    cannot be (another context, or the layout check failed): the handshake is then a full one."""
    if session.context is not tls.context or tls.server_side:
        return False
    ssl_ptr = _ssl_pointer(tls)
    if ssl_ptr is None:
        return False
    # The connection gets a copy of its own: a TLS 1.2 connection that resumes a session uses
    # the very object it was given, and closing it without a TLS shutdown would mark the kept
    # session not resumable for every later connection.
    copy = _LIB.SSL_SESSION_dup(session.pointer)
    if not copy:
        return False
    offered = _LIB.SSL_set_session(ssl_ptr, copy) == 1  # the connection holds its own reference
    _LIB.SSL_SESSION_free(copy)
    return bool(offered)
