"""CookieStore: browser rules for which host gets which cookie, persistence in sqlite across a
reopen (a resumed crawl), deletion, and Netscape cookies.txt loading."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from http.cookiejar import Cookie
from pathlib import Path

import pytest

from processors.cookies import CookieRecord, CookieStore
from processors.cookies.cookie_db import CookieDB
from processors.cookies.cookie_store import partition_of
from processors.cookies.netscape import CookieFileError, read_netscape

pytestmark = pytest.mark.timeout(30)


def set_cookie(store: CookieStore, url: str, *values: str) -> None:
    store.set_from_response(
        url, [("Content-Type", "text/html")] + [("Set-Cookie", v) for v in values]
    )


def test_a_host_only_cookie_goes_back_to_its_host_only() -> None:
    store = CookieStore()
    set_cookie(store, "http://www.example.com/a", "sid=1; Path=/")
    assert store.cookie_header("http://www.example.com/b") == "sid=1"
    assert store.cookie_header("http://example.com/") is None
    assert store.cookie_header("http://sub.www.example.com/") is None
    assert store.cookie_header("http://www.example.org/") is None


def test_a_domain_cookie_reaches_subdomains_but_never_another_site() -> None:
    store = CookieStore()
    set_cookie(store, "http://www.example.com/", "d=1; Domain=example.com; Path=/")
    assert store.cookie_header("http://shop.example.com/x") == "d=1"
    assert store.cookie_header("http://example.com/") == "d=1"
    assert store.cookie_header("http://example.org/") is None
    # a host cannot set a cookie for another site
    set_cookie(store, "http://evil.example.net/", "x=1; Domain=example.com")
    assert store.cookie_header("http://www.example.com/") == "d=1"


def test_path_secure_and_expiry_are_honoured_and_a_past_expiry_deletes() -> None:
    store = CookieStore()
    url = "https://a.example/"
    set_cookie(store, url, "p=1; Path=/members", "s=2; Secure; Path=/", "gone=3; Path=/")
    assert store.cookie_header("https://a.example/members/x") == "p=1; s=2; gone=3"
    assert store.cookie_header("http://a.example/members/x") == "p=1; gone=3"
    assert store.cookie_header("https://a.example/public") == "s=2; gone=3"
    set_cookie(store, url, "gone=; Path=/; Max-Age=0")
    assert store.cookie_header("https://a.example/public") == "s=2"


def test_cookies_for_gives_the_browser_the_cookies_of_a_url() -> None:
    store = CookieStore()
    set_cookie(store, "http://a.example/x", "sid=9; Path=/; HttpOnly", "o=1; Path=/other")
    (record,) = store.cookies_for("http://a.example/page")
    assert record == CookieRecord("sid", "9", "a.example", "/", False, True, None)
    assert record.host_only
    assert store.cookies_for("http://b.example/") == []


def test_cookies_survive_a_reopen_session_cookies_too(tmp_path: Path) -> None:
    path = tmp_path / "state" / "cookies.sqlite"
    store = CookieStore.open(path)
    expires = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 3600))
    set_cookie(store, "http://a.example/", "sid=1; Path=/", f"keep=2; Path=/; Expires={expires}")
    set_cookie(store, "http://b.example/", "other=3")
    set_cookie(store, "http://b.example/", "other=; Max-Age=0")
    # no close(): a killed crawl never closes it
    again = CookieStore.open(path)
    assert again.cookie_header("http://a.example/") == "sid=1; keep=2"
    assert again.cookie_header("http://b.example/") is None
    assert len(again) == 2
    store.close()
    again.close()


def test_added_cookies_persist(tmp_path: Path) -> None:
    path = tmp_path / "cookies.sqlite"
    store = CookieStore.open(path)
    store.add(CookieRecord("js", "v", ".example.com", "/", False, False, None))
    store.close()
    assert CookieStore.open(path).cookie_header("http://www.example.com/") == "js=v"


def test_partitions_are_the_last_two_labels_or_the_address() -> None:
    assert partition_of("www.shop.example.com") == "example.com"
    assert partition_of(".example.com") == "example.com"
    assert partition_of("127.0.0.1") == "127.0.0.1"
    assert partition_of("localhost") == "localhost"


def test_netscape_cookies_txt(tmp_path: Path) -> None:
    path = tmp_path / "cookies.txt"
    future = int(time.time()) + 3600
    path.write_text(
        "# Netscape HTTP Cookie File\n\n"
        f".example.com\tTRUE\t/\tFALSE\t{future}\tdom\t1\n"
        "#HttpOnly_www.example.org\tFALSE\t/m\tTRUE\t0\tsid\tabc\n"
        "old.example\tFALSE\t/\tFALSE\t1000\told\tx\n",
        encoding="utf-8",
    )
    cookies = read_netscape(path)
    assert [(c.domain, c.name, c.expires, c.secure) for c in cookies] == [
        (".example.com", "dom", future, False),
        ("www.example.org", "sid", None, True),
    ]
    store = CookieStore.open(tmp_path / "cookies.sqlite")
    assert not store.preloaded
    assert store.load_netscape(path) == 2
    assert store.preloaded
    assert store.cookie_header("http://a.example.com/") == "dom=1"
    assert store.cookie_header("https://www.example.org/m/1") == "sid=abc"
    assert store.cookies_for("https://www.example.org/m/1")[0].http_only


def test_a_malformed_cookies_txt_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "cookies.txt"
    path.write_text("# Netscape HTTP Cookie File\nsid=1\n", encoding="utf-8")
    with pytest.raises(CookieFileError, match=r"cookies\.txt:2: expected 7"):
        read_netscape(path)


class FailingDB(CookieDB):
    """A disk that refuses writes until ``healthy`` (a failing disk cannot be made real here)."""

    healthy = False

    def replace_partition(self, part: str, cookies: Iterable[Cookie]) -> None:
        if not self.healthy:
            raise sqlite3.OperationalError("database or disk is full")
        super().replace_partition(part, cookies)


def test_a_failing_disk_keeps_cookies_in_memory_and_writes_them_later(tmp_path: Path) -> None:
    path = tmp_path / "cookies.sqlite"
    db = FailingDB(path)
    store = CookieStore(db)
    set_cookie(store, "http://a.example/", "sid=1")
    assert store.write_failures == 1
    assert store.cookie_header("http://a.example/") == "sid=1"  # still sent
    db.healthy = True
    store.close()  # writes what is pending
    assert CookieStore.open(path).cookie_header("http://a.example/") == "sid=1"


def test_a_browser_cookie_header_merges_over_the_jar_s() -> None:
    from processors.cookies.cookie_store import merge_cookie_headers

    assert merge_cookie_headers("a=1; b=2", "b=3; c=4") == "a=1; b=3; c=4"
    assert merge_cookie_headers(None, "c=4") == "c=4"
    assert merge_cookie_headers("a=1", "a=1") == "a=1"


def test_a_bounded_store_reads_sites_out_of_memory_back_from_its_database(
    tmp_path: Path,
) -> None:
    store = CookieStore.open(tmp_path / "cookies.sqlite", max_jars=2)
    for i in range(5):
        set_cookie(store, f"http://www.site{i}.example/", f"sid={i}; Path=/")
    assert store.evicted_jars == 3
    # Every site still gets its cookies, also those no longer held in memory.
    for i in range(5):
        assert store.cookie_header(f"http://www.site{i}.example/x") == f"sid={i}"
    # A change to a site read back is kept with what it had.
    set_cookie(store, "http://www.site0.example/", "lang=fr; Path=/")
    assert store.cookie_header("http://www.site0.example/") == "sid=0; lang=fr"
    assert len(store) == 6 and len(store.records()) == 6
    assert store.cookie_header("http://www.never-set.example/") is None
    store.close()


def test_pending_writes_keep_a_site_in_memory(tmp_path: Path) -> None:
    db = FailingDB(tmp_path / "cookies.sqlite")
    store = CookieStore(db, max_jars=1)
    set_cookie(store, "http://a.example/", "sid=1")
    set_cookie(store, "http://b.example/", "sid=2")
    assert store.evicted_jars == 0  # neither was written: both stay
    assert store.cookie_header("http://a.example/") == "sid=1"
    db.healthy = True
    store.close()
    again = CookieStore.open(tmp_path / "cookies.sqlite")
    assert again.cookie_header("http://b.example/") == "sid=2"
    again.close()
