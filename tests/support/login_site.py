"""A local site with a members-only section behind an HTML form login, for the login tests.

On 127.0.0.1 (any free port): ``/`` (public) links to ``/about.html``, ``/login`` and
``/members/``; ``/members/`` links to ``/logout`` (which ends the session: a crawl should keep
away from it) and ``/members/p1.html`` … ``/members/pN.html``. A members page without a
valid ``sid`` cookie redirects (302) to ``/login?next=<path>``. ``GET /login`` sets a
``pre`` cookie and serves a search form and the login form, whose hidden ``csrf_token`` is bound
to that ``pre`` cookie; ``POST /login`` with the right token, user and password sets ``sid``
(a session cookie) and redirects (303) to ``/members/``; otherwise it answers 200 with
"Invalid user name or password" and the form again. ``latency_s`` slows every answer;
``robots`` is served as /robots.txt (else 404). With ``validators``, a 200 GET (but the login
page's) carries an ``ETag`` of its body and a matching ``If-None-Match`` gets a 304 (members
pages only with a valid session: without one they still redirect to the login page).

``posts`` lists the fields of every login POST; ``members_hits`` lists, per members request,
its path and whether it carried a valid session. Thread-safe (one lock).
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import parse_qsl, urlsplit

USER = "alice"
PASSWORD = "s3cret"


class LoginSite:
    """See the module docstring."""

    def __init__(
        self,
        members_pages: int = 3,
        latency_s: float = 0.0,
        robots: str = "",
        validators: bool = False,
    ) -> None:
        self.members_pages = members_pages
        self.validators = validators
        self.robots = robots
        self.latency_s = latency_s
        self.lock = threading.Lock()
        self.csrf: dict[str, str] = {}  # pre cookie -> its CSRF token
        self.sessions: set[str] = set()
        self.posts: list[dict[str, str]] = []
        self.members_hits: list[tuple[str, bool]] = []
        self.requests: list[tuple[str, str]] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site._answer(self, "GET", b"")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                site._answer(self, "POST", self.rfile.read(length))

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> LoginSite:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()

    def member_urls(self) -> list[str]:
        """Every members page."""
        pages = [f"/members/p{n}.html" for n in range(1, self.members_pages + 1)]
        return [self.base + path for path in ["/members/", *pages]]

    def add_session(self) -> str:
        """A valid session id, as if someone had logged in (for a cookies.txt)."""
        sid = secrets.token_hex(8)
        with self.lock:
            self.sessions.add(sid)
        return sid

    # ------------------------------------------------------------------ answers
    def _answer(self, h: BaseHTTPRequestHandler, method: str, body: bytes) -> None:
        if self.latency_s:
            time.sleep(self.latency_s)
        url = urlsplit(h.path)
        cookies = _cookies(h.headers.get("Cookie", ""))
        with self.lock:
            self.requests.append((method, h.path))
        headers: list[tuple[str, str]] = []
        if url.path == "/login" and method == "POST":
            status, page = self._login_post(dict(parse_qsl(body.decode())), cookies, headers)
        elif url.path == "/login":
            pre = cookies.get("pre") or secrets.token_hex(8)
            if "pre" not in cookies:
                headers.append(("Set-Cookie", f"pre={pre}; Path=/; HttpOnly"))
            status, page = 200, self._login_page(pre, "")
        elif url.path.startswith("/members/"):
            valid = cookies.get("sid") in self.sessions
            with self.lock:
                self.members_hits.append((url.path, valid))
            if not valid:
                status, page = 302, ""
                headers.append(("Location", f"/login?next={url.path}"))
            elif url.path == "/members/":
                links = '<a href="/logout">log out</a>'
                links += "".join(f'<a href="{u}">{u}</a>' for u in self.member_urls()[1:])
                status, page = 200, f"<h1>Members area</h1>{links}"
            else:
                status, page = 200, f"<h1>Members only: {url.path}</h1>"
        elif url.path == "/logout":
            with self.lock:
                self.sessions.discard(cookies.get("sid", ""))
            status, page = 302, ""
            headers.append(("Location", "/"))
        elif url.path == "/":
            links = '<a href="/about.html">about</a> <a href="/members/">members</a>'
            status, page = 200, f"<h1>Public home</h1>{links} <a href='/login'>log in</a>"
        elif url.path == "/robots.txt" and self.robots:
            status, page = 200, ""
            headers.append(("Content-Type", "text/plain"))
        elif url.path == "/about.html":
            status, page = 200, "<h1>About</h1>"
        else:
            status, page = 404, "not found"
        data = f"<html><body>{page}</body></html>".encode()
        if url.path == "/robots.txt" and self.robots:
            data = self.robots.encode()
        if self.validators and method == "GET" and status == 200 and url.path != "/login":
            etag = '"' + hashlib.sha1(data).hexdigest()[:16] + '"'
            headers.append(("ETag", etag))
            if h.headers.get("If-None-Match") == etag:
                with self.lock:
                    self.requests.append(("304", h.path))
                h.send_response(304)
                h.send_header("ETag", etag)
                h.end_headers()
                return
        h.send_response(status)
        for name, value in [("Content-Type", "text/html; charset=utf-8"), *headers]:
            h.send_header(name, value)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _login_page(self, pre: str, message: str) -> str:
        with self.lock:
            token = self.csrf.setdefault(pre, secrets.token_hex(12))
        return (
            f"<p>{message}</p>"
            '<form action="/search" method="get"><input name="q"><input type="submit"></form>'
            '<form action="/login" method="post">'
            f'<input type="hidden" name="csrf_token" value="{token}">'
            '<input name="user"> <input type="password" name="pass">'
            '<input type="checkbox" name="remember" value="yes" checked>'
            '<button type="submit" name="go" value="1">Log in</button></form>'
        )

    def _login_post(
        self, form: dict[str, str], cookies: dict[str, str], headers: list[tuple[str, str]]
    ) -> tuple[int, str]:
        with self.lock:
            self.posts.append(form)
            token = self.csrf.get(cookies.get("pre", ""))
        if (
            token is not None
            and form.get("csrf_token") == token
            and form.get("user") == USER
            and form.get("pass") == PASSWORD
        ):
            sid = self.add_session()
            headers.append(("Set-Cookie", f"sid={sid}; Path=/; HttpOnly"))
            headers.append(("Location", "/members/"))
            return 303, ""
        return 200, self._login_page(cookies.get("pre", ""), "Invalid user name or password")


def _cookies(header: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for part in header.split(";"):
        name, sep, value = part.strip().partition("=")
        if sep:
            found[name] = value
    return found
