"""A job's ``schedule:``: fire times of cron expressions (UTC, seconds first in 6 fields, ``H``),
and the order's one-line error for a bad one."""

from __future__ import annotations

import calendar
import io
import time
from pathlib import Path

import pytest

from crawler.order.errors import OrderError
from crawler.order.loader import load_order
from crawler.order.preflight import validate_main
from crawler.schedule.cron_schedule import CronError, CronSchedule, cron_problem

pytestmark = pytest.mark.timeout(30)


def utc(text: str) -> float:
    """Seconds since the epoch of ``yyyy-mm-ddThh:mm:ss`` UTC."""
    return float(calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%S")))


def test_five_fields_are_read_in_utc() -> None:
    daily = CronSchedule("0 3 * * *")
    assert daily.next_after(utc("2026-11-27T02:59:59")) == utc("2026-11-27T03:00:00")
    assert daily.next_after(utc("2026-11-27T03:00:00")) == utc("2026-11-28T03:00:00")
    weekdays = CronSchedule("30 8 * * 1-5")
    assert weekdays.next_after(utc("2026-11-27T09:00:00")) == utc("2026-11-30T08:30:00")  # Fri→Mon


def test_six_fields_put_seconds_first() -> None:
    every_20_s = CronSchedule("*/20 * * * * *")
    assert every_20_s.next_after(utc("2026-11-27T10:00:05")) == utc("2026-11-27T10:00:20")
    at_second_7 = CronSchedule("7 0 3 * * *")
    assert at_second_7.next_after(utc("2026-11-27T00:00:00")) == utc("2026-11-27T03:00:07")


def test_latest_at_or_before_is_the_missed_fire_time() -> None:
    hourly = CronSchedule("0 * * * *")
    assert hourly.latest_at_or_before(utc("2026-11-27T05:59:59")) == utc("2026-11-27T05:00:00")
    assert hourly.latest_at_or_before(utc("2026-11-27T06:00:00")) == utc("2026-11-27T06:00:00")


def test_aliases_and_hashed_fields() -> None:
    assert CronSchedule("@daily").next_after(utc("2026-11-27T12:00:00")) == utc(
        "2026-11-28T00:00:00"
    )
    start = utc("2026-11-27T00:00:00")
    one = CronSchedule("H 3 * * *", "job-one").next_after(start)
    assert one == CronSchedule("H 3 * * *", "job-one").next_after(start)  # stable per job
    assert utc("2026-11-27T03:00:00") <= one < utc("2026-11-27T04:00:00")
    others = {CronSchedule("H 3 * * *", f"job-{i}").next_after(start) for i in range(20)}
    assert len(others) > 5  # jobs are spread over the hour


@pytest.mark.parametrize(
    ("expression", "says"),
    [
        ("61 * * * *", "not a valid cron expression"),
        ("* * *", "has 3 fields"),
        ("* * * * * * *", "has 7 fields"),
        ("0 0 31 2 *", "never fires"),
        ("every day", "has 2 fields"),
    ],
)
def test_bad_expressions_say_why_and_show_a_good_one(expression: str, says: str) -> None:
    with pytest.raises(CronError) as caught:
        CronSchedule(expression)
    message = str(caught.value)
    assert says in message and "'0 3 * * *'" in message
    assert cron_problem(expression) == message
    assert cron_problem("*/5 * * * *") is None


def test_a_bad_schedule_in_an_order_names_its_yaml_path(tmp_path: Path) -> None:
    order = tmp_path / "order.yaml"
    order.write_text("name: nightly\nschedule: '0 25 * * *'\n")
    with pytest.raises(OrderError) as caught:
        load_order(order)
    [issue] = caught.value.issues
    assert issue.path == "schedule"
    out, err = io.StringIO(), io.StringIO()
    assert validate_main(order, [], out, err) == 2
    text = err.getvalue()
    assert "schedule:" in text and "0 25 * * *" in text and "e.g. '0 3 * * *'" in text
    assert "Traceback" not in text


def test_a_good_schedule_is_in_the_effective_order(tmp_path: Path) -> None:
    order = tmp_path / "order.yaml"
    order.write_text(
        "name: nightly\nschedule: '0 3 * * *'\n"
        # validate refuses what `crawler run` refuses: an order without contact or seeds
        "operator: {contact_url: 'https://example.org/about'}\n"
        "seeds: {urls: ['http://example.org/']}\n"
    )
    out = io.StringIO()
    assert validate_main(order, [], out, io.StringIO()) == 0
    assert "schedule: 0 3 * * *" in out.getvalue()
    assert load_order(order, ["schedule=null"]).schedule is None
