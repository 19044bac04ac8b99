"""CandidatesProcessor: turns a URI's outlinks (and its prerequisite) into scheduled CrawlURIs.

Reads ``curi.outlinks``, ``curi.prerequisite`` and ``curi.status``; calls ``ctx.schedule`` for
every accepted candidate; may set ``curi.status = -63``. For each outlink: normalize it (a bad
one goes to uri-errors.log through ``ctx.uri_error`` and is skipped), create the child
(``curi.create_child``), give redirects and first-level embeds the MEDIUM scheduling directive,
force-fetch a redirect back into its own redirect chain once and drop it the next time
(:class:`~processors.postprocess.redirect_chain.RedirectChain`: ``A → A`` is fetched twice, not
until the hop limit; the URI that was not followed gets the ``redirectLoop`` annotation), ask
the scope (``ctx.scope``); the accepted ones go to the frontier together, in one
``ctx.schedule_many`` call (``ctx.schedule`` each when the context has none), after the digest
index has sent the page's own entry if the WARC writer left it waiting
(``ctx.digest_index.flush`` with the page's payload digest). With
``seeds.redirects_new_seeds`` (Heritrix's ``seedsRedirectNewSeeds``) the redirect of a seed
— and a chain of redirects from it, up to :data:`MAX_SEED_REDIRECT_HOPS` — is marked a seed
and, once the scope accepts it, announced through ``ctx.add_seed`` before it is scheduled, so
its SURT prefix joins the scope (a seed that moved to https, to www., to another host is
crawled there); a redirect seed this process has not heard of (another worker found it) is
announced when it is processed. Identical link
strings are handled once per page; with ``skip_seen``, links the frontier surely saw already
(``ctx.seen_recently``) skip the scope and the frontier altogether. Outlinks of a URI
whose status is not in [200, 400) are dropped unless ``process_error_outlinks`` (Heritrix's
default).

A prerequisite (set by the PreconditionEnforcer, with its P hop and force-fetch) is scoped and
scheduled whatever the URI's status; if it cannot be normalized or the scope rejects it, the URI
gets status -63 (PREREQUISITE_UNSCHEDULABLE_FAILURE) so it is not deferred forever.

With ``log_scope_decisions`` every scope decision is written to ``logs/scope.log`` as
``<Log17> <rule index> <rule class> <ACCEPT|REJECT|NONE> <uri>`` (Heritrix's ``logToFile`` of a
DecideRuleSequence; index ``-1`` and class ``-`` when no rule had an opinion). A candidate over a
trap budget (:class:`~crawler.decide.TrapBudgetDecideRule` in the scope) is written there too
with ``log_trap_rejections``, even when other decisions are not, followed by Heritrix's optional
JSON column: ``{"status":-5000,"annotations":"trap:<template>"}``. The trap rules' budgets are
saved in ``state/trap-budgets.json`` when the processor stops and read back when it starts, so a
resumed crawl keeps them (a crawl killed with ``kill -9`` starts its budgets again); in a
``--workers`` crawl they are kept in the crawl's shared tallies (``ctx.tallies``) instead, spent
by every worker together and kept whatever happens to a worker.

Thread-safety: no per-URI state on ``self``; the report counters are updated under a lock once
per URI; scope.log lines are written under their own lock. Heritrix counterpart:
``CandidatesProcessor`` with ``CandidateScoper`` and ``FrontierPreparer`` (directives).
"""

from __future__ import annotations

import contextlib
import functools
import json
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

from pydantic import Field

from crawler import (
    CrawlURI,
    DecideResult,
    FetchStatus,
    Hop,
    Link,
    Params,
    Processor,
    ProcessorContext,
    SchedulingDirective,
)
from crawler.canonicalizer import Canonicalizer
from crawler.continuity.digest_index import flush as flush_digests
from crawler.decide import TRAP_ANNOTATION, TrapBudgetDecideRule
from crawler.logs.crawl_logs import log17
from crawler.urls import UriError, normalize
from processors.postprocess.redirect_chain import RedirectChain

SCOPE_LOG = "scope.log"
MAX_SEED_REDIRECT_HOPS = 5
"""Most redirects from an original seed to a redirect target that still becomes a seed."""
TRAP_STATE = "trap-budgets.json"
NORMALIZED_MEMO = 4096
"""Outlink strings whose normal form is remembered: a site's navigation links are on every page
(normalization is a pure function of the string; one that fails is not remembered)."""
_normalized = functools.lru_cache(maxsize=NORMALIZED_MEMO)(normalize)


class CandidatesParams(Params):
    """Parameters of :class:`CandidatesProcessor`."""

    process_error_outlinks: bool = Field(
        False, description="also schedule outlinks of URIs with status < 200 or >= 400"
    )
    preference_embed_hops: int = Field(
        1, ge=0, description="URIs at most this many non-L hops past a link get MEDIUM directive"
    )
    log_scope_decisions: bool = Field(
        False, description="write every scope decision, with the deciding rule, to logs/scope.log"
    )
    log_trap_rejections: bool = Field(
        True, description="write candidates rejected by a trap budget to logs/scope.log"
    )
    skip_seen: bool = Field(
        True,
        description="skip the scope for links the frontier surely saw already (then out-of-"
        "scope counts cover unseen links only); off while scope decisions are logged",
    )


class CandidatesProcessor(Processor[CandidatesParams]):
    """Scopes and schedules outlinks and prerequisites (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lock = threading.Lock()
        self._scheduled = 0
        self._rejected = 0
        self._bad = 0
        self._prereq_failed = 0
        self._loops = 0
        self._redirects = RedirectChain(Canonicalizer().canonicalize)
        self._scope_log: IO[str] | None = None
        self._scope_log_lock = threading.Lock()
        self._traps: list[tuple[int, TrapBudgetDecideRule]] = []

    def start(self, ctx: ProcessorContext) -> None:
        super().start(ctx)
        # The frontier's own rules, so "already in the chain" means what the uniq filter means.
        self._redirects = RedirectChain(
            Canonicalizer(ctx.order.frontier.canonicalization).canonicalize
        )
        self._traps = [
            (i, rule)
            for i, rule in enumerate(ctx.scope.rules)
            if isinstance(rule, TrapBudgetDecideRule)
        ]
        if self._traps:
            self._restore_traps(ctx)
            if ctx.tallies is not None:  # a --workers crawl: one budget for every worker
                for i, rule in self._traps:
                    rule.share(ctx.tallies, f"trap{i}:")
        if self.params.log_scope_decisions and self._scope_log is None:
            self._open_scope_log(ctx)

    def _open_scope_log(self, ctx: ProcessorContext) -> IO[str]:
        logs = ctx.run_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        # Line-buffered: each line is in the file at once (tail -f, a crash loses none).
        self._scope_log = open(logs / SCOPE_LOG, "a", buffering=1, encoding="utf-8")  # noqa: SIM115
        return self._scope_log

    def stop(self) -> None:
        with self._scope_log_lock:
            log, self._scope_log = self._scope_log, None
        if log is not None:
            with contextlib.suppress(OSError):
                log.close()
        if self._traps and self.ctx is not None:
            self._save_traps(self.ctx)

    def _restore_traps(self, ctx: ProcessorContext) -> None:
        path = ctx.state_dir / TRAP_STATE
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
            for i, rule in self._traps:
                state = saved.get(str(i))
                if isinstance(state, dict):
                    rule.restore(state)
        except FileNotFoundError:
            return
        except (OSError, ValueError, AttributeError) as exc:
            ctx.logger.warning("trap_budgets_unreadable", path=str(path), error=str(exc))

    def _save_traps(self, ctx: ProcessorContext) -> None:
        path = ctx.state_dir / TRAP_STATE
        data = {str(i): rule.state() for i, rule in self._traps}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
            tmp.replace(path)
        except OSError as exc:
            ctx.logger.warning("trap_budgets_not_saved", path=str(path), error=str(exc))

    def _decide(self, ctx: ProcessorContext, candidate: CrawlURI) -> DecideResult:
        """The scope's decision, logged to scope.log when asked for (trap rejections with
        ``log_trap_rejections``)."""
        if not self.params.log_scope_decisions:
            decision = ctx.scope.decide(candidate)
            if decision is DecideResult.REJECT and candidate.annotations and self._traps:
                self._log_trap(ctx, candidate)
            return decision
        decision, index = ctx.scope.decide_with_rule(candidate)
        rule = type(ctx.scope.rules[index]).__name__ if index >= 0 else "-"
        line = f"{log17(ctx.clock.time())} {index} {rule} {decision} {candidate.uri}"
        trap = _trap_note(candidate) if decision is DecideResult.REJECT else None
        if trap is not None:
            line += _trap_json(trap)
        with self._scope_log_lock:
            if self._scope_log is not None:
                self._scope_log.write(line + "\n")
        return decision

    def _log_trap(self, ctx: ProcessorContext, candidate: CrawlURI) -> None:
        """A scope.log line for a candidate a trap budget rejected (when not logging all)."""
        trap = _trap_note(candidate)
        if trap is None or not self.params.log_trap_rejections:
            return
        index = self._traps[0][0]
        rule = type(self._traps[0][1]).__name__
        line = (
            f"{log17(ctx.clock.time())} {index} {rule} REJECT {candidate.uri}{_trap_json(trap)}\n"
        )
        with self._scope_log_lock:
            log = self._scope_log or self._open_scope_log(ctx)
            log.write(line)

    def report(self) -> list[str]:
        lines = super().report()
        with self._lock:
            lines.append(f"  candidates scheduled (new to the frontier): {self._scheduled}")
            lines.append(f"  candidates out of scope: {self._rejected}")
            lines.append(f"  unusable outlinks: {self._bad}")
            lines.append(f"  prerequisites unschedulable: {self._prereq_failed}")
            lines.append(f"  redirect loops ended: {self._loops}")
        for _, rule in self._traps:
            lines.extend(rule.report())
        return lines

    def inner_process(self, curi: CrawlURI) -> None:
        ctx = self.context
        if curi.prerequisite is not None:
            self._schedule_prerequisite(ctx, curi, curi.prerequisite)
        if not self._follows_outlinks(curi):
            return
        add_seed = self._seed_announcer(ctx, curi)
        tally = _Tally()
        links = self._unseen(ctx, self._distinct_links(ctx, curi, tally))
        as_seeds = add_seed is not None and self._redirects_become_seeds(curi)
        accepted = self._scoped_children(ctx, curi, links, as_seeds, tally)
        if accepted and ctx.digest_index is not None:
            # the page's payload is in the index before its links (no round trip when it is)
            flush_digests(ctx.digest_index, _payload_digest(curi))
        if add_seed is not None:
            for child in accepted:
                if child.is_seed:
                    add_seed(child.uri, curi.uri)
        tally.scheduled = self._schedule_all(ctx, accepted)
        with self._lock:
            self._scheduled += tally.scheduled
            self._rejected += tally.rejected
            self._bad += tally.bad
            self._loops += tally.loops

    def _follows_outlinks(self, curi: CrawlURI) -> bool:
        """Whether ``curi``'s outlinks are candidates: it was fetched and has some, and its
        status is a success or a redirect (any status with ``process_error_outlinks``)."""
        if curi.status <= 0 or not curi.outlinks:
            return False
        return self.params.process_error_outlinks or 200 <= curi.status < 400

    @staticmethod
    def _seed_announcer(
        ctx: ProcessorContext, curi: CrawlURI
    ) -> Callable[[str, str | None], bool] | None:
        """With ``seeds.redirects_new_seeds``: ``ctx.add_seed``, once the scope knows the seeds
        other workers found and ``curi``, if it is a seed found elsewhere (another worker,
        before a restart), is announced here too; None without it."""
        add_seed = ctx.add_seed if ctx.order.seeds.redirects_new_seeds else None
        if add_seed is not None:
            if ctx.catch_up_seeds is not None:
                ctx.catch_up_seeds(curi)  # seeds other workers found (a no-op in one process)
            if curi.is_seed and curi.hop_path:
                add_seed(curi.uri, curi.via)
        return add_seed

    @staticmethod
    def _distinct_links(
        ctx: ProcessorContext, curi: CrawlURI, tally: _Tally
    ) -> list[tuple[str, Link]]:
        """``curi``'s outlinks normalized, each (URI, hop) once; one that cannot be normalized
        goes to uri-errors.log and is counted unusable."""
        seen_raw: set[tuple[str, str]] = set()
        seen: set[tuple[str, str]] = set()
        links: list[tuple[str, Link]] = []
        bad = 0
        for link in curi.outlinks:
            raw_key = (link.uri, link.hop)
            if raw_key in seen_raw:
                continue
            seen_raw.add(raw_key)
            try:
                uri = _normalized(link.uri)
            except UriError as err:
                ctx.uri_error(curi.uri, str(err), link.uri)
                bad += 1
                continue
            key = (uri, link.hop)
            if key in seen:
                continue
            seen.add(key)
            links.append((uri, link))
        tally.bad += bad
        return links

    def _unseen(
        self, ctx: ProcessorContext, links: list[tuple[str, Link]]
    ) -> list[tuple[str, Link]]:
        """With ``skip_seen`` (and no scope.log to write): ``links`` less those the frontier
        surely saw already (``ctx.seen_recently``). A redirect is kept: one back into
        its own chain is force-fetched once."""
        seen_recently = ctx.seen_recently
        if seen_recently is None or not self.params.skip_seen or self.params.log_scope_decisions:
            return links
        known = seen_recently([uri for uri, _ in links])
        return [
            pair
            for pair, old in zip(links, known, strict=True)
            if not old or pair[1].hop == Hop.REFER
        ]

    @staticmethod
    def _redirects_become_seeds(curi: CrawlURI) -> bool:
        """Whether ``curi``'s redirect becomes a seed: ``curi`` is a seed, or reached from one
        by redirects alone, fewer than :data:`MAX_SEED_REDIRECT_HOPS` of them."""
        return (
            curi.is_seed
            and curi.hop_count < MAX_SEED_REDIRECT_HOPS
            and curi.hop_path.count(Hop.REFER) == len(curi.hop_path)
        )

    def _scoped_children(
        self,
        ctx: ProcessorContext,
        curi: CrawlURI,
        links: list[tuple[str, Link]],
        as_seeds: bool,
        tally: _Tally,
    ) -> list[CrawlURI]:
        """The children of ``links`` the scope accepts. A redirect or a near embed gets the
        MEDIUM directive (a redirect back into its chain a second time is dropped: a loop
        ended) and a redirect is a seed when ``as_seeds``; a rule that raises leaves the
        child out (noted on ``curi``, counted unusable)."""
        accepted: list[CrawlURI] = []
        embed_hops = self.params.preference_embed_hops
        rejected = bad = loops = 0
        for uri, link in links:
            child = curi.create_child(uri, link.hop, link.context)
            if link.hop == Hop.REFER:
                if not self._redirects.admit(curi, child):
                    loops += 1
                    continue
                child.directive = SchedulingDirective.MEDIUM
                child.is_seed = as_seeds
            elif link.hop != Hop.LINK and 0 < _trailing_non_link_hops(child.hop_path) <= embed_hops:
                child.directive = SchedulingDirective.MEDIUM
            try:
                decision = self._decide(ctx, child)
            except Exception as exc:  # noqa: BLE001 - a broken rule must not lose the page
                curi.nonfatal_errors.append((exc, traceback.format_exc()))
                bad += 1
                continue
            if decision is DecideResult.ACCEPT:
                accepted.append(child)
            else:
                rejected += 1
        tally.rejected += rejected
        tally.bad += bad
        tally.loops += loops
        return accepted

    @staticmethod
    def _schedule_all(ctx: ProcessorContext, accepted: list[CrawlURI]) -> int:
        """Offer ``accepted`` to the frontier in one call (one by one when the context has no
        ``schedule_many``); how many it queued."""
        if not accepted:
            return 0
        if ctx.schedule_many is not None:
            return sum(ctx.schedule_many(accepted))
        return sum(ctx.schedule(child) for child in accepted)

    def _schedule_prerequisite(
        self, ctx: ProcessorContext, curi: CrawlURI, prereq: CrawlURI
    ) -> None:
        try:
            prereq.uri = normalize(prereq.uri)
            accepted = self._decide(ctx, prereq) is DecideResult.ACCEPT
        except UriError as err:
            ctx.uri_error(curi.uri, str(err), prereq.uri)
            accepted = False
        if accepted:
            ctx.schedule(prereq)
            with self._lock:
                self._scheduled += 1
            return
        curi.status = FetchStatus.PREREQUISITE_UNSCHEDULABLE_FAILURE
        with self._lock:
            self._prereq_failed += 1


@dataclass(slots=True)
class _Tally:
    """What one URI's candidates came to, added to the report's counts once."""

    scheduled: int = 0
    rejected: int = 0
    bad: int = 0
    loops: int = 0


def _trap_note(curi: CrawlURI) -> str | None:
    for note in curi.annotations:
        if note.startswith(TRAP_ANNOTATION):
            return note
    return None


def _trap_json(note: str) -> str:
    status = int(FetchStatus.OUT_OF_SCOPE)
    return " " + json.dumps({"status": status, "annotations": note}, separators=(",", ":"))


def _trailing_non_link_hops(hop_path: str) -> int:
    """How many hops at the end of the path are not L (Heritrix's "trans hops")."""
    count = 0
    for hop in reversed(hop_path):
        if hop == Hop.LINK:
            break
        count += 1
    return count


def _payload_digest(curi: CrawlURI) -> str | None:
    """The digest of ``curi``'s payload as the WARC writer indexed it, or None (none known)."""
    if curi.payload_digest:
        return curi.payload_digest
    rec = curi.recording
    return rec.payload_digest if rec is not None else None
