"""The files the browser: block names: profiles (read, shape errors, written 0600), custom
behaviour files (read errors), and `crawler validate` naming each missing file by its key."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from crawler.archive.page_text import html_text
from crawler.cli.cli import main
from processors.browser.behaviour_script import BehaviourFileError, load_behaviours
from processors.browser.browser_profile import ProfileError, load_profile, save_profile

pytestmark = pytest.mark.timeout(30)
EXAMPLE = Path(__file__).resolve().parents[2] / "jobs" / "example" / "order.yaml"


def test_a_saved_profile_is_private_and_loads_back_with_its_cookies(tmp_path: Path) -> None:
    state = {
        "cookies": [
            {"name": "sid", "value": "42", "domain": "example.org", "path": "/", "expires": -1},
            {"name": "k", "value": "v", "domain": ".example.org", "expires": 2000000000},
        ],
        "origins": [{"origin": "https://example.org", "localStorage": []}],
    }
    path = tmp_path / "p" / "profile.json"
    save_profile(path, state)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    profile = load_profile(path)
    assert [(c.name, c.expires) for c in profile.cookies] == [("sid", None), ("k", 2000000000)]
    assert profile.origins == ["https://example.org"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("not json", "not a JSON profile"),
        ("[]", "the top level is not an object"),
        ('{"cookies": {}}', "'cookies' and 'origins' must be lists"),
        ('{"cookies": [{"name": "a", "value": "b"}]}', "cookies[0] lacks name, value or domain"),
        ('{"origins": [{"localStorage": []}]}', "origins[0] lacks its origin"),
    ],
)
def test_a_bad_profile_is_one_line_naming_the_file(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "profile.json"
    path.write_text(text)
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and problem in message and "\n" not in message


def test_an_unreadable_behaviour_file_names_its_key(tmp_path: Path) -> None:
    (tmp_path / "ok.js").write_text("async (ctx) => {};\n")
    scripts = load_behaviours(["ok.js"], None, tmp_path, 5)
    assert [s.name for s in scripts] == ["ok"] and "async (ctx) => {}" in scripts[0].run
    with pytest.raises(BehaviourFileError) as caught:
        load_behaviours(["ok.js", "gone.js"], None, tmp_path, 5)
    assert caught.value.key == "browser.behaviours[1]" and "gone.js" in str(caught.value)


def test_validate_names_every_missing_browser_file(capsys: pytest.CaptureFixture[str]) -> None:
    sets = ["browser.behaviours=[nope.js]", "browser.browsertrix_behaviors=bx/none.js"]
    sets += ["browser.profile=no-profile.json"]
    args = ["validate", str(EXAMPLE)]
    for s in sets:
        args += ["--set", s]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "browser.behaviours[0]: no such file: " in err
    assert "browser.browsertrix_behaviors: no such file: " in err
    assert "browser.profile: no such file: " in err


def test_page_text_keeps_what_a_reader_sees() -> None:
    html = (
        "<html><head><title>T</title><style>p{color:red}</style></head><body><h1>Herons</h1>"
        "<script>var hidden = 1;</script><p>wade   in\n water</p><noscript>js</noscript></body>"
    )
    assert html_text(html) == "Herons wade in water"
    assert json.dumps(html_text(b"")) == '""'
