"""A job is a collection: `crawler replay JOB_DIR` serves every finished run of the job as one
pywb collection (a page crawled twice has two captures in its timemap, and a recrawl's revisit
replays the earlier run's record), and `crawler wacz JOB_DIR --runs all` packages every
finished run's WARCs in one package that validates. Runs still running or that died are left
out and named."""

from __future__ import annotations

import gzip
import json
import signal
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

import pytest
from support.changing_site import ROBOTS, ChangingSite
from support.recrawl_job import RecrawlJob, crawl_twice
from test_wacz import validate

from crawler.archive.replay import find_wayback
from crawler.archive.run_layout import all_warcs
from crawler.cli import main

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]
DIED = "20260103T000000Z"


@pytest.fixture(scope="module")
def recrawl(tmp_path_factory: pytest.TempPathFactory) -> RecrawlJob:
    """Two finished runs of the changing site, and a third that died (left out)."""
    with ChangingSite() as site:
        job = crawl_twice(site, tmp_path_factory.mktemp("collection") / "job")
    died = job.job / "runs" / DIED
    died.mkdir()
    status = json.loads((job.first / "status.json").read_text())
    status.update(state="RUNNING", pid=999_999_999)
    (died / "status.json").write_text(json.dumps(status))
    return job


def _get(url: str) -> bytes:
    return _fetch(url)[1]


def _fetch(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return int(response.status), bytes(response.read())
    except urllib.error.HTTPError as error:
        return error.code, bytes(error.read())


def _captures(prefix: str, url: str) -> list[dict[str, str]]:
    query = urllib.parse.urlencode({"url": url, "output": "json"})
    text = _get(f"{prefix.rstrip('/')}/cdx?{query}").decode()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_replaying_the_job_serves_every_finished_run(recrawl: RecrawlJob) -> None:
    find_wayback()
    proc = subprocess.Popen(
        [sys.executable, "-m", "crawler", "replay", str(recrawl.job), "--bind", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        prefix = ""
        for line in proc.stdout:
            if line.startswith("replay prefix: "):
                prefix = line.split(": ", 1)[1].strip()
                break
        assert prefix.endswith("/job/"), prefix
        assert json.loads((recrawl.job / "replay.json").read_text())["prefix"] == prefix

        a = _captures(prefix, recrawl.url + "/a.html")
        assert len(a) == 2, a  # one capture per crawl
        assert sorted(c["mime"] for c in a) == ["text/html", "warc/revisit"]
        revisit = next(c for c in a if c["mime"] == "warc/revisit")
        # The recrawl's 304 is written as an identical-payload-digest revisit with the stored
        # head freshened by the 304's: the second capture replays the first run's page.
        status, body = _fetch(f"{prefix}{revisit['timestamp']}id_/{recrawl.url}/a.html")
        assert status == 200 and b"Page a v1" in body, (status, body[:200])
        # An identical-payload-digest revisit replays the first run's payload (pywb answers 503
        # when the record it refers to is not in the collection).
        robots = _captures(prefix, recrawl.url + "/robots.txt")
        assert sorted(c["mime"] for c in robots) == ["text/plain", "warc/revisit"], robots
        again = next(c for c in robots if c["mime"] == "warc/revisit")
        status, body = _fetch(f"{prefix}{again['timestamp']}id_/{recrawl.url}/robots.txt")
        assert (status, body) == (200, ROBOTS)

        b = sorted(_captures(prefix, recrawl.url + "/b.html"), key=lambda c: c["timestamp"])
        assert [c["mime"] for c in b] == ["text/html", "text/html"]
        assert b"Page b v1" in _get(f"{prefix}{b[0]['timestamp']}id_/{recrawl.url}/b.html")
        assert b"Page b v2" in _get(f"{prefix}{b[1]['timestamp']}id_/{recrawl.url}/b.html")
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
    assert proc.stderr is not None
    err = proc.stderr.read()
    assert f"left out {recrawl.job / 'runs' / DIED} (died before it finished)" in err
    assert not (recrawl.job / "replay.json").exists()


def test_one_package_holds_every_finished_run(
    recrawl: RecrawlJob, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "job.wacz"
    assert main(["wacz", str(recrawl.job), "-o", str(target), "--runs", "all"]) == 0
    captured = capsys.readouterr()
    assert f"left out {recrawl.job / 'runs' / DIED}" in captured.err
    assert " of 2 runs, " in captured.out
    with zipfile.ZipFile(target) as package:
        names = {n.removeprefix("archive/") for n in package.namelist() if n.startswith("archive/")}
        index = package.read("indexes/index.cdx.gz")
    warcs = [*all_warcs(recrawl.first), *all_warcs(recrawl.second)]
    assert names == {w.name for w in warcs}
    assert len(warcs) >= 2

    lines = gzip.decompress(index).decode().splitlines()
    a_lines = [line for line in lines if '"url": "' + recrawl.url + '/a.html"' in line]
    assert len(a_lines) == 2, a_lines
    result = validate(target)
    assert result.returncode == 0, result.stdout + result.stderr


def test_runs_all_needs_a_job_and_a_finished_run(
    recrawl: RecrawlJob, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "x.wacz"
    assert main(["wacz", str(recrawl.first), "-o", str(target), "--runs", "all"]) == 2
    assert "--runs all needs a job directory" in capsys.readouterr().err
    lonely = tmp_path / "lonely"
    (lonely / "runs").mkdir(parents=True)
    (lonely / "runs" / DIED).symlink_to(recrawl.job / "runs" / DIED)  # links are not runs
    assert main(["wacz", str(lonely), "-o", str(target), "--runs", "all"]) == 2
    assert "no finished run to package" in capsys.readouterr().err
    assert main(["replay", str(lonely), "--bind", "127.0.0.1:0"]) == 2
    assert "no finished run to replay" in capsys.readouterr().err
    assert not target.exists()


def test_without_runs_all_the_job_means_its_latest_run(
    recrawl: RecrawlJob, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    latest = recrawl.job / "latest"
    latest.symlink_to(recrawl.second)
    try:
        target = tmp_path / "latest.wacz"
        assert main(["wacz", str(recrawl.job), "-o", str(target)]) == 0
        assert "left out" not in capsys.readouterr().err
        with zipfile.ZipFile(target) as package:
            names = {n.removeprefix("archive/") for n in package.namelist()}
        assert {w.name for w in all_warcs(recrawl.second)} <= names
        assert not {w.name for w in all_warcs(recrawl.first)} & names
    finally:
        latest.unlink()
