"""Seed lists in Heritrix's syntax, from ``seeds.file`` and ``seeds.urls`` of the order.

One entry per line; blank lines and lines starting with ``#`` are skipped; a line starting with a
letter or digit is a seed (``http://`` is prepended when it has no scheme, so ``example.com`` and
``localhost:8000/`` work); a line starting with ``+`` or ``-`` is a SURT-prefix directive for
the scope rules; any other line is ignored. A seed that does not normalize is reported in
``errors`` and skipped: one bad line never stops a crawl. Heritrix counterpart:
``TextSeedModule``.

Beyond Heritrix, a seed may be followed by options, ``name=value`` words after whitespace:
``http://example.com/ max_hops=2`` crawls that seed's descendants at most 2 hops deep, whatever
the scope's TooManyHopsDecideRule says (``max_hops`` is the only option). A line whose trailing
words are not all ``name=value`` reads as before (the whole line is the URI); an unknown option or
a bad value is reported in ``errors`` and the seed is crawled without it.
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
    from crawler.order.schema import CrawlOrder, SeedsConfig

# Heritrix's test is "letter, then word chars, '+' or '-', then ':'"; "host:port" is not a scheme.
_SCHEME_RE = re.compile(r"[A-Za-z][\w+\-.]*:(?!\d)")
_INLINE_COMMENT_RE = re.compile(r"\s+#.*$")
_OPTION_RE = re.compile(r"[A-Za-z_][\w-]*=\S*")
SEED_OPTIONS = ("max_hops",)
REDIRECT_NOTE = "# redirect of"
"""How the journal marks a seed that a seed's redirect made (``uri  # redirect of <via>``)."""
"""Options a seed line may carry after its URI."""


@dataclass
class SeedList:
    """The outcome of reading seeds.

    ``uris`` are normalized, de-duplicated, in first-seen order; ``sources`` maps each to the line
    it came from (the Heritrix source tag, options left out); ``max_hops`` holds the seeds that
    set their own hop limit; ``directives`` keep their ``+``/``-``; every entry of ``errors``
    starts with the offending text, then says why and where.
    """

    uris: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    max_hops: dict[str, int] = field(default_factory=dict)
    directives: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    redirected: set[str] = field(default_factory=set)
    """Seeds a seed's redirect made (journal lines ending ``# redirect of <via>``): the
    operator did not name them."""

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
            comment = _INLINE_COMMENT_RE.search(line)
            uri = self._add_seed(line[: comment.start()] if comment else line, where)
            if uri is not None and comment and comment.group().lstrip().startswith(REDIRECT_NOTE):
                self.redirected.add(uri)
        elif line[0] in "+-":
            self.directives.append(_INLINE_COMMENT_RE.sub("", line))
        else:
            self.ignored.append(f"{line} ignored: neither a seed nor a directive ({where})")

    def _add_seed(self, text: str, where: str) -> str | None:
        words = text.split()
        options: list[str] = []
        if len(words) > 1 and all(_OPTION_RE.fullmatch(word) for word in words[1:]):
            text, options = words[0], words[1:]
        uri = text if _SCHEME_RE.match(text) else "http://" + text
        try:
            normal = normalize(uri)
        except UriError as exc:
            self.errors.append(f"{text} is not a usable seed: {exc} ({where})")
            return None
        if normal not in self.sources:
            self.uris.append(normal)
            self.sources[normal] = text
            for option in options:
                self._apply_option(normal, option, where)
        return normal

    def _apply_option(self, uri: str, option: str, where: str) -> None:
        name, _, value = option.partition("=")
        if name == "max_hops" and value.isdigit():
            self.max_hops[uri] = int(value)
            return
        why = (
            "max_hops takes a whole number of hops (0 or more)"
            if name == "max_hops"
            else f"unknown seed option; known: {', '.join(SEED_OPTIONS)}"
        )
        self.errors.append(f"{option} ignored: {why}; {uri} is crawled without it ({where})")


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
    return read_seeds(order.seeds, Path(order.base_dir))


def read_seeds(config: SeedsConfig, base_dir: Path) -> SeedList:
    """Seeds of an order's ``seeds`` section, ``seeds.file`` relative to ``base_dir``; as
    :func:`load_seeds`."""
    seeds = SeedList()
    if config.file:
        path = base_dir / Path(config.file).expanduser()
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            issue = OrderIssue("seeds.file", f"cannot read {path}: {exc.strerror or exc}")
            raise OrderError([issue]) from None
        seeds.extend(text.splitlines(), config.file)
    for i, url in enumerate(config.urls):
        seeds.add_line(url, f"seeds.urls[{i}]")
    return seeds
