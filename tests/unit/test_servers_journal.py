"""ServerCache's journal (robots/DNS survive a restart) and shared prerequisite claims."""

from __future__ import annotations

import math
from pathlib import Path

from crawler.servers import ServerCache

UA = "crawler-test"


def test_robots_and_hosts_survive_a_restart(tmp_path: Path) -> None:
    journal = tmp_path / "state" / "servers.jsonl"
    first = ServerCache()
    assert first.attach_journal(journal) == 0
    first.update_robots("a.example:80", 200, b"User-agent: *\nDisallow: /private/\n", 1000.0)
    first.update_robots("b.example:80", 503, b"down", 1000.0)
    first.update_host("a.example", "192.0.2.7", 1000.0, 60.0)
    first.update_host("literal", "192.0.2.8", 1000.0, math.inf)
    first.update_host("gone.example", None, 1000.0, 0.0)
    # a crash leaves no chance to close the journal; its last line may be cut short
    with journal.open("a") as fh:
        fh.write('{"t":"robots","key":"c.exa')

    again = ServerCache()
    assert again.attach_journal(journal) == 5
    assert again.is_robots_valid("a.example:80", 1001.0, 86400)
    assert not again.allowed("http://a.example/private/x", UA)
    assert again.allowed("http://a.example/public", UA)
    assert again.allowed("http://b.example/anything", UA)
    assert again.host_ip("a.example") == "192.0.2.7"
    state = again.host_state("literal")
    assert state is not None and math.isinf(state.ttl_s)
    gone = again.host_state("gone.example")
    assert gone is not None and gone.ip is None
    assert again.robots_state("c.example:80") is None


def test_one_claim_per_prerequisite_until_resolved_or_expired() -> None:
    cache = ServerCache()
    assert cache.claim_prerequisite("robots:a.example:80", 100.0, hold_s=60)
    assert not cache.claim_prerequisite("robots:a.example:80", 101.0, hold_s=60)
    assert cache.claim_prerequisite("robots:b.example:80", 101.0, hold_s=60)
    cache.update_robots("a.example:80", 200, b"", 102.0)
    assert cache.claim_prerequisite("robots:a.example:80", 103.0, hold_s=60)
    assert not cache.claim_prerequisite("robots:a.example:80", 150.0, hold_s=60)
    assert cache.claim_prerequisite("robots:a.example:80", 164.0, hold_s=60)
    assert cache.claim_prerequisite("dns:h.example", 1.0, hold_s=60)
    cache.update_host("h.example", "192.0.2.1", 2.0, 0.0)
    assert cache.claim_prerequisite("dns:h.example", 3.0, hold_s=60)
    # a claimer that gives up before fetching releases its claim: no wait for the next one
    assert cache.claim_prerequisite("robots:c.example:80", 200.0, hold_s=60)
    cache.release_prerequisite("robots:c.example:80")
    assert cache.claim_prerequisite("robots:c.example:80", 201.0, hold_s=60)
