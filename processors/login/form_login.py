"""FormLogin: a host's form login done once, as a prerequisite, before its other URIs are fetched.

FetchHTTP owns one (its ``form_logins``) and asks it about every http(s) URI before fetching
(:meth:`FormLogin.gate`) and after (:meth:`FormLogin.after_fetch`). For a host with a
:class:`~processors.login.form_credential.FormCredential`, the first URI is deferred (-50) with
the login page as its prerequisite (hop ``P``, force-fetched, one directive more urgent, so it
goes first in the URI's queue, like robots.txt); once the page is fetched its form is read and
the next URI is deferred behind the submission (hop ``P``, usually a POST whose request record
holds the form). The submission's response is checked (:mod:`~processors.login.login_check`):

* worked — the session cookies are in the crawl's cookie store and every URI of the host is
  fetched with them; the submission is annotated ``formLogin:ok``;
* failed — an alert (``form_login_failed`` in alerts.log, with the reason), the submission is
  annotated ``formLogin:failed`` and, with ``on_failure: skip``, every other URI of the host
  ends with -62 (other prerequisite failed) annotated ``loginFailed``, unfetched.

A URI of a logged-in host that redirects to ``login_uri`` means the session was lost (expired,
or a logout link was followed): the host logs in again and the URI is fetched after, up to
``max_relogins`` times (then such redirects are captured as they are).

Outcomes are journaled in ``state/form-logins.jsonl``: a resumed crawl (``kill -9`` too)
neither logs in again nor retries a failed login. URIs of the host in other queues wait (1 s
polls, not counted as attempts) while one queue runs the login. A login that never completes
(``max_attempts`` page + submission rounds) fails. robots.txt is never held back.

In a ``--workers`` crawl (:meth:`FormLogin.share`: the crawl's shared tallies and this worker's
cookie store) a worker publishes each outcome of a credential — with, for a login that worked,
the cookies the host's site then holds — and a claim while its login is under way, as one text
per credential (``login:<domain>``, numbered by a generation). A worker whose credential has no
outcome yet reads it (at most once a second per credential, only until it has one): it adopts an
outcome newer than its own, copying the cookies into its own store, so the login is done once
for the crawl, and waits while another worker's claim is fresh (:data:`CLAIM_HOLD_S`) instead of
logging in too. Each worker keeps its own cookie store: cookies the site sets later (a session
refreshed on a members page) stay with the worker that got them; a worker that finds the session
lost logs in again itself, unless another worker already published a newer login.

Thread-safe: one lock guards the per-credential states, held for dictionary updates only.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from crawler import CrawlURI, FetchStatus, Hop
from crawler.robots import is_robots_uri
from crawler.tally import TallyStore
from crawler.urls import UriError, host_port
from processors.cookies.cookie_store import CookieRecord, CookieStore
from processors.login.form_credential import FormCredential
from processors.login.login_check import login_failure, same_page
from processors.login.login_form import Submission, build_submission, choose_form, find_forms
from processors.login.login_secrets import hide, redact_request, reveal

MARKER = "form_login"
"""``curi.data`` key of a login page or submission: ``{"domain": ..., "step": page|submit}``."""
REQUEST = "http_request"
"""``curi.data`` key FetchHTTP reads a non-GET request from: ``{method, body, content_type}``."""
CLAIM_HOLD_S = 120.0
"""How long other URIs of the host wait for a login step in flight before scheduling their own."""
WAIT_POLL_S = 1.0
SHARED_KEY = "login:"
"""Key prefix of a credential's shared state (a JSON text) in the crawl's tallies."""
MAX_BODY_BYTES = 2 * 1024 * 1024


@dataclass
class _State:
    outcome: str = ""  # "", "ok" or "failed"
    reason: str = ""
    attempts: int = 0
    claimed_s: float | None = None
    claimed_by: str = ""
    pending: Submission | None = None
    relogins: int = 0
    generation: int = 0  # of the shared outcome this worker made or adopted last
    checked_s: float | None = None  # when the shared state was last read
    held_until_s: float = 0.0  # another worker's login claim holds the host until then


class FormLogin:
    """The form logins of ``credentials`` (see the module docstring)."""

    def __init__(self, credentials: Sequence[FormCredential], logger: Any) -> None:
        self._credentials = {c.key: c for c in credentials}
        self._logger = logger
        self._states: dict[str, _State] = {key: _State() for key in self._credentials}
        self._lock = threading.Lock()
        self._journal: Path | None = None
        self._shared: TallyStore | None = None
        self._cookies: CookieStore | None = None
        self._token = secrets.token_hex(8)  # tells this worker's claims from the others'

    def share(self, store: TallyStore, cookies: CookieStore | None) -> None:
        """Share outcomes (and the cookies of a login that worked, from and into ``cookies``)
        with the other workers of the crawl through ``store`` (module docstring)."""
        self._shared, self._cookies = store, cookies

    def open(self, path: Path) -> int:
        """Replay the outcomes journaled at ``path``, then journal new ones there; returns how
        many credentials have an outcome already."""
        if path.exists():
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    entry = json.loads(line)
                    state = self._states.get(str(entry["domain"]))
                except (ValueError, KeyError, TypeError):
                    continue
                if state is not None:
                    outcome = str(entry["outcome"])
                    state.outcome = "" if outcome == "lost" else outcome
                    state.reason = str(entry["reason"])
        self._journal = path
        return sum(1 for s in self._states.values() if s.outcome)

    def credential_for(self, uri: str) -> FormCredential | None:
        """The credential of ``uri``'s host, if any."""
        try:
            host, port = host_port(uri)
        except (UriError, ValueError):
            return None
        host = host.lower()
        return self._credentials.get(f"{host}:{port}") or self._credentials.get(host)

    def outcome(self, domain: str) -> str:
        """``ok``, ``failed`` or ``""`` (not yet) for the credential of ``domain``."""
        state = self._states.get(domain.lower())
        return state.outcome if state is not None else ""

    def report(self) -> list[str]:
        """One line per credential for processors-report.txt: its outcome (and why it failed)."""
        lines = []
        for key, state in self._states.items():
            outcome = state.outcome or "not done"
            reason = f" ({state.reason})" if state.reason else ""
            lines.append(f"  form login {key}: {outcome}{reason}")
        return lines

    # ---------------------------------------------------------------- before
    def gate(self, curi: CrawlURI, now_s: float) -> bool:
        """True if ``curi`` may be fetched now; else its status is set (-50 with a login step
        as its prerequisite, -50 waiting, or -62) and it must not be fetched."""
        cred = self.credential_for(curi.uri)
        if cred is None:
            return True
        marker = curi.data.get(MARKER)
        if isinstance(marker, dict) and marker.get("domain") == cred.key:
            return True
        if is_robots_uri(curi.uri):
            return True
        state = self._states[cred.key]
        if not state.outcome and self._shared is not None:
            self._follow_shared(cred, state, now_s)
        if state.outcome == "ok":
            return True
        if state.outcome == "failed":
            return self._refuse(cred, curi)
        waiting = False
        with self._lock:
            step: CrawlURI | None = None
            if state.claimed_by == curi.uri:
                # Back after its own login step, which sorts ahead of it in its queue: the step
                # ended without a response (robots.txt refused it, or its retries ran out).
                state.claimed_s = None
            if (
                state.claimed_s is not None and now_s - state.claimed_s < CLAIM_HOLD_S
            ) or now_s < state.held_until_s:
                waiting = True
            elif state.pending is not None:
                step = self._step(curi, cred, "submit", state.pending)
                state.pending = None
            elif state.attempts < cred.max_attempts:
                state.attempts += 1
                if cred.read_form:
                    step = self._step(curi, cred, "page", None)
                else:
                    sub = build_submission(
                        cred.login_uri, None, cred.fields, cred.form_action, cred.method
                    )
                    step = self._step(curi, cred, "submit", sub)
            if step is not None:
                state.claimed_s, state.claimed_by = now_s, curi.uri
        if step is not None and self._shared is not None:
            self._publish(cred, "", "", now_s + CLAIM_HOLD_S)
        curi.status = FetchStatus.DEFERRED
        if step is not None:
            curi.prerequisite = step
        elif waiting:
            # No prerequisite of its own: neither an attempt nor a deferral.
            curi.retry_delay_s = WAIT_POLL_S
        else:
            self._fail(cred, f"no login after {cred.max_attempts} attempts", curi.uri)
            return self._refuse(cred, curi)
        return False

    @staticmethod
    def _step(curi: CrawlURI, cred: FormCredential, step: str, sub: Submission | None) -> CrawlURI:
        uri = sub.uri if sub is not None else cred.login_uri
        child = curi.create_child(uri, Hop.PREREQ)
        child.force_fetch = True
        child.directive = max(0, curi.directive - 1)
        child.data[MARKER] = {"domain": cred.key, "step": step}
        if sub is not None and sub.method != "GET":
            child.data[REQUEST] = {
                "method": sub.method,
                "body": hide(cred, sub.body),  # the frontier never holds a password
                "content_type": sub.content_type,
            }
        return child

    def reveal(self, curi: CrawlURI, body: str) -> str:
        """The body of login step ``curi`` as sent: its secrets put back (see
        :mod:`~processors.login.login_secrets`)."""
        cred = self._step_credential(curi)
        return reveal(cred, body) if cred is not None else body

    def redacted(self, curi: CrawlURI, sent: bytes) -> bytes:
        """The request ``sent`` for ``curi`` as the WARC keeps it with ``redact_login_body``."""
        return redact_request(self._step_credential(curi), sent)

    def _step_credential(self, curi: CrawlURI) -> FormCredential | None:
        marker = curi.data.get(MARKER)
        if not isinstance(marker, dict):
            return None
        return self._credentials.get(str(marker.get("domain")))

    def _refuse(self, cred: FormCredential, curi: CrawlURI) -> bool:
        if cred.on_failure == "crawl":
            return True
        curi.status = FetchStatus.OTHER_PREREQUISITE_FAILURE
        curi.annotate("loginFailed")
        return False

    # ----------------------------------------------------------------- after
    def after_fetch(self, curi: CrawlURI, cookie_names: set[str]) -> None:
        """Read the login page's form, or judge the submission's response (``cookie_names``:
        the cookies the host gets now). Only for the login steps :meth:`gate` scheduled."""
        marker = curi.data.get(MARKER)
        if not isinstance(marker, dict):
            return
        cred = self._credentials.get(str(marker.get("domain")))
        if cred is None:
            return
        state = self._states[cred.key]
        with self._lock:
            state.claimed_s, state.claimed_by = None, ""
        if curi.status <= 0 or state.outcome:
            return  # no response: the frontier retries the step (or the gate starts over)
        body = _body_text(curi)
        if marker.get("step") == "page":
            if not 200 <= curi.status < 300:
                self._fail(cred, f"login page answered {curi.status}", curi.uri)
                return
            form = choose_form(find_forms(body), set(cred.fields))
            if form is None:
                self._fail(cred, "no form on the login page", curi.uri)
                return
            sub = build_submission(curi.uri, form, cred.fields, cred.form_action, cred.method)
            with self._lock:
                state.pending = sub
            return
        reason = login_failure(
            cred, curi.uri, curi.status, curi.header("location"), body, cookie_names
        )
        if reason is None:
            curi.annotate("formLogin:ok")
            self._record(cred, "ok", "")
            self._logger.info("form_login_succeeded", domain=cred.key, uri=curi.uri)
        else:
            curi.annotate("formLogin:failed")
            self._fail(cred, reason, curi.uri)

    def session_lost(self, curi: CrawlURI) -> bool:
        """Whether ``curi`` (not a login step) found the session gone — its host's login worked
        but it redirects to ``login_uri`` — and the host is to log in again (up to
        ``max_relogins`` times); then the caller defers it through :meth:`gate`."""
        if not 300 <= curi.status < 400:
            return False
        cred = self.credential_for(curi.uri)
        location = curi.header("location")
        if cred is None or location is None or MARKER in curi.data:
            return False
        if not same_page(urljoin(curi.uri, location), cred.login_uri):
            return False
        state = self._states[cred.key]
        with self._lock:
            if state.outcome != "ok" or state.relogins >= cred.max_relogins:
                return False
            state.relogins += 1
            state.outcome, state.attempts = "", 0
        self._journal_entry(cred, "lost", f"{curi.uri} redirected to the login page")
        self._logger.info("form_login_session_lost", domain=cred.key, uri=curi.uri)
        return True

    def _fail(self, cred: FormCredential, reason: str, uri: str) -> None:
        self._record(cred, "failed", reason)
        self._logger.warning(
            "form_login_failed",
            domain=cred.key,
            uri=uri,
            reason=reason,
            host_uris="fetched without a session" if cred.on_failure == "crawl" else "-62",
        )

    def _record(self, cred: FormCredential, outcome: str, reason: str) -> None:
        state = self._states[cred.key]
        with self._lock:
            state.outcome, state.reason = outcome, reason
        self._journal_entry(cred, outcome, reason)
        if self._shared is not None:
            self._publish(cred, outcome, reason, 0.0)

    # ---------------------------------------------------------------- shared
    def _publish(self, cred: FormCredential, outcome: str, reason: str, until_s: float) -> None:
        """Tell the other workers: an outcome (a new generation, with the host's cookies when
        it worked), or a claim on the login until ``until_s`` (outcome "")."""
        assert self._shared is not None
        state = self._states[cred.key]
        with self._lock:
            if outcome:
                state.generation += 1
            generation = state.generation
        entry: dict[str, Any] = {"gen": generation, "outcome": outcome, "reason": reason}
        if outcome == "ok" and self._cookies is not None:
            entry["cookies"] = [_cookie_json(c) for c in self._site_cookies(cred)]
        if until_s:
            entry["claimed_until"], entry["by"] = until_s, self._token
        self._shared.put_text(SHARED_KEY + cred.key, json.dumps(entry))

    def _site_cookies(self, cred: FormCredential) -> list[CookieRecord]:
        assert self._cookies is not None
        host = cred.key.rsplit(":", 1)[0] if cred.key.count(":") == 1 else cred.key
        return [
            c
            for c in self._cookies.records()
            if host == c.domain.lstrip(".") or host.endswith("." + c.domain.lstrip("."))
        ]

    def _follow_shared(self, cred: FormCredential, state: _State, now_s: float) -> None:
        """Adopt another worker's newer outcome of ``cred`` (and its cookies), or its claim."""
        assert self._shared is not None
        with self._lock:
            if state.checked_s is not None and now_s - state.checked_s < WAIT_POLL_S:
                return
            state.checked_s = now_s
        raw = self._shared.text(SHARED_KEY + cred.key)
        try:
            entry = json.loads(raw) if raw is not None else None
            generation = int(entry["gen"]) if isinstance(entry, dict) else 0
        except (ValueError, KeyError, TypeError):
            return
        if not isinstance(entry, dict):
            return
        outcome = str(entry.get("outcome", ""))
        if outcome not in ("ok", "failed") or generation <= state.generation:
            if not outcome and entry.get("by") != self._token:
                with self._lock:
                    state.held_until_s = float(entry.get("claimed_until") or 0.0)
            return
        if outcome == "ok" and self._cookies is not None:
            for cookie in entry.get("cookies") or []:
                try:
                    self._cookies.add(CookieRecord(**cookie))
                except TypeError:
                    continue
        reason = str(entry.get("reason", ""))
        with self._lock:
            if state.outcome:
                return
            state.outcome, state.reason = outcome, reason
            state.generation, state.held_until_s = generation, 0.0
        self._journal_entry(cred, outcome, reason)
        self._logger.info("form_login_adopted", domain=cred.key, outcome=outcome)

    def _journal_entry(self, cred: FormCredential, outcome: str, reason: str) -> None:
        if self._journal is not None:
            entry = {"domain": cred.key, "outcome": outcome, "reason": reason, "at": time.time()}
            with self._journal.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(entry) + "\n")


def _cookie_json(cookie: CookieRecord) -> dict[str, Any]:
    return {
        "name": cookie.name,
        "value": cookie.value,
        "domain": cookie.domain,
        "path": cookie.path,
        "secure": cookie.secure,
        "http_only": cookie.http_only,
        "expires": cookie.expires,
    }


def _body_text(curi: CrawlURI) -> str:
    rec = curi.recording
    if rec is None:
        return ""
    raw: bytes = rec.decoded_body(curi.header("content-encoding"), MAX_BODY_BYTES)
    charset = "utf-8"
    for param in (curi.content_type or "").split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("\"'")
    try:
        return raw.decode(charset, errors="replace")
    except LookupError:
        return raw.decode("utf-8", errors="replace")
