"""MirrorWriterProcessor: bodies land under mirror/<host>/<path> and never outside it."""

from __future__ import annotations

import gzip
import os
import random
import threading
from pathlib import Path

import pytest
from support.processor_context import make_context

from crawler import CrawlURI, Recording
from processors.write import MirrorPathMapper, MirrorWriterProcessor

pytestmark = pytest.mark.integration

GZ_BODY = gzip.compress(b"plain " * 1000)

HOSTILE = [
    ("http://h/../../etc/passwd", "h/etc/passwd"),
    ("http://h/a/%2e%2e/%2E%2E/%2e%2e/x", "h/x"),
    ("http://h/a/./b/.", "h/a/b/index.html"),
    ("http://h/a%2Fb%5Cc", "h/a%2Fb%5Cc"),
    ("http://h/a%2F..%2F..%2Fb", "h/a%2F..%2F..%2Fb"),
    ("http://h/a\\..\\..\\b", "h/a%5C..%5C..%5Cb"),
    ("http://h//etc/passwd", "h/etc/passwd"),
    ("http://h/%00x%0d%0a%1b", "h/%00x%0D%0A%1B"),
    ("http://h/CON", "h/%43ON"),
    ("http://h/lpt1.txt", "h/%6Cpt1.txt"),
    ("http://h/dots.../sp%20", "h/dots%2E%2E%2E/sp%20"),
    ("http://h/a:b*c?d|e", "h/a%3Ab%2Ac@d%7Ce"),
    ("http://h/p?x=/../../y", "h/p@x=%2F..%2F..%2Fy"),
    ("http://h/dir/?q=1", "h/dir/index.html@q=1"),
    ("http://h", "h/index.html"),
    ("http://H:8080/A", "h_8080/A"),
    ("https://h:443/a", "h/a"),
    ("http://[::1]:8/a", "%3A%3A1_8/a"),
    ("http://%2e%2e/x", "%252e%252e/x"),
    ("http://h/%c3%a9t%C3%A9", "h/été"),
    ("http://h/%ff%c3%a9", "h/%FF%C3%A9"),  # not UTF-8: every high byte escaped
    ("http://h/%25", "h/%25"),
]


@pytest.mark.parametrize(("uri", "expected"), HOSTILE)
def test_hostile_uris_map_inside_the_host_directory(uri: str, expected: str) -> None:
    assert str(MirrorPathMapper().map(uri)) == expected


def test_non_http_and_unparseable_uris_are_not_mirrored() -> None:
    mapper = MirrorPathMapper()
    for uri in ("dns:h", "ftp://h/x", "http://h:bad/", "http://[::1/x", "file:///etc/passwd"):
        assert mapper.map(uri) is None


def test_windows_escaping_is_optional() -> None:
    assert str(MirrorPathMapper(windows_safe=False).map("http://h/CON:x?y")) == "h/CON:x@y"


def test_over_long_names_and_paths_are_hashed() -> None:
    mapper = MirrorPathMapper()
    long_name = mapper.map("http://h/" + "é" * 200 + ".html")
    assert long_name is not None
    (name,) = long_name.parts[1:]
    assert len(name.encode()) <= 255 and name.endswith(".html") and "~" in name
    other = mapper.map("http://h/" + "é" * 201 + ".html")
    assert other is not None and other != long_name
    deep = mapper.map("http://h/" + "/".join(["d" * 200] * 10) + "/page.css")
    assert deep is not None and deep.parts[:2] == ("h", "_long") and deep.suffix == ".css"
    assert len(str(deep)) < 100


_ALPHABET = ["/", "\\", ".", "..", "%2e", "%2E%2e", "%2f", "%5c", "%00", "%", "?", "#", "@",
             ":", "a", "é", "%ff", " ", "CON", "~", "x" * 120, "\x00", "\r\n", "&", "=",
             "index.html"]  # fmt: skip


def test_fuzzed_uris_always_resolve_inside_the_mirror_root(tmp_path: Path) -> None:
    rng = random.Random(2024)
    mapper = MirrorPathMapper(max_path_bytes=600)
    root = (tmp_path / "mirror").resolve()
    for _ in range(5000):
        host = rng.choice(["h", "H", "%2e%2e", "..", "a.b", "[::1]", "x" * 70])
        port = rng.choice(["", ":8080", ":80"])
        path = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 30)))
        uri = f"http://{host}{port}/{path}"
        rel = mapper.map(uri)
        if rel is None:
            continue
        assert not rel.is_absolute(), uri
        for part in rel.parts:
            assert part not in ("", ".", "..") and not set(part) & {"/", "\\", "\x00"}, uri
            assert len(part.encode("utf-8", "surrogateescape")) <= 255, uri
        assert len(str(rel).encode("utf-8", "surrogateescape")) <= 600, uri
        assert (root / rel).resolve().is_relative_to(root), uri


# ----------------------------------------------------------------------------- the processor
def fetched(uri: str, body: bytes, status: int = 200, **headers: str) -> CrawlURI:
    rec = Recording(in_memory_bytes=1024)
    rec.write_body(body)
    curi = CrawlURI(uri, status=status, http_status=status, recording=rec)
    curi.response_headers = [(k.replace("_", "-"), v) for k, v in headers.items()]
    return curi


@pytest.fixture
def mirror(tmp_path: Path) -> MirrorWriterProcessor:
    proc = MirrorWriterProcessor("mirror")
    proc.start(make_context(tmp_path))
    return proc


def all_files(tmp_path: Path) -> set[str]:
    return {str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()}


def test_bodies_are_written_where_the_mapping_says(
    tmp_path: Path, mirror: MirrorWriterProcessor
) -> None:
    big = random.Random(1).randbytes(300_000)
    curis = [
        fetched("http://site.example/", b"<html>home</html>"),
        fetched("http://site.example/img/logo.png", big),
        fetched("http://site.example:8080/x?a=1", b"port"),
        fetched("http://site.example/z.txt", GZ_BODY, Content_Encoding="gzip"),
        fetched("http://site.example/missing", b"404 page", status=404),
        fetched("http://site.example/../../escape", b"kept inside"),
    ]  # fmt: skip
    for curi in curis:
        mirror.process(curi)
    mirror.stop()
    root = tmp_path / "mirror"
    assert (root / "site.example/index.html").read_bytes() == b"<html>home</html>"
    assert (root / "site.example/img/logo.png").read_bytes() == big
    assert (root / "site.example_8080/x@a=1").read_bytes() == b"port"
    assert (root / "site.example/z.txt").read_bytes() == b"plain " * 1000
    assert (root / "site.example/escape").read_bytes() == b"kept inside"
    assert curis[1].extra_info["mirrorPath"] == "mirror/site.example/img/logo.png"
    assert "mirrorPath" not in curis[4].extra_info
    assert all(f.startswith("mirror/") for f in all_files(tmp_path))
    assert not (tmp_path / "mirror.tmp").exists()


def test_a_file_that_must_become_a_directory_and_back(
    tmp_path: Path, mirror: MirrorWriterProcessor
) -> None:
    for uri, body in [
        ("http://h/a", b"file a"),
        ("http://h/a/b", b"file a/b"),
        ("http://h/c/d", b"file c/d"),
        ("http://h/c", b"file c"),
    ]:
        mirror.process(fetched(uri, body))
    root = tmp_path / "mirror" / "h"
    assert (root / "a" / "index.html").read_bytes() == b"file a"
    assert (root / "a" / "b").read_bytes() == b"file a/b"
    assert (root / "c" / "d").read_bytes() == b"file c/d"
    assert (root / "c" / "index.html").read_bytes() == b"file c"


def test_symlinks_in_the_mirror_are_never_followed(
    tmp_path: Path, mirror: MirrorWriterProcessor
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "mirror" / "h").mkdir()
    os.symlink(outside, tmp_path / "mirror" / "h" / "link")
    curi = fetched("http://h/link/owned", b"must not escape")
    mirror.process(curi)
    assert list(outside.iterdir()) == []
    assert "unwritten:mirror" in curi.annotations and curi.nonfatal_errors


def test_concurrent_writers_never_lose_or_misplace_a_body(
    tmp_path: Path, mirror: MirrorWriterProcessor
) -> None:
    def work(n: int) -> None:
        for i in range(50):
            mirror.process(fetched(f"http://h/d{i % 5}/t{n}/f{i}", f"{n}-{i}".encode()))
            mirror.process(fetched(f"http://h/d{i % 5}", b"dir page"))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    root = tmp_path / "mirror" / "h"
    for n in range(4):
        for i in range(50):
            assert (root / f"d{i % 5}/t{n}/f{i}").read_bytes() == f"{n}-{i}".encode()
    assert all((root / f"d{i}" / "index.html").read_bytes() == b"dir page" for i in range(5))
