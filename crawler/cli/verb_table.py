"""The ``crawler`` command's verbs: name → the module that implements it, and its one-line help.

:data:`VERBS` is a literal table so that the parser can list every verb (``crawler --help``)
without importing any of them, and ``crawler VERB ...`` imports only that verb's module. Each
module in :mod:`crawler.cli.commands` named here defines

* ``add_arguments(parser)``: the verb's arguments and options, added to its subparser;
* ``run(args, out, err)``: runs the verb with the parsed arguments and returns its
  :class:`~crawler.exit_code.ExitCode` (or a worker's exit status, for ``run --workers``).

The order of the table is the order of ``crawler --help``. Immutable; thread-safe.
"""

from __future__ import annotations

from typing import Final, NamedTuple


class Verb(NamedTuple):
    """Where a verb is implemented, and what ``crawler --help`` says of it."""

    module: str
    """Dotted path of the module holding ``add_arguments`` and ``run``."""
    help: str
    """The one line shown by ``crawler --help``."""


_C = "crawler.cli.commands."

VERBS: Final[dict[str, Verb]] = {
    "init": Verb(_C + "init", "write a new job (order.yaml, seeds.txt) to edit"),
    "run": Verb(_C + "run", "run a crawl from a YAML crawl order"),
    "worker": Verb(_C + "worker", "join a running Redis-backed crawl from this machine"),
    "resume": Verb(_C + "resume", "continue a crawl after a stop or a crash (even kill -9)"),
    "validate": Verb(_C + "validate", "print the effective order, or every error in it"),
    "show-processor": Verb(_C + "show_processor", "print a processor's parameters"),
    "demo": Verb(_C + "demo", "serve the bundled sample site on 127.0.0.1 and crawl it"),
    "console": Verb(_C + "console", "web console and REST API for the jobs' crawls"),
    "status": Verb(_C + "status", "state, counts, rates and errors of a crawl"),
    "pause": Verb(_C + "pause", "stop fetching; URIs in process finish (state PAUSED)"),
    "unpause": Verb(_C + "unpause", "resume a paused crawl"),
    "terminate": Verb(
        _C + "terminate", "end the crawl cleanly: URIs in process finish, reports are written"
    ),
    "block": Verb(
        _C + "block", "block URIs matching a regex: queued ones end -5001, new ones are refused"
    ),
    "sheets": Verb(
        _C + "sheets", "add, replace or remove sheets (per-site settings) of a running crawl"
    ),
    "report": Verb(_C + "report", "write reports/ now (also while running), print one"),
    "index": Verb(_C + "index", "write CDXJ indexes of a run's WARCs (indexes/*.cdxj)"),
    "wacz": Verb(_C + "wacz", "package a run's WARCs, indexes and pages as a WACZ file"),
    "replay": Verb(
        _C + "replay", "serve a run's WARCs (or a WACZ) through pywb and print the replay prefix"
    ),
    "crawl": Verb(
        _C + "crawl", "crawl URLs with the default order in a new job directory (one command)"
    ),
    "schedule": Verb(_C + "schedule", "run the jobs' schedule: (cron) crawls until interrupted"),
    "profile": Verb(_C + "profile", "make a browser profile (browser.profile) by logging in"),
}
"""Every verb of ``crawler``, in the order ``crawler --help`` lists them."""
