"""HashQueueAssignmentPolicy: spread URIs over N queues by a string hash of the whole URI.

Why (as published single-site crawl experiments with Heritrix showed): with the hostname policy
one big site is one queue, which emits one URI at a time, so a single-site crawl runs on one
thread. Hashing the whole URI modulo N (50 for 50 threads in those experiments) spreads the site
over N queues. The classic string hashes are computed over the URI's UTF-8 bytes, as the C
originals do over ``char*``:

* ELFHash (PJW): ``h = (h << 4) + c``; if the top nibble ``x = h & 0xF0000000`` is set,
  ``h ^= x >> 24; h &= ~x``; result ``h & 0x7FFFFFFF``.
* BKDRHash: ``h = h * 131 + c``; result ``h & 0x7FFFFFFF``.
* SDBMHash: ``h = c + (h << 6) + (h << 16) - h``; result ``h & 0x7FFFFFFF``.
* murmur3: 32-bit unsigned murmur3 of the URI (not in those experiments; the best spread).

ELF keeps the last byte's low nibble in its low bits, so with an even bucket count every URI
ending alike (``.html``) falls into half the buckets: prefer a prime count (default 47).

No Heritrix counterpart (its ``BucketQueueAssignmentPolicy`` buckets by IP hash).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import mmh3
from pydantic import Field

from crawler.frontier.assignment.assignment_base import QueueAssignmentPolicy
from crawler.params import Params

if TYPE_CHECKING:
    from collections.abc import Callable

    from crawler.curi import CrawlURI


def elf_hash(text: str) -> int:
    """ELFHash (PJW) of ``text``'s UTF-8 bytes; 31-bit result."""
    h = 0
    for c in text.encode("utf-8", "surrogatepass"):
        h = ((h << 4) + c) & 0xFFFFFFFF
        x = h & 0xF0000000
        if x:
            h ^= x >> 24
            h &= ~x
    return h & 0x7FFFFFFF


def bkdr_hash(text: str) -> int:
    """BKDRHash (seed 131) of ``text``'s UTF-8 bytes; 31-bit result."""
    h = 0
    for c in text.encode("utf-8", "surrogatepass"):
        h = (h * 131 + c) & 0xFFFFFFFF
    return h & 0x7FFFFFFF


def sdbm_hash(text: str) -> int:
    """SDBMHash of ``text``'s UTF-8 bytes; 31-bit result."""
    h = 0
    for c in text.encode("utf-8", "surrogatepass"):
        h = (c + (h << 6) + (h << 16) - h) & 0xFFFFFFFF
    return h & 0x7FFFFFFF


def murmur3_hash(text: str) -> int:
    """32-bit murmur3 (unsigned, seed 0) of ``text``'s UTF-8 bytes."""
    return int(mmh3.hash(text.encode("utf-8", "surrogatepass"), signed=False))


STRING_HASHES: dict[str, Callable[[str], int]] = {
    "elf": elf_hash,
    "bkdr": bkdr_hash,
    "sdbm": sdbm_hash,
    "murmur3": murmur3_hash,
}
"""The selectable hash functions by name."""


class HashQueueAssignmentPolicyParams(Params):
    """Parameters of :class:`HashQueueAssignmentPolicy`."""

    function: Literal["elf", "bkdr", "sdbm", "murmur3"] = Field(
        "murmur3", description="string hash of the whole URI"
    )
    buckets: int = Field(
        47,
        ge=1,
        le=1_000_000,
        description="number of queues; prefer a prime: ELF keeps the last character in its low "
        "bits, so an even count leaves half the buckets empty for URIs ending alike",
    )


class HashQueueAssignmentPolicy(QueueAssignmentPolicy[HashQueueAssignmentPolicyParams]):
    """``<function>-<hash(uri) % buckets>``: queues independent of hosts.

    Spreads one site over ``buckets`` queues so all threads can work on it. Politeness is then
    per bucket, not per host: pair it with the server politeness cap
    (``frontier.politeness.host_max_connections``) unless the site agrees to the load. A
    prerequisite is hashed by its via (the frontier puts it in the via's queue anyway).
    Reads ``uri``, ``via``, ``hop_path``. Thread-safe (no mutable state).
    """

    def __init__(self, params: HashQueueAssignmentPolicyParams | None = None) -> None:
        super().__init__(params)
        self._hash = STRING_HASHES[self.params.function]
        self._prefix = f"{self.params.function}-"

    def key(self, curi: CrawlURI) -> str:
        return f"{self._prefix}{self._hash(self.basis(curi)) % self.params.buckets}"
