"""surt_urlkey: the SURT key pywb and cdxj-indexer give a URL, computed cheaply when it can be.

The key is what ``surt.surt(url)`` returns: host labels reversed and comma-joined (``www``,
``www2``... dropped), a non-default port, ``)``, then the path and query canonicalized (lower
case, dot segments and doubled slashes removed, a trailing slash dropped, the query sorted,
session ids removed, escapes normalized). The ``surt`` package does all of that in Python,
~30-80 µs a URL: for the CDXJ index written while crawling that is several percent of a page's
CPU. Most URLs a crawler writes are already plain — ``http(s)``, a lower-case host name or
dotted IPv4 address, an optional port, a lower-case path of letters, digits and ``/._~-``, no
query — and their key is only the reversed host, the port and the path; :func:`plain_key`
builds it (~2 µs) and returns None for anything else, which goes to ``surt.surt``.
:func:`plain_key` is written to agree with ``surt.surt`` on every URL it accepts; the test
compares the two over generated URLs. A URL ``surt`` cannot parse is its own key, as for
cdxj-indexer. Pure functions: thread-safe.
"""

from __future__ import annotations

import re
from typing import Any

_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_PLAIN = re.compile(
    rf"(https?)://({_LABEL}(?:\.{_LABEL})*)(?::([1-9][0-9]{{0,4}}))?(/[a-z0-9/._~-]*)?"
)
_DEFAULT_PORT = {"http": "80", "https": "443"}
_DOT_SEGMENT = re.compile(r"/\.\.?(?:/|$)")
_NUMERIC_LABEL = re.compile(r"(?:^|\.)(?:[0-9]+|0x[0-9a-z-]*)(?:\.|$)")
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = re.compile(rf"{_OCTET}\.{_OCTET}\.{_OCTET}\.{_OCTET}")
_surt: Any = None


def plain_key(url: str) -> str | None:
    """The SURT key of a plain URL (see the module docstring), or None if ``url`` is not
    plain."""
    m = _PLAIN.fullmatch(url)
    if m is None:
        return None
    scheme, host, port, path = m.groups()
    if host.startswith("www") or "xn--" in host:
        return None  # www, www2... are dropped by surt's host massage; IDNA: leave it to surt
    # an address, or a name with a numeric label surt may read as one (127.1, 0x7f.1)
    if _NUMERIC_LABEL.search(host) is not None and _IPV4.fullmatch(host) is None:
        return None
    if port is not None and int(port) > 65535:
        return None
    if path is None or path == "/":
        path = "/"
    else:
        if "//" in path or _DOT_SEGMENT.search(path) is not None:
            return None
        if path[-1] == "/":
            path = path[:-1]
    key = ",".join(host.split(".")[::-1])
    if port is not None and port != _DEFAULT_PORT[scheme]:
        key += ":" + port
    return key + ")" + path


def surt_urlkey(url: str) -> str:
    """The SURT key pywb and cdxj-indexer give ``url``; a URI the ``surt`` package cannot
    parse is its own key, as for them."""
    key = plain_key(url)
    if key is not None:
        return key
    global _surt
    if _surt is None:
        import surt  # the canonicalizer pywb looks keys up with

        _surt = surt.surt
    try:
        return str(_surt(url))
    except Exception:  # noqa: BLE001 - any parse failure: the URI is its own key
        return url
