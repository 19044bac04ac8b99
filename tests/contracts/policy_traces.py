"""Recorded traces of frontier decisions, for the policy parity tests.

A trace is an order's frontier section (as overrides) and a list of steps that every store's
frontier is driven through (:func:`run_trace`); each step that observes a decision says what
the decision must be. The steps:

* ``("schedule", uri, precedence)`` — queue a URI (``precedence``: its URI precedence, kept
  with ``uri_precedence_policy: preset``);
* ``("take", uri)`` — ``next(0)`` must hand out ``uri`` (None: nothing may be handed out);
* ``("finish", uri, status, backoff_ms, (returned, fetch_attempts))`` — finish ``uri`` with
  ``status`` (and a Retry-After back-off); ``finished()`` must return ``returned`` (False: a
  retry) with ``fetch_attempts`` counted;
* ``("wait", seconds)`` — let time pass (a manual clock's, or the real one's);
* ``("rotate", n)`` — the lateness guard starts a trim of ``n`` queues;
* ``("totals", succeeded, failed, disregarded, queued, retired)`` — the frontier's counts;
* ``("guard", rotated, min_late_s)`` — the guard rotated that many queues and its mean
  lateness is at least ``min_late_s``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from crawler.frontier.politeness.politeness import BACKOFF_MS_KEY

Step = tuple[Any, ...]

ZERO_POLITENESS = {"delay_factor": 0, "min_delay_ms": 0, "max_delay_ms": 0}
POLITE_200MS = {"delay_factor": 0, "min_delay_ms": 200, "max_delay_ms": 200}


@dataclass(frozen=True)
class Trace:
    """One recorded trace: the frontier section's overrides and the steps."""

    name: str
    steps: list[Step]
    config: dict[str, Any] = field(default_factory=dict)


TRACES = [
    Trace(
        "finish_outcomes",
        [
            ("schedule", "http://a.test/ok", 1),
            ("schedule", "http://a.test/gone", 1),
            ("schedule", "http://a.test/slow", 1),
            ("schedule", "http://a.test/flaky", 1),
            ("schedule", "http://b.test/out", 1),
            ("take", "http://a.test/ok"),
            ("finish", "http://a.test/ok", 200, 0, (True, 1)),
            ("take", "http://a.test/gone"),
            ("finish", "http://a.test/gone", 404, 0, (True, 1)),  # an answer: a success
            ("take", "http://a.test/slow"),
            ("finish", "http://a.test/slow", -4, 0, (True, 1)),  # timeout: failed, not retried
            ("take", "http://a.test/flaky"),
            ("finish", "http://a.test/flaky", -2, 0, (False, 1)),  # connect failed: retried
            ("take", "http://a.test/flaky"),
            ("finish", "http://a.test/flaky", 200, 0, (True, 2)),
            ("take", "http://b.test/out"),
            ("finish", "http://b.test/out", -5000, 0, (True, 1)),  # out of scope: disregarded
            ("take", None),
            ("totals", 3, 1, 1, 0, 0),
        ],
        {"retries": {"max_retries": 3, "retry_delay_s": 0}},
    ),
    Trace(
        "http_retry_after",
        [
            ("schedule", "http://a.test/busy", 1),
            ("schedule", "http://b.test/x", 1),
            ("take", "http://a.test/busy"),
            # 429 with Retry-After 0.4 s: retried; a.test waits, b.test is served meanwhile
            ("finish", "http://a.test/busy", 429, 400, (False, 1)),
            ("take", "http://b.test/x"),
            ("finish", "http://b.test/x", 200, 0, (True, 1)),
            ("take", None),
            ("wait", 0.5),
            ("take", "http://a.test/busy"),
            ("finish", "http://a.test/busy", 429, 0, (False, 2)),
            ("take", "http://a.test/busy"),
            ("finish", "http://a.test/busy", 429, 0, (True, 3)),  # http_max_tries: final
            ("totals", 2, 0, 0, 0, 0),
        ],
        # without the adaptive pace, whose hold after a 429 (1 s) would outlast the Retry-After
        {"retries": {"http_max_tries": 3, "http_backoff_s": 0}, "pace": {"enabled": False}},
    ),
    Trace(
        "budgets",
        [
            *[("schedule", f"http://a.test/{i}", 1) for i in range(4)],
            ("schedule", "http://b.test/0", 1),
            ("take", "http://a.test/0"),
            ("finish", "http://a.test/0", -4, 0, (True, 1)),  # failed: costs 1 + penalty 1
            ("take", "http://a.test/1"),
            ("finish", "http://a.test/1", 200, 0, (True, 1)),  # spent 3: retired
            ("take", "http://b.test/0"),
            ("finish", "http://b.test/0", 200, 0, (True, 1)),
            ("take", None),
            ("totals", 2, 1, 0, 0, 1),
        ],
        {"queue_total_budget": 3, "error_penalty_amount": 1},
    ),
    Trace(
        "precedence_order",
        [
            ("schedule", "http://c.test/0", 5),
            ("schedule", "http://a.test/0", 1),
            ("schedule", "http://b.test/0", 3),
            ("schedule", "http://c.test/1", 5),
            ("schedule", "http://a.test/1", 1),
            ("schedule", "http://b.test/1", 3),
            # activated most urgent first
            ("take", "http://a.test/0"),
            ("take", "http://b.test/0"),
            ("take", "http://c.test/0"),
            ("finish", "http://c.test/0", 200, 0, (True, 1)),
            ("finish", "http://b.test/0", 200, 0, (True, 1)),
            ("finish", "http://a.test/0", 200, 0, (True, 1)),
            # all three due, in the reverse order: lower precedence first
            ("take", "http://a.test/1"),
            ("take", "http://b.test/1"),
            ("take", "http://c.test/1"),
        ],
        {"queue_precedence_policy": "highest_uri", "uri_precedence_policy": "preset"},
    ),
    Trace(
        "lateness_measured",
        [
            ("schedule", "http://a.test/0", 1),
            ("schedule", "http://a.test/1", 1),
            ("take", "http://a.test/0"),
            ("finish", "http://a.test/0", 200, 0, (True, 1)),
            ("wait", 0.5),  # a.test was due after 0.2 s: its next fetch starts 0.3 s late
            ("take", "http://a.test/1"),
            ("finish", "http://a.test/1", 200, 0, (True, 1)),
            ("guard", 0, 0.01),
        ],
        {"politeness": POLITE_200MS, "lateness_tolerance": 0.5},
    ),
    Trace(
        "lateness_rotation",
        [
            ("schedule", "http://a.test/0", 1),
            ("schedule", "http://a.test/1", 1),
            ("schedule", "http://b.test/0", 1),
            ("take", "http://a.test/0"),
            ("finish", "http://a.test/0", 200, 0, (True, 1)),
            ("wait", 0.3),
            ("rotate", 1),  # a trim: the due queue goes back behind the inactive ones
            ("take", "http://b.test/0"),
            ("finish", "http://b.test/0", 200, 0, (True, 1)),
            ("guard", 1, 0.0),
            ("wait", 0.3),
            ("take", "http://a.test/1"),
        ],
        {"politeness": POLITE_200MS},
    ),
]


def curi_data(backoff_ms: int) -> dict[str, Any]:
    """The ``curi.data`` a fetch leaves for the frontier: a Retry-After back-off, if any."""
    return {BACKOFF_MS_KEY: backoff_ms} if backoff_ms else {}
