"""PageExtras: what a page's visit does beyond loading, scrolling and clicking "more".

- :meth:`PageExtras.open_up` (before scrolling): plays the page's media, muted, and waits up to
  ``media_wait_s`` for the requests they make (then pauses them), and opens what a reader would
  open in place (``details``, ``aria-expanded=false``, tabs; a few rounds, as an opened part may
  hold more), waiting for the network after each round.
- :meth:`PageExtras.run_custom` (after the built-in behaviours): the order's custom behaviours
  (:mod:`~processors.browser.behaviour_script`), each within ``behaviour_timeout_s``; a failing
  one is noted ``behaviour:<name>:error``, one past its time ``behaviour:<name>:timeout`` and
  its script execution is terminated over the DevTools protocol, so the tab goes on.
- :meth:`PageExtras.capture` (at the end): the screenshots asked for — ``view`` (the viewport,
  PNG, ``urn:screenshot:<uri>``), ``full`` (the whole page, PNG, ``urn:fullPage:<uri>``),
  ``thumbnail`` (the viewport at a quarter scale, JPEG, ``urn:thumbnail:<uri>``) — and with
  ``text`` the rendered page's visible text (``urn:text:<uri>``, for ``pages.jsonl``).

Runs on the browser pool's event loop, one page at a time per instance call; the object holds
only settings: thread-safe.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from processors.browser.behaviour_script import BehaviourScript
from processors.browser.behaviours import AUTOPLAY_JS, EXPAND_JS, PAUSE_MEDIA_JS, TEXT_JS

Idle = Callable[[float], Awaitable[bool]]
"""``await idle(deadline)``: wait for the page's network to be quiet (False: deadline first)."""
Note = Callable[[str], None]

_EXPAND_ROUNDS = 3
_THUMBNAIL_SCALE = 0.25
_MAX_TEXT_CHARS = 1_000_000
SCREENSHOT_URNS = {
    "view": ("urn:screenshot:", "image/png"),
    "full": ("urn:fullPage:", "image/png"),
    "thumbnail": ("urn:thumbnail:", "image/jpeg"),
}
TEXT_URN = "urn:text:"
TEXT_TYPE = "text/plain; charset=utf-8"


@dataclass(frozen=True, slots=True)
class Capture:
    """A resource the page's visit made: a screenshot or the text, for a WARC resource record."""

    uri: str
    content_type: str
    body: bytes


@dataclass(frozen=True, slots=True)
class PageExtras:
    """The order's settings for the steps above (see the module docstring)."""

    scripts: tuple[BehaviourScript, ...] = ()
    behaviour_timeout_s: float = 10.0
    media_wait_s: float = 3.0
    screenshots: tuple[str, ...] = ()
    text: bool = False
    storage_state: dict[str, Any] | None = field(default=None, hash=False, compare=False)

    async def open_up(self, page: Any, idle: Idle, deadline: float, note: Note) -> None:
        """Play the media, open what opens in place; bounded by ``deadline``."""
        if int(await page.evaluate(AUTOPLAY_JS)):
            media_deadline = min(deadline, time.monotonic() + self.media_wait_s)
            # Give the players a moment to start their requests, then wait for them.
            await asyncio.sleep(min(0.2, max(0.0, media_deadline - time.monotonic())))
            await idle(media_deadline)
            await page.evaluate(PAUSE_MEDIA_JS)
            note("browser:mediaPlayed")
        for _ in range(_EXPAND_ROUNDS):
            if time.monotonic() >= deadline or not int(await page.evaluate(EXPAND_JS)):
                break
            note("browser:expanded")
            await asyncio.sleep(0.05)
            await idle(deadline)

    async def run_custom(self, page: Any, idle: Idle, deadline: float, note: Note) -> None:
        """Each custom behaviour in turn, each within its time limit and ``deadline``."""
        if not self.scripts:
            return
        cdp = await page.context.new_cdp_session(page)
        try:
            for script in self.scripts:
                left = deadline - time.monotonic()
                if left <= 0:
                    note(f"behaviour:{script.name}:timeout")
                    continue
                try:
                    await asyncio.wait_for(_run(page, script), min(left, self.behaviour_timeout_s))
                except TimeoutError:
                    note(f"behaviour:{script.name}:timeout")
                    # A busy loop holds the renderer: end the script, not the tab.
                    with contextlib.suppress(Exception):
                        await asyncio.wait_for(cdp.send("Runtime.terminateExecution"), 5)
                except Exception:  # a behaviour's error is the page's note
                    if page.is_closed():
                        raise
                    note(f"behaviour:{script.name}:error")
                await idle(deadline)
        finally:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(cdp.detach(), 5)

    async def capture(self, page: Any, uri: str, deadline: float, note: Note) -> list[Capture]:
        """The screenshots and text asked for, as far as ``deadline`` allows."""
        out: list[Capture] = []
        if self.screenshots:
            await page.evaluate("() => window.scrollTo(0, 0)")
        for kind in self.screenshots:
            timeout_ms = (deadline - time.monotonic()) * 1000
            if timeout_ms <= 0:
                note("browser:screenshotTimeout")
                break
            prefix, mime = SCREENSHOT_URNS[kind]
            try:
                if kind == "thumbnail":
                    body = await asyncio.wait_for(_thumbnail(page), timeout_ms / 1000)
                else:
                    body = await page.screenshot(
                        type="png", full_page=kind == "full", timeout=timeout_ms
                    )
            except Exception:  # a page that cannot be drawn still has its other captures
                if page.is_closed():
                    raise
                note("browser:screenshotFailed")
                continue
            out.append(Capture(prefix + uri, mime, body))
        if self.text and time.monotonic() < deadline:
            text = str(await page.evaluate(TEXT_JS))[:_MAX_TEXT_CHARS]
            out.append(Capture(TEXT_URN + uri, TEXT_TYPE, text.encode("utf-8", "replace")))
        return out


async def _run(page: Any, script: BehaviourScript) -> None:
    if script.setup is not None:
        await page.evaluate(script.setup)
    await page.evaluate(script.run)


async def _thumbnail(page: Any) -> bytes:
    """The viewport at a quarter of its size, as JPEG (DevTools draws it scaled)."""
    size = page.viewport_size or {"width": 1280, "height": 900}
    cdp = await page.context.new_cdp_session(page)
    try:
        clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"]}
        clip["scale"] = _THUMBNAIL_SCALE
        shot = await cdp.send(
            "Page.captureScreenshot", {"format": "jpeg", "quality": 75, "clip": clip}
        )
    finally:
        with contextlib.suppress(Exception):
            await cdp.detach()
    return base64.b64decode(shot["data"])
