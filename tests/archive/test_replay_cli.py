"""`crawler replay` from the command line: it prints a prefix that replays the archived pages,
serves a WACZ the same way, writes and removes replay.json, and says so when there is nothing
to replay."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from warc_samples import write_warc

from crawler.archive.replay import find_wayback
from crawler.archive.wacz import WaczPackager
from crawler.cli import main

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]


def _serve(source: Path) -> tuple[subprocess.Popen[str], str]:
    find_wayback()
    proc = subprocess.Popen(
        [sys.executable, "-m", "crawler", "replay", str(source), "--bind", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("replay prefix: "):
            return proc, line.split(": ", 1)[1].strip()
    proc.wait(30)
    raise AssertionError(f"no prefix printed; stderr: {proc.stderr.read() if proc.stderr else ''}")


def _stop(proc: subprocess.Popen[str]) -> int:
    proc.send_signal(signal.SIGINT)
    return proc.wait(30)


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as response:
        return bytes(response.read())


@pytest.mark.parametrize("packaged", [False, True])
def test_prefix_plus_archived_url_replays_the_page(tmp_path: Path, packaged: bool) -> None:
    run = tmp_path / "run"
    (run / "warcs").mkdir(parents=True)
    urls = write_warc(run / "warcs" / "A.warc.gz", pages=3)
    source = run
    if packaged:
        source = tmp_path / "run.wacz"
        WaczPackager(run).write(source)
    proc, prefix = _serve(source)
    try:
        assert prefix.startswith("http://127.0.0.1:") and prefix.endswith(f"/{source.stem}/")
        body = _get(prefix + "id_/" + urls[1])
        assert b"<title>Page 1</title>" in body
        if not packaged:
            assert json.loads((run / "replay.json").read_text())["prefix"] == prefix
    finally:
        assert _stop(proc) == 0
    assert not (run / "replay.json").exists()


def test_a_run_without_warcs_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    (run / "warcs").mkdir(parents=True)
    (run / "logs").mkdir()
    assert main(["replay", str(run), "--bind", "127.0.0.1:0"]) == 2
    assert "no WARC record to replay" in capsys.readouterr().err
    (run / "warcs" / "K.warc.gz.open").write_bytes(b"")  # killed before its first record
    assert main(["replay", str(run), "--bind", "127.0.0.1:0"]) == 2
    assert main(["replay", str(tmp_path / "nowhere"), "--bind", "127.0.0.1:0"]) == 2
    assert "neither a run directory nor a .wacz file" in capsys.readouterr().err
    assert main(["replay", str(run), "--bind", "localhost:http"]) == 2
    assert "use HOST:PORT" in capsys.readouterr().err


def test_an_index_naming_a_gone_warc_is_reported_and_the_rest_replays(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "warcs").mkdir(parents=True)
    urls = write_warc(run / "warcs" / "A.warc.gz", pages=2)
    write_warc(run / "warcs" / "B.warc.gz", pages=2)
    assert main(["index", str(run)]) == 0
    (run / "warcs" / "B.warc.gz").unlink()
    proc, prefix = _serve(run)
    try:
        assert b"Page 0" in _get(prefix + "id_/" + urls[0])
    finally:
        _stop(proc)
    assert proc.stderr is not None
    assert "B.warc.gz.cdxj: names a WARC that is gone" in proc.stderr.read()
