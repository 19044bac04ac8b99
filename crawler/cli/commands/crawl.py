"""``crawler crawl URL [URL...]``: one command from URLs to an archive, in a new job directory.

:func:`crawl` checks the URLs (http or https with a host; a bare ``host/path`` gets
``http://``, as in seed lists) and the operator's contact URL (``--contact``, else the
``CRAWLER_CONTACT_URL`` environment variable), then writes ``<jobs dir>/<first host>-<UTC
time>/order.yaml`` — the default order (no ``extends:``), the seeds, the contact, a WACZ path
when asked — so the job can be run again (``crawler run``) or resumed (``crawler resume``),
and runs it as ``crawler run`` does (:func:`crawler.cli.crawl_runner.run_order`; scope: under
the seeds' SURT prefixes, the default order's politeness). ``--set`` overrides apply to this
run and are written into the order's header comment with the command that repeats them. At the
end it prints where the WARCs, the CDXJ indexes and the WACZ are, and the replay command.

Bad input is refused before anything is written: a bad URL or a missing contact is exit 2 with
the fix; an order made invalid by ``--set`` leaves no job directory behind. Exit codes:
:class:`~crawler.exit_code.ExitCode`, as ``crawler run``'s.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO
from urllib.parse import urlsplit

from crawler.cli.arguments import add_metrics_port, add_no_display, add_sets, metrics_sets
from crawler.crawler_error import CrawlerError
from crawler.exit_code import ExitCode

CONTACT_ENV = "CRAWLER_CONTACT_URL"
"""Environment variable holding the contact URL when ``--contact`` is not given."""
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9.-]+")


class CrawlArgsError(CrawlerError, ValueError):
    """A URL or the contact cannot be used; the message says why and how to fix it."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``crawler crawl``'s arguments."""
    parser.add_argument(
        "urls", nargs="+", metavar="URL", help="seeds: what is under them is crawled"
    )
    parser.add_argument(
        "--contact",
        metavar="URL",
        help="page saying who runs the crawl (User-Agent); default: $CRAWLER_CONTACT_URL",
    )
    add_sets(parser)
    parser.add_argument("--wacz", type=Path, metavar="FILE", help="also package the crawl as FILE")
    parser.add_argument("--jobs-dir", type=Path, default=Path("jobs"), metavar="DIR")
    add_no_display(parser)
    add_metrics_port(parser)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Crawl the URLs in a new job directory."""
    sets = [*args.sets, *metrics_sets(args.metrics_port)]
    return crawl(args.urls, args.contact, sets, args.wacz, args.jobs_dir, out, err, args.no_display)


def seed_url(text: str) -> str:
    """``text`` as an http(s) seed URL; :class:`CrawlArgsError` saying what is wrong. The URL
    must normalize as a seed does (:func:`crawler.urls.normalize`), so a crawl never starts
    with a seed it would skip."""
    from crawler.urls import UriError, normalize

    raw = text.strip()
    url = raw if _SCHEME.match(raw) else "http://" + raw
    problem = None
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError for a port that is not a number in range
    except ValueError as exc:
        problem = str(exc)
    else:
        if parts.scheme.lower() not in ("http", "https"):
            problem = f"the scheme {parts.scheme}: is not crawled from the command line"
        elif not parts.hostname:
            problem = "it names no host"
        elif any(ch.isspace() for ch in raw) or not raw:
            problem = "it contains white space"
        else:
            try:
                normalize(url)
            except UriError as exc:
                problem = str(exc)
    if problem is not None:
        raise CrawlArgsError(
            f"{text!r} is not a URL to crawl: {problem} (give http(s)://host/path, e.g. "
            "https://example.org/)"
        )
    return url if parts.path else url + "/"


def contact_url(given: str | None) -> str:
    """The operator's contact URL: ``given``, else ``$CRAWLER_CONTACT_URL``."""
    from crawler.urls import is_http_url

    url = given or os.environ.get(CONTACT_ENV, "")
    if not url:
        raise CrawlArgsError(
            "a contact URL is needed, a page saying who runs this crawl and how to reach "
            "them (sent in every request's User-Agent): give --contact https://example.org/about-"
            f"my-crawler, or set {CONTACT_ENV}"
        )
    if not is_http_url(url):
        raise CrawlArgsError(f"--contact {url!r} is not an http(s) URL")
    return url


def new_job_dir(jobs_dir: Path, first_url: str, now_s: float | None = None) -> Path:
    """Create ``<jobs_dir>/<first host>[_port]-<UTC yyyymmddThhmmssZ>[-N]/``."""
    parts = urlsplit(first_url)
    host = (parts.hostname or "crawl") + (f"_{parts.port}" if parts.port else "")
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() if now_s is None else now_s))
    base = f"{_NOT_IN_NAME.sub('-', host).strip('-.') or 'crawl'}-{stamp}"
    jobs_dir.mkdir(parents=True, exist_ok=True)
    job, n = jobs_dir / base, 1
    while True:
        try:
            job.mkdir()
            return job
        except FileExistsError:
            n += 1
            job = jobs_dir / f"{base}-{n}"


def order_text(
    order: Path, urls: Sequence[str], contact: str, sets: Sequence[str], wacz: Path | None
) -> str:
    """The job's order.yaml (at ``order``): the default order plus seeds, contact and WACZ."""
    command = " ".join(["crawler run", str(order), *(f"--set {s!r}" for s in sets)])
    lines = [
        f"# made by `crawler crawl` for {', '.join(urls)}",
        f"# run again: {command}",
        f"# resume after a stop or a crash: crawler resume {order.parent}",
        f"name: {order.parent.name}",
        "operator:",
        f"  contact_url: {json.dumps(contact)}",
        "seeds:",
        f"  urls: {json.dumps(list(urls))}",
    ]
    if wacz is not None:
        lines += ["archive:", "  wacz: true", f"  wacz_file: {json.dumps(str(wacz))}"]
    return "\n".join(lines) + "\n"


def crawl(
    urls: Sequence[str],
    contact: str | None,
    sets: Sequence[str],
    wacz: Path | None,
    jobs_dir: Path,
    out: TextIO,
    err: TextIO,
    no_display: bool = False,
) -> int:
    """``crawler crawl``: see the module docstring."""
    from crawler.cli.crawl_runner import run_order

    try:
        seeds = [seed_url(url) for url in urls]
        contact = contact_url(contact)
    except CrawlArgsError as exc:
        print(f"crawler crawl: {exc}", file=err)
        return ExitCode.USAGE
    try:
        job = new_job_dir(jobs_dir, seeds[0])
    except OSError as exc:
        reason = f"{exc.strerror or type(exc).__name__}: {exc.filename or jobs_dir}"
        print(f"crawler crawl: cannot make a job directory in {jobs_dir}: {reason}", file=err)
        return ExitCode.USAGE
    wacz_file = wacz.resolve() if wacz is not None else None
    order = job / "order.yaml"
    order.write_text(order_text(order, seeds, contact, sets, wacz_file), encoding="utf-8")
    print(f"job: {job}", file=out, flush=True)
    code = run_order(order, sets, None, out, err, no_display)
    runs = job / "runs"
    if code == ExitCode.USAGE and not (runs.is_dir() and any(runs.iterdir())):
        shutil.rmtree(job, ignore_errors=True)  # the order was refused: nothing to keep
        return code
    _where(job, wacz_file, out)
    return code


def _where(job: Path, wacz: Path | None, out: TextIO) -> None:
    run_dir = (job / "latest").resolve()
    print(f"order: {job / 'order.yaml'}", file=out)
    indexes = run_dir / "indexes"
    if indexes.is_dir():
        print(f"CDXJ indexes: {indexes}", file=out)
    if wacz is not None:
        print(f"WACZ: {wacz}" if wacz.is_file() else f"WACZ: not written ({wacz})", file=out)
    print(f"replay: crawler replay {run_dir}", file=out)
    print(f"resume: crawler resume {job}", file=out)
