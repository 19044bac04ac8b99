"""AlertForwarder: the application log's events that go to webhooks, and their senders.

:meth:`AlertForwarder.wants` says whether an event is sent: its level is at least ``min_level``, or
its name is one of ``events`` (info events such as ``crawl_finished``). The sender's own
``alert_webhook_*`` events never are. :meth:`AlertForwarder.forward` builds the body once and hands
it to every webhook's :class:`~crawler.alerts.webhook_sender.WebhookSender`; it never blocks.

Thread-safe: ``wants`` and ``forward`` may be called from any thread.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from crawler.alerts.alert_payload import alert_payload, encode
from crawler.alerts.webhook_sender import DeliveryCounts, DeliveryPolicy, WebhookSender
from crawler.logs.applog import LEVELS

if TYPE_CHECKING:
    from crawler.order.schema import AlertsConfig

_OWN_EVENTS = "alert_webhook_"


class AlertForwarder:
    """See the module docstring."""

    def __init__(
        self,
        urls: Sequence[str],
        policy: DeliveryPolicy,
        *,
        crawl: str,
        run: str,
        min_level: str = "warning",
        events: Sequence[str] = (),
        user_agent: str = "crawler",
    ) -> None:
        self._min_level = LEVELS[min_level]
        self._events = frozenset(events)
        self._crawl = crawl
        self._run = run
        self._host = socket.gethostname()
        self.senders = [WebhookSender(url, policy, user_agent) for url in urls]

    def wants(self, level: int, event: str) -> bool:
        """True when an event of ``level`` (10 debug ... 50 critical) named ``event`` is sent."""
        if event.startswith(_OWN_EVENTS):
            return False
        return level >= self._min_level or event in self._events

    def forward(self, event: Mapping[str, Any]) -> None:
        """Queue ``event`` (a structlog event dict) on every webhook."""
        body = encode(alert_payload(event, self._crawl, self._run, self._host))
        for sender in self.senders:
            sender.submit(body)

    def close(self, flush_timeout_s: float) -> list[DeliveryCounts]:
        """Send what is pending (sharing ``flush_timeout_s`` among the webhooks), then stop."""
        for sender in self.senders:
            sender.stop_taking()
        deadline = time.monotonic() + flush_timeout_s
        return [sender.close(deadline - time.monotonic()) for sender in self.senders]


def forwarder_for(
    cfg: AlertsConfig, crawl: str, run: str, user_agent: str = "crawler"
) -> AlertForwarder | None:
    """The forwarder of an order's ``alerts`` section, or None when it names no webhook."""
    if not cfg.webhooks:
        return None
    policy = DeliveryPolicy(
        timeout_s=cfg.timeout_s,
        max_tries=cfg.max_tries,
        backoff_s=cfg.backoff_s,
        backoff_max_s=cfg.backoff_max_s,
        max_pending=cfg.max_pending,
    )
    return AlertForwarder(
        cfg.webhooks,
        policy,
        crawl=crawl,
        run=run,
        min_level=cfg.min_level,
        events=cfg.events,
        user_agent=user_agent,
    )
