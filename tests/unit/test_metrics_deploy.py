"""deploy/'s Grafana dashboard and Prometheus alert rules name only metrics the crawler exports,
and the rules are valid for promtool (Debian's prometheus package) where it is installed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from crawler.frontier.redis.redis_metrics_view import WorkerLeases
from crawler.metrics.crawl_collector import CrawlCollector
from crawler.metrics.run_metrics import WorkspaceCollector
from crawler.metrics.worker_metrics import worker_families

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
STATUS = {
    "state": "RUNNING",
    "downloaded": 1,
    "threads": {"busy": 1, "total": 2},
    "frontier": {"queues": {"ready": 1}},
    "disk": {"free_mb": 10, "low": False},
    "retrying": {"uris": 0, "total": 0},
    "held_servers": 0,
    "parked_queues": 0,
}


def exported() -> set[str]:
    collector = CrawlCollector(
        lambda: STATUS, lambda: {200: 1}, lambda: [("fetch", "fetch_http", {"uris": 1})]
    )
    families = [
        *collector.collect(),
        *worker_families({"w1": {"time": 0}}, leases={"w1": WorkerLeases(1, 0.5)}),
        *WorkspaceCollector(list).collect(),
    ]
    names = {s.name for f in families for s in f.samples}
    names |= {f.name for f in families if f.type == "gauge"}
    names |= {f"{f.name}_total" for f in families if f.type == "counter"}
    return names | {"process_resident_memory_bytes", "process_cpu_seconds_total", "up"}


def used(text: str) -> set[str]:
    return set(re.findall(r"\b((?:crawler|process)_[a-z_]+)", text)) - {"crawler_overview"}


def test_the_dashboard_uses_only_exported_metrics() -> None:
    dashboard = json.loads((DEPLOY / "grafana" / "crawler-dashboard.json").read_text())
    exprs = " ".join(t["expr"] for p in dashboard["panels"] for t in p["targets"])
    names = used(exprs)
    assert names and names <= exported(), names - exported()


def test_the_alert_rules_use_only_exported_metrics_and_are_valid() -> None:
    rules = DEPLOY / "prometheus" / "alerts.yml"
    names = used(rules.read_text())
    assert {
        "crawler_worker_heartbeat_age_seconds",
        "crawler_worker_lease_age_seconds",
        "crawler_disk_free_bytes",
    } <= names
    assert names <= exported(), names - exported()
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool (Debian's prometheus package) is not installed")
    checked = subprocess.run(
        [promtool, "check", "rules", str(rules)], capture_output=True, text=True, timeout=30
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
