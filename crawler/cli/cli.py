"""The ``crawler`` command's parser and dispatcher.

:func:`main` lists every verb of :data:`~crawler.cli.verb_table.VERBS` as a subcommand (their
one-line help is in the table), imports the module of the verb given — only that one — to add
its arguments, parses the command line and calls the verb's ``run``. The verbs themselves live in
:mod:`crawler.cli.commands`, one module each; this module imports none of them by name, and none
imports this one.

``crawler --help`` and the operator's commands so start in a fraction of the time the crawl's
imports (pydantic, the processors, httpx) take, and ``crawler run`` imports the web console's
stack only in the console's own process. Exit codes: :class:`~crawler.exit_code.ExitCode`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from crawler import __version__
from crawler.cli.verb_table import VERBS

RunVerb = Callable[[argparse.Namespace, TextIO, TextIO], int]
"""A verb module's ``run``: (parsed arguments, stdout, stderr) → exit code."""


def build_parser(argv: Sequence[str]) -> tuple[argparse.ArgumentParser, RunVerb | None]:
    """The parser for ``crawler ARGV``, with the arguments of the verb ``argv`` names (if it
    names one), and that verb's ``run`` (None if ``argv`` names no verb: the parser then prints
    the help or the usage error)."""
    parser = argparse.ArgumentParser(
        prog="crawler",
        description="An archival web crawler on Heritrix's architecture.",
    )
    parser.add_argument("--version", action="version", version=f"crawler {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = argv[0] if argv else None
    run: RunVerb | None = None
    for name, verb in VERBS.items():
        verb_parser = sub.add_parser(name, help=verb.help)
        if name == chosen:
            module = importlib.import_module(verb.module)
            module.add_arguments(verb_parser)
            run = module.run
    return parser, run


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``crawler`` command: run the verb ``argv`` names; its exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser, run = build_parser(args_list)
    args = parser.parse_args(args_list)
    assert run is not None  # argparse exits unless argv[0] is a verb of the table
    return run(args, sys.stdout, sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
