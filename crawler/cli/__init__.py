"""The ``crawler`` command line.

:mod:`crawler.cli.cli` parses the command and runs its verb; :mod:`crawler.cli.verb_table`
names every verb's module and help; :mod:`crawler.cli.commands` holds one module per verb (its
arguments and its ``run``). Beside them, what several verbs share: :mod:`crawler.cli.crawl_runner`
(running a crawl in this process: ``run``, ``resume``, ``demo``, ``crawl``),
:mod:`crawler.cli.operations` (the operator's commands on a single-process run directory),
:mod:`crawler.cli.control_verbs` (``pause``, ``unpause``, ``terminate``),
:mod:`crawler.cli.arguments` and :mod:`crawler.cli.run_dirs`; :mod:`crawler.cli.display` is how
a crawl's status looks to a person (the live terminal display, plain progress lines, the text of
``crawler status``). Exit codes are :class:`crawler.exit_code.ExitCode`.

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
