"""What changed between a crawl and the earlier crawl it imported its history from.

Modules (import the one you need):

* :mod:`crawler.changes.change_classifier` — :func:`~crawler.changes.change_classifier.changes`:
  one sorted merge of the crawls' fetch histories, each URI classified new, changed, unchanged or
  gone (:class:`~crawler.changes.change_classifier.Change`).
* :mod:`crawler.changes.change_report` — :class:`~crawler.changes.change_report.ChangeReport`,
  ``reports/changes-report.txt`` and its JSON twin ``reports/changes-report.json``, written
  from the run directories alone (:func:`~crawler.changes.change_report.write_change_report`),
  and :func:`~crawler.changes.change_report.read_change_report`, a bounded reader for the console.
"""
