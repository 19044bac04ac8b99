"""The crawl's cookie store: kept per host, persisted in the run's state/, shared by fetchers."""

from processors.cookies.cookie_store import CookieRecord, CookieStore

__all__ = ["CookieRecord", "CookieStore"]
