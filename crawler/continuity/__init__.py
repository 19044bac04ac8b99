"""What a crawl carries over to the next crawl of its job.

* :class:`~crawler.continuity.digest_index.DigestIndex` is the payload-digest index's contract
  (payload digest -> the first capture of that payload);
  :class:`~crawler.continuity.leveldb_digest_index.LevelDBDigestIndex` (one process) and
  :class:`~crawler.continuity.redis_digest_index.RedisDigestIndex` (every worker of a
  ``--workers`` crawl) implement it; :mod:`crawler.continuity.job_digest_index` keeps one per
  job between crawls. The Redis backend is imported only by who uses it (it imports ``redis``).
* :mod:`crawler.continuity.warc_locator` — :class:`~crawler.continuity.warc_locator.WarcLocator`,
  which finds a WARC file named in the crawl history among this run's and the imported runs'
  WARC directories.
* :mod:`crawler.continuity.earlier_payload` —
  :class:`~crawler.continuity.earlier_payload.EarlierPayload`, which loads the payload of an
  earlier capture into a 304's recording, so the extractors find the page's links as if it had
  been fetched again.
* :mod:`crawler.continuity.change_classifier` and :mod:`crawler.continuity.change_report` — what
  changed since the crawl a run imported its history from: one sorted merge of the two crawls'
  fetch histories, each URI new, changed, unchanged or gone, written as
  ``reports/changes-report.txt`` and ``.json`` (and read back, bounded, for the console).
"""

from crawler.continuity.digest_entry import DigestEntry
from crawler.continuity.digest_index import DigestIndex, LayeredDigestIndex
from crawler.continuity.leveldb_digest_index import LevelDBDigestIndex

__all__ = ["DigestEntry", "DigestIndex", "LayeredDigestIndex", "LevelDBDigestIndex"]
