"""A job with two runs of a :class:`~changing_site.ChangingSite`: the first crawl, then the site
changes (a page added, one changed, one removed, one no longer linked) and a recrawl imports the
first crawl's history (``history.import_from``), so unchanged pages come back 304."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from support.changing_site import ChangingSite, links_page
from support.sample_crawl import crawl_sample_site

FIRST = "20260101T000000Z"
SECOND = "20260102T000000Z"


@dataclass(frozen=True)
class RecrawlJob:
    """The job directory, its two runs and the site's URL."""

    job: Path
    first: Path
    second: Path
    url: str


def first_version(site: ChangingSite) -> None:
    """``/`` links a, b, c and d."""
    site.set("/", links_page("Home", "/a.html", "/b.html", "/c.html", "/d.html"))
    for name in "abcd":
        site.set(f"/{name}.html", links_page(f"Page {name} v1"))


def second_version(site: ChangingSite) -> None:
    """b changed, c removed (404), d no longer linked (still served), e new."""
    site.set("/", links_page("Home", "/a.html", "/b.html", "/c.html", "/e.html"))
    site.set("/b.html", links_page("Page b v2"))
    site.remove("/c.html")
    site.set("/e.html", links_page("Page e v1"))


def crawl_twice(site: ChangingSite, job: Path, *extra: str) -> RecrawlJob:
    """Crawl the first version into ``job/runs/FIRST``, change the site, recrawl it into
    ``job/runs/SECOND`` importing the first crawl's history."""
    first, second = job / "runs" / FIRST, job / "runs" / SECOND
    first_version(site)
    crawl_sample_site(site, first, "toe_threads=4", *extra)  # type: ignore[arg-type]
    second_version(site)
    time.sleep(1.0)  # captures 14-digit timestamps apart: one calendar entry per crawl
    crawl_sample_site(  # type: ignore[arg-type]
        site, second, "toe_threads=4", f"history.import_from={json.dumps(str(first))}", *extra
    )
    return RecrawlJob(job, first, second, site.url)
