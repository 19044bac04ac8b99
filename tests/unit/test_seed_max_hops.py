"""A seed's own hop limit: the seed-list option, its inheritance and persistence, and the rule."""

from __future__ import annotations

import json

import pytest

from crawler import CrawlURI, DecideResult
from crawler.decide import TooManyHopsDecideRule, TooManyHopsParams
from crawler.seeds.seed_list import parse_seeds

pytestmark = pytest.mark.timeout(30)


def test_seed_lines_take_a_max_hops_option() -> None:
    seeds = parse_seeds(
        [
            "http://deep.example/ max_hops=50",
            "shallow.example/x   max_hops=0   # a comment",
            "http://plain.example/",
            "http://bad.example/ max_hops=two",
            "http://odd.example/ colour=blue",
            "http://exa mple.com/",
        ],
        "seeds.txt",
    )
    assert seeds.uris == [
        "http://deep.example/",
        "http://shallow.example/x",
        "http://plain.example/",
        "http://bad.example/",
        "http://odd.example/",
    ]
    assert seeds.max_hops == {"http://deep.example/": 50, "http://shallow.example/x": 0}
    assert seeds.sources["http://shallow.example/x"] == "shallow.example/x"
    assert seeds.errors[0] == (
        "max_hops=two ignored: max_hops takes a whole number of hops (0 or more); "
        "http://bad.example/ is crawled without it (seeds.txt line 4)"
    )
    assert seeds.errors[1].startswith("colour=blue ignored: unknown seed option; known: max_hops")
    # Words after the URI that are not options read as they always did: part of the URI.
    assert seeds.errors[2].startswith("http://exa mple.com/ is not a usable seed: invalid host")
    assert len(seeds.errors) == 3


def test_children_inherit_the_seeds_limit_through_the_frontiers_records() -> None:
    seed = CrawlURI("http://a.example/", is_seed=True, seed_max_hops=2)
    child = seed.create_child("http://a.example/1", "L").create_child("http://a.example/2", "E")
    back = CrawlURI.from_bytes(child.to_bytes())
    assert back.seed_max_hops == 2 and back.hop_path == "LE"


def test_records_saved_before_the_field_existed_still_load() -> None:
    record = json.loads(CrawlURI("http://a.example/x", hop_path="L").to_bytes())
    old = CrawlURI.from_bytes(json.dumps(record[:-1]).encode())
    assert old.uri == "http://a.example/x" and old.seed_max_hops == -1
    with pytest.raises(ValueError, match="fields"):
        CrawlURI.from_bytes(json.dumps([*record, 1]).encode())


@pytest.mark.parametrize(
    ("seed_limit", "hops", "decision"),
    [
        (-1, "L" * 20, DecideResult.NONE),
        (-1, "L" * 21, DecideResult.REJECT),
        (2, "LL", DecideResult.NONE),
        (2, "LLE", DecideResult.REJECT),
        (0, "L", DecideResult.REJECT),
        (40, "L" * 40, DecideResult.NONE),
        (40, "L" * 41, DecideResult.REJECT),
    ],
)
def test_too_many_hops_honours_the_seeds_limit(
    seed_limit: int, hops: str, decision: DecideResult
) -> None:
    rule = TooManyHopsDecideRule(TooManyHopsParams(max_hops=20))
    seed = CrawlURI("http://a.example/", is_seed=True, seed_max_hops=seed_limit)
    curi = seed
    for n, hop in enumerate(hops):
        curi = curi.create_child(f"http://a.example/{n}", hop)
    assert rule.decide(curi) is decision
