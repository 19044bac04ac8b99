"""PostCapture: a browser page's requests other than GET — a search box's POST, a "load more"
API, a GraphQL query — sent through the crawler's FetchHTTP and captured.

A method in the order's ``browser.capture_methods`` (default ``[POST]``; ``PUT``, ``PATCH`` and
``DELETE`` may be added, but they ask a site to change something, so they are refused unless
named) goes, with its body and ``Content-Type``, through the same
:class:`~processors.browser.subresource_fetcher.SubresourceFetcher` path as the page's GETs:
block rules, the address guard, robots.txt, the server gate, FetchHTTP (a ``request`` record
with the body and the ``response`` record in the WARC), and a crawl.log line annotated
``browser`` and ``method:<METHOD>``. Unlike a GET sub-resource (hop ``E``, an embed, which the
scope's transclusion rule accepts off-site) it is a submission, hop ``S`` as a form's, and must
be in the crawl's scope (a POST is an action on the site; one out of scope is logged -5000 and
not sent).

What is already seen is a (method, URL, body) triple, not a URL: :func:`claim_uri` is the name
it is claimed under in the uniq filter, the URL with ``__wb_method=<method>`` and
``__wb_body_sha1=<digest of the body>`` in its query, so two bodies posted to one URL are two
captures, and the same body posted again in another page is fetched for that page but not
recorded again. Within one page visit the same request is sent once: a :class:`PostCapture`
(one per visit) answers a repeat with the first answer. Other methods keep being refused in the
browser (``browser:nonGetBlocked`` on the page's line).

Thread-safety: a PostCapture is called from the pool's fetch threads; a repeat waits for the
first request with the same key to finish.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from processors.browser.page_visit import Served

METHOD_NOTE = "method:"
NOT_FORWARDED = frozenset(
    {
        "accept-encoding",
        "connection",
        "content-length",
        "content-type",
        "cookie",
        "host",
        "keep-alive",
        "referer",
        "te",
        "transfer-encoding",
        "upgrade-insecure-requests",
        "user-agent",
    }
)
"""Browser request headers a POST does not take along: FetchHTTP sets these itself."""


@dataclass(frozen=True, slots=True)
class BrowserRequest:
    """What of a page's request FetchHTTP needs besides its URL: method, body and its type."""

    method: str
    body: bytes
    content_type: str | None
    headers: tuple[tuple[str, str], ...] = ()  # the page's own, forwarded (CSRF tokens, API keys)

    def digest(self) -> str:
        """The body's SHA-1, hex."""
        return hashlib.sha1(self.body, usedforsecurity=False).hexdigest()

    def as_data(self) -> dict[str, object]:
        """The ``curi.data["http_request"]`` FetchHTTP sends (processors.login's format)."""
        data: dict[str, object] = {"method": self.method, "body": self.body}
        if self.content_type:
            data["content_type"] = self.content_type
        if self.headers:
            data["headers"] = [list(pair) for pair in self.headers]
        return data


def claim_uri(url: str, request: BrowserRequest) -> str:
    """The name ``request`` to ``url`` is known by in the uniq filter (module docstring)."""
    sep = "&" if "?" in url.split("#", 1)[0] else "?"
    base = url.split("#", 1)[0]
    return f"{base}{sep}__wb_method={request.method.lower()}&__wb_body_sha1={request.digest()}"


@dataclass(slots=True)
class _Slot:
    lock: threading.Lock = field(default_factory=threading.Lock)
    done: bool = False
    served: Served | None = None


class PostCapture:
    """One page visit's requests other than GET (see the module docstring).

    ``fetch(url, request, cookie, deadline_s)`` sends one (the SubresourceFetcher's);
    ``methods`` are the methods that may be sent."""

    def __init__(
        self,
        fetch: Callable[[str, BrowserRequest, str | None, float], Served | None],
        methods: frozenset[str],
    ) -> None:
        self._fetch = fetch
        self.methods = methods
        self._slots: dict[tuple[str, str, str], _Slot] = {}
        self._lock = threading.Lock()
        self.repeats = 0

    def send(
        self,
        url: str,
        method: str,
        body: bytes | None,
        headers: dict[str, str],
        deadline_s: float,
    ) -> Served | None:
        """What the browser gets for the request (None: abort it). A method not in
        :attr:`methods` is not sent. Of ``headers`` (the browser's, lower-case names),
        ``Cookie`` and ``Content-Type`` are used and the page's own are forwarded; those the
        browser or FetchHTTP set themselves are not (:data:`NOT_FORWARDED`, ``sec-*``)."""
        method = method.upper()
        if method not in self.methods:
            return None
        forwarded = tuple(
            (name, value)
            for name, value in headers.items()
            if name not in NOT_FORWARDED and not name.startswith(("sec-", ":"))
        )
        cookie = headers.get("cookie")
        request = BrowserRequest(method, body or b"", headers.get("content-type"), forwarded)
        key = (method, url, request.digest())
        with self._lock:
            slot = self._slots.get(key)
            if slot is None:
                slot = self._slots[key] = _Slot()
        with slot.lock:
            if slot.done:
                with self._lock:
                    self.repeats += 1
                return slot.served
            slot.served = self._fetch(url, request, cookie, deadline_s)
            slot.done = True
            return slot.served
