"""The ``crawler`` command line.

:mod:`crawler.cli.cli` parses the command and runs its subcommand (run, resume, validate, demo,
show-processor, ...); :mod:`crawler.cli.crawl_command` is ``crawler crawl URL...``;
:mod:`crawler.cli.operations` holds the operator's commands on a run directory (status, pause,
unpause, terminate, block, report); :mod:`crawler.cli.display` is how a crawl's status looks to
a person (the live terminal display, plain progress lines, the text of ``crawler status``).

``main`` is re-exported, imported on first use, so that ``crawler.cli:main`` (the ``crawler``
console script) and ``from crawler.cli import main`` keep working, and importing one module of
this package (:mod:`crawler.cli.operations`, say) does not import the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawler.lazy_names import lazy_names

if TYPE_CHECKING:
    from crawler.cli.cli import main

__all__ = ["main"]

_HOMES = {"main": "crawler.cli.cli"}
"""Public name → the module defining it."""

if not TYPE_CHECKING:
    # Hidden from mypy: a visible module __getattr__ would type every misspelt name as Any.
    __getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
