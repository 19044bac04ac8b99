"""Retries: which finished URIs go back to their queue, and the ones waiting for another try.

* :mod:`~crawler.frontier.retry.retry_policy`: RetryPolicy, the one place every frontier decides
  a finished URI's fate (``frontier.retries``);
* :mod:`~crawler.frontier.retry.retry_watch`: RetryWatch, the URIs waiting to be tried again, for
  ``crawler status`` and the frontier report.

Nothing is imported here: the public names are exported by :mod:`crawler.frontier`.
"""
