"""Which IP addresses are public: the one table every fetch path consults.

:func:`nonpublic_reason` names why an address is not one a crawl may reach by default —
loopback, private, link-local, shared (CGNAT), multicast, documentation, benchmarking,
reserved, unspecified — or returns None for a public address. IPv6 forms that carry an IPv4
address (IPv4-mapped ``::ffff:a.b.c.d``, NAT64 ``64:ff9b::/96``, 6to4 ``2002::/16``) are
judged by the IPv4 address they carry, so ``[::ffff:169.254.169.254]`` is link-local like
``169.254.169.254``. In IPv6 only the global unicast block ``2000::/3`` can be public, less its
special ranges (documentation, Teredo, benchmarking and the other IETF assignments of
``2001::/23``); everything outside it (``::1``, ``fe80::/10``, ``fc00::/7``, ``ff00::/8``, ...)
is not.

The table is written here rather than taken from :attr:`ipaddress.IPv4Address.is_global`,
whose answers changed between Python releases. Pure functions; thread-safe.
"""

from __future__ import annotations

import functools
import ipaddress
from typing import Final

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_V4: Final = tuple(
    (ipaddress.IPv4Network(net), reason)
    for net, reason in (
        ("0.0.0.0/8", "unspecified"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "shared"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "linkLocal"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "reserved"),
        ("192.0.2.0/24", "documentation"),
        ("192.88.99.0/24", "reserved"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved"),
    )
)
_V6_SPECIAL: Final = tuple(
    (ipaddress.IPv6Network(net), reason)
    for net, reason in (
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("fe80::/10", "linkLocal"),
        ("fc00::/7", "private"),
        ("ff00::/8", "multicast"),
        ("2001:db8::/32", "documentation"),
        ("3fff::/20", "documentation"),
        ("2001:2::/48", "benchmarking"),
        ("2001::/23", "reserved"),
    )
)
_V6_GLOBAL: Final = ipaddress.IPv6Network("2000::/3")
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")
_SIX_TO_FOUR: Final = ipaddress.IPv6Network("2002::/16")


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv4-mapped, NAT64 (``64:ff9b::/96``) or 6to4 address carries."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _SIX_TO_FOUR:
        return address.sixtofour
    return None


@functools.lru_cache(maxsize=8192)
def parse_address(text: str) -> IPAddress | None:
    """``text`` (``10.0.0.1``, ``::1``, ``[::1]``, ``fe80::1%eth0``) as an address, or None
    (a host name). Cached: a crawl asks about few hosts, many times."""
    core = text.strip().strip("[]").partition("%")[0]
    try:
        return ipaddress.ip_address(core)
    except ValueError:
        return None


@functools.lru_cache(maxsize=4096)
def nonpublic_reason(address: str) -> str | None:
    """Why ``address`` is not public (``loopback``, ``private``, ``linkLocal``, ``shared``,
    ``multicast``, ``documentation``, ``benchmarking``, ``reserved``, ``unspecified``), or
    None when it is public. Text that is no IP address gives ``reserved``: what cannot be
    judged is not reached."""
    ip = parse_address(address)
    if ip is None:
        return "reserved"
    if isinstance(ip, ipaddress.IPv6Address):
        inner = embedded_ipv4(ip)
        if inner is not None:
            return _v4_reason(inner)
        for net6, reason in _V6_SPECIAL:
            if ip in net6:
                return reason
        if ip in _V6_GLOBAL:
            return None
        # ::/96 (IPv4-compatible), 100::/64 (discard) and every block not yet allocated.
        return "reserved"
    return _v4_reason(ip)


def _v4_reason(ip: ipaddress.IPv4Address) -> str | None:
    for net4, reason in _V4:
        if ip in net4:
            return reason
    return None
