"""Crash recovery of the frontier: state version, in-flight markers, final journal, marks.

Everything the frontier needs after ``kill -9`` is in the QueueStore, written in the same atomic
batches as the pending records it describes:

* ``frontier`` — counters and :data:`FORMAT_VERSION`; another version is refused.
* ``i:<queue>\\0<sort key>`` — a URI in process started scheduling links (written before its
  first link's uniq check, deleted at its final disposition, kept across retries). After a
  crash these URIs are the *recovered* ones: they are still at their queue's head and are
  handed out again.
* ``j:<queue>\\0<sort key>`` — the final journal: written in the batch that deletes a URI's
  pending record, deleted (lazily, in a later batch) once its crawl.log line was written. After
  a crash an entry whose URI has no line at the end of crawl.log is put back in its queue, so
  crawl.log ends up with exactly one line per URI (without a crawl.log file, entries are
  dropped: there is nothing to reconcile with).
* ``u:<64-bit fingerprint>`` — the canonical URI was durably queued. The uniq filter and the
  store are separate databases: a crash between the filter's add and the queue write would lose
  the URI (the filter says "seen", no queue has it). Only a URI in flight at the crash can have
  been scheduling then, and it is fetched again; when one of its re-discovered links is "seen"
  by the filter but has no mark, the link was lost and is queued after all.

Heritrix counterpart: the ``frontier.recover.gz`` journal and checkpoints, which need a clean
checkpoint; this recovers from any point. Functions over a store (:func:`open_state` also
opens it and the uniq filter, for the frontier's ``open``), called under the frontier lock.
"""

from __future__ import annotations

import json
import os
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mmh3

from crawler.curi import CrawlURI
from crawler.frontier.frontier import FrontierStateError
from crawler.frontier.queue_store import StoreBatch
from crawler.frontier.workqueue import EXHAUSTED, META_PREFIX, RETIRED, WorkQueue

if TYPE_CHECKING:
    from crawler.frontier.queue_store import QueueStore
    from crawler.frontier.scheduler import QueueScheduler
    from crawler.uniq.uniq_filter import UriUniqFilter

FORMAT_VERSION = 2
"""Bumped whenever the store layout changes incompatibly."""
FRONTIER_META = "frontier"
IN_FLIGHT = "i:"
JOURNAL = "j:"
MARK = "u:"
LOG_TAIL_BYTES = 4 << 20
"""How much of crawl.log's end is searched for lines of journalled URIs."""

KIND_SUCCEEDED, KIND_FAILED, KIND_DISREGARDED = b"s", b"f", b"d"


def mark_name(canonical: str) -> str:
    """Metadata name recording that ``canonical`` was durably queued."""
    return MARK + mmh3.hash_bytes(canonical.encode("utf-8", "surrogatepass"))[:8].hex()


def entry_name(prefix: str, queue_key: str, skey: int) -> str:
    """``i:``/``j:`` metadata name of the URI with sort key ``skey`` in ``queue_key``."""
    return f"{prefix}{queue_key}\x00{skey:016x}"


def parse_entry_name(name: str) -> tuple[str, int]:
    """Inverse of :func:`entry_name` (without the prefix check)."""
    queue_key, _, hex_key = name[2:].rpartition("\x00")
    return queue_key, int(hex_key, 16)


def load_counters(raw: bytes | None, where: Path) -> dict[str, Any]:
    """The saved counters, or {} for a new state; refuses another format version."""
    if raw is None:
        return {}
    try:
        saved = json.loads(raw)
        version = int(saved.get("version", 1))
    except (ValueError, TypeError, AttributeError) as exc:
        raise FrontierStateError(f"frontier state in {where} is corrupt ({exc})") from exc
    if version != FORMAT_VERSION:
        raise FrontierStateError(
            f"frontier state in {where} has format version {version}; this crawler reads "
            f"version {FORMAT_VERSION} only — start a new run (crawler run) instead of resuming"
        )
    return dict(saved)


def counters_meta(ordinal_reserved: int) -> bytes:
    """The ``frontier`` metadata value, read back by :func:`load_counters`."""
    # Success/failure totals are sums over the queue records: nothing else to keep.
    saved = {"version": FORMAT_VERSION, "ordinal_reserved": ordinal_reserved}
    return json.dumps(saved).encode()


def journal_value(kind: bytes, skey: int, record: bytes) -> bytes:
    """Final-journal value: disposition kind, the sort key, the pending record as it was."""
    return kind + skey.to_bytes(8, "big") + record


def parse_journal_value(value: bytes) -> tuple[bytes, int, bytes]:
    """Inverse of :func:`journal_value`."""
    return value[:1], int.from_bytes(value[1:9], "big"), value[9:]


def logged_uris(crawl_log: Path, tail_bytes: int = LOG_TAIL_BYTES) -> set[str] | None:
    """URIs (column 4) of the complete lines at the end of ``crawl_log``; None if it does not
    exist. A last line without its newline (cut short by the crash) does not count: its URI is
    put back in its queue and logged again, whole."""
    try:
        with crawl_log.open("rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            start = max(0, size - tail_bytes - 1)  # one byte more: is ``start`` a line's start?
            fh.seek(start)
            data = fh.read()
    except OSError:
        return None
    if start > 0:  # from the first line that begins inside the window
        data = data[data.find(b"\n") + 1 :]
    data = data[: data.rfind(b"\n") + 1]
    uris = set()
    for line in data.decode("utf-8", "replace").splitlines():
        fields = line.split(None, 4)
        if len(fields) >= 4:
            uris.add(fields[3])
    return uris


@dataclass
class RestoredState:
    """What :func:`restore` rebuilt from a store."""

    ordinal_reserved: int = 0
    queued: int = 0
    totals: dict[str, int] = field(
        default_factory=lambda: {"succeeded": 0, "failed": 0, "disregarded": 0}
    )
    recovered_in_flight: int = 0
    requeued_unlogged: int = 0

    def summary(self) -> dict[str, int]:
        """The counts the frontier logs when it reopens a state."""
        return {
            "queued": self.queued,
            "recovered_in_flight": self.recovered_in_flight,
            "requeued_unlogged": self.requeued_unlogged,
        }


_TOTAL_OF_KIND = {KIND_SUCCEEDED: "succeeded", KIND_FAILED: "failed"}


def restore(
    store: QueueStore, sched: QueueScheduler, state_dir: Path, crawl_log: Path | None
) -> RestoredState:
    """Rebuild queues into ``sched`` from ``store``, mark recovered URIs, replay the journal.

    ``crawl_log`` defaults to ``<state_dir>/../logs/crawl.log`` (the run layout). Raises
    :class:`FrontierStateError` for another format version, ``ValueError`` if records are
    malformed.
    """
    out = RestoredState()
    saved = load_counters(store.get_meta(FRONTIER_META), state_dir)
    out.ordinal_reserved = int(saved.get("ordinal_reserved", 0))
    for name, value in store.scan_meta(META_PREFIX):
        q = WorkQueue.from_meta(name[len(META_PREFIX) :], value)
        sched.restore(q)
        if q.state != RETIRED:
            out.queued += q.size
    for name, _ in store.scan_meta(IN_FLIGHT):
        key, skey = parse_entry_name(name)
        owner = sched.queues.get(key)
        if owner is not None:
            owner.recovering = (owner.recovering or set()) | {skey}
            owner.marked = True
            out.recovered_in_flight += 1
    entries = list(store.scan_meta(JOURNAL))
    if entries:
        batch = StoreBatch()
        logged = logged_uris(crawl_log or state_dir.parent / "logs" / "crawl.log")
        for name, value in entries:
            batch.meta[name] = None
            kind, skey, record = parse_journal_value(value)
            if logged is None or CrawlURI.from_bytes(record).uri in logged:
                continue  # logged, or no crawl.log to reconcile with (a frontier without logs)
            key, _ = parse_entry_name(name)
            q = sched.get_or_add(key)
            batch.puts.append((key, skey, record))
            q.size += 1
            attr = _TOTAL_OF_KIND.get(kind, "disregarded")
            setattr(q, attr, max(0, getattr(q, attr) - 1))
            if q.state == EXHAUSTED:
                sched.deactivate(q)
            if q.state != RETIRED:
                out.queued += 1
            batch.meta[q.meta_name] = q.to_meta()
            out.requeued_unlogged += 1
        store.write(batch)
    for q in sched.queues.values():
        out.totals["succeeded"] += q.succeeded
        out.totals["failed"] += q.failed
        out.totals["disregarded"] += q.disregarded
    return out


def open_state(
    store: QueueStore,
    uniq: UriUniqFilter[Any],
    sched: QueueScheduler,
    state_dir: Path,
    crawl_log: Path | None,
) -> RestoredState:
    """Open ``store`` and ``uniq`` under ``state_dir``, then :func:`restore` into ``sched``.

    On failure closes what it opened and raises :class:`FrontierStateError` (an incompatible,
    corrupt or locked state).
    """
    store.open(state_dir)
    try:
        uniq.open(state_dir)
    except Exception as exc:
        store.close()
        raise FrontierStateError(
            f"cannot open the already-seen filter in {state_dir}: {exc}"
        ) from exc
    try:
        return restore(store, sched, state_dir, crawl_log)
    except (ValueError, FrontierStateError) as exc:
        store.close()
        uniq.close()
        if isinstance(exc, FrontierStateError):
            raise
        raise FrontierStateError(f"frontier state in {state_dir} is corrupt: {exc}") from exc


class RecoveryLog:
    """The frontier's crash bookkeeping over its store (see the module docstring).

    Every batch the frontier writes comes from :meth:`batch`, which carries the journal entries
    whose crawl.log lines are written by now. ``recovered`` holds the URIs in flight at the last
    crash, handed out again. Called under the frontier lock, except :meth:`was_lost`'s logging.
    """

    def __init__(self, store: QueueStore) -> None:
        self._store = store
        # Appended without the frontier's lock (deque appends and pops are atomic).
        self._done: deque[str] = deque()
        self.recovered: set[str] = set()

    def batch(self) -> StoreBatch:
        """A new batch, with the journal deletions that are due."""
        batch = StoreBatch()
        done = self._done
        if done:
            names = [done.popleft() for _ in range(len(done))]
            batch.meta = dict.fromkeys(names)
        return batch

    def mark_in_flight(self, q: WorkQueue) -> None:
        """Write ``q``'s in-flight marker now, before its URI's first link is checked."""
        if q.current is not None and not q.marked:
            q.marked = True
            batch = self.batch()
            batch.meta[entry_name(IN_FLIGHT, q.key, q.current_key)] = b""
            self._store.write(batch)

    def was_lost(self, canonical: str) -> bool:
        """Whether ``canonical``, seen by the uniq filter, was never durably queued."""
        return self._store.get_meta(mark_name(canonical)) is None

    def final(self, q: WorkQueue, kind: bytes, batch: StoreBatch) -> str:
        """Add the final-journal entry of ``q``'s URI to ``batch`` (and drop its in-flight
        marker); returns the entry's name for :meth:`logged`."""
        skey = q.current_key
        if q.marked:
            q.marked = False
            batch.meta[entry_name(IN_FLIGHT, q.key, skey)] = None
        name = entry_name(JOURNAL, q.key, skey)
        batch.meta[name] = journal_value(kind, skey, q.current_value)
        return name

    def logged(self, name: str) -> None:
        """The crawl.log line of journal entry ``name`` is written: delete it in a later batch.

        Needs no lock."""
        self._done.append(name)
