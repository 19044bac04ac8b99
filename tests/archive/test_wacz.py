"""WACZ packages of a sample-site crawl: `wacz validate` accepts them (and rejects a tampered
one), pages.jsonl lists every HTML page captured with 200 with its title, the order can ask for
one at the end of the crawl, and a package replays through pywb in Chromium."""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from replay_support import (
    CHROMIUM,
    ReplayBrowser,
    archived_statuses,
    chromium,
    crawl,
    html_pages,
)
from warc_samples import write_warc

from crawler.archive.collection import collection_from_wacz
from crawler.archive.replay import PROJECT_ROOT, ReplayServer
from crawler.cli import main
from crawler.demo import SampleSite

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]
WACZ_TOOL = PROJECT_ROOT / ".replay-venv" / "bin" / "wacz"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A crawl of the sample site that asks for a WACZ at its end."""
    run_dir = tmp_path_factory.mktemp("wacz") / "run"
    with SampleSite(pages_per_host=20) as site:
        crawl(site, run_dir, "archive.wacz=true")
    return run_dir


def validate(wacz: Path) -> subprocess.CompletedProcess[str]:
    if not WACZ_TOOL.exists():
        pytest.fail(f"no {WACZ_TOOL}: `make install` creates .replay-venv with the wacz tool")
    return subprocess.run(
        [str(WACZ_TOOL), "validate", "-f", str(wacz)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        cwd=wacz.parent,
    )


def test_the_crawl_end_package_validates_and_lists_every_page(run: Path) -> None:
    packages = list(run.glob("*.wacz"))
    assert len(packages) == 1, packages
    wacz = packages[0]
    result = validate(wacz)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Validation succeeded" in result.stdout
    with zipfile.ZipFile(wacz) as package:
        names = package.namelist()
        stored = {i.filename: i.compress_type for i in package.infolist()}
        lines = package.read("pages/pages.jsonl").decode().splitlines()
        doc = json.loads(package.read("datapackage.json"))
    assert {"indexes/index.cdx.gz", "indexes/index.idx", "pages/pages.jsonl"} <= set(names)
    warcs = [n for n in names if n.startswith("archive/")]
    assert warcs and all(stored[n] == zipfile.ZIP_STORED for n in warcs)
    assert doc["wacz_version"] == "1.1.1"
    assert json.loads(lines[0])["format"] == "json-pages-1.0"
    pages = [json.loads(line) for line in lines[1:]]
    expected = {c.url for c in html_pages(run)}
    assert {p["url"] for p in pages} == expected
    assert all(p["title"] and p["ts"].endswith("Z") for p in pages)


def test_a_tampered_package_fails_validation(run: Path, tmp_path: Path) -> None:
    source = next(run.glob("*.wacz"))
    tampered = tmp_path / "tampered.wacz"
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(tampered, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "pages/pages.jsonl":
                data += b'{"id": "x", "url": "http://added.test/", "ts": "2020-01-01T00:00:00Z"}\n'
            dst.writestr(info, data)
    assert validate(tampered).returncode != 0


def test_crawler_wacz_packages_every_worker_and_a_killed_writers_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    (run_dir / "warcs").mkdir(parents=True)
    (run_dir / "workers" / "w01" / "warcs").mkdir(parents=True)
    # one capture time for all: the same URL in several files then makes one page, wherever
    # the clock's second turns while the files are written
    when = "2026-11-27T10:00:00Z"
    write_warc(run_dir / "warcs" / "MAIN.warc.gz", pages=2, date=when)
    write_warc(run_dir / "workers" / "w01" / "warcs" / "W1.warc.gz", pages=3, date=when)
    cut = run_dir / "workers" / "w01" / "warcs" / "W1b.warc.gz.open"
    cut.write_bytes((run_dir / "warcs" / "MAIN.warc.gz").read_bytes()[:-30])
    out = tmp_path / "all.wacz"
    assert main(["wacz", str(run_dir), "-o", str(out)]) == 1  # packaged, with a warning
    captured = capsys.readouterr()
    assert "W1b.warc.gz.open: cut short" in captured.err
    # page0..page2, each URL captured within one second in several files: one page each
    assert "3 WARC file(s), 7 index line(s), 3 page(s)" in captured.out
    with zipfile.ZipFile(out) as package:
        archived = sorted(n for n in package.namelist() if n.startswith("archive/"))
    assert archived == ["archive/MAIN.warc.gz", "archive/W1.warc.gz", "archive/W1b.warc.gz"]
    assert validate(out).returncode == 0
    assert main(["wacz", str(tmp_path / "empty"), "-o", str(tmp_path / "e.wacz")]) == 2
    assert "no WARC file to package" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no {CHROMIUM}")
def test_a_package_replays_every_page_in_chromium(run: Path, tmp_path: Path) -> None:
    wacz = tmp_path / "copy.wacz"
    shutil.copy(next(run.glob("*.wacz")), wacz)
    with zipfile.ZipFile(wacz) as package:
        pages = [json.loads(x) for x in package.read("pages/pages.jsonl").splitlines()[1:]]
    collection = collection_from_wacz(wacz, tmp_path / "work")
    with chromium() as browser, ReplayServer(collection) as server:
        probe = ReplayBrowser(browser, server.prefix, archived_statuses(run))
        titles = {page["url"]: probe.load(page["url"]) for page in pages}
        probe.close()
    print(f"replay of {wacz.name}: {probe.tally.summary()}")
    assert probe.tally.pages == len(pages) > 0
    assert probe.tally.missing == [] and probe.tally.escaped == [] and probe.tally.failed == []
    assert titles == {page["url"]: page["title"] for page in pages}
