"""HTTP authentication credentials of the order, and which one answers a 401 challenge.

A :class:`Credential` names one host (``domain``: a host name, or ``host:port``) and is offered
only to that host — never to its subdomains or another port — and only when a 401's
``WWW-Authenticate`` challenges with the credential's scheme (and realm, when one is given).
Heritrix counterpart: ``HttpAuthenticationCredential`` in the ``CredentialStore``.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Sequence
from typing import Literal

import httpx
from pydantic import Field

from crawler import Params

_SCHEME_RE = re.compile(r"(?:^|,)\s*(basic|digest)(?=\s|,|$)", re.IGNORECASE)
_REALM_RE = re.compile(r'realm\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))', re.IGNORECASE)


class Credential(Params):
    """A user name and password for one host's HTTP Basic or Digest authentication."""

    domain: str = Field(
        description="host name (or host:port) the credential is sent to; no other host gets it"
    )
    username: str = Field(description="user name")
    password: str = Field(
        description="password; ${ENV:NAME} or ${FILE:path} (or password_env / password_file) "
        "keep it out of the order; in the WARC request record unless redact_login_body"
    )
    scheme: Literal["basic", "digest"] = Field("basic", description="basic | digest")
    realm: str | None = Field(None, description="only answer challenges for this realm; null = any")

    def matches_host(self, host: str, port: int) -> bool:
        """Whether this credential belongs to ``host`` (on ``port``)."""
        domain = self.domain.strip().lower()
        host = host.lower()
        return domain == host or domain == f"{host}:{port}"

    def authorization(self, challenged: httpx.Response) -> str | None:
        """The ``Authorization`` value answering the 401 ``challenged`` (None if unanswerable).

        Computed here from the 401 already received, not with an httpx auth flow: a flow
        reads each intermediate 401's body whole and decoded — a decompression bomb's way in.
        """
        if self.scheme == "basic":
            token = base64.b64encode(f"{self.username}:{self.password}".encode())
            return "Basic " + token.decode("ascii")
        for header in challenged.headers.get_list("www-authenticate"):
            if header[:7].lower() != "digest ":
                continue
            digest = httpx.DigestAuth(self.username, self.password)
            try:
                # httpx's own digest arithmetic (RFC 7616: MD5, SHA-256, -sess, qop auth).
                challenge = digest._parse_challenge(challenged.request, challenged, header)
                return digest._build_auth_header(challenged.request, challenge)
            except (httpx.HTTPError, ValueError, KeyError):
                return None
        return None


def challenges(values: Iterable[str]) -> list[tuple[str, str | None]]:
    """``(scheme, realm)`` of each Basic/Digest challenge in ``WWW-Authenticate`` values."""
    found: list[tuple[str, str | None]] = []
    for value in values:
        matches = list(_SCHEME_RE.finditer(value))
        for i, match in enumerate(matches):
            end = matches[i + 1].start() if i + 1 < len(matches) else len(value)
            realm_match = _REALM_RE.search(value, match.end(), end)
            realm = None
            if realm_match is not None:
                realm = (
                    realm_match.group(1)
                    if realm_match.group(1) is not None
                    else (realm_match.group(2))
                )
            found.append((match.group(1).lower(), realm))
    return found


def find_credential(
    credentials: Sequence[Credential], host: str, port: int, www_authenticate: Iterable[str]
) -> Credential | None:
    """The first credential for ``host:port`` whose scheme (and realm) a challenge asks for."""
    candidates = [c for c in credentials if c.matches_host(host, port)]
    if not candidates:
        return None
    offered = challenges(www_authenticate)
    for credential in candidates:
        for scheme, realm in offered:
            if scheme == credential.scheme and (
                credential.realm is None or credential.realm == realm
            ):
                return credential
    return None
