"""Form logins: which form of a login page is submitted and with what, when a login response
counts as a failure, and how FormLogin holds a host's URIs back (defer, wait, -62)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from crawler import CrawlURI, FetchStatus
from crawler.frontier.retry.retry_policy import DEFERRALS_KEY, RetryPolicy
from crawler.order.schema import RetriesConfig
from crawler.tally import LocalTallyStore
from processors.cookies.cookie_store import CookieStore
from processors.login import FormCredential, FormLogin
from processors.login.form_login import MARKER, REQUEST
from processors.login.login_check import login_failure
from processors.login.login_form import build_submission, choose_form, find_forms

pytestmark = pytest.mark.timeout(30)

PAGE = """<html><body>
<form action="/search"><input name="q" value="x"></form>
<form method=post action="/session?x=1#frag">
  <input type=hidden name=csrf value="t&amp;k">
  <input name=user value="">
  <input type=password name=pass>
  <input type=checkbox name=remember value=1 checked>
  <input type=checkbox name=spam value=1>
  <select name=lang><option value=en>en<option value=fr selected>fr</select>
  <textarea name=note>hi</textarea>
  <input type=file name=f>
  <input type=submit name=go value=Go><input type=submit name=other value=No>
</form></body></html>"""


def cred(**kw: Any) -> FormCredential:
    base: dict[str, Any] = {
        "domain": "a.example",
        "login_uri": "http://a.example/login",
        "fields": {"user": "u", "pass": "p"},
    }
    return FormCredential(**{**base, **kw})


def test_the_login_form_is_chosen_and_filled_like_a_browser() -> None:
    forms = find_forms(PAGE)
    assert len(forms) == 2
    form = choose_form(forms, {"user", "pass"})
    assert form is forms[1] and form.has_password
    sub = build_submission("http://a.example/login", form, {"user": "u", "pass": "p"})
    assert sub.uri == "http://a.example/session?x=1"
    assert sub.method == "POST" and sub.content_type == "application/x-www-form-urlencoded"
    assert sub.body == "csrf=t%26k&user=u&pass=p&remember=1&lang=fr&note=hi&go=Go"


def test_without_matching_names_the_password_form_wins_and_get_goes_in_the_query() -> None:
    forms = find_forms(PAGE)
    assert choose_form(forms, set()) is forms[1]
    sub = build_submission("http://a.example/login", forms[0], {"q": "y"})
    assert (sub.uri, sub.method, sub.body) == ("http://a.example/search?q=y", "GET", "")
    assert choose_form([], {"user"}) is None


def test_a_submission_without_a_form_posts_the_fields_to_the_action() -> None:
    sub = build_submission("http://a.example/login", None, {"u": "1"}, "/api/login")
    assert (sub.uri, sub.method, sub.body) == ("http://a.example/api/login", "POST", "u=1")


@pytest.mark.parametrize(
    ("kw", "status", "location", "body", "cookies", "failed"),
    [
        ({}, 303, "/members/", "", set(), False),
        ({}, 302, "/login?next=/m", "", set(), True),
        ({}, 200, None, "<form><input type=password name=p></form>", set(), True),
        ({}, 200, None, "<p>Welcome</p>", set(), False),
        ({}, 401, None, "", set(), True),
        ({"failure_regex": "Invalid"}, 200, None, "Invalid password", set(), True),
        ({"success_regex": "Welcome"}, 200, None, "Hello", set(), True),
        ({"success_cookie": "sid"}, 302, "/login", "", {"sid"}, False),
        ({"success_cookie": "sid"}, 303, "/members/", "", {"pre"}, True),
        ({"success_redirect": "/members/$"}, 303, "/members/", "", set(), False),
        ({"success_redirect": "/members/$"}, 200, None, "", set(), True),
    ],
)
def test_login_checks(
    kw: dict[str, Any],
    status: int,
    location: str | None,
    body: str,
    cookies: set[str],
    failed: bool,
) -> None:
    reason = login_failure(cred(**kw), "http://a.example/login", status, location, body, cookies)
    assert (reason is not None) == failed, reason


class Log:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, dict[str, Any]]] = []

    def info(self, event: str, **kw: Any) -> None:
        self.events.append(("info", event, kw))

    def warning(self, event: str, **kw: Any) -> None:
        self.events.append(("warning", event, kw))


def test_the_gate_defers_behind_the_page_makes_others_wait_and_fails_after_attempts(
    tmp_path: Path,
) -> None:
    log = Log()
    login = FormLogin([cred(max_attempts=1)], log)
    login.open(tmp_path / "form-logins.jsonl")
    other = CrawlURI("http://b.example/")
    assert login.gate(other, 0.0)  # no credential for that host
    assert login.gate(CrawlURI("http://a.example/robots.txt"), 0.0)

    first = CrawlURI("http://a.example/x", directive=3)
    assert not login.gate(first, 0.0)
    assert first.status == FetchStatus.DEFERRED
    page = first.prerequisite
    assert page is not None and page.uri == "http://a.example/login"
    assert page.hop_path == "P" and page.force_fetch and page.directive == 2
    assert page.data[MARKER] == {"domain": "a.example", "step": "page"}
    assert login.gate(page, 0.0)  # the login page itself is fetched

    second = CrawlURI("http://a.example/y", fetch_attempts=1)
    assert not login.gate(second, 10.0)  # the login is in flight elsewhere: wait, not an attempt
    assert second.prerequisite is None and second.retry_delay_s == 1.0
    # Neither a try nor a deferral: the frontier's policy sends it back, counting nothing.
    assert RetryPolicy(RetriesConfig(max_retries=0, max_deferrals=1)).take(second)
    assert second.fetch_attempts == 1 and DEFERRALS_KEY not in second.data

    page.status = -2  # the page never came: the claim is released, the attempt spent
    login.after_fetch(page, set())
    third = CrawlURI("http://a.example/z")
    assert not login.gate(third, 20.0)
    assert third.status == FetchStatus.OTHER_PREREQUISITE_FAILURE
    assert third.annotations == ["loginFailed"]
    assert [e[1] for e in log.events if e[0] == "warning"] == ["form_login_failed"]
    # the outcome is journaled: a resumed crawl does not try again
    again = FormLogin([cred(max_attempts=1)], Log())
    assert again.open(tmp_path / "form-logins.jsonl") == 1
    assert again.outcome("a.example") == "failed"


def test_a_step_that_never_answered_is_tried_again_when_its_uri_comes_back() -> None:
    login = FormLogin([cred(max_attempts=2)], Log())
    first = CrawlURI("http://a.example/x")
    assert not login.gate(first, 0.0)
    assert first.prerequisite is not None  # e.g. robots.txt refuses it: no after_fetch
    again = CrawlURI("http://a.example/x")
    assert not login.gate(again, 1.0)
    assert again.prerequisite is not None and again.prerequisite.uri == "http://a.example/login"
    last = CrawlURI("http://a.example/x")
    assert not login.gate(last, 2.0)
    assert last.status == FetchStatus.OTHER_PREREQUISITE_FAILURE


def test_without_reading_the_form_the_fields_are_posted_directly() -> None:
    login = FormLogin([cred(read_form=False, form_action="/api")], Log())
    curi = CrawlURI("http://a.example/x")
    assert not login.gate(curi, 0.0)
    step = curi.prerequisite
    assert step is not None and step.uri == "http://a.example/api"
    # The queued step holds a token for the secret field; FetchHTTP puts the value back.
    assert step.data[REQUEST] == {
        "method": "POST",
        "body": "user=u&pass=__crawler_secret_1__",
        "content_type": "application/x-www-form-urlencoded",
    }
    assert login.reveal(step, step.data[REQUEST]["body"]) == "user=u&pass=p"


def test_bad_credentials_are_refused_at_load() -> None:
    with pytest.raises(ValueError, match="absolute"):
        cred(login_uri="/login")
    with pytest.raises(ValueError, match="regular expression"):
        cred(failure_regex="(")


def test_workers_sharing_tallies_log_in_once_and_pass_the_session_on() -> None:
    shared = LocalTallyStore()  # what the crawl's Redis tallies are to every worker
    jar_a, jar_b, jar_c = CookieStore(), CookieStore(), CookieStore()
    a, b, c = (FormLogin([cred(read_form=False, form_action="/api")], Log()) for _ in "abc")
    a.share(shared, jar_a)
    b.share(shared, jar_b)
    first = CrawlURI("http://a.example/x")
    assert not a.gate(first, 0.0)
    step = first.prerequisite
    assert step is not None
    held = CrawlURI("http://a.example/y")
    assert not b.gate(held, 0.5)  # a's login is under way: b waits instead of logging in too
    assert held.prerequisite is None and held.retry_delay_s == 1.0
    jar_a.set_from_response(step.uri, [("Set-Cookie", "sid=42; Path=/")])
    step.status, step.response_headers = 303, [("Location", "/members/")]
    a.after_fetch(step, {"sid"})
    assert a.outcome("a.example") == "ok"
    assert not b.gate(CrawlURI("http://a.example/y"), 1.0)  # read at most once a second
    assert b.gate(CrawlURI("http://a.example/y"), 1.6)  # then a's login is b's
    assert b.outcome("a.example") == "ok"
    assert jar_b.cookie_header("http://a.example/members/") == "sid=42"
    # a login that failed is not tried again by a worker that joins later
    shared.put_text("login:a.example", '{"gen": 9, "outcome": "failed", "reason": "401"}')
    c.share(shared, jar_c)
    refused = CrawlURI("http://a.example/z")
    assert not c.gate(refused, 0.0)
    assert refused.status == FetchStatus.OTHER_PREREQUISITE_FAILURE
    assert refused.annotations == ["loginFailed"] and c.outcome("a.example") == "failed"
