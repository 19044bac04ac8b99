"""Alerts that reach someone: the application log's warnings and errors POSTed to webhooks.

- :class:`~crawler.alerts.alert_forwarder.AlertForwarder` picks the events the order's ``alerts``
  section names and hands each to one sender per webhook; the application log
  (:mod:`crawler.logs.applog`) calls it for every event.
- :class:`~crawler.alerts.webhook_sender.WebhookSender` delivers them from a thread of its own, with
  retries and back-off, keeping a bounded backlog: a slow or dead endpoint never slows the crawl.
- :func:`~crawler.alerts.alert_payload.alert_payload` is the JSON body.
"""
