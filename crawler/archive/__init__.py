"""Archives that replay: CDXJ indexes of a run's WARCs, WACZ packages, and ``crawler replay``.

Modules (import the one you need; this package imports nothing heavy):

* :mod:`crawler.archive.run_layout` — where a run's WARCs and indexes are (``warcs/``,
  ``indexes/``, and each ``workers/wNN/`` of a ``--workers`` run).
* :mod:`crawler.archive.indexer` — :class:`~crawler.archive.indexer.CdxjIndexer` (one WARC to
  one ``indexes/<warc name>.cdxj``), :func:`~crawler.archive.indexer.index_run` (``crawler
  index``) and :class:`~crawler.archive.indexer.BackgroundIndexer` (indexes WARCs as the writer
  closes them).
* :mod:`crawler.archive.pages` — ``pages.jsonl`` entries: every HTML page captured with 200.
* :mod:`crawler.archive.wacz` — :class:`~crawler.archive.wacz.WaczPackager` (``crawler wacz``).
* :mod:`crawler.archive.replay` — :class:`~crawler.archive.replay.ReplayServer`, pywb on
  loopback (``crawler replay``).
"""
