"""CrawlURI: hop paths, persistence, outcome classification."""

from __future__ import annotations

import json

from crawler import CrawlURI, FetchStatus, Hop, SchedulingDirective


def test_seed_hop_path_prints_dash_and_children_extend_it() -> None:
    seed = CrawlURI("http://a.example/", is_seed=True, source_tag="tag")
    child = seed.create_child("http://a.example/b", Hop.LINK, "a/@href")
    grandchild = child.create_child("http://a.example/c.png", Hop.EMBED)
    assert seed.hop_path_text() == "-"
    assert child.hop_path_text() == "L"
    assert grandchild.hop_path_text() == "LE"
    assert grandchild.via == "http://a.example/b"
    assert grandchild.source_tag == "tag"
    assert grandchild.hop_count == 2


def test_hop_path_keeps_the_last_fifty_and_counts_the_rest() -> None:
    curi = CrawlURI("http://a.example/")
    for i in range(62):
        curi = curi.create_child(f"http://a.example/{i}", Hop.LINK if i % 2 else Hop.EMBED)
    text = curi.hop_path_text()
    assert text.startswith("12+")
    assert len(text.split("+", 1)[1]) == 50
    assert curi.hop_count == 62
    assert text.endswith("ELEL")


def test_persistent_fields_round_trip() -> None:
    curi = CrawlURI("http://a.example/ü?q=1", via="http://a.example/", hop_path="LLE")
    curi.data["custom"] = {"k": [1, 2]}
    curi.fetch_attempts = 3
    curi.status = 200  # not persistent
    back = CrawlURI.from_bytes(curi.to_bytes())
    assert back.uri == curi.uri
    assert back.hop_path == "LLE"
    assert back.data == {"custom": {"k": [1, 2]}}
    assert back.fetch_attempts == 3
    assert back.status == FetchStatus.UNATTEMPTED


def test_every_persistent_field_comes_back_in_its_own_place() -> None:
    # A full record is read by position: each field, set to a value no other field holds,
    # must come back under its own name.
    curi = CrawlURI("http://a.example/p", via="http://a.example/", hop_path="LLE")
    curi.hops_dropped, curi.is_seed, curi.source_tag = 4, True, "tag"
    curi.directive, curi.precedence, curi.force_fetch = SchedulingDirective.HIGH, 7, True
    curi.fetch_attempts, curi.via_context, curi.data = 2, "a/@href", {"k": 1}
    curi.queue_key, curi.canonical, curi.ordinal, curi.seed_max_hops = "a.example", "c", 99, 5
    back = CrawlURI.from_bytes(curi.to_bytes())
    for name in CrawlURI._PERSISTENT:
        assert getattr(back, name) == getattr(curi, name), name


def test_the_record_is_the_json_it_always_was() -> None:
    # Queued records written by an earlier version are read back by this one and vice versa:
    # the bytes stay those of json.dumps with compact separators and UTF-8 kept as it is.
    curi = CrawlURI("http://a.example/ü?q=\u2028", via=None, hop_path="LLX", is_seed=True)
    curi.directive = SchedulingDirective.MEDIUM
    curi.data.update({"f": 0.1, "big": 2**70, "nan": float("inf"), "t": ("a", None), "e": "é\n"})
    expected = json.dumps(
        [getattr(curi, name) for name in curi._PERSISTENT],
        separators=(",", ":"),
        ensure_ascii=False,
    ).encode()
    assert curi.to_bytes() == expected


def test_records_of_links_are_the_json_whatever_the_links_before_them() -> None:
    # Records are put together from parts remembered across URIs (a page's links share their
    # via, hops and context): each must still be exactly json.dumps of its own fields, also
    # when an earlier URI had equal values of another type (1, True, 1.0), escapes, or data.
    def expected(curi: CrawlURI) -> bytes:
        values = [getattr(curi, name) for name in curi._PERSISTENT]
        return json.dumps(values, separators=(",", ":"), ensure_ascii=False).encode()

    page = CrawlURI('http://a.example/p"q', via="http://a.example/", hop_path="L")
    variants: list[dict[str, object]] = [
        {},
        {"is_seed": True},
        {"hops_dropped": True},
        {"hops_dropped": 1.0},
        {"hops_dropped": 1},
        {"precedence": True},
        {"precedence": -0.0},
        {"precedence": 0.0},
        {"precedence": 0},
        {"fetch_attempts": 10**30},
        {"directive": 3},
        {"directive": SchedulingDirective.NORMAL},
        {"force_fetch": 1},
        {"via_context": "img/@src\u2028\n"},
        {"via_context": None},
        {"source_tag": "t\u00e9\x01"},
        {"queue_key": "h\u00e9#443"},
        {"canonical": "http://a.example/other"},
        {"ordinal": True},
        {"seed_max_hops": None},
        {"data": {"k": [1.5]}},
    ]
    seen: list[bytes] = []
    for round_ in range(2):
        for i, fields in enumerate(variants):
            child = page.create_child(f"http://a.example/{i}\u00e9", Hop.LINK, "a/@href")
            child.queue_key = "a.example"
            child.canonical = child.uri
            for name, value in fields.items():
                setattr(child, name, value)
            assert child.to_bytes() == expected(child), (round_, fields)
            seen.append(child.to_bytes())
    assert len(set(seen)) == len(variants)


def test_success_failure_and_disregard() -> None:
    curi = CrawlURI("http://a.example/")
    curi.status = 404
    assert curi.is_success
    curi.status = FetchStatus.ROBOTS_PRECLUDED
    assert not curi.is_success and curi.is_disregarded
    curi.status = FetchStatus.CONNECT_FAILED
    assert not curi.is_success and not curi.is_disregarded


def test_mime_type_drops_parameters() -> None:
    curi = CrawlURI("http://a.example/")
    assert curi.mime_type == "no-type"
    curi.content_type = "Text/HTML; charset=UTF-8"
    assert curi.mime_type == "text/html"


def test_reset_for_retry_forgets_the_attempt() -> None:
    curi = CrawlURI("http://a.example/")
    curi.status = -2
    curi.annotate("err=ConnectError")
    curi.annotate("err=ConnectError")
    assert curi.annotations == ["err=ConnectError"]
    curi.reset_for_retry()
    assert curi.status == 0
    assert curi.annotations == ["err=ConnectError"]
