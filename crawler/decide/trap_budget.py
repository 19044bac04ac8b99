"""TrapBudgetDecideRule: endless series of numbered URLs end after a budget.

A calendar that links each month to the next, ``?page=N`` without end, ``?date=`` for every day: a
crawler trap repeats one URL template (:func:`crawler.decide.url_template.url_template`: digit
runs and month names as placeholders, the host and port included) with numbers that never run
out, each page linking to the next. Hop limits stop such a trap only after hundreds of fetches.

Three budgets, all REJECTing with the annotation ``trap:<template>``:

* ``max_series_length`` (default 30): a URI found on a page of its own template continues that
  page's *series*; the length of the series travels with each URI (``CrawlURI.data``
  ``SERIES_RUN_KEY``, handed to children by ``create_child``, kept in the frontier), and a URI
  that would make it longer than the budget is rejected. A calendar entered from the home page
  thus ends 30 months on either side; a site whose numbered pages (``/p/123``, ``/item/456``)
  link to each other is reached within a few steps of its lists and home page, far below the
  budget, so it is crawled whole, however many pages it has.
* ``max_series_uris`` (default 60): the length bounds each path, not the area: a calendar that
  links the next and previous month *and year* reaches every month within 30 steps, hundreds of
  pages (two axes multiply). So a series whose template holds two numbers or more (a *grid*:
  year and month, ``/item/{n}/{n}``) may also reach at most this many distinct URIs more than
  :data:`FREE_STEPS` steps from its first page; its identity (a hash of its first URI) travels
  with each URI as ``SERIES_ID_KEY``. A calendar in two dimensions thus ends within 1 + 24 + 60
  URIs, one in one dimension at its length (61). Whatever lies within a few steps is free (a
  list's page bar, pages linking ten others); a template with one number is never counted (a
  site whose ``/p/{n}`` pages link each other as a tree, however deep); a page a list links
  starts a series of its own, and a URI rejected in a series still passes when a page of
  another template links it. The members of the ``max_series`` most recently grown series are
  kept (an LRU; a series forgotten starts counting again, the length still bounds it).
* ``max_uris_per_template`` (default 0 = off): at most that many distinct URIs per host and
  template, counting only URIs found in a series (``series_only``) or every one; for a hard cap.
  The templates are kept in an LRU of ``max_templates`` entries (a 64-bit key and the 64-bit
  hashes of up to ``max_uris_per_template`` URIs each); a URI already let through is let through
  again.

The members of series and templates are kept in a :class:`~crawler.tally.TallyStore` (capped
sets: :meth:`~crawler.tally.TallyStore.join`): in memory by default, where the state (series
members, template members, rejections) can be saved and restored
(:meth:`TrapBudgetDecideRule.state` / :meth:`restore`) so that a resumed crawl keeps its budgets;
or, given with :meth:`TrapBudgetDecideRule.share`, the crawl's shared store, so that the workers
of a ``--workers`` crawl spend one budget together (a series split between workers still ends
at ``max_series_uris``) and a worker's death loses nothing. The rule is the same either way;
only the store differs. A shared store costs one round trip per candidate that is counted (a
grid series past its free steps, or a template under ``max_uris_per_template``), none for
others. The rejection counts of the report stay per process.

Seeds and prerequisites are never rejected, nor (with ``exempt_sitemap_links``) URIs a sitemap
lists (last hop M): a sitemap is a finite list the site itself declares.

It is a *gate* (see :mod:`crawler.decide.decide_rule`): the scope asks it only about URIs its
other rules ACCEPT, so out-of-scope links spend no budget. Thread-safe: one lock, held for a
dictionary lookup; the store has its own. Beyond Heritrix, which has no such rule.
"""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from pydantic import Field

from crawler.curi import (
    SERIES_ID_KEY,
    SERIES_RUN_KEY,
    VIA_SERIES_ID_KEY,
    VIA_SERIES_RUN_KEY,
    Hop,
)
from crawler.decide.decide_rule import DecideResult, DecideRule
from crawler.decide.url_template import MONTH, NUMBER, template_head, url_template
from crawler.params import Params
from crawler.tally import LocalTallyStore, TallyStore

if TYPE_CHECKING:
    from crawler.curi import CrawlURI

TRAP_ANNOTATION = "trap:"
"""Prefix of the annotation a rejected URI gets: ``trap:<template>``."""

FREE_STEPS = 3
"""URIs at most this many steps into a series are not counted against ``max_series_uris``."""
_TOP_KEPT = 1000  # templates whose rejections are counted one by one, for the report


@lru_cache(maxsize=4096)
def _via_shape(via: str) -> tuple[str | None, str]:
    """The template of ``via`` and what a URI's text must start with to have the same one (see
    :func:`~crawler.decide.url_template.template_head`; ``""`` when ``via`` has none). A
    page's outlinks share their via: worked out once (lru_cache is thread-safe)."""
    template = url_template(via)
    head = template_head(via) if template is not None else None
    return template, head or ""


def _is_grid(template: str) -> bool:
    """Whether ``template`` holds two numbers or more (a year and a month): its series may
    spread over an area, not only along a line."""
    return template.count(NUMBER) + template.count(MONTH) >= 2


def _hash64(text: str) -> int:
    return int.from_bytes(
        hashlib.blake2b(text.encode(), digest_size=8).digest(), "big", signed=True
    )


_via_hash = lru_cache(maxsize=4096)(_hash64)
"""The series id of a page's outlinks is the hash of their shared via: worked out once."""


class TrapBudgetParams(Params):
    """Parameters of :class:`TrapBudgetDecideRule`."""

    max_series_length: int = Field(
        30,
        ge=0,
        description="URIs in a row each found on the page before it with the same URL template "
        "(the next month, the next page) let through; 0 = no limit",
    )
    max_series_uris: int = Field(
        60,
        ge=0,
        description="distinct URIs a series of a template with two numbers or more may reach "
        "more than 3 steps from its first page (a calendar linking months and years: the two "
        "axes multiply); 0 = no limit",
    )
    max_series: int = Field(
        10_000,
        ge=1,
        description="series whose members are remembered (least recently grown forgotten "
        "first): bounds memory",
    )
    max_uris_per_template: int = Field(
        0,
        ge=0,
        description="distinct URIs let through per host and URL template, however they were "
        "found (see series_only); 0 = no limit",
    )
    series_only: bool = Field(
        True,
        description="count only URIs found on a page of the same template (a series: next "
        "month, next page); URIs found elsewhere (an /item/N from a list) always pass",
    )
    exempt_sitemap_links: bool = Field(
        True, description="never reject URIs a sitemap lists (last hop M), nor count them"
    )
    max_templates: int = Field(
        50_000,
        ge=1,
        description="templates remembered (least recently used forgotten first): bounds memory",
    )


class TrapBudgetDecideRule(DecideRule[TrapBudgetParams]):
    """REJECTs URIs past the budget of their URL template (see the module docstring).

    Reads ``uri``, ``is_seed``, ``hop_path``; on a rejection adds the ``trap:<template>``
    annotation to the URI (a candidate, owned by the calling thread).
    """

    gate = True

    def __init__(self, params: TrapBudgetParams | None = None) -> None:
        super().__init__(params)
        self._lock = threading.Lock()
        self._local_templates = LocalTallyStore(self.params.max_templates)
        self._local_series = LocalTallyStore(self.params.max_series)
        self._templates: TallyStore = self._local_templates
        self._series: TallyStore = self._local_series
        self._template_key = ""
        self._series_key = ""
        self._rejected = 0
        self._by_template: Counter[str] = Counter()

    def decide(self, curi: CrawlURI) -> DecideResult:
        p = self.params
        budget = p.max_uris_per_template
        data = curi.data
        via_run = data.pop(VIA_SERIES_RUN_KEY, 0) if data else 0
        via_series = data.pop(VIA_SERIES_ID_KEY, 0) if via_run else 0
        last_hop = curi.hop_path[-1:]
        if (
            (budget == 0 and p.max_series_length == 0 and p.max_series_uris == 0)
            or curi.is_seed
            or last_hop == Hop.PREREQ
            or (last_hop == Hop.MANIFEST and p.exempt_sitemap_links)
        ):
            return DecideResult.ACCEPT
        via = curi.via
        via_template, via_head = _via_shape(via) if via is not None else (None, "")
        if (budget == 0 or p.series_only) and self._outside_series(
            curi.uri, via_template, via_head
        ):
            # Only a URI in a series (its template is its via's) can be counted or rejected.
            return DecideResult.ACCEPT
        template = url_template(curi.uri)
        if template is None:
            return DecideResult.ACCEPT
        in_series = via_template == template
        if in_series and (p.max_series_length or p.max_series_uris):
            run = via_run + 1
            if p.max_series_length and run > p.max_series_length:
                return self._reject(curi, template)
            series = via_series or _via_hash(via or "")
            if (
                via_run >= FREE_STEPS
                and p.max_series_uris
                and _is_grid(template)
                and not self._joins(series, _hash64(curi.uri))
            ):
                return self._reject(curi, template)
            data[SERIES_RUN_KEY] = run
            data[SERIES_ID_KEY] = series
        if budget == 0 or (p.series_only and not in_series):
            return DecideResult.ACCEPT
        key = f"{self._template_key}{_hash64(template)}"
        if self._templates.join(key, _hash64(curi.uri), budget):
            return DecideResult.ACCEPT
        return self._reject(curi, template)

    @staticmethod
    def _outside_series(uri: str, via_template: str | None, via_head: str) -> bool:
        """True when the template of ``uri`` surely is not ``via_template``, found without
        working it out: the via has none, or ``uri`` does not start with ``via_head`` (two URIs
        with one template have the same :func:`template_head`, and each starts with it)."""
        return via_template is None or not uri.startswith(via_head)

    def _joins(self, series: int, member: int) -> bool:
        """Whether ``member`` is or may become one of ``series``' counted URIs."""
        key = f"{self._series_key}{series}"
        return self._series.join(key, member, self.params.max_series_uris)

    def share(self, store: TallyStore, key_prefix: str) -> None:
        """Keep the members of series and templates in ``store`` (the crawl's shared tallies)
        under keys starting with ``key_prefix`` (one per rule of the scope), from now on."""
        self._series, self._series_key = store, key_prefix + "s:"
        self._templates, self._template_key = store, key_prefix + "t:"

    @property
    def shared(self) -> bool:
        """Whether the budgets are kept in a shared store (:meth:`share`)."""
        return self._series is not self._local_series

    def _reject(self, curi: CrawlURI, template: str) -> DecideResult:
        with self._lock:
            self._rejected += 1
            if template in self._by_template or len(self._by_template) < _TOP_KEPT:
                self._by_template[template] += 1
        curi.annotate(TRAP_ANNOTATION + template.replace(",", "%2C"))
        return DecideResult.REJECT

    # ------------------------------------------------------------ reports
    @property
    def rejected(self) -> int:
        """URIs rejected so far (a URI linked from several pages counts each time it is asked)."""
        with self._lock:
            return self._rejected

    def top_templates(self, n: int) -> list[tuple[str, int]]:
        """The ``n`` templates with the most rejections (among the first 1000 that had any)."""
        with self._lock:
            return self._by_template.most_common(n)

    def report(self) -> list[str]:
        """Lines for processors-report.txt (the scope's part of the candidates' section)."""
        with self._lock:
            rejected, templates = self._rejected, len(self._by_template)
            top = self._by_template.most_common(10)
        p = self.params
        lines = [
            f"  trap budget: series of {p.max_series_length or 'any'} URIs in a row, "
            f"{p.max_series_uris or 'any number of'} URIs each past {FREE_STEPS} steps; "
            f"{p.max_uris_per_template or 'any number of'} URIs per host and template",
            f"  candidates over a trap budget: {rejected} ({templates} templates)",
        ]
        lines.extend(f"    {count} {template}" for template, count in top)
        return lines

    # ------------------------------------------------------------ state
    def state(self) -> dict[str, Any]:
        """The budgets spent so far, as JSON-ready data (see :meth:`restore`)."""
        templates = [[int(key), members] for key, members in self._local_templates.sets()]
        series = [[int(key), members] for key, members in self._local_series.sets()]
        with self._lock:
            return {
                "templates": templates,
                "series": series,
                "rejected": self._rejected,
                "by_template": dict(self._by_template),
            }

    def restore(self, state: dict[str, Any]) -> None:
        """Take back what :meth:`state` gave (a resumed crawl); bad data raises ValueError."""
        try:
            templates = [[str(int(k)), m] for k, m in state.get("templates", [])]
            series = [[str(int(k)), m] for k, m in state.get("series", [])]
            rejected = int(state.get("rejected", 0))
            by_template = Counter({str(k): int(v) for k, v in state.get("by_template", {}).items()})
            self._local_templates.restore({"sets": templates})
            self._local_series.restore({"sets": series})
        except (TypeError, ValueError, OverflowError, AttributeError) as exc:
            raise ValueError(f"unusable trap budget state: {exc}") from None
        with self._lock:
            self._rejected = rejected
            self._by_template = by_template
