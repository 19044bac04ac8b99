"""deploy/systemd/'s units: systemd accepts them (``systemd-analyze verify``, where installed),
and the command each starts is one the crawler's own command line accepts."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from crawler.cli.cli import build_parser

pytestmark = pytest.mark.timeout(60)

UNITS = Path(__file__).resolve().parents[2] / "deploy" / "systemd"
INSTANCES = {
    "crawler-run@.service": "crawler-run@site.service",
    "crawler-worker@.service": "crawler-worker@site.service",
    "crawler-console.service": "crawler-console.service",
}


def test_every_unit_is_listed() -> None:
    assert sorted(p.name for p in UNITS.glob("*.service")) == sorted(INSTANCES)


def test_systemd_accepts_the_units(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed (Debian's systemd package)")
    for template, instance in INSTANCES.items():
        shutil.copy(UNITS / template, tmp_path / instance)
    checked = subprocess.run(
        [analyze, "verify", "--man=no", *INSTANCES.values()],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=tmp_path,
    )
    # verify exits 0 on unknown keys, only warning: any output is a fault of the units.
    assert checked.returncode == 0 and not checked.stderr.strip(), checked.stderr


@pytest.mark.parametrize("template", sorted(INSTANCES))
def test_each_unit_starts_a_command_the_crawler_accepts(template: str) -> None:
    text = (UNITS / template).read_text()
    [line] = [ln for ln in text.splitlines() if ln.startswith("ExecStart=")]
    words = shlex.split(line.removeprefix("ExecStart="))
    assert words[:2] == ["/usr/bin/env", "crawler"]
    argv = [
        w.replace("%i", "site").replace("${REDIS_URL}", "redis://127.0.0.1:6379/0")
        for w in words[2:]
        if w != "$CRAWLER_ARGS"
    ]
    parser, run = build_parser(argv)
    assert run is not None, argv
    parser.parse_args(argv)  # exits (SystemExit) on an unknown verb or option
