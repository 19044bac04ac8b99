"""deploy/systemd/'s units: systemd accepts them (``systemd-analyze verify``, where installed),
and the command each starts is one the crawler's own command line accepts."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from crawler.cli.cli import build_parser

pytestmark = pytest.mark.timeout(60)

UNITS = Path(__file__).resolve().parents[2] / "deploy" / "systemd"
INSTALLED = "/opt/crawler/bin/crawler"
INSTANCES = {
    "crawler@.service": "crawler@site.service",
    "crawler-worker@.service": "crawler-worker@site.service",
    "crawler-console.service": "crawler-console.service",
}


def test_every_unit_is_listed() -> None:
    assert sorted(p.name for p in UNITS.glob("*.service")) == sorted(INSTANCES)


def test_systemd_accepts_the_units(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed (Debian's systemd package)")
    # The crawler as installed here stands for /opt/crawler/bin/crawler (verify checks that
    # ExecStart's program exists).
    here = shutil.which("crawler") or str(Path(sys.executable).with_name("crawler"))
    for template, instance in INSTANCES.items():
        text = (UNITS / template).read_text().replace(INSTALLED, here)
        (tmp_path / instance).write_text(text)
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
    assert words[0] == INSTALLED
    argv = [
        w.replace("%i", "site").replace("${REDIS_URL}", "redis://127.0.0.1:6379/0")
        for w in words[1:]
        if w != "$CRAWLER_ARGS"
    ]
    parser, run = build_parser(argv)
    assert run is not None, argv
    parser.parse_args(argv)  # exits (SystemExit) on an unknown verb or option
