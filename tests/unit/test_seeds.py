"""Seed lists in Heritrix syntax: comments, scheme-less seeds, directives, bad seeds."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.order.errors import OrderError
from crawler.order.schema import CrawlOrder
from crawler.seeds.seed_list import load_seeds, parse_seeds

SEED_FILE = """\
# a comment
   # an indented comment

http://Example.COM:80/a/../b
example.org
localhost:8000/x
127.0.0.1:8000/
https://example.net/path?q=1   # trailing comment
+http://(org,example,
-http://(org,example,www,)/private/
/not/a/seed
ftp://files.example.com/pub/
http://example.org/
http://exa mple.com:99999/
"""


def test_parse_seeds_follows_heritrix_syntax() -> None:
    seeds = parse_seeds(SEED_FILE.splitlines(), "seeds.txt")
    assert seeds.uris == [
        "http://example.com/b",
        "http://example.org/",
        "http://localhost:8000/x",
        "http://127.0.0.1:8000/",
        "https://example.net/path?q=1",
    ]
    assert seeds.sources["http://example.org/"] == "example.org"
    assert seeds.directives == ["+http://(org,example,", "-http://(org,example,www,)/private/"]
    assert seeds.ignored == [
        "/not/a/seed ignored: neither a seed nor a directive (seeds.txt line 11)"
    ]
    assert len(seeds.errors) == 2
    assert seeds.errors[0].startswith("ftp://files.example.com/pub/ is not a usable seed")
    assert seeds.errors[0].endswith("(seeds.txt line 12)")
    assert seeds.errors[1].startswith("http://exa mple.com:99999/ is not a usable seed")
    assert seeds.problems == [*seeds.errors, *seeds.ignored]


def test_load_seeds_reads_the_file_relative_to_base_dir_and_the_urls(tmp_path: Path) -> None:
    (tmp_path / "seeds.txt").write_text("# seeds\n127.0.0.1:8000\n", encoding="utf-8")
    order = CrawlOrder.model_validate(
        {
            "name": "s",
            "base_dir": str(tmp_path),
            "seeds": {
                "file": "seeds.txt",
                "urls": ["example.com/", "http://127.0.0.1:8000/", "::"],
            },
        }
    )
    seeds = load_seeds(order)
    assert seeds.uris == ["http://127.0.0.1:8000/", "http://example.com/"]
    assert seeds.ignored == [":: ignored: neither a seed nor a directive (seeds.urls[2])"]


def test_unreadable_seeds_file_is_an_order_error(tmp_path: Path) -> None:
    order = CrawlOrder.model_validate(
        {"name": "s", "base_dir": str(tmp_path), "seeds": {"file": "missing.txt"}}
    )
    with pytest.raises(OrderError) as exc:
        load_seeds(order)
    assert exc.value.issues[0].path == "seeds.file"
    assert "missing.txt" in exc.value.issues[0].message


def test_example_job_seeds_point_at_the_demo_site() -> None:
    root = Path(__file__).resolve().parents[2]
    text = (root / "jobs" / "example" / "seeds.txt").read_text(encoding="utf-8")
    seeds = parse_seeds(text.splitlines())
    assert seeds.uris == ["http://127.0.0.1:8000/"]
    assert seeds.problems == []
