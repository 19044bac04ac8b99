"""Alerts reach someone: ``alerts.webhooks`` POSTs every alert (and crawl_finished) as JSON to a
local receiver, with retries and back-off; a dead or hanging endpoint never blocks the crawl."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from crawler.alerts.alert_forwarder import AlertForwarder
from crawler.alerts.webhook_sender import DeliveryPolicy, WebhookSender, redacted_url
from crawler.control.controller import CrawlController
from crawler.order.errors import OrderError
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
FAST = DeliveryPolicy(timeout_s=2.0, max_tries=3, backoff_s=0.02, backoff_max_s=0.1)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


class Receiver:
    """A webhook endpoint on loopback: answers each POST with the next of ``statuses`` (then
    200), holds requests while ``hold`` is clear, and keeps the JSON bodies it accepted."""

    def __init__(self, statuses: list[int] | None = None) -> None:
        self.statuses = list(statuses or [])
        self.attempts = 0
        self.accepted: list[dict[str, Any]] = []
        self.hold = threading.Event()
        self.hold.set()
        self.got = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                receiver.hold.wait(30)
                with receiver.got:
                    receiver.attempts += 1
                    status = receiver.statuses.pop(0) if receiver.statuses else 200
                    if status == 200:
                        receiver.accepted.append(json.loads(body))
                    receiver.got.notify_all()
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/T0/secret-token"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait_for(self, count: int, timeout_s: float = 20.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout_s
        with self.got:
            while len(self.accepted) < count and time.monotonic() < deadline:
                self.got.wait(0.1)
            return list(self.accepted)

    def close(self) -> None:
        self.hold.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def test_an_alert_arrives_as_json_with_a_readable_text_line(receiver: Receiver) -> None:
    forwarder = AlertForwarder([receiver.url], FAST, crawl="weekly", run="20261127-1200")
    event = {"event": "disk_space_low", "level": "warning", "timestamp": "T", "free_mb": 12}
    assert forwarder.wants(30, "disk_space_low")
    forwarder.forward(event)
    [body] = receiver.wait_for(1)
    assert body["event"] == "disk_space_low" and body["level"] == "warning"
    assert body["crawl"] == "weekly" and body["run"] == "20261127-1200"
    assert body["fields"] == {"free_mb": 12}
    assert body["text"] == "[weekly 20261127-1200] WARNING disk_space_low free_mb=12"
    forwarder.close(2.0)


def test_levels_and_named_info_events_choose_what_is_sent(receiver: Receiver) -> None:
    forwarder = AlertForwarder(
        [receiver.url], FAST, crawl="c", run="r", min_level="error", events=["crawl_finished"]
    )
    assert not forwarder.wants(30, "disk_space_low")
    assert forwarder.wants(40, "reports_failed")
    assert forwarder.wants(20, "crawl_finished")
    assert not forwarder.wants(20, "crawl_state")
    assert not forwarder.wants(40, "alert_webhook_failed")  # never about itself
    forwarder.close(0)


def test_a_failing_endpoint_is_tried_again_until_it_answers() -> None:
    receiver = Receiver(statuses=[503, 500])
    try:
        sender = WebhookSender(receiver.url, FAST)
        sender.submit(b'{"event": "x"}')
        assert receiver.wait_for(1) == [{"event": "x"}]
        counts = sender.close(2.0)
        assert receiver.attempts == 3
        assert (counts.sent, counts.failed) == (1, 0)
    finally:
        receiver.close()


def test_a_refused_alert_is_not_retried_and_one_past_its_tries_is_given_up() -> None:
    receiver = Receiver(statuses=[400, 500, 500, 500])
    try:
        sender = WebhookSender(receiver.url, FAST)
        sender.submit(b'{"event": "refused"}')
        sender.submit(b'{"event": "given-up"}')
        sender.submit(b'{"event": "sent"}')
        assert receiver.wait_for(1) == [{"event": "sent"}]
        counts = sender.close(2.0)
        assert receiver.attempts == 1 + 3 + 1
        assert (counts.sent, counts.failed) == (1, 2)
    finally:
        receiver.close()


def test_a_hanging_endpoint_never_blocks_the_caller_and_the_backlog_stays_bounded(
    receiver: Receiver,
) -> None:
    receiver.hold.clear()  # the endpoint takes the POST and does not answer
    policy = DeliveryPolicy(timeout_s=1.0, max_tries=1, backoff_s=0, max_pending=10)
    sender = WebhookSender(receiver.url, policy)
    for n in range(500):  # all return while the endpoint still holds the first POST
        sender.submit(json.dumps({"n": n}).encode())
    counts = sender.counts()
    assert counts.unsent == 10
    assert counts.dropped >= 489  # one may be in flight
    assert counts.sent == 0
    closed = sender.close(0.5)
    assert closed.sent == 0 and closed.unsent + closed.failed + closed.dropped == 500


def test_webhook_urls_are_logged_without_their_tokens() -> None:
    assert redacted_url("https://hooks.example.org/T0/B0/secret") == "https://hooks.example.org/…"
    assert redacted_url("https://user:pw@example.org/") == "https://example.org"


def test_a_crawl_posts_its_alerts_and_its_end(receiver: Receiver, tmp_path: Path) -> None:
    dead = socket.socket()  # a port nothing listens on
    dead.bind(("127.0.0.1", 0))
    dead_url = f"http://127.0.0.1:{dead.getsockname()[1]}/dead/secret-token"
    order = load_order(
        EXAMPLE,
        [
            "seeds.urls=['http://[bad']",
            "seeds.file=null",
            "logging.console=false",
            f"alerts.webhooks=['{receiver.url}', '{dead_url}']",
            "alerts.max_tries=2",
            "alerts.backoff_s=0.05",
        ],
    )
    controller = CrawlController(order, tmp_path / "run", install_signals=False)
    assert controller.run() == 0
    bodies = receiver.wait_for(2)
    events = [b["event"] for b in bodies]
    assert events[0] == "bad_seed" and events[-1] == "crawl_finished"
    assert bodies[-1]["fields"]["status"].startswith("Finished")
    assert all(b["crawl"] == order.name and b["run"] == "run" for b in bodies)
    log = (tmp_path / "run" / "logs" / "crawler.jsonl").read_text()
    summary = [json.loads(line) for line in log.splitlines() if "alert_webhook_summary" in line]
    assert summary and summary[-1]["sent"] == len(bodies)
    assert summary[-1]["failed"] == len(bodies)  # the dead endpoint's
    alerts = (tmp_path / "run" / "logs" / "alerts.log").read_text()
    assert alerts.count("alert_webhook_failed") == 1  # once per outage, not per alert
    assert "secret-token" not in log + alerts
    dead.close()


def test_a_webhook_that_is_not_a_url_is_a_clear_order_error() -> None:
    with pytest.raises(OrderError) as caught:
        load_order(EXAMPLE, ["alerts.webhooks=['hooks.example.org/x']"])
    assert "alerts.webhooks" in str(caught.value)
    assert "http:// or https://" in str(caught.value)
