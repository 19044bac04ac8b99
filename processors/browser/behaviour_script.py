"""BehaviourScript: a custom behaviour, read from a JS file named in the order.

The contract of a behaviour file (``browser.behaviours: [path.js, ...]``, paths relative to the
order): the file holds one JavaScript function expression, usually ``async (ctx) => { ... }``
(comments around it are fine). It runs in the page, after the built-in behaviours, and is
awaited; it is done when its promise settles. ``ctx`` offers:

- ``ctx.url``: the page's URL;
- ``await ctx.sleep(ms)``;
- ``await ctx.scrollToBottom()``: scrolls to the end of the document and waits a moment;
- ``await ctx.click(elementOrSelector)``: clicks it (false if absent, hidden or a link to
  another page, which is an outlink, never followed by a behaviour);
- ``await ctx.clickAll(selector, limit = 50)``: clicks each match once; returns how many.

Each behaviour has ``browser.behaviour_timeout_s`` per page. One that throws is noted
``behaviour:<name>:error``; one still running at its time limit is stopped (its script
execution terminated, so even a busy loop cannot hold the tab) and noted
``behaviour:<name>:timeout``. ``<name>`` is the file's name without ``.js``.

``browser.browsertrix_behaviors: PATH`` names a ``dist/behaviors.js`` of the
browsertrix-behaviors package that the user installed (npm); it is evaluated in the page as is
(a separate work under its own licence; the crawler ships none of it), then its
``self.__bx_behaviors`` is initialised and run as the behaviour ``browsertrix``.

Pure data once loaded: thread-safe.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from crawler.crawler_error import CrawlerError

_HELPERS = r"""
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const leaves = (el) => {
    const a = el.closest && el.closest('a[href]');
    if (!a) return false;
    const href = (a.getAttribute('href') || '').trim().toLowerCase();
    return !!href && !href.startsWith('#') && !href.startsWith('javascript:');
  };
  const click = async (target) => {
    const el = typeof target === 'string' ? document.querySelector(target) : target;
    if (!el || !el.isConnected || leaves(el)) return false;
    if (!(el.offsetWidth || el.offsetHeight || el.getClientRects().length)) return false;
    el.click();
    await sleep(100);
    return true;
  };
  const ctx = {
    url: location.href,
    sleep,
    click,
    scrollToBottom: async () => {
      const el = document.scrollingElement || document.documentElement;
      window.scrollTo(0, el.scrollHeight);
      await sleep(250);
    },
    clickAll: async (selector, limit = 50) => {
      let n = 0;
      for (const el of document.querySelectorAll(selector)) {
        if (n >= limit) break;
        if (await click(el)) n += 1;
      }
      return n;
    },
  };
"""


class BehaviourFileError(CrawlerError, ValueError):
    """A behaviour file that cannot be read: ``key`` is the order key, the message names the
    file."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True, slots=True)
class BehaviourScript:
    """A behaviour: ``setup`` (a script evaluated first at the page's global scope, or None)
    and ``run`` (a JS function source the page awaits)."""

    name: str
    run: str
    setup: str | None = None

    @classmethod
    def from_source(cls, name: str, source: str) -> BehaviourScript:
        """The behaviour of a file's ``source`` (a function expression, see the module
        docstring)."""
        body = source.strip().rstrip(";")
        run = (
            "async () => {"
            + _HELPERS
            + "  const behaviour = (\n"
            + body
            + "\n  );\n"
            + "  if (typeof behaviour !== 'function') throw new TypeError('not a function');\n"
            + "  await behaviour(ctx);\n  return true;\n}"
        )
        return cls(name, run)

    @classmethod
    def browsertrix(cls, source: str, timeout_s: float) -> BehaviourScript:
        """browsertrix-behaviors' bundle (``source``), initialised and run."""
        options = {
            "autofetch": True,
            "autoplay": True,
            "autoscroll": True,
            "siteSpecific": True,
            "timeout": int(timeout_s * 1000),
        }
        run = (
            "async () => {\n  const bx = self.__bx_behaviors;\n"
            "  if (!bx) throw new Error('no self.__bx_behaviors');\n"
            f"  bx.init({json.dumps(options)}, false);\n  await bx.run();\n  return true;\n}}"
        )
        return cls("browsertrix", run, setup=source)


def load_behaviours(
    files: list[str], browsertrix: str | None, base_dir: Path, timeout_s: float
) -> list[BehaviourScript]:
    """The custom behaviours of an order, in order: ``files`` (``browser.behaviours``), then
    browsertrix-behaviors when ``browsertrix`` names it. Raises :class:`BehaviourFileError`."""
    out: list[BehaviourScript] = []
    for n, name in enumerate(files):
        path = base_dir / Path(name).expanduser()
        source = _read(f"browser.behaviours[{n}]", path)
        out.append(BehaviourScript.from_source(path.name.removesuffix(".js"), source))
    if browsertrix:
        path = base_dir / Path(browsertrix).expanduser()
        out.append(
            BehaviourScript.browsertrix(_read("browser.browsertrix_behaviors", path), timeout_s)
        )
    return out


def _read(key: str, path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise BehaviourFileError(key, f"cannot read {path}: {reason}") from None
