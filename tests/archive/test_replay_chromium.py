"""Every archived HTML page of the sample site replays through pywb in real Chromium, with every
request answered from the archive: none missing (pywb's 404), none escaping to the live site
(which is stopped before replay; requests off pywb's origin are aborted and counted). A recrawl's
revisit records replay as their originals."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from replay_support import (
    CHROMIUM,
    ReplayBrowser,
    archived_statuses,
    captures,
    chromium,
    crawl,
    html_pages,
    original_bytes,
    payload,
)

from crawler.archive.collection import collection_from_run
from crawler.archive.replay import ReplayServer, find_wayback
from crawler.demo import SampleSite

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.timeout(600),
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason=f"no {CHROMIUM}: `make test` installs Debian's chromium"
    ),
]
PAGES_PER_HOST = 30
_TITLE = re.compile(rb"<title>(.*?)</title>", re.S | re.I)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A crawl of the sample site and a recrawl importing its history; the site is then gone."""
    find_wayback()  # fails the tests plainly when pywb is not installed
    base = tmp_path_factory.mktemp("replay")
    with SampleSite(pages_per_host=PAGES_PER_HOST) as site:
        crawl(site, base / "first")
        crawl(site, base / "second", f"history.import_from={base / 'first'}")
    return base / "first", base / "second"


@pytest.fixture
def browser() -> Iterator[object]:
    with chromium() as b:
        yield b


def _title(body: bytes) -> str:
    match = _TITLE.search(body)
    return match.group(1).decode().strip() if match else ""


def test_every_archived_page_replays_from_the_archive_alone(
    runs: tuple[Path, Path], browser: object, tmp_path: Path
) -> None:
    first, _ = runs
    pages = html_pages(first)
    assert len(pages) >= PAGES_PER_HOST
    collection = collection_from_run(first, tmp_path)
    with ReplayServer(collection) as server:
        probe = ReplayBrowser(browser, server.prefix, archived_statuses(first))
        wrong_titles = []
        for capture in pages:
            title = probe.load(capture.url)
            if title != _title(payload(capture)):
                wrong_titles.append((capture.url, title))
        probe.close()
    tally = probe.tally
    print(f"replay of {first.name}: {tally.summary()}")
    assert tally.pages == len(pages)
    assert tally.archive_requests > tally.pages  # pages and their embedded resources
    assert tally.missing == []
    assert tally.escaped == []
    assert tally.failed == []
    assert wrong_titles == []


def test_revisits_of_a_recrawl_replay_as_their_originals(
    runs: tuple[Path, Path], browser: object, tmp_path: Path
) -> None:
    first, second = runs
    originals = {c.digest: c for c in captures(first) if c.mime != "warc/revisit"}
    html_digests = {c.digest for c in html_pages(first)}
    revisits = [c for c in captures(second) if c.mime == "warc/revisit"]
    html_revisits = {c.url: c for c in revisits if c.digest in html_digests}
    assert len(html_revisits) >= PAGES_PER_HOST  # the unchanged site came back as revisits
    collection = collection_from_run(second, tmp_path)  # the first run joins: import_from
    with ReplayServer(collection) as server:
        for capture in revisits:
            status, body = original_bytes(server.prefix, capture)
            assert str(status) == capture.status, capture.url
            if status == 200:  # pywb sends archived redirects without their bodies
                assert body == payload(originals[capture.digest]), capture.url
        probe = ReplayBrowser(browser, server.prefix, archived_statuses(first, second))
        for capture in html_revisits.values():
            probe.load(capture.url)
        probe.close()
    print(f"replay of revisits in {second.name}: {probe.tally.summary()}")
    assert probe.tally.pages == len(html_revisits)
    assert probe.tally.missing == []
    assert probe.tally.escaped == []
    assert probe.tally.failed == []
