"""Whether a login submission's response says the login worked.

The credential's checks, all that are set must hold: ``failure_regex`` must not match the
body, ``success_regex`` must, ``success_redirect`` must match the (absolute) ``Location``,
``success_cookie`` must be among the cookies the host now gets. Without any, a login worked when
the response is below 400 and does not lead back to a login form: a redirect must not go to
``login_uri`` and a page must not hold a password input. Pure, thread-safe.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

from processors.login.form_credential import FormCredential
from processors.login.login_form import find_forms


def same_page(a: str, b: str) -> bool:
    """Whether two URLs name the same page (host, port and path; query ignored)."""
    pa, pb = urlsplit(a), urlsplit(b)
    return (pa.netloc.lower(), pa.path or "/") == (pb.netloc.lower(), pb.path or "/")


def login_failure(
    cred: FormCredential,
    uri: str,
    status: int,
    location: str | None,
    body: str,
    cookie_names: set[str],
) -> str | None:
    """Why the login response (``status`` of ``uri``) shows a failed login, or None if it
    worked. ``body`` is the decoded response body; ``cookie_names`` the cookies the host gets."""
    target = urljoin(uri, location) if location else None
    if status >= 400:
        return f"login answered {status}"
    if cred.failure_regex is not None and re.search(cred.failure_regex, body):
        return f"response matches failure_regex {cred.failure_regex!r}"
    if cred.success_regex is not None and not re.search(cred.success_regex, body):
        return f"response does not match success_regex {cred.success_regex!r}"
    if cred.success_redirect is not None and (
        target is None or not re.search(cred.success_redirect, target)
    ):
        return f"redirect {target or 'none'} does not match success_redirect"
    if cred.success_cookie is not None and cred.success_cookie not in cookie_names:
        return f"no cookie {cred.success_cookie!r} was set"
    explicit = (cred.failure_regex, cred.success_regex, cred.success_redirect, cred.success_cookie)
    if any(check is not None for check in explicit):
        return None
    if 300 <= status < 400:
        if target is not None and same_page(target, cred.login_uri):
            return f"redirected back to the login page {target}"
        return None
    if any(form.has_password for form in find_forms(body)):
        return "the response holds a login form again"
    return None
