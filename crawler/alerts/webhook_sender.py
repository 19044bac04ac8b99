"""WebhookSender: POSTs alerts to one webhook from a thread of its own.

Contract:
- :meth:`WebhookSender.submit` never blocks on the network: it appends the body to a bounded backlog
  (``max_pending``; when full, the oldest alert is dropped and counted) and returns.
- A daemon thread sends the backlog in order. A connection error, a timeout, 408, 429 or a 5xx is
  tried again, up to ``max_tries`` attempts in all, waiting ``backoff_s`` and then twice as long
  each time up to ``backoff_max_s`` (a ``Retry-After`` in seconds up to ``backoff_max_s`` is
  obeyed instead). Any other answer outside 2xx gives up at once: the endpoint refused the alert.
- The first failure of an outage is logged once (``alert_webhook_failed``, a warning in
  alerts.log, never forwarded to a webhook) and its end too (``alert_webhook_recovered``). The URL
  is logged without its path and query, where webhook tokens live.
- :meth:`WebhookSender.close` waits up to ``flush_timeout_s`` for the backlog to go out, then stops
  the thread (a send in flight ends within ``timeout_s``) and returns the counts.

Thread-safe: ``submit`` may be called from any thread; ``close`` from one.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import structlog

if TYPE_CHECKING:
    import httpx

_RETRY_STATUSES = frozenset({408, 425, 429})


@dataclass(frozen=True)
class DeliveryPolicy:
    """How hard a sender tries: see the module docstring."""

    timeout_s: float = 5.0
    max_tries: int = 5
    backoff_s: float = 1.0
    backoff_max_s: float = 60.0
    max_pending: int = 1000


@dataclass(frozen=True)
class DeliveryCounts:
    """Alerts ``sent`` (2xx), ``failed`` (given up or refused), ``dropped`` (backlog full) and
    ``unsent`` (still in the backlog when the sender was closed)."""

    sent: int = 0
    failed: int = 0
    dropped: int = 0
    unsent: int = 0


def redacted_url(url: str) -> str:
    """``url`` as logged: scheme and host only (paths and queries of webhooks hold tokens)."""
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    tail = "/…" if parts.path not in ("", "/") or parts.query else ""
    return f"{parts.scheme}://{host}{tail}"


class WebhookSender:
    """See the module docstring."""

    def __init__(self, url: str, policy: DeliveryPolicy, user_agent: str = "crawler") -> None:
        self.url = url
        self.policy = policy
        self._user_agent = user_agent
        self._backlog: deque[bytes] = deque()
        self._cond = threading.Condition()
        self._closing = False
        self._stop = threading.Event()
        self._sent = self._failed = self._dropped = 0
        self._down = False
        self._shown_url = redacted_url(url)
        self._thread = threading.Thread(target=self._run, name="alert-webhook", daemon=True)
        self._thread.start()

    def submit(self, body: bytes) -> None:
        """Queue ``body`` (a JSON document) for sending; returns at once."""
        with self._cond:
            if self._closing:
                return
            if len(self._backlog) >= self.policy.max_pending:
                self._backlog.popleft()
                self._dropped += 1
            self._backlog.append(body)
            self._cond.notify()

    def counts(self) -> DeliveryCounts:
        """The counts so far."""
        with self._cond:
            return DeliveryCounts(self._sent, self._failed, self._dropped, len(self._backlog))

    def stop_taking(self) -> None:
        """Refuse further alerts (:meth:`submit` ignores them); the backlog still goes out."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()

    def close(self, flush_timeout_s: float) -> DeliveryCounts:
        """Send what is pending for up to ``flush_timeout_s`` seconds, then stop. Idempotent."""
        self.stop_taking()
        self._thread.join(max(0.0, flush_timeout_s))
        self._stop.set()
        self._thread.join(self.policy.timeout_s + 1.0)
        return self.counts()

    # The sending thread.

    def _run(self) -> None:
        import httpx

        headers = {"Content-Type": "application/json", "User-Agent": self._user_agent}
        with httpx.Client(timeout=self.policy.timeout_s, headers=headers) as client:
            while True:
                with self._cond:
                    while not self._backlog and not self._closing:
                        self._cond.wait()
                    if not self._backlog or self._stop.is_set():
                        return
                    body = self._backlog.popleft()
                sent = self._deliver(client, body)
                with self._cond:
                    if sent:
                        self._sent += 1
                    else:
                        self._failed += 1

    def _deliver(self, client: httpx.Client, body: bytes) -> bool:
        import httpx

        policy = self.policy
        wait = policy.backoff_s
        for attempt in range(1, policy.max_tries + 1):
            retry_after: float | None = None
            try:
                response = client.post(self.url, content=body)
            except httpx.HTTPError as exc:
                problem = f"{type(exc).__name__}: {exc}"
            else:
                status = response.status_code
                if 200 <= status < 300:
                    self._up()
                    return True
                problem = f"HTTP {status}"
                if status not in _RETRY_STATUSES and status < 500:
                    self._failing(problem, attempt, final=True)
                    return False
                retry_after = _seconds(response.headers.get("Retry-After"))
            final = attempt == policy.max_tries or self._stop.is_set()
            self._failing(problem, attempt, final=final)
            if final:
                return False
            pause = wait
            if retry_after is not None and retry_after <= policy.backoff_max_s:
                pause = retry_after
            if self._stop.wait(min(pause, policy.backoff_max_s)):
                return False
            wait = min(wait * 2, policy.backoff_max_s)
        return False

    def _failing(self, problem: str, attempt: int, final: bool) -> None:
        if not self._down:
            self._down = True
            self._log().warning("alert_webhook_failed", problem=problem, attempt=attempt)
        elif final:
            self._log().info("alert_webhook_gave_up", problem=problem, attempts=attempt)

    def _up(self) -> None:
        if self._down:
            self._down = False
            self._log().info("alert_webhook_recovered")

    def _log(self) -> Any:
        # Looked up at each use: the application log may be configured after this sender.
        return structlog.get_logger("crawler").bind(webhook=self._shown_url)


def _seconds(value: Any) -> float | None:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return seconds if seconds >= 0 else None
