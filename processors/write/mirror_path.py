"""MirrorPathMapper: a URI to a relative file path that can never leave the mirror directory.

``http://Host:8080/a/b%20c/?q=1`` -> ``host_8080/a/b c/index.html@q=1``. The rules, each closing
a way out of the mirror root or a way to break a file system:

* the host (lower case; ``_<port>`` for a non-default port) is the first directory;
* the path is split on ``/`` *before* percent-decoding, so an encoded slash (``%2F``) or
  backslash (``%5C``) stays inside one segment; each segment is then decoded and every byte that
  is a separator or otherwise unsafe (``/``, ``\\``, ``%``, NUL and control characters, invalid
  UTF-8; with ``windows_safe`` also ``<>:"|?*``, trailing dots and spaces, reserved device names
  such as ``CON`` or ``LPT1``) is written back as ``%XX``;
* ``.`` and ``..`` segments (also ``%2e%2e``) are resolved as RFC 3986 dot-segments, clamped at the
  host directory; empty segments are dropped; a segment that is still ``.`` or ``..`` is escaped;
* a directory (path ending in ``/`` or empty) is stored as ``index_name`` (``index.html``);
* a query is folded into the file name after ``@`` (escaped like a segment, so ``/`` in it is
  ``%2F``), as wget does;
* a segment longer than ``max_segment_bytes`` keeps its start and extension around a SHA-1 of
  the whole segment; a relative path longer than ``max_path_bytes`` becomes
  ``<host>/_long/<sha1[:2]>/<sha1>[.ext]``.

The result is a relative :class:`PurePosixPath` with no empty, ``.`` or ``..`` part and no part
containing a separator. Pure and thread-safe. Heritrix counterpart: ``MirrorWriterProcessor``'s
URI-to-path mapping (``MirrorWriterProcessor.uriToFile``), with stricter escaping.
"""

from __future__ import annotations

import hashlib
from pathlib import PurePosixPath
from urllib.parse import unquote_to_bytes, urlsplit

_ALWAYS_UNSAFE = frozenset([*range(0x20), 0x7F, ord("/"), ord("\\"), ord("%")])
_WINDOWS_UNSAFE = _ALWAYS_UNSAFE | frozenset(b'<>:"|?*')
_RESERVED = frozenset(
    ["CON", "PRN", "AUX", "NUL"] + [f"{d}{n}" for d in ("COM", "LPT") for n in range(10)]
)
_DEFAULT_PORTS = {"http": 80, "https": 443}
_HASH_CHARS = 16
_MAX_EXT_CHARS = 16


def _escape_bytes(raw: bytes, unsafe: frozenset[int]) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "".join(f"%{b:02X}" if b in unsafe or b >= 0x80 else chr(b) for b in raw)
    return "".join(f"%{ord(c):02X}" if ord(c) in unsafe else c for c in text)


class MirrorPathMapper:
    """Maps URIs to safe relative paths (see the module docstring)."""

    __slots__ = (
        "_index_bytes",
        "index_name",
        "max_path_bytes",
        "max_segment_bytes",
        "windows_safe",
    )

    def __init__(
        self,
        *,
        index_name: str = "index.html",
        windows_safe: bool = True,
        max_segment_bytes: int = 255,
        max_path_bytes: int = 1024,
    ) -> None:
        if max_segment_bytes < 2 * _HASH_CHARS + _MAX_EXT_CHARS + 8:
            raise ValueError("max_segment_bytes is too small to hold a hashed name")
        if max_path_bytes < max_segment_bytes:
            raise ValueError("max_path_bytes must be at least max_segment_bytes")
        self.windows_safe = windows_safe
        self.max_segment_bytes = max_segment_bytes
        self.max_path_bytes = max_path_bytes
        self._index_bytes = index_name.encode()
        self.index_name = self.segment(self._index_bytes)

    def segment(self, raw: bytes) -> str:
        """One decoded path segment (or host, or query) as a safe file name."""
        text = _escape_bytes(raw, _WINDOWS_UNSAFE if self.windows_safe else _ALWAYS_UNSAFE)
        if text in ("", ".", ".."):
            text = "%2E" * len(text) or "_"
        elif self.windows_safe:
            if text.split(".", 1)[0].upper() in _RESERVED:
                text = f"%{ord(text[0]):02X}{text[1:]}"
            stripped = text.rstrip(". ")
            if len(stripped) < len(text):
                text = stripped + "".join(f"%{ord(c):02X}" for c in text[len(stripped) :])
        return self._shorten(text)

    def _shorten(self, name: str) -> str:
        encoded = name.encode("utf-8", "surrogateescape")
        if len(encoded) <= self.max_segment_bytes:
            return name
        digest = hashlib.sha1(encoded).hexdigest()[:_HASH_CHARS]
        dot = name.rfind(".")
        ext = name[dot:] if dot > 0 and len(name) - dot <= _MAX_EXT_CHARS else ""
        room = self.max_segment_bytes - len(digest) - 1 - len(ext.encode())
        head = encoded[:room].decode("utf-8", "ignore")
        return f"{head}~{digest}{ext}"

    def map(self, uri: str) -> PurePosixPath | None:
        """The relative path of ``uri``'s body, or None if it is not an http(s) URI."""
        try:
            parts = urlsplit(uri)
            port = parts.port
        except ValueError:
            return None
        scheme = parts.scheme.lower()
        if scheme not in _DEFAULT_PORTS:
            return None
        host = self.segment((parts.hostname or "").encode("utf-8", "surrogateescape"))
        if port is not None and port != _DEFAULT_PORTS[scheme]:
            host = self._shorten(f"{host}_{port}")
        stack: list[bytes] = []
        is_dir = True
        for raw in parts.path.encode("utf-8", "surrogateescape").split(b"/"):
            decoded = unquote_to_bytes(raw)
            is_dir = decoded in (b"", b".", b"..")
            if decoded == b"..":
                if stack:
                    stack.pop()
            elif not is_dir:
                stack.append(decoded)
        if is_dir or not stack:
            stack.append(self._index_bytes)
        if parts.query:
            query = unquote_to_bytes(parts.query.encode("utf-8", "surrogateescape"))
            stack[-1] += b"@" + query
        names = [self.segment(raw) for raw in stack]
        path = PurePosixPath(host, *names)
        if len(str(path).encode("utf-8", "surrogateescape")) > self.max_path_bytes:
            return self._hashed(host, str(path), names[-1])
        return path

    def _hashed(self, host: str, full: str, last: str) -> PurePosixPath:
        digest = hashlib.sha1(full.encode("utf-8", "surrogateescape")).hexdigest()
        dot = last.rfind(".")
        ext = last[dot:] if dot > 0 and len(last) - dot <= _MAX_EXT_CHARS else ""
        if "@" in ext:
            ext = ""
        return PurePosixPath(host, "_long", digest[:2], digest + ext)
