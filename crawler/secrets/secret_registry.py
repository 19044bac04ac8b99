"""The secret values this process knows, and their removal from text.

:func:`remember` adds values (an order's passwords, as :mod:`crawler.secrets.secret_refs` found
them); :func:`redact` replaces every occurrence of each in a text by ``[redacted]``, in clear and
URL-encoded forms. Values shorter than :data:`MIN_LENGTH` are not remembered: blanking every
"abc" out of every log line would hide more than it protects. Thread-safe (a lock guards the
set; :func:`redact` reads a snapshot).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

MARK = "[redacted]"
MIN_LENGTH = 4

_lock = threading.Lock()
_values: tuple[str, ...] = ()


def remember(values: Iterable[str]) -> None:
    """Add ``values`` (and their URL-encoded forms) to the secrets blanked out of text."""
    global _values
    with _lock:
        known = set(_values)
        for value in values:
            if len(value) >= MIN_LENGTH:
                known.update({value, quote(value, safe=""), quote_plus(value)})
        # Longer first: a secret containing another is blanked whole.
        _values = tuple(sorted(known, key=len, reverse=True))


def known() -> tuple[str, ...]:
    """The values blanked out, longest first."""
    return _values


def redact(text: str) -> str:
    """``text`` with every known secret replaced by :data:`MARK`."""
    for value in _values:
        if value in text:
            text = text.replace(value, MARK)
    return text
