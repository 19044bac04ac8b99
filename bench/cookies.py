"""What the cookie store costs FetchHTTP per request, against the in-memory jar it replaced.

Run: ``.venv/bin/python bench/cookies.py [HOSTS]`` (or ``make bench-cookies``). Prints a table;
asserts nothing. Per request FetchHTTP asks for the Cookie header of the URL
(``CookieStore.cookie_header``); per response with ``Set-Cookie`` it stores them
(``set_from_response``, one sqlite transaction in WAL mode). Cases: a crawl whose sites set no
cookies; a crawl of HOSTS sites (10,000) that each set 3 cookies, asking for a host that has
none and for one that has its 3; and storing. The old jar (httpx.Cookies over one
``http.cookiejar.CookieJar``) is measured on the same cookies: it scans every domain of the
crawl per request.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from processors.cookies import CookieStore


def per_call_us(fn: Callable[[], object], n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e6


def set_cookies(i: int) -> list[tuple[str, str]]:
    return [("Set-Cookie", f"c{k}=v{i}; Path=/") for k in range(3)]


def main() -> None:
    hosts = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    rows: list[tuple[str, float, float | None]] = []
    with tempfile.TemporaryDirectory() as tmp:
        empty = CookieStore.open(Path(tmp) / "empty.sqlite")
        rows.append(
            (
                "no site sets cookies: header for a URL",
                per_call_us(lambda: empty.cookie_header("http://a.example/x"), 200_000),
                None,
            )
        )
        store = CookieStore.open(Path(tmp) / "cookies.sqlite")
        old = httpx.Cookies()
        start = time.perf_counter()
        for i in range(hosts):
            store.set_from_response(f"http://www{i}.site{i}.example/", set_cookies(i))
        store_us = (time.perf_counter() - start) / hosts * 1e6
        start = time.perf_counter()
        for i in range(hosts):
            url = f"http://www{i}.site{i}.example/"
            old.extract_cookies(
                httpx.Response(200, headers=set_cookies(i), request=httpx.Request("GET", url))
            )
        old_store_us = (time.perf_counter() - start) / hosts * 1e6
        rows.append(("store 3 Set-Cookie of a response (sqlite)", store_us, old_store_us))

        def old_header(url: str) -> str | None:
            probe = httpx.Request("GET", url)
            old.set_cookie_header(probe)
            return probe.headers.get("cookie")

        n = 2000
        rows.append(
            (
                f"{hosts} sites with cookies: header for another site",
                per_call_us(lambda: store.cookie_header("http://nocookies.example/x"), n * 50),
                per_call_us(lambda: old_header("http://nocookies.example/x"), n // 10),
            )
        )
        rows.append(
            (
                f"{hosts} sites with cookies: header for a site with 3",
                per_call_us(lambda: store.cookie_header("http://www7.site7.example/x"), n * 10),
                per_call_us(lambda: old_header("http://www7.site7.example/x"), n // 10),
            )
        )
        assert store.cookie_header("http://www7.site7.example/x") == "c0=v7; c1=v7; c2=v7"
        start = time.perf_counter()
        reopened = CookieStore.open(Path(tmp) / "cookies.sqlite")
        reopen_s = time.perf_counter() - start
        store.close()
        empty.close()
        reopened.close()

    print(f"{'case':<52} {'store µs':>10} {'old jar µs':>11}")
    for name, new, before in rows:
        shown = f"{before:11.1f}" if before is not None else f"{'-':>11}"
        print(f"{name:<52} {new:10.1f} {shown}")
    print(f"reopen a store of {hosts * 3} cookies (resume): {reopen_s:.2f} s")


if __name__ == "__main__":
    main()
