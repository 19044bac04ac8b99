"""Seed lists in Heritrix's syntax, from ``seeds.file`` and ``seeds.urls`` of the order.

One entry per line; blank lines and lines starting with ``#`` are skipped; a line starting with a
letter or digit is a seed (``http://`` is prepended when it has no scheme, so ``example.com`` and
``localhost:8000/`` work); a line starting with ``+`` or ``-`` is a SURT-prefix directive for
the scope rules; any other line is ignored. A seed that does not normalize is reported in
``errors`` and skipped: one bad line never stops a crawl. Heritrix counterpart:
``TextSeedModule``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from crawler.order.errors import OrderError, OrderIssue
from crawler.urls import UriError, normalize

if TYPE_CHECKING:
    from crawler.order.schema import CrawlOrder

# Heritrix's test is "letter, then word chars, '+' or '-', then ':'"; "host:port" is not a scheme.
_SCHEME_RE = re.compile(r"[A-Za-z][\w+\-.]*:(?!\d)")
_INLINE_COMMENT_RE = re.compile(r"\s+#.*$")


@dataclass
class SeedList:
    """The outcome of reading seeds.

    ``uris`` are normalized, de-duplicated, in first-seen order; ``sources`` maps each to the line
    it came from (the Heritrix source tag); ``directives`` keep their ``+``/``-``; every entry of
    ``errors`` starts with the offending text, then says why and where.
    """

    uris: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    directives: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        """Errors and ignored lines, for ``crawler validate`` to warn about."""
        return [*self.errors, *self.ignored]

    def extend(self, lines: Iterable[str], origin: str) -> None:
        """Parse ``lines`` (``origin`` names them in messages, e.g. ``seeds.txt``)."""
        for number, raw in enumerate(lines, 1):
            self.add_line(raw, f"{origin} line {number}")

    def add_line(self, raw: str, where: str) -> None:
        """Parse one line; ``where`` says where it came from, for messages."""
        line = raw.strip()
        if not line or line.startswith("#"):
            return
        if line[0].isalnum():
            self._add_seed(_INLINE_COMMENT_RE.sub("", line), where)
        elif line[0] in "+-":
            self.directives.append(_INLINE_COMMENT_RE.sub("", line))
        else:
            self.ignored.append(f"{line} ignored: neither a seed nor a directive ({where})")

    def _add_seed(self, text: str, where: str) -> None:
        uri = text if _SCHEME_RE.match(text) else "http://" + text
        try:
            normal = normalize(uri)
        except UriError as exc:
            self.errors.append(f"{text} is not a usable seed: {exc} ({where})")
            return
        if normal not in self.sources:
            self.uris.append(normal)
            self.sources[normal] = text


def parse_seeds(lines: Iterable[str], origin: str = "seeds") -> SeedList:
    """Seeds and directives of ``lines`` in seed-list syntax."""
    seeds = SeedList()
    seeds.extend(lines, origin)
    return seeds


ADDED_SEEDS_FILE = "seeds-added.txt"
"""File of a run directory listing, in seed-list syntax, the seeds and directives that joined
the running crawl (``*.seeds`` action files, seeds' redirects), so ``crawler resume`` and the
reports know them."""


def read_added_seeds(run_dir: Path) -> SeedList:
    """The seeds and directives of ``run_dir``'s :data:`ADDED_SEEDS_FILE` (none if missing)."""
    seeds = SeedList()
    try:
        text = (run_dir / ADDED_SEEDS_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return seeds
    seeds.extend(text.splitlines(), ADDED_SEEDS_FILE)
    return seeds


def load_seeds(order: CrawlOrder) -> SeedList:
    """Seeds of ``order``: ``seeds.file`` (relative to ``base_dir``) then ``seeds.urls``.

    Raises OrderError when the seeds file cannot be read; bad seeds only land in ``errors``.
    """
    seeds = SeedList()
    if order.seeds.file:
        path = Path(order.base_dir) / Path(order.seeds.file).expanduser()
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            issue = OrderIssue("seeds.file", f"cannot read {path}: {exc.strerror or exc}")
            raise OrderError([issue]) from None
        seeds.extend(text.splitlines(), order.seeds.file)
    for i, url in enumerate(order.seeds.urls):
        seeds.add_line(url, f"seeds.urls[{i}]")
    return seeds
