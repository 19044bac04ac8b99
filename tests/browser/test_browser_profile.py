"""Browser profiles: `crawler profile create` logs in to the login site (tests/login_site.py)
with Chromium and saves the session; a crawl given the profile fetches a members-only page; a
wrong password or a bad profile file is one clear line."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from browser_support import EXAMPLE, crawl, needs_chromium
from support.login_site import PASSWORD, USER, LoginSite

from crawler.cli.cli import main

pytestmark = [pytest.mark.integration, needs_chromium, pytest.mark.timeout(120)]


def test_a_profile_made_by_the_command_logs_the_crawl_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = tmp_path / "profile.json"
    monkeypatch.setenv("SITE_PW", PASSWORD)
    with LoginSite() as site:
        args = ["profile", "create", str(profile), "--url", site.base + "/login"]
        assert main([*args, "--field", f"user={USER}", "--field-env", "pass=SITE_PW"]) == 0
        assert "profile written" in capsys.readouterr().out
        assert stat.S_IMODE(profile.stat().st_mode) == 0o600
        saved = json.loads(profile.read_text())
        assert "sid" in {c["name"] for c in saved["cookies"]}
        assert PASSWORD not in profile.read_text()
        # HTTP only: the profile's cookies reach FetchHTTP's jar.
        members = site.base + "/members/p1.html"
        lines = crawl(tmp_path / "run", [members], f"browser.profile={profile}")
        by_uri = {line.uri: line for line in lines}
        assert by_uri[members].status == 200
        assert ("/members/p1.html", True) in site.members_hits
        assert not any(path.startswith("/login") for _, path in site.requests[-len(lines) :])


def test_a_wrong_password_fails_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = tmp_path / "profile.json"
    with LoginSite() as site:
        args = ["profile", "create", str(profile), "--url", site.base + "/login"]
        assert main([*args, "--field", f"user={USER}", "--field", "pass=wrong"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "login failed" in err and "password" in err
    assert not profile.exists()


def test_a_bad_profile_file_stops_the_crawl_with_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "profile.json"
    bad.write_text('{"cookies": [{"name": "sid"}]}')
    args = ["run", str(EXAMPLE), "--run-dir", str(tmp_path / "run"), "--no-display"]
    args += ["--set", "seeds.urls=['http://127.0.0.1:9/']", "--set", "seeds.file=null"]
    assert main([*args, "--set", f"browser.profile={bad}"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"browser.profile: {bad}: not a browser profile" in err
    assert "cookies[0] lacks name, value or domain" in err
