"""MethodQuery: how a request other than a GET is told apart in a CDXJ index.

A POST to ``/api/search`` with ``{"q": "owl"}`` and one with ``{"q": "cat"}`` get different
answers at the same URL, so the index key of each response carries its request: the URL gets
``__wb_method=<method>`` appended to its query and, for a POST or PUT, the request body turned
into query pairs, before the key's SURT is taken. This is the key pywb computes for the request a
replayed page sends (and the one ``cdxj-indexer --post-append`` writes), so a replayed page's
``fetch()`` finds its capture. The body becomes:

* ``application/x-www-form-urlencoded``: the body itself, ``+`` and ``%xx`` decoded;
* ``application/json`` (and ``text/plain`` that parses as JSON): every scalar under its nearest
  object key, ``name=value`` (a repeated name gets ``.2_``, ``.3_`` …; ``true``/``false``/``null``
  as JavaScript writes them, a whole float without ``.0``); a body that is not JSON adds nothing;
* ``multipart/*``: each part's name and value;
* anything else (a binary body, ``text/plain`` that is not JSON): ``__wb_post_data=<base64>``.

Values of secret fields (``password``, ``pass``, ``token``, ...) and the order's known secrets
are ``[redacted]`` (:func:`without_secrets`). The query is cut at 4096 characters, as pywb
does. Pure functions; any thread.
"""

from __future__ import annotations

import base64
import email.parser
import email.policy
import json
import math
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus, urlencode

from crawler.secrets.secret_refs import SECRET_NAME
from crawler.secrets.secret_registry import MARK, redact

MAX_QUERY_CHARS = 4096
_SECRET_PAIR = re.compile(rf"(^|&)({SECRET_NAME})=[^&]*", re.IGNORECASE)
BODY_METHODS = frozenset({"POST", "PUT"})
"""Methods whose body is part of the key (for others only the method is)."""


@dataclass(frozen=True, slots=True)
class MethodQuery:
    """A request's method (upper case) and its body as query pairs (``""``: none)."""

    method: str
    query: str

    def append_to(self, url: str) -> str:
        """``url`` with ``__wb_method=…`` and the body's pairs appended to its query."""
        text = ("&" if "?" in url else "?") + "__wb_method=" + self.method
        if self.query:
            text += "&" + self.query
        return url + text


def method_query(method: str, content_type: str | None, body: bytes) -> MethodQuery | None:
    """The MethodQuery of a request; None for a GET (its key is the plain URL's)."""
    method = method.upper()
    if method == "GET":
        return None
    if method not in BODY_METHODS or not body:
        return MethodQuery(method, "")
    query = without_secrets(body_query(content_type or "", body))
    return MethodQuery(method, query[:MAX_QUERY_CHARS])


def without_secrets(query: str) -> str:
    """``query`` with the values of secret fields (password, token, ...: a login's) and the
    order's known secrets as ``[redacted]``: an index is shared more widely than the WARC it
    points into, and pywb never needs a login's key to replay a page."""
    query = _SECRET_PAIR.sub(lambda m: m.group(1) + m.group(2) + "=" + MARK, query)
    return redact(query)


def request_method_query(request: bytes) -> MethodQuery | None:
    """The MethodQuery of a raw HTTP/1.x request (head, then body, as a WARC ``request``
    record's block holds it); None for a GET or something that is not a request."""
    split = request.find(b"\r\n\r\n")
    head = request if split < 0 else request[:split]
    lines = head.split(b"\r\n")
    method = lines[0].split(b" ", 1)[0].decode("latin-1")
    if not method or method == "GET" or not method.isalpha():
        return None
    content_type: str | None = None
    length: int | None = None
    for raw in lines[1:]:
        name, sep, value = raw.partition(b":")
        if not sep:
            continue
        key = name.strip().lower()
        if key == b"content-type":
            content_type = value.strip().decode("latin-1")
        elif key == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                length = None
    body = b"" if split < 0 else request[split + 4 :]
    if length is not None:
        body = body[: max(0, length)]
    return method_query(method, content_type, body)


def body_query(content_type: str, body: bytes) -> str:
    """A request body as query pairs (see the module docstring); never raises."""
    mime = content_type.strip().lower()
    if mime.startswith("application/x-www-form-urlencoded"):
        try:
            return unquote_plus(body.decode("utf-8"), errors="strict")
        except UnicodeDecodeError:
            return _binary(body)
    if mime.startswith("application/json"):
        try:
            return json_query(body)
        except ValueError:
            return ""
    if mime.startswith("text/plain"):
        try:
            return json_query(body)
        except ValueError:
            return _binary(body)
    if mime.startswith("multipart/"):
        pairs = _multipart_pairs(content_type, body)
        return _binary(body) if pairs is None else urlencode(pairs, doseq=True)
    return _binary(body)


def json_query(body: bytes) -> str:
    """A JSON body's scalars as ``name=value`` pairs; ValueError if it is not JSON."""
    try:
        doc = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(str(error)) from None
    pairs: dict[str, str] = {}
    repeats: dict[str, int] = {}

    def add(name: str, value: str) -> None:
        if name in pairs:
            repeats[name] = repeats.get(name, 1) + 1
            name = f"{name}.{repeats[name]}_"
        pairs[name] = value

    def walk(node: Any, name: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, key)
        elif isinstance(node, list):
            for value in node:
                walk(value, name)
        elif name:
            add(name, _js_text(node))

    walk(doc, "")
    return urlencode(pairs)


def _js_text(value: Any) -> str:
    """A JSON scalar as JavaScript's ``String()`` writes it (``true``, ``null``, ``2`` for 2.0)."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return str(int(value))
    return str(value)


def _binary(body: bytes) -> str:
    return "__wb_post_data=" + base64.b64encode(body).decode("ascii")


def _multipart_pairs(content_type: str, body: bytes) -> list[tuple[str, Any]] | None:
    """(name, value) of each part of a multipart body; None if it cannot be split."""
    if "boundary=" not in content_type.lower():
        return None
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode("latin-1", "replace")
    try:
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    except (ValueError, LookupError):
        return None
    if not message.is_multipart():
        return None
    pairs: list[tuple[str, Any]] = []
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not name:
            continue
        payload = part.get_payload(decode=True)
        if not isinstance(payload, bytes):
            payload = b""
        if part.get_filename():
            pairs.append((str(name), payload))
        else:
            charset = part.get_content_charset() or "utf-8"
            pairs.append((str(name), payload.decode(charset, "replace")))
    return pairs
