"""Number, size, duration and date formats shared by the reports, ``crawler status`` and the
live display (Heritrix's ``ArchiveUtils`` conventions)."""

from __future__ import annotations

import time

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def format_bytes(amount: int) -> str:
    """1024-based size with one decimal below 10 units: ``348 B``, ``5.3 KiB``, ``23 MiB``."""
    if amount <= 0:
        return "0 B"
    value = float(amount)
    power = 0
    while value >= 1024 and power < len(_UNITS) - 1:
        value /= 1024
        power += 1
    if value < 10:
        return f"{value:.1f} {_UNITS[power]}"
    return f"{value:.0f} {_UNITS[power]}"


def format_duration_ms(duration_ms: float) -> str:
    """``1h33m38s651ms`` style, zero units left out (``0ms`` for nothing)."""
    ms = max(0, round(duration_ms))
    parts = []
    for size, unit in ((86_400_000, "d"), (3_600_000, "h"), (60_000, "m"), (1000, "s")):
        count, ms = divmod(ms, size)
        if count:
            parts.append(f"{count}{unit}")
    if ms or not parts:
        parts.append(f"{ms}ms")
    return "".join(parts)


def format_clock(seconds: float | None) -> str:
    """``H:MM:SS`` (days as ``Nd H:MM:SS``); ``-`` for None."""
    if seconds is None:
        return "-"
    whole = max(0, round(seconds))
    days, rest = divmod(whole, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{days}d {text}" if days else text


def date12(epoch_s: float) -> str:
    """``yyyymmddhhmm`` (UTC), Heritrix's report time stamp."""
    return time.strftime("%Y%m%d%H%M", time.gmtime(epoch_s))


def rate2(value: float) -> str:
    """A rate with two decimals (``431.06``)."""
    return f"{value:.2f}"
