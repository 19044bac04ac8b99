"""Introspection of the work-queue frontier: snapshot counts, per-queue detail, summary report.

:func:`frontier_summary_report` renders ``reports/frontier-summary-report.txt`` in Heritrix's
layout: a header, the STATS block, the QUEUES block (counts per state, inactive per
precedence), the busiest servers (our server cap), the servers the adaptive pace slows, the cap of
the lateness guard on the active queues, the longest queues, then per-queue detail by state, and the
URIs waiting for a retry after a failed try with their last error. The
``snapshot_of``/``queue_details`` helpers run under the frontier lock (the frontier's methods take
it); the report function only calls the frontier's public methods, through the abilities the
crawl found it has (:class:`~crawler.frontier.frontier_abilities.FrontierAbilities`).
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from crawler.frontier.frontier import FrontierSnapshot
from crawler.frontier.workqueue import (
    EXHAUSTED,
    IN_PROCESS,
    INACTIVE,
    READY,
    RETIRED,
    SNOOZED,
    STATES,
)

if TYPE_CHECKING:
    from crawler.frontier.frontier_abilities import FrontierAbilities
    from crawler.frontier.retry.retry_watch import RetriesWaiting
    from crawler.frontier.rotation.scheduler import QueueScheduler
    from crawler.order.schema import FrontierConfig

LONGEST_SHOWN = 20
RETRIES_SHOWN = 100
"""URIs waiting for a retry listed (the soonest due)."""
PER_STATE_SHOWN = 2000
LONGEST_IN_SNAPSHOT = 10
"""Longest queues a snapshot lists (status.json, reports)."""


@dataclass(frozen=True)
class QueueDetail:
    """One queue as reports show it. ``wake_in_s`` is inf while parked on a busy server."""

    key: str
    state: str
    size: int
    precedence: int
    wake_in_s: float
    session_spent: int
    session_budget: int
    total_spent: int
    total_budget: int
    succeeded: int
    failed: int
    disregarded: int
    total_enqueues: int
    last_cost: int
    last_fetch_s: float
    last_queued: str
    last_peeked: str
    parked_on: str | None


def snapshot_of(
    sched: QueueScheduler, queued: int, totals: dict[str, int], discovered: int
) -> FrontierSnapshot:
    """Counts of the frontier whose scheduler is ``sched`` (call under the frontier lock)."""
    counts = dict(sched.counts)
    # The longest of the queues in RAM (those in rotation and those touched lately): the others
    # are records in the store, not read for a snapshot. Kept as the queues change: this costs
    # O(queues that grew since the last snapshot), not O(queues in RAM) (QueueDepths).
    longest = [(q.key, q.size) for q in sched.queues.depths.longest(LONGEST_IN_SNAPSHOT)]
    live = sum(n for state, n in counts.items() if state not in (EXHAUSTED, RETIRED))
    busy = counts[IN_PROCESS] + counts[SNOOZED]
    ineligible = sched.ineligible()
    eligible = busy + counts[READY] + counts[INACTIVE] - ineligible
    congestion = eligible / busy if busy else (math.inf if eligible else math.nan)
    return FrontierSnapshot(
        discovered=discovered,
        queued=queued,
        in_process=counts[IN_PROCESS],
        succeeded=totals["succeeded"],
        failed=totals["failed"],
        disregarded=totals["disregarded"],
        queues=counts,
        total_queues=sched.total_queues(),
        max_depth=longest[0][1] if longest else -1,
        avg_depth=queued / live if live else 0.0,
        congestion=congestion,
        longest=tuple(longest),
        inactive_by_precedence={p: n for p, n in sorted(sched.inactive_counts.items()) if n},
        ineligible=ineligible,
    )


def queue_details(
    sched: QueueScheduler, config: FrontierConfig, now_s: float, limit: int
) -> list[QueueDetail]:
    """The ``limit`` longest queues not exhausted among those in RAM (in rotation or touched
    lately), longest first (call under the lock)."""
    live = [q for q in sched.queues.values() if q.state != EXHAUSTED]
    return [
        QueueDetail(
            key=q.key,
            state=q.state,
            size=q.size,
            precedence=q.precedence,
            wake_in_s=sched.wake_in_s(q, now_s),
            session_spent=q.session_spent,
            session_budget=config.balance_replenish_amount,
            total_spent=q.total_spent,
            total_budget=config.queue_total_budget,
            succeeded=q.succeeded,
            failed=q.failed,
            disregarded=q.disregarded,
            total_enqueues=q.total_enqueues,
            last_cost=q.last_cost,
            last_fetch_s=q.last_dequeue_s,
            last_queued=sched.uris.last(q.key)[0],
            last_peeked=sched.uris.last(q.key)[1],
            parked_on=q.parked_on,
        )
        for q in heapq.nlargest(limit, live, key=lambda q: (q.size, q.key))
    ]


def _stamp12(now_s: float) -> str:
    return time.strftime("%Y%m%d%H%M", time.gmtime(now_s))


def _duration(seconds: float) -> str:
    if math.isinf(seconds):
        return "when its server frees a slot"
    ms = int(seconds * 1000)
    parts = [(ms // 3_600_000, "h"), (ms // 60_000 % 60, "m"), (ms // 1000 % 60, "s")]
    text = "".join(f"{n}{unit}" for n, unit in parts if n)
    return text + f"{ms % 1000}ms" if ms % 1000 or not text else text


def _queue_lines(d: QueueDetail, now_s: float) -> list[str]:
    budget = "unlimited" if d.total_budget < 0 else str(d.total_budget)
    lines = [f"Queue {d.key} (p{d.precedence})", f"  {d.size} items  [{d.state}]"]
    if d.state == SNOOZED:
        lines.append(f"   wakes in: {_duration(d.wake_in_s)}")
    if d.parked_on:
        lines.append(f"   parked on server: {d.parked_on}")
    lines += [
        f"   last enqueued: {d.last_queued or '-'}",
        f"     last peeked: {d.last_peeked or '-'}",
        f"  total expended: {d.total_spent} (total budget: {budget})",
        f"  active balance: {d.session_budget - d.session_spent}",
        f"       last cost: {d.last_cost}",
        "      last fetch: "
        + (f"{_duration(max(0.0, now_s - d.last_fetch_s))} ago" if d.last_fetch_s else "-"),
        f"        totals: {d.total_enqueues} enqueued, {d.succeeded} succeeded, "
        f"{d.failed} failed, {d.disregarded} disregarded",
    ]
    return lines


def _retry_lines(waiting: RetriesWaiting, now_s: float) -> list[str]:
    """The URIs waiting for a retry after a failed try: when, last status, attempts, error."""
    out = [
        "",
        " -----===== WAITING FOR A RETRY (due in, status, attempts, URI, last error) =====-----",
    ]
    out.append(f" URIs waiting: {waiting.count}")
    if waiting.count:
        out.append(f" last due in:  {_duration(max(0.0, waiting.last_due_s - now_s))}")
    out += [
        f" {_duration(max(0.0, n.due_s - now_s))} {n.status} {n.attempts}t {n.uri} {n.error}"
        for n in waiting.soonest
    ]
    return out


def frontier_summary_report(abilities: FrontierAbilities, job_name: str, now_s: float) -> str:
    """The text of ``reports/frontier-summary-report.txt`` (``now_s``: epoch seconds) for the
    frontier of ``abilities``; a block needing an ability the frontier lacks is left out."""
    snap = abilities.frontier.snapshot()
    queues = abilities.queues
    details = queues.queue_details(PER_STATE_SHOWN * len(STATES)) if queues is not None else []
    q = snap.queues
    finished = snap.succeeded + snap.failed + snap.disregarded
    active = q.get(IN_PROCESS, 0) + q.get(READY, 0) + q.get(SNOOZED, 0)
    by_prec = ", ".join(f"p{p}: {n}" for p, n in snap.inactive_by_precedence.items())
    out = [
        f"Frontier report - {_stamp12(now_s)}",
        f" Job being crawled: {job_name}",
        "",
        " -----===== STATS =====-----",
        f" Discovered:    {snap.discovered}",
        f" Queued:        {snap.queued}",
        f" Finished:      {finished}",
        f"  Successfully: {snap.succeeded}",
        f"  Failed:       {snap.failed}",
        f"  Disregarded:  {snap.disregarded}",
        "",
        " -----===== QUEUES =====-----",
        f" Already included size:     {snap.discovered}",
        f"               pending:     {snap.queued}",
        "",
        f" All class queues map size: {snap.total_queues}",
        f"             Active queues: {active}",
        f"                    In-process: {q.get(IN_PROCESS, 0)}",
        f"                         Ready: {q.get(READY, 0)}",
        f"                       Snoozed: {q.get(SNOOZED, 0)}",
        f"           Inactive queues: {q.get(INACTIVE, 0)}" + (f" ({by_prec})" if by_prec else ""),
        f"         Ineligible queues: {snap.ineligible}",
        f"            Retired queues: {q.get(RETIRED, 0)}",
        f"          Exhausted queues: {q.get(EXHAUSTED, 0)}",
    ]
    if abilities.server_cap is not None:
        busiest = abilities.server_cap.busy_servers(20)
        out += ["", " -----===== BUSIEST SERVERS (fetches, parked queues) =====-----"]
        out += [f" {server} {active} {parked}" for server, active, parked in busiest]
    if queues is not None:
        out += ["", " -----===== PACED SERVERS (adaptive gap between fetch starts) =====-----"]
        out += [f" {server} {gap_s * 1000:.0f}ms" for server, gap_s in queues.paced_servers(20)]
    if abilities.lateness is not None:
        cap, rotated, saturated = abilities.lateness.lateness_guard()
        out += [
            "",
            " -----===== ACTIVE QUEUES CAP (lateness guard) =====-----",
            f" Cap:               {'none' if math.isinf(cap) else int(cap)}",
            f" Rotated out late:  {rotated}",
            f" Saturated now:     {'yes' if saturated else 'no'}",
        ]
    if queues is not None:
        out += _retry_lines(queues.retries_waiting(RETRIES_SHOWN), now_s)
    out += ["", f" -----===== {LONGEST_SHOWN} LONGEST QUEUES =====-----"]
    for d in details[:LONGEST_SHOWN]:
        out.append(f" {d.key} {d.size} ({d.state})")
    for state in (IN_PROCESS, READY, SNOOZED, INACTIVE, RETIRED):
        chosen = [d for d in details if d.state == state][:PER_STATE_SHOWN]
        out += ["", f" -----===== {state.upper().replace('_', '-')} QUEUES =====-----"]
        for d in chosen:
            out += _queue_lines(d, now_s)
    return "\n".join(out) + "\n"
