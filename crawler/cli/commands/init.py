"""``crawler init JOB_DIR``: write a new job a user edits - ``order.yaml`` (only what differs from
the default order, which every order extends), ``seeds.txt`` and a ``README.md`` line.

The job's name is the directory's (characters outside ``[A-Za-z0-9._-]`` become ``-``). Seeds come
from ``--seed`` (repeatable), the contact URL from ``--contact`` or ``$CRAWLER_CONTACT_URL``;
without one, ``operator.contact_url`` is left empty and ``crawler run`` says what to set. An
existing ``order.yaml`` is never overwritten (exit 2). Exit codes:
:class:`~crawler.exit_code.ExitCode`.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import TextIO

from crawler.exit_code import ExitCode

CONTACT_ENV = "CRAWLER_CONTACT_URL"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``crawler init``'s arguments."""
    parser.add_argument("job_dir", type=Path, help="directory of the new job (created)")
    parser.add_argument(
        "--seed", dest="seeds", action="append", default=[], metavar="URL", help="a seed URL"
    )
    parser.add_argument(
        "--contact",
        metavar="URL",
        help=f"page saying who crawls and why (default ${CONTACT_ENV})",
    )


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Write the job; its exit code."""
    job: Path = args.job_dir
    order = job / "order.yaml"
    if order.exists():
        print(f"{order} exists: crawler init never overwrites a job", file=err)
        return ExitCode.USAGE
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", job.resolve().name).strip("-") or "job"
    contact = args.contact or os.environ.get(CONTACT_ENV, "")
    try:
        job.mkdir(parents=True, exist_ok=True)
        order.write_text(order_text(name, contact), encoding="utf-8")
    except OSError as exc:
        print(f"{job}: cannot make a job there ({exc.strerror or exc})", file=err)
        return ExitCode.USAGE
    seeds = job / "seeds.txt"
    if not seeds.exists():
        lines = "".join(f"{url}\n" for url in args.seeds)
        seeds.write_text(SEEDS_HEAD + (lines or "# https://example.org/\n"), encoding="utf-8")
    readme = job / "README.md"
    if not readme.exists():
        readme.write_text(
            f"# {name}\n\nA crawl job: edit order.yaml and seeds.txt, then "
            f"`crawler run {order}` (check it first with `crawler validate {order}`).\n",
            encoding="utf-8",
        )
    print(f"wrote {order}, {seeds} and {readme}", file=out)
    if not contact:
        print(f"set operator.contact_url in {order} (or ${CONTACT_ENV}) before crawling", file=out)
    if not args.seeds:
        print(f"add seeds to {seeds}, one URL a line", file=out)
    print(f"then: crawler validate {order} && crawler run {order}", file=out)
    return ExitCode.OK


SEEDS_HEAD = "# Seeds: one URL a line (# starts a comment). Each seed's host is in scope.\n"


def order_text(name: str, contact: str) -> str:
    """The new job's order.yaml."""
    return f"""\
# The crawl order of job {name}. Every order extends the default order (`crawler validate`
# prints the whole effective order); set here only what differs. Reference: "The crawl order"
# (docs/order.md) in the crawler's documentation, and the commented default order it ships.
name: {name}

operator:
  # Required: a page saying who crawls and why, sent in every request's User-Agent.
  contact_url: "{contact}"

seeds:
  file: seeds.txt                  # relative to this file

# toe_threads: 25                  # fetches at once
# limits:
#   max_documents: 0               # 0: no limit
#   max_time_s: 0
# frontier:
#   politeness:
#     delay_factor: 5              # wait 5x the last fetch's duration between fetches to a host
#     min_delay_ms: 3000
# archive:
#   wacz: false                    # true: package the run as a WACZ at its end
"""
