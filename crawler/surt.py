"""SURT (Sort-friendly URI Reordering Transform) forms and SURT-prefix sets for scoping.

``http://www.archive.org:8080/a?b`` becomes ``http://(org,archive,www,:8080)/a?b``: host labels
reversed, each followed by a comma, so that every URI of a domain and its subdomains shares a
string prefix. Scope rules test "is this URI under one of these prefixes?" with a
:class:`SurtPrefixSet`.

Heritrix counterparts: ``org.archive.util.SURT``, ``SurtPrefixSet`` (webarchive-commons).
Thread-safety: functions are pure; a :class:`SurtPrefixSet` may be read by many threads once
it is no longer being added to.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterable, Iterator
from typing import Literal

from crawler.bounded_memo import remember
from crawler.urls import UriError, normalize

_DOTTED_QUAD = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}")
# "host:8080/x" and "example.org:81" are not schemes; "mailto:x" and "http:..." are.
_SCHEME_BEFORE_COLON = re.compile(r"[a-zA-Z][a-zA-Z0-9+\-]*:(?![0-9])")


def surt(uri: str) -> str:
    """The lower-cased SURT form of an (already normalized) URI; only the authority changes.

    ``dns:host`` becomes ``dns:(tld,…,)``; a string without a scheme is treated as
    ``host[:port]/path``. The authority's transform is cached (a crawl meets few authorities
    and asks for many SURTs of each).
    """
    end = _authority_end(uri)
    if end >= 0:
        return _surt_authority(uri[:end]) + uri[end:].lower()
    return _surt(uri)


def _authority_end(uri: str) -> int:
    """Where the scheme and authority of ``uri`` end (its first ``/``, ``?`` or ``#`` after
    ``://``, else its length); -1 when it has no ``://``."""
    sep = uri.find("://")
    if sep < 0:
        return -1
    end = len(uri)
    for delim in "/?#":
        at = uri.find(delim, sep + 3)
        if 0 <= at < end:
            end = at
    return end


@functools.lru_cache(maxsize=8192)
def _surt_authority(scheme_authority: str) -> str:
    return _surt(scheme_authority)


def _surt(uri: str) -> str:
    """The lower-cased SURT form of an (already normalized) URI; only the authority changes.

    ``dns:host`` becomes ``dns:(tld,…,)``; a string without a scheme is treated as
    ``host[:port]/path``.
    """
    sep = uri.find("://")
    if sep >= 0:
        head, rest = uri[: sep + 3], uri[sep + 3 :]
    else:
        m = _SCHEME_BEFORE_COLON.match(uri)
        if m is not None:
            head, rest = uri[: m.end()], uri[m.end() :]
        else:
            head, rest = "", uri
    end = len(rest)
    for delim in "/?#":
        at = rest.find(delim)
        if 0 <= at < end:
            end = at
    authority, tail = rest[:end], rest[end:]
    userinfo, at_sign, hostport = authority.rpartition("@")
    if hostport.startswith("["):
        close = hostport.find("]") + 1 or len(hostport)
        host, port = hostport[:close], hostport[close:]
    else:
        host, colon_sign, port = hostport.partition(":")
        port = colon_sign + port
    if host.startswith("[") or _DOTTED_QUAD.fullmatch(host):
        reordered = host
    else:
        labels = host.split(".")
        labels.reverse()
        reordered = ",".join(labels) + ","
    out = f"{head}({reordered}{port}"
    if at_sign:
        out += "@" + userinfo
    return (out + ")" + tail).lower()


def coerce_http(surt_form: str) -> str:
    """``https://(…`` → ``http://(…``: scope prefixes ignore the difference (as Heritrix does)."""
    if surt_form.startswith("https://"):
        return "http://" + surt_form[8:]
    return surt_form


def as_prefix(surt_form: str) -> str:
    """Heritrix's implied prefix of a SURT: cut after the last '/' once the path starts;
    without a path, drop the closing ')' so subdomains match too."""
    if surt_form.count("/") >= 3:
        surt_form = surt_form[: surt_form.rindex("/") + 1]
    if not surt_form.endswith("/") and surt_form.endswith(")"):
        surt_form = surt_form[:-1]
    return surt_form


def surt_prefix_from_seed(seed: str) -> str:
    """The SURT prefix a seed implies (Heritrix ``prefixFromPlainForceHttp``).

    ``http://www.archive.org/`` → ``http://(org,archive,www,)/`` (that host only);
    ``archive.org`` → ``http://(org,archive,`` (the domain and all subdomains);
    ``http://www.archive.org/movies/index.html`` → ``http://(org,archive,www,)/movies/``;
    ``https://`` is coerced to ``http://``. Raises :class:`UriError` for an unusable seed.
    """
    text = seed.strip()
    if not _SCHEME_BEFORE_COLON.match(text):
        text = "http://" + text
    norm = normalize(text)
    if norm.endswith("/") and not text.endswith("/"):
        norm = norm[:-1]
    return coerce_http(as_prefix(surt(norm)))


def prefix_from_directive(text: str) -> str:
    """A prefix from a surts-file entry: a literal SURT (``http://(org,`` or ``(org,``) is kept
    as given (lower-cased, http-coerced); anything else is a URI giving its implied prefix."""
    text = text.strip()
    if text.startswith("("):
        return "http://" + text.lower()
    if "://(" in text:
        return coerce_http(text.lower())
    return surt_prefix_from_seed(text)


class SurtPrefixSet:
    """A set of SURT prefixes answering "does some prefix start this SURT?" in O(log n).

    Kept sorted and reduced (no member is a prefix of another), so the only candidate for a
    string is the greatest member not after it. Heritrix counterpart: ``SurtPrefixSet``.

    :meth:`matches_uri` answers from a memo per scheme and authority (see
    :data:`_AuthorityAnswer`): the SURT of a URI differs from its authority's only in the
    lower-cased path after it, so what the members say about an authority is worked out once;
    a URI then costs a dict lookup and, when some member reaches into its authority's paths,
    a ``startswith``. The memo holds at most :data:`AUTHORITIES_KEPT` authorities (emptied
    when full) and is emptied by :meth:`add`. Thread-safety: many threads may call
    :meth:`matches_uri` at once (the memo's dict operations are atomic); :meth:`add` is for
    a set not yet shared (:meth:`copy` first, as a scope rule does).
    """

    __slots__ = ("_by_authority", "_sorted")

    def __init__(self, prefixes: Iterable[str] = ()) -> None:
        self._sorted: list[str] = []
        self._by_authority: dict[str, _AuthorityAnswer] = {}
        for prefix in prefixes:
            self.add(prefix)

    def add(self, prefix: str) -> bool:
        """Add ``prefix``; False if an existing member already covers it."""
        if not prefix or self.matches(prefix):
            return False
        self._by_authority = {}
        start = bisect_left(self._sorted, prefix)
        end = start
        while end < len(self._sorted) and self._sorted[end].startswith(prefix):
            end += 1
        del self._sorted[start:end]
        insort(self._sorted, prefix)
        return True

    def copy(self) -> SurtPrefixSet:
        """An independent set with the same members."""
        twin = SurtPrefixSet()
        twin._sorted = list(self._sorted)
        return twin

    def matches(self, surt_form: str) -> bool:
        """True when some member is a prefix of ``surt_form``."""
        i = bisect_right(self._sorted, surt_form)
        return i > 0 and surt_form.startswith(self._sorted[i - 1])

    def matches_uri(self, uri: str) -> bool:
        """True when the SURT of ``uri`` (http-coerced) is under some member: the same answer
        as ``matches(coerce_http(surt(uri)))``, from the memo of ``uri``'s authority."""
        sep = uri.find("://")
        if sep < 0:
            return self.matches(coerce_http(_surt(uri)))
        end = len(uri)  # as _authority_end does (inlined: this runs once per candidate URI)
        for delim in "/?#":
            at = uri.find(delim, sep + 3)
            if 0 <= at < end:
                end = at
        head = uri[:end]
        memo = self._by_authority
        answer = memo.get(head)
        if answer is None:
            answer = fresh = self._authority_answer(head)
            remember(memo, head, fresh, AUTHORITIES_KEPT)
        if answer is True:
            return True
        return bool(answer) and uri[end:].lower().startswith(answer)

    def _authority_answer(self, head: str) -> _AuthorityAnswer:
        """What the members say about the URIs whose scheme and authority are ``head``."""
        authority = coerce_http(_surt_authority(head))
        if self.matches(authority):
            return True
        # Members longer than the authority's SURT that start with it: each matches the URIs
        # whose (lower-cased) rest starts with the member's remainder.
        members = self._sorted
        i = bisect_left(members, authority)
        tails: list[str] = []
        while i < len(members) and members[i].startswith(authority):
            tails.append(members[i][len(authority) :])
            i += 1
        return tuple(tails)

    def import_lines(
        self,
        lines: Iterable[str],
        *,
        plain_lines: bool = True,
        directives: str = "+",
        collect: list[str] | None = None,
    ) -> list[str]:
        """Add prefixes from surts-file or seeds-file lines; returns the lines it could not use.
        ``collect``, when given, receives every prefix read, covered by another or not.

        Blank lines and ``#`` comments are skipped. A line starting with one of ``directives``
        (``+`` for accepting rules; Heritrix uses ``-`` for rejecting ones) adds the SURT or URI
        after it (see :func:`prefix_from_directive`); other ``+``/``-`` lines are ignored. Any
        other line adds its implied prefix when ``plain_lines`` is true (text after the first
        blank is ignored, as in seed lists).
        """
        bad: list[str] = []
        for raw in lines:
            line = raw.strip()
            if not line or line[0] == "#":
                continue
            try:
                if line[0] in "+-":
                    if line[0] not in directives:
                        continue
                    prefix = prefix_from_directive(line[1:])
                elif plain_lines:
                    prefix = surt_prefix_from_seed(line.split()[0])
                else:
                    continue
            except UriError:
                bad.append(line)
                continue
            self.add(prefix)
            if collect is not None:
                collect.append(prefix)
        return bad

    @classmethod
    def from_lines(
        cls, lines: Iterable[str], *, plain_lines: bool = True, directives: str = "+"
    ) -> SurtPrefixSet:
        """A set built by :meth:`import_lines` (unusable lines are dropped)."""
        prefix_set = cls()
        prefix_set.import_lines(lines, plain_lines=plain_lines, directives=directives)
        return prefix_set

    def __len__(self) -> int:
        return len(self._sorted)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._sorted))

    def __contains__(self, prefix: object) -> bool:
        if not isinstance(prefix, str):
            return False
        i = bisect_left(self._sorted, prefix)
        return i < len(self._sorted) and self._sorted[i] == prefix

    def __repr__(self) -> str:
        return f"SurtPrefixSet({len(self._sorted)} prefixes)"


AUTHORITIES_KEPT = 16384
"""Schemes and authorities whose answer a :class:`SurtPrefixSet` remembers at most."""


_AuthorityAnswer = Literal[True] | tuple[str, ...]
"""What a prefix set says about every URI of one scheme and authority: True, all are under
some member; else the URIs whose lower-cased rest (path, query) starts with one of these
strings are (none when the tuple is empty)."""


__all__ = [
    "AUTHORITIES_KEPT",
    "SurtPrefixSet",
    "as_prefix",
    "coerce_http",
    "prefix_from_directive",
    "surt",
    "surt_prefix_from_seed",
]
