"""CronSchedule: when a job's ``schedule:`` (a cron expression) fires, in UTC.

The one module that uses croniter. Five fields are standard cron (minute hour day-of-month month
day-of-week); six put seconds first (``*/30 * * * * *``: every 30 s), as Quartz and Spring do.
``@hourly``, ``@daily``, ``@weekly``, ``@monthly``, ``@yearly`` are accepted; ``H`` in a field is
a value hashed from the job's name (``H 3 * * *``: some minute past 03:00, the same every day, not
the same for every job), so many jobs do not all start at once. Times are seconds since the epoch
and the expression is read in UTC.

A leaf module (imports nothing from ``crawler``): the order schema validates ``schedule:`` with
:func:`cron_problem`, the scheduler computes fire times with :class:`CronSchedule`. Instances are
immutable and thread-safe (each call builds its own croniter iterator).
"""

from __future__ import annotations

from datetime import UTC, datetime

from croniter import CroniterBadDateError, CroniterError, croniter

from crawler.crawler_error import CrawlerError

EXAMPLE = "'0 3 * * *' (03:00 UTC every day) or '*/30 * * * * *' (every 30 seconds)"
_FIELDS = "5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first)"


class CronError(CrawlerError, ValueError):
    """A cron expression that cannot be used; the message says why and gives an example."""


class CronSchedule:
    """The fire times of one cron expression; ``hash_key`` (the job's name) seeds ``H`` fields."""

    __slots__ = ("_hash_id", "_seconds_first", "expression")

    def __init__(self, expression: str, hash_key: str = "") -> None:
        text = " ".join(str(expression).split())
        fields = text.split(" ") if text else []
        if not text.startswith("@") and len(fields) not in (5, 6):
            raise CronError(
                f"{expression!r} has {len(fields)} fields; a cron expression has "
                f"{_FIELDS}, e.g. {EXAMPLE}"
            )
        self.expression = text
        self._seconds_first = len(fields) == 6
        uses_hash = any("H" in field for field in fields)
        self._hash_id: bytes | None = (hash_key or "job").encode("utf-8") if uses_hash else None
        try:
            self.next_after(0.0)
        except CronError:
            raise
        except (CroniterError, ValueError, TypeError, KeyError) as exc:
            raise CronError(
                f"{expression!r} is not a valid cron expression ({exc}); use "
                f"{_FIELDS}, e.g. {EXAMPLE}"
            ) from None

    def _iter(self, start_s: float) -> croniter:
        return croniter(
            self.expression,
            datetime.fromtimestamp(start_s, UTC),
            hash_id=self._hash_id,
            second_at_beginning=self._seconds_first,
        )

    def next_after(self, after_s: float) -> float:
        """The first fire time strictly after ``after_s``."""
        try:
            return float(self._iter(after_s).get_next(float))
        except CroniterBadDateError:  # e.g. 0 0 31 2 *: February has no 31st
            raise CronError(f"{self.expression!r} never fires; e.g. {EXAMPLE}") from None

    def latest_at_or_before(self, at_s: float) -> float:
        """The last fire time at or before ``at_s`` (a missed run's time, for catch-up)."""
        nxt = self.next_after(at_s - 1e-3)
        if nxt <= at_s:
            return nxt
        return float(self._iter(at_s).get_prev(float))

    def __repr__(self) -> str:
        return f"CronSchedule({self.expression!r})"


def cron_problem(expression: str) -> str | None:
    """Why ``expression`` cannot be a schedule, or None if it can."""
    try:
        CronSchedule(expression)
    except CronError as exc:
        return str(exc)
    return None
