"""Secrets kept secret: a form login's password given as ``${ENV:NAME}`` (or in clear) logs in, and
then every file of the run is searched for it - logs, reports, the frontier's and the history's
LevelDB, order.effective.yaml, the WARCs (decompressed). By default only the WARC request record of
the login holds it; with ``redact_login_body: true`` nothing does."""

from __future__ import annotations

import gzip
import json
import os
import stat
from pathlib import Path

import plyvel
import pytest
from support.crawllog_parser import parse_file
from support.login_site import PASSWORD, USER, LoginSite

from crawler.control.controller import CrawlController
from crawler.logs.applog import close_app_logging, configure_app_logging
from crawler.order.errors import OrderError
from crawler.order.loader import load_order
from crawler.secrets.secret_registry import remember

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
ENV = "CRAWLER_TEST_LOGIN_PASSWORD"
SECRET = PASSWORD.encode()

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]


def login(site: LoginSite, password: str) -> str:
    cred = {
        "domain": f"127.0.0.1:{site.port}",
        "login_uri": f"{site.base}/login",
        "fields": {"user": USER, "pass": password},
    }
    return "chains.fetch.fetch_http.params.form_logins=" + json.dumps([cred])


def crawl(run: Path, site: LoginSite, *settings: str) -> None:
    order = load_order(
        EXAMPLE,
        [
            f"seeds.urls=['{site.base}/']",
            "seeds.file=null",
            "toe_threads=2",
            "logging.console=false",
            "chains.pre.preselector.params.block_by_regex=.*/logout",
            *settings,
        ],
    )
    assert CrawlController(order, run, install_signals=False).run() == 0
    members = {line.uri: line.status for line in parse_file(run / "logs" / "crawl.log")}
    assert all(members.get(url) == 200 for url in site.member_urls())  # the login worked


def files_holding(run: Path, secret: bytes) -> set[str]:
    """Every file (relative path) of ``run`` whose content holds ``secret``: gzip members
    decompressed, LevelDB databases read key by key."""
    found: set[str] = set()
    for path in run.rglob("*"):
        rel = str(path.relative_to(run))
        if path.is_dir() and (path / "CURRENT").is_file():
            db = plyvel.DB(str(path))
            try:
                if any(secret in k or secret in v for k, v in db.iterator()):
                    found.add(rel + "/")
            finally:
                db.close()
            continue
        if not path.is_file():
            continue
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        if secret in data:
            found.add(rel)
    return found


def test_a_password_from_the_environment_is_only_in_the_login_request_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, PASSWORD)
    run = tmp_path / "run"
    with LoginSite(members_pages=2) as site:
        crawl(run, site, login(site, f"${{ENV:{ENV}}}"))
        assert site.posts[0]["pass"] == PASSWORD
    held = files_holding(run, SECRET)
    assert held and all(name.startswith("warcs/") for name in held), held
    effective = (run / "order.effective.yaml").read_text()
    assert f"${{ENV:{ENV}}}" in effective
    assert stat.S_IMODE(os.stat(run / "state").st_mode) == 0o700
    assert not (run / "state" / "secrets.json").exists()  # nothing written in clear


def test_redact_login_body_keeps_it_out_of_the_warc_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, PASSWORD)
    run = tmp_path / "run"
    with LoginSite(members_pages=2) as site:
        crawl(
            run,
            site,
            login(site, f"${{ENV:{ENV}}}"),
            "chains.fetch.fetch_http.params.redact_login_body=true",
        )
    assert files_holding(run, SECRET) == set()
    warcs = b"".join(gzip.decompress(p.read_bytes()) for p in (run / "warcs").glob("*.gz"))
    assert b"pass=%5Bredacted%5D" in warcs


def test_a_password_in_clear_is_kept_for_resume_in_state_only(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with LoginSite(members_pages=2) as site:
        crawl(run, site, login(site, PASSWORD))
    held = files_holding(run, SECRET)
    assert held - {"state/secrets.json"} and all(
        n.startswith("warcs/") for n in held - {"state/secrets.json"}
    )
    stored = run / "state" / "secrets.json"
    assert stat.S_IMODE(os.stat(stored).st_mode) == 0o600
    effective = (run / "order.effective.yaml").read_text()
    assert PASSWORD not in effective and "${SECRET:" in effective
    # A resume reads the run's own copy: the secret comes back from state/secrets.json.
    again = load_order(run / "order.effective.yaml")
    [cred] = again.chains.fetch[1].params["form_logins"]
    assert cred["fields"]["pass"] == PASSWORD


def test_an_unset_variable_is_a_clear_order_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    with pytest.raises(OrderError) as caught:
        load_order(EXAMPLE, [f"operator.from_email=${{ENV:{ENV}}}"])
    text = str(caught.value)
    assert "operator.from_email" in text and f"{ENV} is not set" in text and "export" in text


def test_a_file_reference_reads_the_secret(tmp_path: Path) -> None:
    (tmp_path / "pw.txt").write_text("from-a-file\n")
    order = load_order(EXAMPLE, [f"operator.from_email=${{FILE:{tmp_path / 'pw.txt'}}}"])
    assert order.operator.from_email == "from-a-file"


def test_the_application_log_never_shows_a_secret(tmp_path: Path) -> None:
    import structlog

    remember(["hunter2-xyz"])
    configure_app_logging(tmp_path, "info", console=False)
    try:
        structlog.get_logger("crawler").warning("login_failed", detail="pw was hunter2-xyz")
    finally:
        close_app_logging()
    logged = (tmp_path / "crawler.jsonl").read_text() + (tmp_path / "alerts.log").read_text()
    assert "login_failed" in logged and "hunter2-xyz" not in logged
    assert "[redacted]" in logged


def test_a_queued_login_submission_holds_a_token_not_the_password() -> None:
    from processors.login.form_credential import FormCredential
    from processors.login.login_secrets import hide, redact_request, reveal

    cred = FormCredential(
        domain="example.org",
        login_uri="https://example.org/login",
        fields={"user": "alice", "pass": "p&ss w0rd"},
    )
    body = "csrf=abc&user=alice&pass=p%26ss+w0rd"
    queued = hide(cred, body)
    assert "w0rd" not in queued and "user=alice" in queued and "csrf=abc" in queued
    assert reveal(cred, queued) == body
    sent = b"POST /login HTTP/1.1\r\nContent-Length: 36\r\n\r\n" + body.encode()
    kept = redact_request(cred, sent)
    assert b"w0rd" not in kept and kept.endswith(b"pass=%5Bredacted%5D")
    length = len(kept.partition(b"\r\n\r\n")[2])
    assert f"Content-Length: {length}".encode() in kept


def test_password_env_and_password_file_stand_for_a_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, "from-the-env")
    (tmp_path / "pw").write_text("from-the-file\n")
    creds = [
        {"domain": "a.example", "username": "u", "password_env": ENV},
        {"domain": "b.example", "username": "u", "password_file": str(tmp_path / "pw")},
    ]
    order = load_order(EXAMPLE, ["chains.fetch.fetch_http.params.credentials=" + json.dumps(creds)])
    got = [c["password"] for c in order.chains.fetch[1].params["credentials"]]
    assert got == ["from-the-env", "from-the-file"]
    from crawler.order.loader import effective_yaml

    text = effective_yaml(order)
    assert "from-the-env" not in text and f"${{ENV:{ENV}}}" in text
    assert "from-the-file" not in text and "${FILE:" in text
