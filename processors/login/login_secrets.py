"""A login submission's secrets: kept out of the frontier, put in at the moment it is sent, and
optionally kept out of the WARC.

A submission waits in the frontier (on disk) like any URI. Its body is stored with each secret
field's value replaced by a token (:func:`hide`); FetchHTTP puts the value back just before
sending (:func:`reveal`), from the credential held in memory. A field is secret when its name
says so (password, pass, pwd, token, ...) or its value is a secret of the order (from
``${ENV:...}`` / ``${FILE:...}``, see :mod:`crawler.secrets`).

The WARC request record of the login keeps the body as sent by default: replay of a site that
checks it, and provenance, need it. With ``redact_login_body: true`` :func:`redact_request`
replaces each secret there with ``[redacted]`` (and the ``Content-Length`` with the new length),
and Basic/Digest ``Authorization`` values too. Pure functions: thread-safe.
"""

from __future__ import annotations

import re
from urllib.parse import quote_plus, urlencode

from crawler.secrets.secret_refs import SECRET_KEY
from crawler.secrets.secret_registry import MARK, known
from processors.login.form_credential import FormCredential

TOKEN = "__crawler_secret_"
_TOKEN_RE = re.compile(re.escape(TOKEN) + r"(\d+)__")
_LENGTH_RE = re.compile(rb"(?im)^(content-length:[ \t]*)\d+")
_AUTH_RE = re.compile(rb"(?im)^(authorization:[ \t]*)(\S+)[^\r\n]*")


def secret_fields(cred: FormCredential) -> list[tuple[int, str, str]]:
    """``(index, name, value)`` of ``cred``'s secret fields (see the module docstring)."""
    secrets = set(known())
    return [
        (i, name, value)
        for i, (name, value) in enumerate(cred.fields.items())
        if value and (SECRET_KEY.match(name) or value in secrets)
    ]


def hide(cred: FormCredential, body: str) -> str:
    """``body`` (URL-encoded form) with each secret field's value replaced by its token."""
    for i, name, value in secret_fields(cred):
        body = body.replace(urlencode([(name, value)]), urlencode([(name, f"{TOKEN}{i}__")]))
    return body


def reveal(cred: FormCredential, body: str) -> str:
    """``body`` with every token replaced by the (URL-encoded) value it stands for."""
    values = list(cred.fields.values())

    def value(match: re.Match[str]) -> str:
        index = int(match.group(1))
        return quote_plus(values[index]) if index < len(values) else ""

    return _TOKEN_RE.sub(value, body)


def redact_request(cred: FormCredential | None, sent: bytes) -> bytes:
    """The request ``sent`` (head and body) with the secret fields of ``cred`` and any
    ``Authorization`` value replaced by ``[redacted]``."""
    head, sep, body = sent.partition(b"\r\n\r\n")
    head = _AUTH_RE.sub(lambda m: m.group(1) + m.group(2) + b" " + MARK.encode(), head)
    if cred is not None and sep:
        for _, _, value in secret_fields(cred):
            body = body.replace(quote_plus(value).encode(), quote_plus(MARK).encode())
            body = body.replace(value.encode(), MARK.encode())
        head = _LENGTH_RE.sub(lambda m: m.group(1) + str(len(body)).encode(), head)
    return head + sep + body
