"""What a recrawl needs from earlier captures.

* :mod:`crawler.continuity.warc_locator` — :class:`~crawler.continuity.warc_locator.WarcLocator`,
  which finds a WARC file named in the crawl history among this run's and the imported runs'
  WARC directories.
* :mod:`crawler.continuity.earlier_payload` —
  :class:`~crawler.continuity.earlier_payload.EarlierPayload`, which loads the payload of an
  earlier capture into a 304's recording, so the extractors find the page's links as if it had
  been fetched again.
"""
