"""Browser capture: the Chromium pool, FetchBrowser and the "needs a browser" rule."""

from processors.browser.fetch_browser import FetchBrowser, FetchBrowserParams
from processors.browser.needs_browser_rule import (
    NeedsBrowserDecideRule,
    NeedsBrowserParams,
    script_built_reason,
)

__all__ = [
    "FetchBrowser",
    "FetchBrowserParams",
    "NeedsBrowserDecideRule",
    "NeedsBrowserParams",
    "script_built_reason",
]
