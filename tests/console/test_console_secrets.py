"""The console never shows a password an order holds in clear; references stay readable."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from support.console_runs import AUTH

LOGIN = """
chains:
  fetch:
    - name: fetch_http
      params:
        form_logins:
          - domain: example.org
            login_uri: https://example.org/login
            fields: {user: alice, pass: clear-pass-123}
        credentials:
          - {domain: example.org, username: bob, password: "${ENV:SITE_PASSWORD}"}
"""


def test_the_order_text_has_its_clear_passwords_redacted(
    client: TestClient, jobs_dir: Path
) -> None:
    order = jobs_dir / "site" / "order.yaml"
    order.write_text(order.read_text() + LOGIN)
    text = client.get("/api/jobs/site", headers=AUTH).json()["order_text"]
    assert "clear-pass-123" not in text
    assert "pass: [redacted]" in text
    assert "${ENV:SITE_PASSWORD}" in text  # a reference is not a secret
    assert "user: alice" in text
