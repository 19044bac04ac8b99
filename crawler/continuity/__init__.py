"""What a crawl carries over to the next crawl of its job: the payload-digest index.

:class:`~crawler.continuity.digest_index.DigestIndex` is the contract (payload digest -> the
first capture of that payload); :class:`~crawler.continuity.leveldb_digest_index.LevelDBDigestIndex`
(one process) and :class:`~crawler.continuity.redis_digest_index.RedisDigestIndex` (every worker
of a ``--workers`` crawl) implement it; :mod:`crawler.continuity.job_digest_index` keeps one per
job between crawls. The Redis backend is imported only by who uses it (it imports ``redis``).
"""

from crawler.continuity.digest_entry import DigestEntry
from crawler.continuity.digest_index import DigestIndex, LayeredDigestIndex
from crawler.continuity.leveldb_digest_index import LevelDBDigestIndex

__all__ = ["DigestEntry", "DigestIndex", "LayeredDigestIndex", "LevelDBDigestIndex"]
