"""ExitCode: what a ``crawler`` command tells the shell when it returns.

Every command, and every function that computes a command's result (a crawl's
:meth:`~crawler.control.controller.CrawlController.run`, ``crawler validate``'s
:func:`~crawler.order.preflight.validate_main`, the operator's commands), returns one of these
rather than a bare number, so the meaning of each code is written once. The values are the
process's exit status (an ``IntEnum`` is an ``int``: ``sys.exit(ExitCode.USAGE)`` exits 2).

This module imports nothing of the crawler: any layer may use it. Immutable, thread-safe.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """The exit status of a ``crawler`` command."""

    OK = 0
    """The command succeeded; for a crawl, it finished (also when ended by the operator)."""
    FAILED = 1
    """The command could not do its work: a crawl error, a crawl that did not answer or is not
    running, Redis unreachable, a damaged WARC, an address that cannot be bound."""
    USAGE = 2
    """Bad usage or an invalid order: nothing was done, and the message says what to fix."""
