"""URI normalization (every URI, before anything else) and its small helpers.

:func:`normalize` turns a URI found anywhere (seed file, href, Location header) into the one form
the crawler uses everywhere: absolute, resolved against its base, scheme and host lower-cased,
IDN hosts in punycode, default port dropped, fragment dropped, dot segments removed and unsafe
characters percent-escaped as UTF-8. Only ``http``/``https`` (and ``dns:`` pseudo-URIs) are
crawlable; anything else raises :class:`UriError`, the only exception this module raises.
The helpers read the parts of a normalized URI: :func:`host_port`, :func:`scheme_authority`,
:func:`server_key` (the politeness unit), :func:`scheme_of`.

Canonicalization (the uniq filter's key of a normalized URI) is
:mod:`crawler.canonicalizer`'s.

Heritrix counterpart: ``UsableURIFactory`` / ``UsableURI`` (webarchive-commons).
Thread-safety: pure functions; the base-URI cache is an ``lru_cache`` (thread-safe).
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import urljoin

from crawler.bounded_memo import remember
from crawler.crawler_error import CrawlerError

MAX_URI_LENGTH = 2083
"""Longest URI accepted, before and after escaping (Heritrix's limit, from old IE)."""

DEFAULT_PORTS: dict[str, int] = {"http": 80, "https": 443}
"""Ports that normalization drops because the scheme implies them."""

SUPPORTED_SCHEMES = frozenset({"http", "https", "dns"})


class UriError(CrawlerError, ValueError):
    """A URI that cannot be crawled; the message says what is wrong with it."""


_HTTP_URL_RE = re.compile(r"(?i)https?://[^/\s]+")


def is_http_url(text: str) -> bool:
    """Whether ``text`` starts as an http(s) URL with a host (the test an operator's contact
    URL or a CDX server's address must pass)."""
    return _HTTP_URL_RE.match(text) is not None


# Characters left unescaped, as Heritrix's LaxURLCodec does (from observed browser behaviour):
# the path keeps alphanumerics and -~_.*/=&+,:;@$!()|' ; the query also keeps {}[]^? .
# Everything else (controls, space, '"', '<', '>', '\\', '`', DEL, non-ASCII) becomes UTF-8 %XX.
_PATH_SAFE_CLASS = r"A-Za-z0-9\-~_.*/=&+,:;@$!()|'"
_QUERY_SAFE_CLASS = _PATH_SAFE_CLASS + r"{}\[\]^?"
_PATH_SAFE = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-~_.*/=&+,:;@$!()|'"
)
_QUERY_SAFE = _PATH_SAFE | frozenset("{}[]^?")
_PATH_NEEDS_ESCAPE = re.compile(rf"[^{_PATH_SAFE_CLASS}%]|%(?![0-9A-Fa-f]{{2}})")
_QUERY_NEEDS_ESCAPE = re.compile(rf"[^{_QUERY_SAFE_CLASS}%]|%(?![0-9A-Fa-f]{{2}})")
_HEX = frozenset("0123456789abcdefABCDEF")

# An absolute http(s) URI that normalization would leave unchanged, modulo the port and
# dot-segment checks done in _is_clean. Must accept nothing the slow path would alter.
_CLEAN_RE = re.compile(
    r"(https?)://[a-z0-9_-]+(?:\.[a-z0-9_-]+)*(?::([0-9]{1,5}))?"
    rf"(/[{_PATH_SAFE_CLASS}%]*)(?:\?[{_QUERY_SAFE_CLASS}%]*)?"
)
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_SCHEME_RE = re.compile(r"([a-zA-Z][a-zA-Z0-9+.\-]*):")
_HOST_RE = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*")
_IPV6_RE = re.compile(r"\[[0-9a-f:.]+\]")
_REMOVED_CHARS = str.maketrans("", "", "\t\r\n")


def _is_clean(uri: str) -> bool:
    """True when ``uri`` is already in normal form (the common case, decided in ~1 µs)."""
    m = _CLEAN_RE.fullmatch(uri)
    if m is None or len(uri) > MAX_URI_LENGTH:
        return False
    port = m.group(2)
    if port is not None and (
        port[0] == "0" or int(port) > 65535 or int(port) == DEFAULT_PORTS[m.group(1)]
    ):
        return False
    if "/." in m.group(3) or uri[-1] == "?":
        return False
    return "%" not in uri or _BAD_PERCENT.search(uri) is None


def normalize(uri: str, base: str | None = None) -> str:
    """The normal form of ``uri``, resolved against ``base`` when relative.

    Raises :class:`UriError` (and nothing else) for an empty, relative-without-base, hostless,
    too long or unsupported-scheme URI, or a bad port or host.
    """
    if _is_clean(uri):
        return uri
    if base is not None and uri:
        # Common relative forms ("/a/b", "b.html") joined by concatenation; used only when the
        # result is clean, so odd input (tabs, backslashes, dots) still takes the full path.
        first = uri[0]
        if first == "/":
            if uri[1:2] != "/":
                parts = _base_parts(base)
                if parts is not None and _is_clean(parts[0] + uri):
                    return parts[0] + uri
        elif first.isalnum():
            colon = uri.find(":")
            if colon < 0 or _has_delimiter_before(uri, colon):
                parts = _base_parts(base)
                if parts is not None and _is_clean(parts[1] + uri):
                    return parts[1] + uri
    return _normalize_slow(uri, base)


def _has_delimiter_before(uri: str, pos: int) -> bool:
    """True if a '/', '?' or '#' precedes ``pos`` (so a ':' there does not end a scheme)."""
    head = uri[:pos]
    return "/" in head or "?" in head or "#" in head


@lru_cache(maxsize=4096)
def _base_parts(base: str) -> tuple[str, str, str] | None:
    """(``scheme://authority``, directory ending in '/', whole normalized base), or None."""
    try:
        norm = _normalize_slow(base, None) if not _is_clean(base) else base
    except UriError:
        return None
    if not norm.startswith(("http://", "https://")):
        return None
    slash = norm.index("/", norm.index("://") + 3)
    query = norm.find("?")
    path_end = len(norm) if query < 0 else query
    return norm[:slash], norm[: norm.rindex("/", 0, path_end) + 1], norm


def _normalize_slow(uri: str, base: str | None) -> str:
    try:
        return _normalize_full(uri, base)
    except UriError:
        raise
    except (ValueError, UnicodeError, IndexError) as exc:
        raise UriError(f"malformed URI {uri[:200]!r}: {exc}") from None


def _normalize_full(uri: str, base: str | None) -> str:
    if len(uri) > MAX_URI_LENGTH:
        raise UriError(f"URI longer than {MAX_URI_LENGTH} characters")
    s = uri.replace("\xa0", " ").strip()
    if "\t" in s or "\r" in s or "\n" in s:
        s = s.translate(_REMOVED_CHARS)
    query_at = s.find("?")
    head = s if query_at < 0 else s[:query_at]
    if "\\" in head:
        s = head.replace("\\", "/") + s[len(head) :]
    m = _SCHEME_RE.match(s)
    if base is not None and (
        m is None or (m.group(1).lower() in DEFAULT_PORTS and not s[m.end() :].startswith("/"))
    ):
        s = _resolve(base, s)
        m = _SCHEME_RE.match(s)
    if not s:
        raise UriError("empty URI")
    if m is None:
        raise UriError(f"relative URI without a base: {s[:200]!r}")
    scheme = m.group(1).lower()
    rest = s[m.end() :]
    if scheme == "dns":
        host = rest.strip().lower()
        if not host:
            raise UriError("dns: URI without a host")
        return "dns:" + host
    if scheme not in DEFAULT_PORTS:
        raise UriError(f"unsupported scheme {scheme!r}")
    if not rest.startswith("//"):
        raise UriError(f"no host in {s[:200]!r}")
    rest = rest.lstrip("/")  # 'http:///x' means 'http://x', as browsers do
    hash_at = rest.find("#")
    if hash_at >= 0:
        rest = rest[:hash_at]
    end = len(rest)
    for delim in "/?":
        at = rest.find(delim)
        if 0 <= at < end:
            end = at
    authority = _normalize_authority(rest[:end], scheme)
    tail = rest[end:]
    path, _, query = tail.partition("?")
    path = _escape(path, _PATH_SAFE, _PATH_NEEDS_ESCAPE) if path else "/"
    if "/." in path:
        path = remove_dot_segments(path)
    result = f"{scheme}://{authority}{path}"
    if query:
        result += "?" + _escape(query, _QUERY_SAFE, _QUERY_NEEDS_ESCAPE)
    if len(result) > MAX_URI_LENGTH:
        raise UriError(f"URI longer than {MAX_URI_LENGTH} characters once escaped")
    return result


def _resolve(base: str, rel: str) -> str:
    parts = _base_parts(base)
    if parts is None:
        raise UriError(f"cannot resolve {rel[:200]!r} against base {base[:200]!r}")
    return urljoin(parts[2], rel)


def _normalize_authority(authority: str, scheme: str) -> str:
    while authority.endswith("%20"):
        authority = authority[:-3]
    userinfo, at, hostport = authority.rpartition("@")
    if hostport.startswith("["):
        close = hostport.find("]")
        if close < 0:
            raise UriError(f"unterminated IPv6 address in {authority!r}")
        host, port_text = hostport[: close + 1].lower(), hostport[close + 1 :]
        if port_text and port_text[0] != ":":
            raise UriError(f"junk after IPv6 address in {authority!r}")
        port_text = port_text[1:]
        if not _IPV6_RE.fullmatch(host):
            raise UriError(f"invalid IPv6 address {host!r}")
    else:
        host, _, port_text = hostport.partition(":")
        host = host.strip(".")
        if not host:
            raise UriError("no host in URI")
        host = host.lower() if host.isascii() else _idna(host)
        if not _HOST_RE.fullmatch(host):
            raise UriError(f"invalid host {host[:100]!r}")
    if port_text:
        if not port_text.isdigit() or not port_text.isascii():
            raise UriError(f"invalid port {port_text[:20]!r}")
        port = int(port_text)
        if not 1 <= port <= 65535:
            raise UriError(f"port {port} out of range 1-65535")
        port_text = "" if port == DEFAULT_PORTS[scheme] else f":{port}"
    if at:
        return f"{_escape(userinfo, _PATH_SAFE, _PATH_NEEDS_ESCAPE)}@{host}{port_text}"
    return host + port_text


def _idna(host: str) -> str:
    try:
        return host.encode("idna").decode("ascii").lower()
    except UnicodeError as exc:
        raise UriError(f"invalid international host name {host[:100]!r}: {exc}") from None


def _escape(text: str, safe: frozenset[str], needs_escape: re.Pattern[str]) -> str:
    """Minimal percent-escaping: unsafe chars as UTF-8 %XX, valid escapes kept, stray '%' → %25."""
    if needs_escape.search(text) is None:
        return text
    out: list[str] = []
    n = len(text)
    for i, ch in enumerate(text):
        if ch in safe:
            out.append(ch)
        elif ch == "%":
            valid = i + 2 < n and text[i + 1] in _HEX and text[i + 2] in _HEX
            out.append("%" if valid else "%25")
        else:
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass")))
    return "".join(out)


def remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4 on an absolute path; '..' above the root stays at the root."""
    segments = path.split("/")
    out: list[str] = []
    for seg in segments[1:]:
        if seg == ".":
            continue
        if seg == "..":
            if out:
                out.pop()
            continue
        out.append(seg)
    if segments[-1] in (".", ".."):
        out.append("")
    return "/" + "/".join(out)


# ---------------------------------------------------------------------------- helpers


def _split_authority(uri: str) -> tuple[str, str]:
    """(scheme, authority without userinfo) of an absolute normalized URI."""
    if uri.startswith("dns:"):
        return "dns", uri[4:]
    sep = uri.find("://")
    if sep <= 0:
        raise UriError(f"not an absolute URI: {uri[:200]!r}")
    start = sep + 3
    end = len(uri)
    for delim in "/?#":
        at = uri.find(delim, start)
        if 0 <= at < end:
            end = at
    authority = uri[start:end]
    at = authority.rfind("@")
    if at >= 0:
        authority = authority[at + 1 :]
    if not authority:
        raise UriError(f"no host in {uri[:200]!r}")
    return uri[:sep].lower(), authority.lower()


def authority_start(uri: str) -> str | None:
    """``uri`` up to the first ``/`` after ``://`` when no ``?`` or ``#`` comes before it, so
    that the authority ends there: every URI with this start has the same scheme and authority
    as spelled, and an answer that depends on those alone may be remembered under it. None
    otherwise, and for a ``dns:`` URI (whose authority runs to its end). Pure; thread-safe."""
    sep = uri.find("://")
    if sep <= 0 or uri.startswith("dns:"):
        return None
    end = uri.find("/", sep + 3)
    if end < 0:
        return None
    start = uri[:end]
    if "?" in start or "#" in start:
        return None
    return start


HOST_PORTS_KEPT = 65_536
"""Starts (:func:`authority_start`) whose :func:`host_port` is remembered (then all forgotten
and started again): ~10 MB at most."""

_host_ports: dict[str, tuple[str, int]] = {}


def host_port(uri: str) -> tuple[str, int]:
    """Host (lower-cased, IPv6 in brackets) and port, the scheme's default if none is given.

    ``dns:`` URIs give port 53. A crawl asks this of every outlink (its server), and one host's
    URIs share a start, so the answer is remembered per :func:`authority_start`
    (:data:`HOST_PORTS_KEPT`). Single dictionary operations (atomic under the GIL): thread-safe.
    """
    start = authority_start(uri)
    if start is None:
        return _host_port(uri)
    hit = _host_ports.get(start)
    if hit is None:
        hit = remember(_host_ports, start, _host_port(uri), HOST_PORTS_KEPT)
    return hit


def _host_port(uri: str) -> tuple[str, int]:
    scheme, authority = _split_authority(uri)
    if scheme == "dns":
        return authority, 53
    if authority.endswith("]"):
        return authority, DEFAULT_PORTS.get(scheme, 0)
    host, colon, port_text = authority.rpartition(":")
    if colon and port_text.isdigit() and "]" not in port_text:
        return host, int(port_text)
    return authority, DEFAULT_PORTS.get(scheme, 0)


def scheme_authority(uri: str) -> str:
    """``scheme://host[:port]`` of ``uri`` (no userinfo), e.g. ``http://host:8080``."""
    scheme, authority = _split_authority(uri)
    if scheme == "dns":
        return "dns:" + authority
    return f"{scheme}://{authority}"


def server_key(uri: str) -> str:
    """``host:port`` with the port always explicit: robots.txt and DNS are per server."""
    host, port = host_port(uri)
    return f"{host}:{port}"


def scheme_of(uri: str) -> str:
    """The lower-cased scheme of ``uri`` ('' when it has none)."""
    m = _SCHEME_RE.match(uri)
    return m.group(1).lower() if m else ""


__all__ = [
    "DEFAULT_PORTS",
    "MAX_URI_LENGTH",
    "SUPPORTED_SCHEMES",
    "UriError",
    "authority_start",
    "host_port",
    "normalize",
    "remove_dot_segments",
    "scheme_authority",
    "scheme_of",
    "server_key",
]
