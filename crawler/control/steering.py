"""Steering a running crawl from outside: the action directory and operator block rules.

``RUN_DIR/action/`` is polled by the controller's thread (:meth:`ActionDirectory.poll`, every
``POLL_INTERVAL_S``). Files are taken in sorted name order, then moved to
``action/done/<17-digit time>.<name>``:

* ``*.seeds`` — seed-list syntax (:mod:`crawler.seeds.seed_list`): new seeds, which also widen a
  seeds-as-SURT-prefixes scope; ``+``/``-`` directive lines feed the scope too.
* ``*.schedule`` — one URI per line, optionally ``uri hops via`` (a leading 3-character journal
  tag such as ``F+`` is skipped); offered to the frontier, the uniq filter applies.
* ``*.force`` — the same, force-fetched (the uniq filter is bypassed).
  ``x.s.schedule`` / ``x.s.force`` scope-test each URI first. Any of these may end in ``.gz``.
* ``*.sheets`` — a sheets document (:mod:`crawler.sheets.sheet_updates`): sheets added,
  replaced or removed; an invalid document changes nothing and is logged (``action_failed``).
* control requests written by the ``crawler`` command: ``*.pause``, ``*.unpause``,
  ``*.terminate``, ``*.report`` (write every report now) and ``*.block`` (the file holds one
  regular expression: a new operator block rule).

Files starting with ``.`` (being written) and files changed in the last ``SETTLE_S`` seconds
(perhaps still being copied in) wait for the next poll. Block rules (:class:`BlockRules`) live in
``RUN_DIR/block-rules.txt``, one regular expression per line, so ``crawler resume`` keeps them.
Only the controller's thread calls :meth:`ActionDirectory.poll`; :meth:`BlockRules.blocks` is
called by every ToeThread and reads one attribute. Heritrix counterparts: ``ActionDirectory``
and the Preselector's ``blockByRegex``.
"""

from __future__ import annotations

import gzip
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from crawler.curi import CrawlURI
from crawler.logs.crawl_logs import stamp17
from crawler.seeds.seed_list import SeedList, parse_seeds
from crawler.urls import UriError, normalize

POLL_INTERVAL_S = 0.5
SETTLE_S = 0.3
CONTROL_KINDS = ("pause", "unpause", "terminate", "report", "block")
BLOCK_RULES_FILE = "block-rules.txt"
_JOURNAL_TAG = re.compile(r"^[A-Z][A-Za-z+\-]{1,2}$")


class BlockRules:
    """Operator block rules: a URI is blocked when any rule's regex matches anywhere in it
    (``re.search``; anchor with ``^`` for a prefix). Reads are lock-free (one attribute)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.patterns: list[str] = []
        self._combined: re.Pattern[str] | None = None

    def load(self) -> None:
        """Read the persisted rules (a missing file means none); bad lines are skipped."""
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            lines = []
        patterns = []
        for line in lines:
            if line.strip() and valid_regex(line) is None:
                patterns.append(line)
        self._set(patterns)

    def add(self, pattern: str) -> None:
        """Validate, persist and activate one rule. Raises ValueError for a bad regex."""
        problem = valid_regex(pattern)
        if problem is not None:
            raise ValueError(problem)
        if pattern in self.patterns:
            return
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(pattern + "\n")
        self._set([*self.patterns, pattern])

    def _set(self, patterns: list[str]) -> None:
        combined = "|".join(f"(?:{p})" for p in patterns)
        self.patterns = patterns
        self._combined = re.compile(combined) if patterns else None

    def blocks(self, uri: str) -> bool:
        """True when an operator rule matches ``uri``. Thread-safe."""
        combined = self._combined
        return combined is not None and combined.search(uri) is not None


def valid_regex(pattern: str) -> str | None:
    """None if ``pattern`` is a usable single-line regular expression, else why not."""
    if not pattern or "\n" in pattern or "\r" in pattern:
        return "a block rule is one non-empty line"
    try:
        re.compile(pattern)
    except re.error as exc:
        return f"invalid regular expression {pattern!r}: {exc}"
    return None


class Steerable(Protocol):
    """What the action directory does to the crawl (implemented by the CrawlController)."""

    def pause(self) -> None: ...
    def unpause(self) -> None: ...
    def request_stop(self, reason: str = ...) -> None: ...
    def write_reports(self) -> object: ...
    def add_seeds(self, seeds: SeedList) -> int: ...
    def schedule(self, curi: CrawlURI) -> bool: ...
    def in_scope(self, curi: CrawlURI) -> bool: ...
    def add_block_rule(self, pattern: str) -> None: ...
    def update_sheets(self, text: str, source: str = ...) -> dict[str, Any]: ...


@dataclass(frozen=True)
class ActionFile:
    """A file of the action directory: its path, kind (suffix) and scope-test flag."""

    path: Path
    kind: str
    scope_test: bool


def classify(name: str) -> tuple[str, bool] | None:
    """(kind, scope_test) for an action file name, None if it is not one."""
    base = name[:-3] if name.endswith(".gz") else name
    for kind in ("seeds", "schedule", "force", "sheets", *CONTROL_KINDS):
        if base.endswith("." + kind):
            return kind, base.endswith(f".s.{kind}")
    return None


def parse_uri_line(line: str) -> tuple[str, str, str | None] | None:
    """``(uri, hops, via)`` of a .schedule/.force line; None for blanks and comments."""
    parts = line.split()
    if not parts or parts[0].startswith("#"):
        return None
    if len(parts) > 1 and _JOURNAL_TAG.match(parts[0]):
        parts = parts[1:]
    uri = parts[0]
    hops = parts[1] if len(parts) > 1 and parts[1] != "-" else ""
    via = parts[2] if len(parts) > 2 and parts[2] != "-" else None
    return uri, hops, via


class ActionDirectory:
    """Takes in the files dropped into ``RUN_DIR/action/`` (see the module docstring)."""

    def __init__(
        self,
        directory: Path,
        target: Steerable,
        logger: Any,
        uri_error: Callable[[str | None, str, str], None],
    ) -> None:
        self.dir = directory
        self.done = directory / "done"
        self._target = target
        self._logger = logger
        self._uri_error = uri_error
        self._warned: set[str] = set()

    def pending(self, now_s: float | None = None) -> Iterator[ActionFile]:
        """Action files ready to be taken in, in name order."""
        now_s = time.time() if now_s is None else now_s
        try:
            entries = sorted(os.scandir(self.dir), key=lambda e: e.name)
        except FileNotFoundError:
            return
        for entry in entries:
            if entry.name.startswith(".") or not entry.is_file():
                continue
            kind = classify(entry.name)
            if kind is None:
                if entry.name not in self._warned:
                    self._warned.add(entry.name)
                    self._logger.warning("action_file_ignored", file=entry.name)
                continue
            try:
                if now_s - entry.stat().st_mtime < SETTLE_S:
                    continue
            except FileNotFoundError:
                continue
            yield ActionFile(Path(entry.path), kind[0], kind[1])

    def poll(self) -> int:
        """Take in every pending file; returns how many were handled. Never raises."""
        handled = 0
        for action in list(self.pending()):
            try:
                detail = self._take(action)
                self._logger.info("action_taken", file=action.path.name, **detail)
            except Exception as exc:  # noqa: BLE001 - a bad file must not stop the crawl
                self._logger.error(
                    "action_failed", file=action.path.name, error=f"{type(exc).__name__}: {exc}"
                )
            self._move_to_done(action.path)
            handled += 1
        return handled

    def _take(self, action: ActionFile) -> dict[str, Any]:
        target = self._target
        kind = action.kind
        if kind == "pause":
            target.pause()
        elif kind == "unpause":
            target.unpause()
        elif kind == "terminate":
            target.request_stop()
        elif kind == "report":
            target.write_reports()
        elif kind == "block":
            lines = _read_lines(action.path)
            pattern = lines[0] if lines else ""
            target.add_block_rule(pattern)
            return {"rule": pattern}
        elif kind == "sheets":
            text = "\n".join(_read_lines(action.path))
            return target.update_sheets(text, action.path.name)
        elif kind == "seeds":
            seeds = parse_seeds(_read_lines(action.path), action.path.name)
            for problem in seeds.errors:
                self._uri_error(None, problem, problem.split(" ")[0])
            return {"seeds": target.add_seeds(seeds), "errors": len(seeds.errors)}
        else:
            return self._schedule_lines(action, force=kind == "force")
        return {}

    def _schedule_lines(self, action: ActionFile, *, force: bool) -> dict[str, Any]:
        target = self._target
        queued = offered = 0
        for line in _read_lines(action.path):
            parsed = parse_uri_line(line)
            if parsed is None:
                continue
            raw, hops, via = parsed
            try:
                uri = normalize(raw)
            except UriError as exc:
                self._uri_error(via, str(exc), raw)
                continue
            curi = CrawlURI(uri=uri, via=via, hop_path=hops, force_fetch=force)
            offered += 1
            if action.scope_test and not target.in_scope(curi):
                continue
            if target.schedule(curi):
                queued += 1
        return {"offered": offered, "queued": queued}

    def _move_to_done(self, path: Path) -> None:
        self.done.mkdir(parents=True, exist_ok=True)
        try:
            os.replace(path, self.done / f"{stamp17(int(time.time() * 1000))}.{path.name}")
        except OSError as exc:
            self._logger.error("action_move_failed", file=path.name, error=str(exc))
            path.unlink(missing_ok=True)


def _read_lines(path: Path) -> list[str]:
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    return raw.decode("utf-8", errors="replace").splitlines()


def drop_action(run_dir: Path, kind: str, content: str = "") -> str:
    """Write an action file atomically (hidden temp name, then rename); returns its name."""
    action_dir = run_dir / "action"
    action_dir.mkdir(parents=True, exist_ok=True)
    name = f"{stamp17(int(time.time() * 1000))}-{os.getpid()}.{kind}"
    tmp = action_dir / f".{name}.tmp"
    tmp.write_text(content, encoding="utf-8")
    os.replace(tmp, action_dir / name)
    return name


def action_taken(run_dir: Path, name: str) -> bool:
    """True once the crawl has moved the action file ``name`` to ``action/done/``."""
    if (run_dir / "action" / name).exists():
        return False
    return any((run_dir / "action" / "done").glob(f"*.{name}"))
