"""Credentials: which 401 challenge a configured login answers, and for which host."""

from __future__ import annotations

import httpx
import pytest
from pydantic import ValidationError

from processors.fetch import Credential
from processors.fetch.credentials import challenges, find_credential


def test_challenges_parsed_with_realms() -> None:
    assert challenges(['Basic realm="site"']) == [("basic", "site")]
    assert challenges(['Digest qop="auth", realm="a, b", nonce="x"']) == [("digest", "a, b")]
    assert challenges(['Basic realm="one", Digest realm="two", nonce="n"']) == [
        ("basic", "one"),
        ("digest", "two"),
    ]
    assert challenges(["Bearer", "basic"]) == [("basic", None)]
    assert challenges(["Negotiate abc==", "garbage realm="]) == []


def test_credential_only_for_its_host_and_port() -> None:
    cred = Credential(domain="Example.org", username="u", password="p")
    assert cred.matches_host("example.org", 80)
    assert cred.matches_host("EXAMPLE.ORG", 8080)
    assert not cred.matches_host("www.example.org", 80)
    assert not cred.matches_host("example.org.evil", 80)
    on_port = Credential(domain="example.org:8443", username="u", password="p")
    assert on_port.matches_host("example.org", 8443)
    assert not on_port.matches_host("example.org", 443)


def test_find_credential_matches_scheme_and_realm() -> None:
    basic = Credential(domain="a.test", username="u", password="p", realm="site")
    digest = Credential(domain="a.test", username="d", password="p", scheme="digest")
    creds = (basic, digest)
    assert find_credential(creds, "a.test", 80, ['Basic realm="site"']) is basic
    assert find_credential(creds, "a.test", 80, ['Basic realm="other"']) is None
    assert find_credential(creds, "a.test", 80, ['Digest realm="x", nonce="n"']) is digest
    assert find_credential(creds, "b.test", 80, ['Basic realm="site"']) is None
    assert find_credential(creds, "a.test", 80, []) is None


def challenged(*www_authenticate: str) -> httpx.Response:
    request = httpx.Request("GET", "http://a.test/private?x=1")
    headers = [("WWW-Authenticate", value) for value in www_authenticate]
    return httpx.Response(401, headers=headers, request=request)


def test_basic_authorization() -> None:
    cred = Credential(domain="a.test", username="Aladdin", password="open sesame")
    response = challenged('Basic realm="x"')
    assert cred.authorization(response) == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="


def test_digest_authorization_answers_the_challenge() -> None:
    cred = Credential(domain="a.test", username="bob", password="pw", scheme="digest")
    response = challenged('Basic realm="x"', 'Digest realm="r", nonce="abc", qop="auth"')
    value = cred.authorization(response)
    assert value is not None and value.startswith("Digest ")
    assert 'username="bob"' in value
    assert 'uri="/private?x=1"' in value
    assert 'nonce="abc"' in value


def test_digest_without_a_usable_challenge() -> None:
    cred = Credential(domain="a.test", username="bob", password="pw", scheme="digest")
    assert cred.authorization(challenged('Basic realm="x"')) is None
    assert cred.authorization(challenged("Digest garbage")) is None


def test_unknown_scheme_rejected() -> None:
    with pytest.raises(ValidationError, match="scheme"):
        Credential(domain="a", username="u", password="p", scheme="ntlm")
