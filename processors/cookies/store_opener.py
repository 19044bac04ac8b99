"""open_cookie_store: the crawl's cookie store in its state directory, a cookies.txt loaded once.

The store lives in ``<state>/cookies.sqlite``. ``cookies_file`` (relative to the order's
directory) is loaded unless a cookies.txt was loaded into that store before — a resumed crawl
keeps the cookies it has since. A file that cannot be read or is not a Netscape cookies.txt is an
:class:`~crawler.order.errors.OrderError` naming the order key (``crawler run`` exits 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crawler.order.errors import OrderError, OrderIssue
from processors.cookies.cookie_store import DEFAULT_MAX_JARS, CookieStore
from processors.cookies.netscape import CookieFileError


def open_cookie_store(
    state_dir: Path,
    cookies_file: str | None,
    base_dir: Path,
    where: str,
    logger: Any,
    max_jars: int = DEFAULT_MAX_JARS,
) -> CookieStore:
    """The store of ``state_dir``, with ``cookies_file`` loaded once; ``where`` is the order key
    of ``cookies_file`` for the error message; ``max_jars`` partitions at most in memory."""
    store = CookieStore.open(state_dir / "cookies.sqlite", max_jars)
    if not cookies_file or store.preloaded:
        return store
    path = base_dir / Path(cookies_file).expanduser()
    try:
        loaded = store.load_netscape(path)
    except (OSError, CookieFileError) as exc:
        store.close()
        issue = OrderIssue(
            where,
            f"cannot be loaded: {exc}",
            cookies_file,
            hint="a Netscape cookies.txt (one cookie a line, 7 tab-separated fields), "
            "relative to the order",
        )
        raise OrderError([issue]) from None
    logger.info("cookies_preloaded", path=str(path), cookies=loaded)
    return store
