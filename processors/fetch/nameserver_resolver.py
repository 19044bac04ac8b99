"""NameserverResolver: A/AAAA lookups sent to named DNS servers (``host[:port]``) with dnspython.

FetchDNS uses it when ``chains.fetch.fetch_dns.params.nameservers`` is set, instead of the system
resolver (``getaddrinfo``), e.g. a crawl of a local test web whose names only a resolver on a
loopback port knows (``127.0.0.1:5353``). No cache of its own (the ServerCache is the cache), no
search domains, no /etc/hosts: every lookup is a query to the servers, in order, over UDP (TCP
when the answer is truncated).

``lookup(host, timeout_s)`` returns ``[(address, ttl_s), ...]``: the A records, else the AAAA
records (IPv4 first, as Heritrix's FetchDNS asks for A records only); ``[]`` when the name has
no address (NXDOMAIN or no answer). It raises ``OSError`` when no server answered in time.
Thread-safe: the dnspython resolver holds no per-query state.
"""

from __future__ import annotations

import dns.exception
import dns.inet
import dns.nameserver
import dns.rdatatype
import dns.resolver


def parse_nameserver(spec: str) -> tuple[str, int]:
    """``"127.0.0.1:5353"`` -> ``("127.0.0.1", 5353)``; ``"::1"``, ``"[::1]:53"`` for IPv6.

    Raises ``ValueError`` naming the entry when it is not an IP address with an optional port.
    """
    text = spec.strip()
    host, port = text, 53
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        if rest:
            if not rest.startswith(":") or not rest[1:].isdigit():
                raise ValueError(f"nameserver {spec!r}: expected [IPv6]:port")
            port = int(rest[1:])
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
        if not port_text.isdigit():
            raise ValueError(f"nameserver {spec!r}: the port must be a number")
        port = int(port_text)
    if not dns.inet.is_address(host):
        raise ValueError(f"nameserver {spec!r}: expected an IP address, optionally :port")
    if not 0 < port < 65536:
        raise ValueError(f"nameserver {spec!r}: port {port} out of range")
    return host, port


class NameserverResolver:
    """Resolves names by asking the given DNS servers directly."""

    def __init__(self, nameservers: list[str]) -> None:
        if not nameservers:
            raise ValueError("NameserverResolver needs at least one nameserver")
        resolver = dns.resolver.Resolver(configure=False)
        resolver.nameservers = [
            dns.nameserver.Do53Nameserver(host, port)
            for host, port in map(parse_nameserver, nameservers)
        ]
        resolver.cache = None
        self._resolver = resolver

    def lookup(self, host: str, timeout_s: float) -> list[tuple[str, int]]:
        """The host's addresses and their TTLs (seconds); ``[]`` for no address."""
        for rdtype in (dns.rdatatype.A, dns.rdatatype.AAAA):
            try:
                answer = self._resolver.resolve(
                    host + ".", rdtype, lifetime=timeout_s, search=False, raise_on_no_answer=False
                )
            except (dns.resolver.NXDOMAIN, dns.resolver.YXDOMAIN):
                return []
            except (dns.resolver.NoNameservers, dns.exception.Timeout) as exc:
                raise OSError(f"no nameserver answered for {host}: {exc}") from exc
            rrset = answer.rrset
            if rrset is not None and len(rrset):
                return [(str(rdata.address), int(rrset.ttl)) for rdata in rrset]
        return []
