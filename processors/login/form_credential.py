"""FormCredential: one host's HTML form login, as the order states it.

The login page (``login_uri``) is fetched first; its form — the one holding the most of the
configured field names, else the first with a password input, else the first — gives the action,
the method and the fields a browser would send (hidden inputs such as CSRF tokens, default
values, checked boxes, the first named submit button); ``fields`` are filled in over them and the
form is submitted. With ``read_form: false`` the page is not fetched and ``fields`` alone go to
``form_action`` (or ``login_uri``). Heritrix counterpart: ``HtmlFormCredential`` (its
``loginUri``, ``formItems`` and ``httpMethod``), with the form read from the page as
``FormLoginProcessor`` does.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from crawler import Params


class FormCredential(Params):
    """A form login for one host (see the module docstring)."""

    domain: str = Field(
        description="host name (or host:port) whose URIs wait for this login; no other host "
        "is logged in by it"
    )
    login_uri: str = Field(description="absolute URL of the page with the login form")
    fields: dict[str, str] = Field(
        default_factory=dict,
        description="field name -> value filled into the form, e.g. {username: alice, "
        "password: ${ENV:SITE_PASSWORD}} (secret fields are kept out of the frontier and "
        "order.effective.yaml; in the login's WARC request record unless redact_login_body)",
    )
    form_action: str | None = Field(
        None,
        description="where the form is sent (absolute or relative to login_uri); null = "
        "the form's own action",
    )
    method: Literal["POST", "GET"] | None = Field(
        None, description="POST or GET; null = the form's method (POST without reading a form)"
    )
    read_form: bool = Field(
        True,
        description="fetch login_uri and take the form's hidden fields (CSRF tokens) and "
        "action from it; false = send only `fields`, without fetching the page",
    )
    success_regex: str | None = Field(
        None, description="the login response body must match this regular expression"
    )
    failure_regex: str | None = Field(
        None, description="the login failed if the response body matches this expression"
    )
    success_cookie: str | None = Field(
        None, description="the login must set a cookie of this name for the host"
    )
    success_redirect: str | None = Field(
        None, description="the login response must redirect to a URL matching this expression"
    )
    on_failure: Literal["skip", "crawl"] = Field(
        "skip",
        description="after a failed login: skip = the host's URIs end with -62 unfetched; "
        "crawl = they are fetched without a session",
    )
    max_attempts: int = Field(
        2, ge=1, description="login attempts (page + submission) before the login is failed"
    )
    max_relogins: int = Field(
        3,
        ge=0,
        description="times a lost session (a URI of the host redirected to login_uri after the "
        "login) is logged in again, the URI fetched after; 0 = never",
    )

    @field_validator("login_uri")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if not value.lower().startswith(("http://", "https://")):
            raise ValueError(f"login_uri {value!r} must be an absolute http(s) URL")
        return value

    @field_validator("success_regex", "failure_regex", "success_redirect")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"{value!r} is not a regular expression: {exc}") from None
        return value

    @property
    def key(self) -> str:
        """The credential's name in the login states (its domain, lower-cased)."""
        return self.domain.strip().lower()

    def matches_host(self, host: str, port: int) -> bool:
        """Whether ``host`` (on ``port``) is the credential's domain."""
        key = self.key
        host = host.lower()
        return key == host or key == f"{host}:{port}"
