"""The run page in Chromium: the Replay panel shows the command, the live replay link while a
replay server serves the run, and a working WACZ download link."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from console_support import CHROMIUM, ConsoleProc, chromium
from support.console_runs import MakeRun
from test_console_archive import RUN, _warc

from crawler.archive.wacz import WaczPackager

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.timeout(120),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no {CHROMIUM}"),
]
TOKEN = "archive-browser-token-7"


def test_replay_panel_and_wacz_download(jobs_dir: Path, make_run: MakeRun) -> None:
    run = make_run()
    console = ConsoleProc(jobs_dir, TOKEN)
    try:
        with chromium() as browser:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"{console.url}/login?token={TOKEN}")
            page.goto(f"{console.url}/#/runs/{RUN}")
            command = page.wait_for_selector("#replay-command")
            assert command is not None and command.inner_text() == f"crawler replay {run}"
            _warc(run / "warcs" / "A.warc.gz")
            WaczPackager(run).write(run / "site.wacz")
            prefix = "http://127.0.0.1:8488/site/"
            (run / "replay.json").write_text(json.dumps({"prefix": prefix, "pid": os.getpid()}))
            page.reload()  # a finished run's page refreshes its panels every 40 s
            link = page.wait_for_selector("#replay-link")
            assert link is not None and link.get_attribute("href") == prefix
            with page.expect_download() as download:
                page.click(".wacz-link")
            saved = Path(download.value.path())
            assert saved.read_bytes() == (run / "site.wacz").read_bytes()
            assert errors == []
    finally:
        console.stop()
