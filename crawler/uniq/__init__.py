"""Already-seen filters for canonical URIs (see :mod:`crawler.uniq.uniq_filter`)."""

from typing import Any

from crawler.uniq.bloom_uniq import BloomUriUniqFilter, BloomUriUniqFilterParams
from crawler.uniq.leveldb_uniq import LevelDBUriUniqFilter, LevelDBUriUniqFilterParams
from crawler.uniq.memory_uniq import MemoryUriUniqFilter
from crawler.uniq.uniq_filter import UniqStateError, UriUniqFilter, fingerprint

__all__ = [
    "BloomUriUniqFilter",
    "BloomUriUniqFilterParams",
    "LevelDBUriUniqFilter",
    "LevelDBUriUniqFilterParams",
    "MemoryUriUniqFilter",
    "RedisUriUniqFilter",
    "UniqStateError",
    "UriUniqFilter",
    "fingerprint",
]


def __getattr__(name: str) -> Any:
    """The Redis filter (a name an order may give) loads on first use: it imports the redis
    client, which most crawls never need."""
    if name == "RedisUriUniqFilter":
        import importlib

        return getattr(importlib.import_module("crawler.uniq.redis_uniq"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
