"""ProfileLogin: a scripted login in headless Chromium whose end state becomes a browser profile.

:func:`make_profile` loads the login page in a fresh Chromium (Debian's, as the crawl uses:
:class:`~processors.browser.chromium_process.ChromiumProcess`), picks the login form the way the
crawl's form login does (:func:`~processors.login.login_form.choose_form`: the form holding the
most of the given field names, else the one with a password input), types each value into its
field, submits the form (its submit button, else ``requestSubmit()``), waits for the page and its
network to settle, checks the result and returns the browser's storage state (cookies, session
ones too, and localStorage) — what :mod:`~processors.browser.browser_profile` saves.

The login has failed when the page after it matches ``failure_regex``, does not match
``success_regex`` (when given), or — with no ``success_regex`` — still shows a password field.
Raises :class:`ProfileLoginError` with one line saying why. Blocking; one login per call, no
shared state.
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from pathlib import Path
from typing import Any

from crawler.crawler_error import CrawlerError
from processors.browser.chromium_process import ChromiumProcess
from processors.login.login_form import choose_form, find_forms

_VISIBLE_PASSWORD_JS = """() => [...document.querySelectorAll('input[type=password]')]
  .some((el) => !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length))"""


class ProfileLoginError(CrawlerError, RuntimeError):
    """The login could not be made or did not succeed (one line: why)."""


def make_profile(
    executable: str,
    url: str,
    fields: dict[str, str],
    timeout_s: float = 60.0,
    success_regex: str | None = None,
    failure_regex: str | None = None,
) -> dict[str, Any]:
    """Log in at ``url`` with ``fields`` and return the storage state (see the module docstring)."""
    with tempfile.TemporaryDirectory(prefix="crawler-profile-") as state_dir:
        return asyncio.run(
            asyncio.wait_for(
                _login(
                    executable,
                    Path(state_dir),
                    url,
                    fields,
                    timeout_s,
                    success_regex,
                    failure_regex,
                ),
                timeout_s + 30,
            )
        )


async def _login(
    executable: str,
    state_dir: Path,
    url: str,
    fields: dict[str, str],
    timeout_s: float,
    success_regex: str | None,
    failure_regex: str | None,
) -> dict[str, Any]:
    from playwright.async_api import async_playwright

    try:
        process = await asyncio.to_thread(ChromiumProcess, executable, state_dir, own_network=True)
    except (OSError, RuntimeError) as exc:
        raise ProfileLoginError(f"cannot start {executable}: {exc}") from None
    try:
        async with async_playwright() as pw:
            browser = await pw.chromium.connect_over_cdp(process.ws_endpoint, timeout=30000)
            try:
                context = await browser.new_context(
                    viewport={"width": 1280, "height": 900}, ignore_https_errors=True
                )
                page = await context.new_page()
                page.set_default_timeout(timeout_s * 1000)
                await _submit(page, url, fields, timeout_s)
                await _check(page, success_regex, failure_regex)
                return dict(await context.storage_state())
            finally:
                await browser.close()
    finally:
        await asyncio.to_thread(process.kill)


async def _submit(page: Any, url: str, fields: dict[str, str], timeout_s: float) -> None:
    try:
        response = await page.goto(url, wait_until="load")
    except Exception as exc:  # noqa: BLE001 - any failure to load is one line for the user
        raise ProfileLoginError(f"{url}: cannot load: {_first_line(exc)}") from None
    if response is not None and response.status >= 400:
        raise ProfileLoginError(f"{url}: HTTP {response.status}")
    forms = find_forms(await page.content())
    form = choose_form(forms, set(fields))
    if form is None:
        raise ProfileLoginError(f"{url}: no form on the page")
    missing = sorted(set(fields) - form.names())
    if missing:
        raise ProfileLoginError(f"{url}: the login form has no field {', '.join(missing)}")
    locator = page.locator("form").nth(forms.index(form))
    for name, value in fields.items():
        await locator.locator(f'[name="{_css_string(name)}"]').first.fill(value)
    button = locator.locator("[type=submit], button:not([type])")
    if await button.count():
        await button.first.click(no_wait_after=True)
    else:
        await locator.evaluate("(f) => f.requestSubmit()")
    await asyncio.sleep(0.3)
    try:
        await page.wait_for_load_state("load")
        await page.wait_for_load_state("networkidle", timeout=min(10.0, timeout_s) * 1000)
    except Exception:  # noqa: BLE001 - a page that never goes quiet is checked as it is
        pass


async def _check(page: Any, success_regex: str | None, failure_regex: str | None) -> None:
    html = await page.content()
    where = page.url
    if failure_regex and re.search(failure_regex, html):
        raise ProfileLoginError(f"login failed: {where} matches {failure_regex!r}")
    if success_regex:
        if not re.search(success_regex, html):
            raise ProfileLoginError(f"login failed: {where} does not match {success_regex!r}")
    elif await page.evaluate(_VISIBLE_PASSWORD_JS):
        raise ProfileLoginError(f"login failed: {where} still asks for a password")


def _css_string(name: str) -> str:
    return name.replace("\\", "\\\\").replace('"', '\\"')


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
