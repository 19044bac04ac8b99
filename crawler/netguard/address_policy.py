"""AddressPolicy: may a fetch connect to this address? The one rule for HTTP and the browser.

By default a crawl connects only to public addresses (:func:`nonpublic_reason`), whatever a
host name resolves to, so a public page's link, redirect or embed cannot send the crawler to the
cloud metadata service (``169.254.169.254``), the machine itself or the network it runs in.
Three things let a non-public address through:

* the order's ``fetch.allow_private`` networks (CIDRs such as ``10.0.0.0/8``);
* a server a seed names (``http://127.0.0.1:8080/``, ``http://intranet.local/``): the operator
  chose it, so it is fetched whatever its name resolves to — that host and port only (a seed
  on port 80 or 443 allows both: scopes treat http and https alike). Seeds found by following
  a seed's redirect do not count: a public seed redirecting to a private address is refused;
* a scope SURT prefix of the operator's (``+http://(10.1.2.3)/`` in a seed list, a scope rule's
  ``surts`` or ``surts_file``) that names a whole host: ``http://(10.1.2.3)/`` allows that
  address on ports 80 and 443, ``http://(10.1.2.3:8080)/`` that port, ``http://(10.1.2.3:``
  any port; ``http://(10.1.2.3`` names no whole host (it also matches ``10.1.2.30``).

A refused fetch ends with status -5006 (``FetchStatus.BLOCKED_BY_ADDRESS``) and the annotation
``nonPublicAddress:<reason>:<address>`` (:meth:`refusal`). The check is made on the address the
connection is then opened to (never on a name resolved again later), so DNS rebinding cannot
slip in between. Through a proxy (``proxy_url``) only the addresses known before the fetch are
judged (IP literals, FetchDNS's lookups, :meth:`known_refusal`): the proxy resolves and connects.

Thread-safety: checks may run on any thread while seeds are added; the allowed sets are
replaced whole (copy on write) under a lock, never changed in place.
"""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from crawler.crawler_error import CrawlerError
from crawler.netguard.address_class import IPAddress, embedded_ipv4, nonpublic_reason, parse_address
from crawler.urls import UriError, host_port

if TYPE_CHECKING:
    from crawler.servers import ServerCache

REFUSAL_NOTE: Final = "nonPublicAddress"
"""The annotation's first word: ``nonPublicAddress:<reason>:<address>``."""
_DEFAULT_PORTS: Final = (80, 443)


class AddressRefusedError(CrawlerError):
    """A connection to a non-public address was refused; ``note`` is the crawl.log annotation."""

    def __init__(self, host: str, port: int, note: str) -> None:
        super().__init__(f"{host}:{port} refused: {note}")
        self.host = host
        self.port = port
        self.note = note


def parse_networks(
    cidrs: Iterable[str],
) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """``["10.0.0.0/8", "fd00::/8"]`` as networks; ValueError names a bad entry."""
    networks = []
    for text in cidrs:
        try:
            networks.append(ipaddress.ip_network(str(text).strip(), strict=False))
        except ValueError:
            raise ValueError(
                f"{text!r} is not a network: use CIDR notation such as 10.0.0.0/8 or fd00::/8"
            ) from None
    return tuple(networks)


def _host_key(host: str) -> str:
    """Hosts compare lower-cased, without a trailing dot or an IPv6 literal's brackets."""
    return host.strip().lower().rstrip(".").strip("[]")


def host_of_surt_prefix(prefix: str) -> tuple[str, int | None] | None:
    """``(host, port)`` a SURT prefix names whole (port None: any port, 0: ports 80 and 443),
    or None when it names no whole host (a domain prefix, a cut-off address)."""
    start = prefix.find("://(")
    if start < 0:
        return None
    text = prefix[start + 4 :]
    closed = ")" in text
    text = text.partition(")")[0]
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            return None
        host, rest = text[: end + 1], text[end + 1 :]
        if not closed and not rest:
            return _host_key(host), None  # "([::1]": the whole address, any port
    else:
        host, colon, port_text = text.partition(":")
        rest = colon + port_text
        if "," in host or host.endswith(","):
            labels = host.rstrip(",").split(",")
            host = ".".join(reversed(labels))
        elif not closed and not rest:
            return None  # "(10.1.2.3" also matches 10.1.2.30
    if not host or (not closed and not rest):
        return None
    if not closed:
        return _host_key(host), None  # "(host:" or "(host:80": any port
    if not rest:
        return _host_key(host), 0
    if not rest[1:].isdigit():
        return None
    return _host_key(host), int(rest[1:])


class AddressPolicy:
    """Decides which addresses fetches may connect to (see the module docstring)."""

    def __init__(self, allow_private: Iterable[str] = ()) -> None:
        self.networks = parse_networks(allow_private)
        self._servers: frozenset[tuple[str, int]] = frozenset()
        self._hosts: frozenset[str] = frozenset()
        self._lock = threading.Lock()

    def allow_seed(self, uri: str) -> bool:
        """Allow the server (host and port) ``uri`` names; False if it is no usable URI."""
        return self.allow_seeds([uri]) == 1

    def allow_seeds(self, uris: Iterable[str]) -> int:
        """Allow the servers ``uris`` name, in one copy of the allowed set (one per seed
        would make loading n seeds O(n²)); returns how many were usable URIs."""
        servers: list[tuple[str, int]] = []
        for uri in uris:
            try:
                servers.append(host_port(uri))
            except (UriError, ValueError):
                continue
        if servers:
            self._add_servers(servers)
        return len(servers)

    def allow_surt_prefix(self, prefix: str) -> bool:
        """Allow the host an operator's SURT prefix names whole; False if it names none."""
        named = host_of_surt_prefix(prefix)
        if named is None:
            return False
        host, port = named
        if port is None:
            with self._lock:
                self._hosts = self._hosts | {host}
        else:
            self._add_servers([(host, port)])
        return True

    def _add_servers(self, servers: Iterable[tuple[str, int]]) -> None:
        new: set[tuple[str, int]] = set()
        for host, port in servers:
            key = _host_key(host)
            ports = _DEFAULT_PORTS if port in (0, *_DEFAULT_PORTS) else (port,)
            new.update((key, p) for p in ports)
        with self._lock:
            self._servers = self._servers | new

    def named(self, host: str, port: int) -> bool:
        """Whether a seed or an operator's SURT prefix names this server."""
        key = _host_key(host)
        return (key, port) in self._servers or key in self._hosts

    def refusal(self, host: str, port: int, address: str) -> str | None:
        """None if a fetch of ``host:port`` may connect to ``address``; else the annotation
        ``nonPublicAddress:<reason>:<address>`` of the refusal."""
        reason = nonpublic_reason(address)
        if reason is None or self.named(host, port):
            return None
        ip = parse_address(address)
        if ip is not None and self._in_allowed_network(ip):
            return None
        return f"{REFUSAL_NOTE}:{reason}:{ip if ip is not None else address}"

    def known_refusal(self, host: str, port: int, servers: ServerCache) -> str | None:
        """:meth:`refusal` for the address already known for ``host`` — the host itself when
        it is an IP literal, else its IP in ``servers`` — or None when none is known yet (the
        connection's own check decides then). Lets a URI end before its prerequisites."""
        address: str | None = host
        if parse_address(host) is None:
            address = servers.host_ip(host)
        return None if address is None else self.refusal(host, port, address)

    def check(self, host: str, port: int, address: str) -> None:
        """Raise :class:`AddressRefusedError` unless ``host:port`` may connect to ``address``."""
        note = self.refusal(host, port, address)
        if note is not None:
            raise AddressRefusedError(host, port, note)

    def _in_allowed_network(self, ip: IPAddress) -> bool:
        if not self.networks:
            return False
        inner = embedded_ipv4(ip) if isinstance(ip, ipaddress.IPv6Address) else None
        return any(ip in net or (inner is not None and inner in net) for net in self.networks)
