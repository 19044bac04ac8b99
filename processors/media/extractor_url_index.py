"""ExtractorUrlIndex: does one of yt-dlp's site extractors claim this URL? Cheaply.

Asking each of yt-dlp's ~1,750 extractors (``suitable(url)``, a regex match each) costs ~5 ms
per URL, and importing yt-dlp's extractor list ~1-2 s of CPU and ~60 MB: too much for every
page of a crawl. So the index reads the extractors' URL patterns (``_VALID_URL``) from the
text of yt-dlp's generated ``lazy_extractors.py`` (found without importing yt-dlp, ~30 ms
once) and files each extractor under the domain literals its patterns spell
(``youtube\\.com`` -> ``youtube.com``; ``dailymotion\\.(?:com|fr)`` -> ``dailymotion.*``).
A URL is then matched only against the extractors filed under a pair of adjacent labels of
its host (``www.bbc.co.uk``: ``www.bbc``, ``bbc.co``, ``co.uk``) or under one of its labels
(``bbc.*``): on most hosts, none at all. The generic extractor and extractors whose patterns
name no domain (embeds recognised by markup) are left out; the page markup rule
(:mod:`processors.media.media_page_rule`) finds those pages. Without a ``lazy_extractors.py``
(yt-dlp run from a source tree) the extractor classes are imported instead, once.

Thread-safety: built once under a lock; lookups read immutable structures, and the per-key
compiled-pattern cache and the per-host key cache are filled with whole values (a race only
compiles a pattern or splits a host twice).
"""

from __future__ import annotations

import ast
import importlib.util
import re
import threading
from pathlib import Path
from urllib.parse import urlsplit

_DOMAIN = re.compile(r"([a-z0-9][a-z0-9-]*)\\\.([a-z][a-z0-9-]*)(?![a-z0-9-])")
# A label before an escaped dot whose TLD is a choice (``dailymotion\.(?:com|fr)``).
_LABEL = re.compile(r"(?<![a-z0-9-])([a-z0-9][a-z0-9-]{3,})\\\.[(\[]")
_CLASS_LINE = re.compile(r"^    IE_NAME = (.+)$|^    _VALID_URL = (.+)$|^class (\w+)\(", re.M)
_HOSTS_KEPT = 65536  # hosts whose index keys are remembered (a few MB at most)


def _patterns_of(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    return []


def _read_lazy_extractors() -> list[tuple[str, list[str]]] | None:
    """``(IE name, URL patterns)`` from yt-dlp's lazy_extractors.py, or None without it."""
    spec = importlib.util.find_spec("yt_dlp")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "extractor" / "lazy_extractors.py"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    found: list[tuple[str, list[str]]] = []
    name = ""
    for match in _CLASS_LINE.finditer(text):
        ie_name, valid_url, class_name = match.groups()
        if class_name is not None:
            name = class_name
        elif ie_name is not None:
            try:
                name = str(ast.literal_eval(ie_name))
            except (ValueError, SyntaxError):
                continue
        elif valid_url is not None:
            try:
                patterns = _patterns_of(ast.literal_eval(valid_url))
            except (ValueError, SyntaxError):
                continue
            found.append((name, patterns))
    return found


def _import_extractors() -> list[tuple[str, list[str]]]:
    from yt_dlp.extractor import gen_extractor_classes

    return [(c.IE_NAME, _patterns_of(c._VALID_URL)) for c in gen_extractor_classes()]


class ExtractorUrlIndex:
    """Which yt-dlp site extractor claims a URL (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_pair: dict[str, list[tuple[str, tuple[str, ...]]]] | None = None
        self._compiled: dict[str, list[tuple[str, list[re.Pattern[str]]]]] = {}
        # host -> the keys of the index its labels make (most hosts: none); a crawl asks about
        # the same hosts again and again. Cleared past _HOSTS_KEPT entries.
        self._keys_of_host: dict[str, tuple[str, ...]] = {}
        self.extractors = 0

    def _index(self) -> dict[str, list[tuple[str, tuple[str, ...]]]]:
        index = self._by_pair
        if index is not None:
            return index
        with self._lock:
            if self._by_pair is None:
                entries = _read_lazy_extractors()
                if entries is None:
                    entries = _import_extractors()
                built: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
                for name, patterns in entries:
                    if name == "generic" or not patterns:
                        continue
                    pairs = {f"{a}.{b}" for p in patterns for a, b in _DOMAIN.findall(p)}
                    pairs.update(f"{a}.*" for p in patterns for a in _LABEL.findall(p))
                    for pair in pairs:
                        built.setdefault(pair, []).append((name, tuple(patterns)))
                    self.extractors += 1 if pairs else 0
                self._by_pair = built
            return self._by_pair

    def claimed_by(self, uri: str) -> str | None:
        """The name of an extractor whose URL pattern matches ``uri``, or None."""
        host = urlsplit(uri).hostname
        if not host or host[-1].isdigit() or ":" in host:
            return None  # an IP address: no site extractor names one
        index = self._index()
        keys = self._keys_of_host.get(host)
        if keys is None:
            labels = host.rstrip(".").split(".")
            pairs = [f"{labels[i]}.{labels[i + 1]}" for i in range(len(labels) - 1)]
            pairs += [f"{label}.*" for label in labels[:-1]]
            keys = tuple(pair for pair in pairs if pair in index)
            if len(self._keys_of_host) >= _HOSTS_KEPT:
                self._keys_of_host.clear()
            self._keys_of_host[host] = keys
        for pair in keys:
            compiled = self._compiled.get(pair)
            if compiled is None:
                compiled = []
                for name, patterns in index[pair]:
                    regexes = []
                    for pattern in patterns:
                        try:
                            regexes.append(re.compile(pattern))
                        except re.error:
                            continue
                    compiled.append((name, regexes))
                self._compiled[pair] = compiled
            for name, regexes in compiled:
                if any(r.match(uri) for r in regexes):
                    return name
        return None
