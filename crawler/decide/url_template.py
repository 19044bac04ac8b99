"""url_template: the shape of a URI with its changing numbers taken out, for trap budgets.

Crawler traps repeat one URL template with numbers that change without end: ``/calendar/2026/01``
→ ``/calendar/2026/02`` …, ``?page=N``, ``?date=2026-01-05``, ``/item/123/456``. The template of
a URI is its scheme, authority and path, with every run of digits (a leading ``-`` of a
negative number included) and every month name replaced by a placeholder, then its query: the
keys kept, sorted, each value normalised the same way. Fragments are dropped. A URI without any
digit or month name in its path or query has no template (it cannot be one of a series).

Pure functions, safe from any thread.
"""

from __future__ import annotations

import functools
import re

from crawler.bounded_memo import remember

NUMBER = "{n}"
MONTH = "{mon}"

_DIGITS_RE = re.compile(r"[0-9]+")
# The '-' of a negative number, once its digits are a placeholder: not when it joins two words or
# two numbers ("month=-3", "/-3/" lose it; "story-123" and "2026-01-05" keep theirs).
_NEGATIVE_RE = re.compile(r"(?<![0-9A-Za-z}])-\{n\}")
_MONTH_RE = re.compile(
    r"(?<![A-Za-z])(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?"
    r"|aug(?:ust)?|sep(?:t|tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)(?![A-Za-z])",
    re.IGNORECASE,
)
_MONTH_HINTS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# Whether any hint is in a lower-cased text, in one scan (no IGNORECASE: the text is lowered
# first, exactly as ``hint in text.lower()``).
_MONTH_HINT_RE = re.compile("|".join(_MONTH_HINTS))


_month_hint = _MONTH_HINT_RE.search
_digit = _DIGITS_RE.search
_digits_to_number = functools.partial(_DIGITS_RE.sub, NUMBER)


def _has_month(text: str) -> bool:
    # Cheaper than the month regex for the many URIs that hold no month name at all.
    return _month_hint(text.lower()) is not None


def _shape(text: str, months: bool) -> str:
    text = _digits_to_number(text)
    if "-{n}" in text:
        text = _NEGATIVE_RE.sub(NUMBER, text)
    return _MONTH_RE.sub(MONTH, text) if months else text


def url_template(uri: str) -> str | None:
    """The template of ``uri`` (``http://h/calendar/{n}/{n}``, ``http://h/list?page={n}``), or
    None when nothing in its path or query varies like a counter or a date.

    The authority is kept as it is (a host's digits are not a counter); query keys are sorted
    so that reordered parameters share a template; a key without ``=`` stays bare.

    A path with digits and no query is shaped from its digit-free form (its digit runs as
    placeholders), remembered for the last :data:`PATHS_KEPT` such forms: the pages of one
    template share it. Thread-safe.
    """
    parts = _origin_and_rest(uri)
    if parts is None:
        return None
    origin, rest = parts
    if "?" not in rest:
        shaped, digits = _digits_to_number_n(rest)
        if digits:
            path = _shaped_paths.get(shaped)
            if path is None:
                path = remember(_shaped_paths, shaped, _shape_numbered(shaped), PATHS_KEPT)
            return origin + path
    return _template_of(origin, rest)


PATHS_KEPT = 4096
"""Digit-free forms of paths whose shape :func:`url_template` remembers at most."""
_shaped_paths: dict[str, str] = {}
_digits_to_number_n = functools.partial(_DIGITS_RE.subn, NUMBER)


def _shape_numbered(shaped: str) -> str:
    """The shape of a path whose digit runs are placeholders already (``shaped``): what
    :func:`_shape` gives for the path itself (the month hints and names cannot start, end or
    lie across a placeholder, as they could not across digits)."""
    return _shape(shaped, _month_hint(shaped.lower()) is not None)


def _template_of(origin: str, rest: str) -> str | None:
    """The template of the URI ``origin + rest`` worked out in full (``rest``: its path and
    query, the fragment cut off)."""
    months = _month_hint(rest.lower()) is not None  # _has_month, inlined (once per link)
    if not months and _digit(rest) is None:
        return None
    path, sep, query = rest.partition("?")
    template = origin + _shape(path, months)
    if sep:
        params = sorted(
            key + "=" + _shape(value, months) if eq else key
            for key, eq, value in (item.partition("=") for item in query.split("&") if item)
        )
        template += "?" + "&".join(params)
    return template


def template_head(uri: str) -> str | None:
    """What the template of ``uri`` starts with, when it has one: its scheme and authority and
    the ``/`` after them; None when it surely has none (no authority, or no path). Two URIs
    whose heads differ have different templates, or none."""
    parts = _origin_and_rest(uri)
    return None if parts is None else parts[0] + "/"


def _origin_and_rest(uri: str) -> tuple[str, str] | None:
    """``uri`` without its fragment, cut before the first ``/`` after ``//`` (the origin, then
    the path and query, starting with ``/``); None when there is no such ``/``."""
    fragment = uri.find("#")
    if fragment >= 0:
        uri = uri[:fragment]
    start = uri.find("//")
    slash = uri.find("/", start + 2) if start >= 0 else -1
    if slash < 0:
        return None
    return uri[:slash], uri[slash:]
