"""The crawler as a package: `uv build` makes a wheel that, installed into a fresh virtualenv
outside the checkout, runs `crawler demo`, `crawler init` + `crawler validate`, and has the
console's static files and the default order inside it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UV = ROOT / ".tools" / "bin" / "uv"

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(600)]


def sh(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, env=env, timeout=480
    )
    assert done.returncode == 0, f"{args}: {done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not UV.is_file():
        pytest.skip("uv is not installed in .tools/ (make install installs it)")
    work = tmp_path_factory.mktemp("package")
    sh(UV, "build", "--wheel", "--out-dir", work / "dist", ROOT, cwd=work)
    [wheel] = list((work / "dist").glob("crawler-*.whl"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "UV_PROJECT"))}
    sh(UV, "venv", "--quiet", work / "venv", cwd=work, env=env)
    sh(
        UV,
        "pip",
        "install",
        "--quiet",
        "--python",
        work / "venv" / "bin" / "python",
        wheel,
        cwd=work,
        env=env,
    )
    return work / "venv" / "bin" / "crawler"


def test_the_installed_crawler_runs_the_demo_from_any_directory(
    installed: Path, tmp_path: Path
) -> None:
    out = sh(installed, "demo", "--pages", "40", "--port", "0", "--no-display", cwd=tmp_path)
    assert "Finished" in out
    runs = list((tmp_path / "jobs" / "demo" / "runs").iterdir())
    assert runs and list((runs[0] / "warcs").glob("*.warc.gz"))


def test_init_writes_a_job_that_validates(installed: Path, tmp_path: Path) -> None:
    sh(
        installed,
        "init",
        "my job",
        "--seed",
        "https://example.org/",
        "--contact",
        "https://example.org/about",
        cwd=tmp_path,
    )
    job = tmp_path / "my job"
    assert (job / "seeds.txt").read_text().strip().endswith("https://example.org/")
    effective = sh(installed, "validate", job / "order.yaml", cwd=tmp_path)
    assert "name: my-job" in effective and "chains:" in effective  # the default order, inside
    again = subprocess.run(
        [str(installed), "init", str(job)], cwd=tmp_path, capture_output=True, text=True
    )
    assert again.returncode == 2 and "never overwrites" in again.stderr


def test_the_package_holds_the_console_files_and_the_default_order(installed: Path) -> None:
    python = installed.parent / "python"
    where = sh(
        python,
        "-c",
        "import crawler.console, crawler.shipped as s, pathlib;"
        "print(pathlib.Path(crawler.console.__file__).parent / 'static' / 'index.html');"
        "print(s.shipped('conf/default-order.yaml'))",
        cwd=installed.parent,
    ).split()
    assert all(Path(p).is_file() for p in where)
    assert "site-packages" in where[1]  # not the checkout's copy
