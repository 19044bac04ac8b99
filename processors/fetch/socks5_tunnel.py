"""SOCKS5 tunnels for the HTTP/1.1 client: ``proxy_url: socks5://[user:password@]host:port``.

:class:`SocksProxy` is a parsed proxy URL. :func:`open_tunnel` turns a TCP stream connected to the
proxy into one connected to the target (RFC 1928 CONNECT; RFC 1929 user name and password when the
URL has them, else no authentication), over which the client then speaks HTTP or starts TLS with
the target's name, exactly as on a direct connection: requests and responses stay byte for byte
what the WARC records. The protocol bytes come from socksio (sans-I/O); this module only moves
them over the stream.

Names: ``socks5h://`` lets the proxy resolve the target's name (nothing is looked up here, as
Tor and most SSH tunnels want); ``socks5://`` sends the address the crawl resolved (FetchDNS's)
when it has one, else the name. A refusal, a failed login or a proxy that does not speak SOCKS5
raises httpcore's ``ConnectError`` (-2 in crawl.log), naming the reason.

Pure functions on the caller's stream: thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import httpcore
from socksio import ProtocolError, socks5

SCHEMES = ("socks5", "socks5h")
_REPLY_WORDS = {
    socks5.SOCKS5ReplyCode.GENERAL_SERVER_FAILURE: "general failure",
    socks5.SOCKS5ReplyCode.CONNECTION_NOT_ALLOWED_BY_RULESET: "not allowed by its rules",
    socks5.SOCKS5ReplyCode.NETWORK_UNREACHABLE: "network unreachable",
    socks5.SOCKS5ReplyCode.HOST_UNREACHABLE: "host unreachable",
    socks5.SOCKS5ReplyCode.CONNECTION_REFUSED: "connection refused",
    socks5.SOCKS5ReplyCode.TTL_EXPIRED: "TTL expired",
    socks5.SOCKS5ReplyCode.COMMAND_NOT_SUPPORTED: "command not supported",
    socks5.SOCKS5ReplyCode.ADDRESS_TYPE_NOT_SUPPORTED: "address type not supported",
}


@dataclass(frozen=True)
class SocksProxy:
    """A SOCKS5 proxy: where it listens, its login (if any), who resolves names."""

    host: str
    port: int
    username: str | None = None
    password: str | None = None
    remote_dns: bool = True

    @classmethod
    def parse(cls, url: str) -> SocksProxy:
        """The proxy of ``socks5://`` / ``socks5h://`` ``url``; ValueError if it is not one."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in SCHEMES or not parts.hostname:
            raise ValueError(f"{url!r} is not a socks5:// or socks5h:// URL with a host")
        try:
            port = parts.port or 1080
        except ValueError:
            raise ValueError(f"{url!r} has a bad port") from None
        return cls(
            parts.hostname,
            port,
            unquote(parts.username) if parts.username is not None else None,
            unquote(parts.password) if parts.password is not None else None,
            remote_dns=scheme == "socks5h",
        )

    def target(self, host: str, resolve: Callable[[str], str | None] | None) -> str:
        """The address sent for ``host``: the name (``socks5h``), else the crawl's address."""
        if self.remote_dns or resolve is None:
            return host
        return resolve(host) or host


def is_socks_url(url: str | None) -> bool:
    """Whether ``url`` names a SOCKS5 proxy."""
    return url is not None and url.split(":", 1)[0].lower() in SCHEMES


def open_tunnel(
    stream: httpcore.NetworkStream,
    proxy: SocksProxy,
    target: str,
    port: int,
    timeout_s: float,
) -> None:
    """Ask the proxy on ``stream`` to connect to ``target``:``port``; returns when it has, or
    raises :class:`httpcore.ConnectError`."""
    conn = socks5.SOCKS5Connection()
    methods = [socks5.SOCKS5AuthMethod.NO_AUTH_REQUIRED]
    if proxy.username is not None:
        methods = [socks5.SOCKS5AuthMethod.USERNAME_PASSWORD]
    conn.send(socks5.SOCKS5AuthMethodsRequest(methods))
    chosen = _exchange(stream, conn, timeout_s)
    if not isinstance(chosen, socks5.SOCKS5AuthReply) or chosen.method not in methods:
        raise httpcore.ConnectError(
            "SOCKS5 proxy accepts none of our login methods"
            + (" (it wants a user name and password)" if proxy.username is None else "")
        )
    if chosen.method == socks5.SOCKS5AuthMethod.USERNAME_PASSWORD:
        conn.send(
            socks5.SOCKS5UsernamePasswordRequest(
                (proxy.username or "").encode(), (proxy.password or "").encode()
            )
        )
        login = _exchange(stream, conn, timeout_s)
        if not isinstance(login, socks5.SOCKS5UsernamePasswordReply) or not login.success:
            raise httpcore.ConnectError("SOCKS5 proxy refused the user name and password")
    conn.send(
        socks5.SOCKS5CommandRequest.from_address(socks5.SOCKS5Command.CONNECT, (target, port))
    )
    reply = _exchange(stream, conn, timeout_s)
    if not isinstance(reply, socks5.SOCKS5Reply):
        raise httpcore.ConnectError("SOCKS5 proxy sent no reply to CONNECT")
    if reply.reply_code != socks5.SOCKS5ReplyCode.SUCCEEDED:
        words = _REPLY_WORDS.get(reply.reply_code, f"reply {reply.reply_code!r}")
        raise httpcore.ConnectError(f"SOCKS5 proxy could not connect to {target}:{port}: {words}")


def _exchange(
    stream: httpcore.NetworkStream, conn: socks5.SOCKS5Connection, timeout_s: float
) -> object:
    stream.write(conn.data_to_send(), timeout_s)
    data = stream.read(1024, timeout_s)
    if not data:
        raise httpcore.ConnectError("SOCKS5 proxy closed the connection")
    try:
        return conn.receive_data(data)
    except ProtocolError as exc:
        raise httpcore.ConnectError(f"not a SOCKS5 proxy ({exc})") from None
