"""Processor, ProcessResult and ProcessorContext: the extension point users write.

A processor is one step of a chain. :meth:`Processor.process` is final: it honours ``enabled``,
the ``should_process_rule`` from the order and :meth:`Processor.should_process`, then calls
:meth:`Processor.inner_process`. One instance serves every ToeThread: keep per-URI state on the
CrawlURI (``curi.data``), never on ``self``; hold no lock across I/O. Heritrix counterpart:
``org.archive.modules.Processor``.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final, Generic, TypeVar, final

from crawler.decide.decide_rule import DecideResult, DecideRuleSequence
from crawler.params import Params, params_model_of

if TYPE_CHECKING:
    from crawler.archive.collection_set import CollectionSet
    from crawler.clock import Clock
    from crawler.continuity.digest_index import DigestIndex
    from crawler.curi import CrawlURI
    from crawler.frontier.politeness.inline_gate import InlineGate
    from crawler.history import CrawlHistory
    from crawler.netguard import AddressPolicy
    from crawler.order.schema import CrawlOrder
    from crawler.param_overrides import ParamOverrides
    from crawler.servers import ServerCache
    from crawler.stats import CrawlStats
    from crawler.tally.tally_store import TallyStore


class ProcessResult:
    """What a processor tells its chain: go on, skip to the post chain, or jump to a processor."""

    __slots__ = ("kind", "target")

    def __init__(self, kind: str, target: str | None = None) -> None:
        self.kind = kind
        self.target = target

    @staticmethod
    def jump(name: str) -> ProcessResult:
        """Skip forward to the processor called ``name`` (in this chain or a later one)."""
        return ProcessResult("jump", name)

    def __repr__(self) -> str:
        return f"ProcessResult({self.kind!r}, {self.target!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ProcessResult)
            and other.kind == self.kind
            and other.target == self.target
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.target))

    PROCEED: ClassVar[ProcessResult]
    SKIP_TO_POST: ClassVar[ProcessResult]


ProcessResult.PROCEED = ProcessResult("proceed")
ProcessResult.SKIP_TO_POST = ProcessResult("skip_to_post")


@dataclass(frozen=True)
class ProcessorContext:
    """What a processor may use once the crawl starts. Every member is thread-safe.

    ``schedule`` offers a CrawlURI to the frontier as it is (callers scope it first) and
    ``schedule_many`` several at once (a page's outlinks; one flag per URI, True if queued);
    ``seen_recently`` says, per URI, which the frontier surely has seen (when the frontier can
    tell; at most one round trip for a page's links, made only in a crawl larger than the
    frontier's cache of recent keys);
    ``add_seed(uri, via)`` makes a normalized URI a seed of the running crawl (its SURT prefix
    joins the scope, the seeds report lists it, ``crawler resume`` keeps it; False if it was one
    already; the caller schedules it);
    ``catch_up_seeds(curi)``, before ``curi``'s links are scoped, gives the scope the seeds that
    other workers of a distributed crawl discovered and the URI's scheduler knew;
    ``uri_error(base, message, raw)`` writes a line to uri-errors.log; ``stopping`` is set when
    the crawl is ending, so long operations can give up early; ``history`` holds the fetch and
    payload-digest history of this run (conditional requests, revisit records);
    ``digest_index`` maps a payload digest to its first capture, in this run, this job's earlier
    crawls or, shared, any worker of a ``--workers`` crawl (:mod:`crawler.continuity`);
    ``watch_disk(directory)`` asks the disk guard to watch the free space of a directory the
    processor writes to outside the run directory (the guard watches the run directory,
    ``warcs/``, ``state/`` and ``logs/`` anyway); ``collections`` holds the indexes of earlier
    crawls to deduplicate against (order key ``dedup``); ``sheets`` gives the params the crawl's
    sheets override per URI (a :class:`~crawler.param_overrides.ParamOverrides`, read through
    :meth:`Processor.params_for`);
    ``claim_uri(curi)`` marks a URI fetched outside the frontier as seen (True if it was new) so
    the frontier never queues it; ``finish_inline(curi)`` runs such a URI through the write chain
    and gives it its final disposition (crawl.log line, statistics, recording freed);
    ``find_processor(name)`` is the crawl's processor of that name, if any;
    ``inline_gate`` is the frontier's server gate for such fetches (a slot of the server's
    cap, its pace and holds; :class:`~crawler.frontier.politeness.inline_gate.InlineGate`), when the
    frontier has one; ``addresses`` decides which addresses fetches may connect to (the
    order's ``fetch.allow_private`` and the seeds' servers; :mod:`crawler.netguard`) — None,
    as in tests' own contexts, checks nothing; ``tallies`` is the crawl-wide
    :class:`~crawler.tally.TallyStore` every worker of a ``--workers`` crawl shares (quotas,
    trap budgets, form logins), None in a crawl of one process; ``in_rotation()`` is how many
    queues (hosts) the frontier has in rotation now, crawl-wide (cheap, lock-free), None when
    the frontier cannot tell.
    """

    run_dir: Path
    state_dir: Path
    order: CrawlOrder
    stats: CrawlStats
    logger: Any
    clock: Clock
    stopping: threading.Event
    servers: ServerCache
    scope: DecideRuleSequence
    schedule: Callable[[CrawlURI], bool]
    uri_error: Callable[[str | None, str, str], None]
    history: CrawlHistory | None = None
    digest_index: DigestIndex | None = None
    schedule_many: Callable[[Sequence[CrawlURI]], list[bool]] | None = None
    seen_recently: Callable[[Sequence[str]], list[bool]] | None = None
    add_seed: Callable[[str, str | None], bool] | None = None
    catch_up_seeds: Callable[[CrawlURI], None] | None = None
    watch_disk: Callable[[Path], None] | None = None
    collections: CollectionSet | None = None
    sheets: ParamOverrides | None = None
    claim_uri: Callable[[CrawlURI], bool] | None = None
    finish_inline: Callable[[CrawlURI], None] | None = None
    find_processor: Callable[[str], Processor[Any] | None] | None = None
    inline_gate: InlineGate | None = None
    addresses: AddressPolicy | None = None
    tallies: TallyStore | None = None
    in_rotation: Callable[[], int] | None = None


P = TypeVar("P", bound=Params)


class Processor(Generic[P]):
    """Base class of every processor.

    Subclasses bind their parameter model through the generic argument and override
    :meth:`inner_process` (and optionally :meth:`should_process`, :meth:`inner_reject_process`,
    :meth:`start`, :meth:`stop`, :meth:`report`). ``__init__`` must do no I/O: ``crawler validate``
    builds processors without running them.
    """

    params_model: ClassVar[type[Params]] = Params
    sheet_params: ClassVar[frozenset[str]] = frozenset()
    """The params a sheet may override: those this processor reads per URI via
    :meth:`params_for` (``crawler validate`` refuses the others in a sheet)."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.params_model = params_model_of(cls, Processor)

    def __init__(
        self,
        name: str,
        params: P | None = None,
        *,
        enabled: bool = True,
        should_process_rule: DecideRuleSequence | None = None,
    ) -> None:
        self.name: Final = name
        self.params: P = params if params is not None else self.params_model()  # type: ignore[assignment]
        self.enabled = enabled
        self.should_process_rule = should_process_rule
        self._handled = itertools.count()
        self._handled_count = 0
        self.ctx: ProcessorContext | None = None
        self._sheets: ParamOverrides | None = None

    def params_for(self, curi: CrawlURI) -> P:
        """This processor's params for ``curi``: ``self.params`` with the settings of the sheets
        that apply to it (``chains.<chain>.<name>.params.*``). Without sheets, ``self.params``
        at the cost of two attribute reads. Thread-safe."""
        sheets = self._sheets
        if sheets is None or not sheets.active:
            return self.params
        return sheets.processor_params(self.name, self.params, curi)  # type: ignore[return-value]

    @final
    def process(self, curi: CrawlURI) -> ProcessResult:
        """Run this processor on ``curi`` and say how the chain goes on. Final."""
        if not self.enabled:
            return ProcessResult.PROCEED
        rule = self.should_process_rule
        if rule is not None and rule.rules and rule.decide(curi) is DecideResult.REJECT:
            self.inner_reject_process(curi)
            return ProcessResult.PROCEED
        if not self.should_process(curi):
            return ProcessResult.PROCEED
        self._handled_count = next(self._handled) + 1
        result = self.inner_process(curi)
        return ProcessResult.PROCEED if result is None else result

    @property
    def uris_handled(self) -> int:
        """How many URIs reached :meth:`inner_process`."""
        return self._handled_count

    def should_process(self, curi: CrawlURI) -> bool:
        """Whether ``curi`` concerns this processor (e.g. an HTML extractor wants text/html)."""
        return True

    def inner_process(self, curi: CrawlURI) -> ProcessResult | None:
        """The work. Return None (proceed), ``SKIP_TO_POST`` or ``ProcessResult.jump(name)``."""
        return None

    def inner_reject_process(self, curi: CrawlURI) -> None:
        """Called instead of :meth:`inner_process` when ``should_process_rule`` rejects."""

    def start(self, ctx: ProcessorContext) -> None:
        """Open resources before the first URI. Overrides should call ``super().start(ctx)``."""
        self.ctx = ctx
        self._sheets = ctx.sheets

    def stop(self) -> None:
        """Release resources. Idempotent; must never raise."""

    def report(self) -> list[str]:
        """Lines for processors-report.txt (after the ``Processor:`` line)."""
        return [f"  {self.uris_handled} URIs handled"]

    def counts(self) -> dict[str, int]:
        """Counters for metrics (``crawler_processor_*``): ``uris`` handled, and whatever an
        override adds (a few fixed names, never one per host or URI). Called from any thread."""
        return {"uris": self.uris_handled}

    @property
    def context(self) -> ProcessorContext:
        """The context given to :meth:`start`; raises if the processor was not started."""
        if self.ctx is None:
            raise RuntimeError(f"processor {self.name!r} used before start()")
        return self.ctx

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
