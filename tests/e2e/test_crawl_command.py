"""``crawler crawl URL``: one command from a URL to WARCs; the hint ``crawler run URL`` gives."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from support.crawllog_parser import parse_file
from warcio.archiveiterator import ArchiveIterator

from crawler.demo import SampleSite

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

NO_POLITENESS = [
    "--set", "frontier.politeness.delay_factor=0",
    "--set", "frontier.politeness.min_delay_ms=0",
    "--set", "frontier.politeness.max_delay_ms=0",
]  # fmt: skip


def crawler(*args: str, cwd: Path, contact: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CRAWLER_CONTACT_URL"}
    if contact is not None:
        env["CRAWLER_CONTACT_URL"] = contact
    return subprocess.run(
        [sys.executable, "-m", "crawler", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=100,
    )


def test_crawl_a_url_into_a_new_job(tmp_path: Path) -> None:
    with SampleSite(pages_per_host=20) as site:
        seed = site.base_urls[0]
        result = crawler(
            "crawl", seed, "--contact", "https://example.org/about", "--no-display",
            "--jobs-dir", str(tmp_path / "jobs"), "--wacz", "site.wacz", *NO_POLITENESS,
            cwd=tmp_path,
        )  # fmt: skip
        expected = site.expected_urls(hosts=[site.hosts[0]])
    assert result.returncode == 0, result.stderr
    (job,) = (tmp_path / "jobs").iterdir()
    assert job.name.startswith(f"127.0.0.1-{site.hosts[0].split(':')[1]}-")
    order = (job / "order.yaml").read_text()
    assert seed in order and "https://example.org/about" in order
    assert "frontier.politeness.delay_factor=0" in order  # how to run it again
    run_dir = (job / "latest").resolve()
    assert f"WARCs: {run_dir / 'warcs'}" in result.stdout
    assert f"replay: crawler replay {run_dir}" in result.stdout
    assert f"CDXJ indexes: {run_dir / 'indexes'}" in result.stdout
    wacz = tmp_path / "site.wacz"
    assert f"WACZ: {wacz}" in result.stdout
    with zipfile.ZipFile(wacz) as package:
        assert "datapackage.json" in package.namelist()
    lines = parse_file(run_dir / "logs" / "crawl.log")
    fetched = {line.uri for line in lines if line.status > 0 and not line.uri.startswith("dns:")}
    assert (
        fetched == {u for u in expected if not u.endswith("/robots.txt")} | {f"{seed}robots.txt"}
        or fetched <= expected
    )
    assert all(u.startswith(seed) for u in fetched)  # scope: under the seed, other hosts not
    targets = set()
    for warc in (run_dir / "warcs").glob("*.warc.gz"):
        with warc.open("rb") as fh:
            for record in ArchiveIterator(fh):
                if record.rec_type in ("response", "revisit"):
                    targets.add(record.rec_headers.get_header("WARC-Target-URI"))
    assert fetched <= targets
    again = crawler("validate", str(job / "order.yaml"), cwd=tmp_path)
    assert again.returncode == 0, again.stderr


def test_the_contact_may_come_from_the_environment(tmp_path: Path) -> None:
    with SampleSite(ports=(0,), pages_per_host=20) as site:
        result = crawler(
            "crawl", site.base_urls[0], "--no-display", "--jobs-dir", "jobs", *NO_POLITENESS,
            cwd=tmp_path, contact="https://example.org/from-env",
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (job,) = (tmp_path / "jobs").iterdir()
    assert "https://example.org/from-env" in (job / "order.yaml").read_text()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://example.org/", "the scheme ftp: is not crawled"),
        ("http://exa mple.org/", "white space"),
        ("http://example.org:99999/", "Port out of range"),
        ("http:///path-only", "names no host"),
    ],
)
def test_a_bad_url_is_refused_and_nothing_is_made(tmp_path: Path, url: str, message: str) -> None:
    result = crawler("crawl", url, "--contact", "https://example.org/a", cwd=tmp_path)
    assert result.returncode == 2
    assert f"{url!r} is not a URL to crawl" in result.stderr and message in result.stderr
    assert not (tmp_path / "jobs").exists()


def test_without_a_contact_it_says_how_to_give_one(tmp_path: Path) -> None:
    result = crawler("crawl", "http://127.0.0.1:9/", cwd=tmp_path)
    assert result.returncode == 2
    assert "--contact" in result.stderr and "CRAWLER_CONTACT_URL" in result.stderr
    assert not (tmp_path / "jobs").exists()


def test_an_order_made_invalid_by_set_leaves_no_job(tmp_path: Path) -> None:
    result = crawler(
        "crawl", "http://127.0.0.1:9/", "--contact", "https://example.org/a",
        "--set", "toe_threads=0", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 2
    assert "toe_threads" in result.stderr
    assert list((tmp_path / "jobs").iterdir()) == []


def test_crawler_run_given_a_url_points_to_crawler_crawl(tmp_path: Path) -> None:
    result = crawler("run", "http://example.org/start", cwd=tmp_path)
    assert result.returncode == 2
    assert "not the URL http://example.org/start" in result.stderr
    assert "crawler crawl http://example.org/start --contact" in result.stderr
    assert "cannot read" not in result.stderr
