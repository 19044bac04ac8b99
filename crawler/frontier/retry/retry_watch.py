"""RetryWatch: the URIs waiting to be tried again, for ``crawler status`` and the frontier report.

A URI sent back to its queue after a failed fetch attempt (-1/-2/-3, a malformed response, a
retried HTTP status) is noted with its last error and when it is due (wall clock); it is
forgotten once due, or when its final disposition is recorded. Deferrals for a prerequisite are
not noted: they are no failures. A frontier notes the retries it decides itself (with Redis, each
worker those of its own fetches), so an operator sees, for each failed try, what went wrong and
when the next one comes — and the status ETA is not shorter than the last retry still to come.
Lost on a restart (a resumed crawl notes its retries afresh). Thread-safe (its own lock).
"""

from __future__ import annotations

import heapq
import threading
from dataclasses import dataclass

from crawler.curi import CrawlURI
from crawler.frontier.retry.retry_policy import LAST_PROTOCOL_ERROR_KEY, protocol_error


@dataclass(frozen=True, slots=True)
class RetriesWaiting:
    """What :meth:`RetryWatch.waiting` found: how many URIs wait for a retry, when (epoch
    seconds; 0 if none) the last of them is due, and the few due soonest."""

    count: int
    last_due_s: float
    soonest: list[RetryNote]
    total: int = 0
    """Retries decided since the process started (every failed try sent back, counted once)."""


@dataclass(frozen=True, slots=True)
class RetryNote:
    """One URI waiting for its next try: its last status and error, its attempts so far and
    when (epoch seconds) it is due."""

    uri: str
    status: int
    error: str
    attempts: int
    due_s: float


def last_error(curi: CrawlURI) -> str:
    """A short description of what ended ``curi``'s last attempt: the malformed-response text,
    else its ``err=`` annotations, else ``status <n>``."""
    error = protocol_error(curi)
    if error is None and curi.data:
        # After RetryPolicy.take: kept only when this attempt ended in a malformed response.
        error = curi.data.get(LAST_PROTOCOL_ERROR_KEY)
    if error:
        return str(error)
    errs = [note[4:] for note in curi.annotations if note.startswith("err=")]
    if errs:
        return ",".join(errs)
    return f"status {curi.status}"


class RetryWatch:
    """The URIs waiting for a retry (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._notes: dict[str, RetryNote] = {}
        self._total = 0

    def noted(self, curi: CrawlURI, delay_s: float, now_s: float) -> None:
        """``curi`` failed its attempt number ``curi.fetch_attempts`` and is tried again in
        ``delay_s``. Call before ``reset_for_retry`` (which clears its annotations)."""
        note = RetryNote(
            curi.uri, curi.status, last_error(curi), curi.fetch_attempts, now_s + delay_s
        )
        with self._lock:
            self._notes[curi.uri] = note
            self._total += 1

    def done(self, uri: str) -> None:
        """``uri`` reached its final disposition: no longer waiting."""
        if self._notes:
            with self._lock:
                self._notes.pop(uri, None)

    def waiting(self, now_s: float, limit: int = 10) -> RetriesWaiting:
        """The URIs whose retry is due after ``now_s`` (the ``limit`` due soonest listed);
        forgets those already due."""
        with self._lock:
            due = [uri for uri, note in self._notes.items() if note.due_s <= now_s]
            for uri in due:
                del self._notes[uri]
            notes = list(self._notes.values())
            total = self._total
        last = max((note.due_s for note in notes), default=0.0)
        return RetriesWaiting(
            len(notes),
            last,
            heapq.nsmallest(limit, notes, key=lambda n: (n.due_s, n.uri)),
            total,
        )
