"""Archives that replay: CDXJ indexes of a run's WARCs, WACZ packages, and pywb replay. The
``crawler index``, ``wacz`` and ``replay`` verbs that drive them are in :mod:`crawler.cli.commands`.

Modules (import the one you need; this package imports nothing heavy):

* :mod:`crawler.archive.run_layout` — where a run's WARCs and indexes are (``warcs/``,
  ``indexes/``, and each ``workers/wNN/`` of a ``--workers`` run).
* :mod:`crawler.archive.indexer` — :class:`~crawler.archive.indexer.CdxjIndexer` (one WARC to
  one ``indexes/<warc name>.cdxj``) and :class:`~crawler.archive.indexer.BackgroundIndexer`
  (indexes WARCs as the writer closes them, from the writer's entries).
* :mod:`crawler.archive.warc_scan` — :class:`~crawler.archive.warc_scan.WarcScanner`, the fast
  reader of per-record-gzipped WARCs, and the CDXJ line format.
* :mod:`crawler.archive.run_index` — :func:`~crawler.archive.run_index.index_run` (``crawler
  index``).
* :mod:`crawler.archive.collection` — the pywb collection of a run (and the runs its revisits
  refer to) or of a WACZ.
* :mod:`crawler.archive.pages` — ``pages.jsonl`` entries: every HTML page captured with 200.
* :mod:`crawler.archive.wacz` — :class:`~crawler.archive.wacz.WaczPackager` (``crawler wacz``).
* :mod:`crawler.archive.replay` — :class:`~crawler.archive.replay.ReplayServer`, pywb on
  loopback (``crawler replay``).
* :mod:`crawler.archive.collection_set` — :class:`~crawler.archive.collection_set.CollectionSet`,
  the earlier collections a crawl deduplicates against (order key ``dedup``), over
  :mod:`~crawler.archive.cdxj_file` (a sorted CDXJ file, searched in place) and
  :mod:`~crawler.archive.cdx_server` (a CDX server over HTTP).
"""
