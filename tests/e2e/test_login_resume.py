"""A crawl behind a form login, stopped mid-crawl (SIGTERM: a clean stop; SIGKILL: a crash) and
resumed with `crawler resume`:
the resumed crawl keeps its login session (cookies in state/cookies.sqlite, the login outcome in
state/form-logins.jsonl) — it never logs in again and every members page is captured with 200."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
from support.crawl_process import start_crawler
from support.crawllog_parser import CrawlLogLine, parse_file
from support.login_site import PASSWORD, USER, LoginSite

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(120)]


def lines_of(run_dir: Path) -> list[CrawlLogLine]:
    path = run_dir / "logs" / "crawl.log"
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    # the last line may be cut short by the kill
    complete = text[: text.rfind("\n") + 1]
    tmp = run_dir / "crawl.log.copy"
    tmp.write_text(complete, encoding="utf-8")
    return parse_file(tmp)


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["stop", "kill-9"])
def test_a_stopped_and_resumed_crawl_keeps_its_login_session(tmp_path: Path, stop: int) -> None:
    run_dir = tmp_path / "run"
    with LoginSite(members_pages=30, latency_s=0.05) as site:
        cred = {
            "domain": f"127.0.0.1:{site.port}",
            "login_uri": f"{site.base}/login",
            "fields": {"user": USER, "pass": PASSWORD},
            "success_redirect": "/members/$",
        }
        proc = start_crawler(
            [
                "run",
                str(EXAMPLE),
                "--run-dir",
                str(run_dir),
                "--set",
                f"seeds.urls={[site.base + '/']!r}",
                "--set",
                "seeds.file=null",
                "--set",
                "toe_threads=1",
                "--set",
                "logging.console=false",
                "--set",
                "chains.pre.preselector.params.block_by_regex=.*/logout",
                "--set",
                "chains.fetch.fetch_http.params.form_logins=" + json.dumps([cred]),
            ]
        )
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            members = [ln for ln in lines_of(run_dir) if "/members/p" in ln.uri]
            if len(members) >= 3:
                proc.send_signal(stop)
                break
            time.sleep(0.02)
        proc.wait(30)
        expected = 0 if stop == signal.SIGTERM else -signal.SIGKILL
        assert proc.returncode == expected, proc.stderr.read() if proc.stderr else ""
        before = len(lines_of(run_dir))
        assert before < len(site.member_urls())  # most members pages are still to come
        assert len(site.posts) == 1

        resumed = start_crawler(["resume", str(run_dir)])
        _, err = resumed.communicate(timeout=90)
        assert resumed.returncode == 0, err
        posts, hits = list(site.posts), list(site.members_hits)

    assert len(posts) == 1  # the resumed crawl did not log in again
    assert hits and all(valid for _, valid in hits), [p for p, v in hits if not v]
    lines = lines_of(run_dir)
    status = {ln.uri: ln.status for ln in lines}
    for url in site.member_urls():
        assert status.get(url) == 200, url
    assert sum(1 for ln in lines if "formLogin:ok" in ln.annotations) == 1
    assert len(lines) > before
