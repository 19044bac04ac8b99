"""Crash recovery of the frontier: state version, write-ahead of new links, final journal.

Everything the frontier needs after ``kill -9`` is in the QueueStore, written in the same atomic
batches as the pending records it describes:

* ``frontier`` — counters and :data:`FORMAT_VERSION`; another version is refused. Its
  ``tally`` field vouches for the ``tally`` record (a crawler that does not keep that record
  rewrites this one without the field on open).
* ``q:<queue>`` — each queue's record (:meth:`WorkQueue.to_meta
  <crawler.frontier.workqueue.WorkQueue.to_meta>`), read whenever a queue not in RAM is touched.
* ``tally`` and ``r:<queue>`` — the sums over the queue records (queues per state, inactive ones
  per precedence, URIs queued, succeeded / failed / disregarded) and a row per queue whose
  record says it is in rotation, written in the batches that change the records
  (:mod:`crawler.frontier.store.record_tally`). On open they give the counts and the queues to
  hold in RAM, so a resume reads the records of the queues in rotation only; without them (a
  state of an older crawler, or ``tally`` not vouched for) every record is read once and they
  are written.
* ``i:<precedence><sequence>`` and ``iseq`` — the inactive queues' FIFOs
  (:mod:`crawler.frontier.store.inactive_index`), reopened as they were.
* ``j:<queue>\\0<sort key>`` — the final journal: written in the batch that deletes a URI's
  pending record, deleted (lazily, in a later batch) once its crawl.log line was written. After
  a crash an entry whose URI has no line at the end of crawl.log is put back in its queue, so
  crawl.log ends up with exactly one line per URI (without a crawl.log file, entries are
  dropped: there is nothing to reconcile with).
* ``a:<sequence>`` — the write-ahead of new links: the 64-bit hashes (:func:`uri_hash`) of the
  canonical URIs the uniq filter is about to record as new. The uniq filter and the store are
  separate databases, so a crash between the filter's add and the queue write would lose the
  URI (the filter says "seen", no queue has it). The filter announces exactly the URIs it is
  about to record as new (``UriUniqFilter.add_many_announced``, under its lock, before its
  write); :meth:`RecoveryLog.announce` writes them here durably before the filter goes on, and
  the batch that queues them deletes the entry. An entry still present after a crash therefore
  names URIs that were not yet recorded when it was written and whose queue write never
  happened: each one is either unknown to the filter (the crash came before its add: it is
  new again, nothing to do) or recorded by that add and lost.
* ``l:<hash>`` — a link that may have been lost: on open, every hash of a surviving ``a:``
  entry becomes an ``l:`` entry (and the ``a:`` entry goes). From then on, a URI scheduled
  while its hash is in this set is queued whether the filter says it has seen it (lost) or
  not (the crash came before the add), by the one thread that takes it out of the set under
  the frontier lock; the ``l:`` entry is deleted in the batch that queues it. A forced URI, or
  one claimed as new (fetched elsewhere), leaves the set too. A URI never scheduled again keeps
  its entry (at most the new links of the pages in process at a crash; also held in RAM).

A URI in flight at the crash is still at the head of its queue (its pending record is deleted
only with its final disposition) and is handed out again; re-fetched, it finds its links again.
The cost in the store is transient: nothing is kept per URL once it is queued (the format before
version 3 kept a mark per URL ever queued, 18 bytes on disk per seen URL, and an in-flight
marker written before each page's first link check).

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
from crawler.frontier.store.queue_store import StoreBatch
from crawler.frontier.store.record_tally import (
    ROTATION_PREFIX,
    TALLY_META,
    TALLY_VERSION,
    RecordTally,
)
from crawler.frontier.workqueue import (
    EXHAUSTED,
    META_PREFIX,
    N_PRECEDENCE,
    READY,
    RETIRED,
    WorkQueue,
    parse_meta,
    record_counts,
)

if TYPE_CHECKING:
    import threading

    from crawler.frontier.rotation.scheduler import QueueScheduler
    from crawler.frontier.store.queue_store import QueueStore
    from crawler.frontier.store.write_behind_store import WriteBehindStore
    from crawler.uniq.uniq_filter import UriUniqFilter

FORMAT_VERSION = 4
"""Bumped whenever the store layout changes incompatibly (3: write-ahead ``a:``/``l:`` entries
instead of a mark per URL ever queued and in-flight markers; 4: the inactive queues' FIFOs as
``i:`` rows, each queue record naming its row)."""
FRONTIER_META = "frontier"
JOURNAL = "j:"
ANNOUNCED = "a:"
LOST = "l:"
HASH_BYTES = 8
LOG_TAIL_BYTES = 4 << 20
"""How much of crawl.log's end is searched for lines of journalled URIs."""

KIND_SUCCEEDED, KIND_FAILED, KIND_DISREGARDED = b"s", b"f", b"d"


def uri_hash(canonical: str) -> bytes:
    """The 64-bit hash by which ``a:``/``l:`` entries name a canonical URI."""
    raw: bytes = mmh3.hash_bytes(canonical.encode("utf-8", "surrogatepass"))
    return raw[:HASH_BYTES]


def lost_name(h: bytes) -> str:
    """Metadata name of the ``l:`` entry of hash ``h``."""
    return LOST + h.hex()


def entry_name(prefix: str, queue_key: str, skey: int) -> str:
    """``j:`` metadata name of the URI with sort key ``skey`` in ``queue_key``."""
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
    # Success/failure totals are sums over the queue records, kept in the ``tally`` record,
    # which "tally" vouches for: a crawler that does not keep it rewrites this record without.
    saved = {
        "version": FORMAT_VERSION,
        "ordinal_reserved": ordinal_reserved,
        "tally": TALLY_VERSION,
    }
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
    requeued_unlogged: int = 0
    queue_records_read: int = 0
    """Queue records read one by one (0 when the ``tally`` record and ``r:`` index served)."""
    lost: set[bytes] = field(default_factory=set)
    """Hashes of the links that may have been lost (``l:`` entries), for the RecoveryLog."""

    def summary(self) -> dict[str, int]:
        """The counts the frontier logs when it reopens a state."""
        return {
            "queued": self.queued,
            "requeued_unlogged": self.requeued_unlogged,
            "maybe_lost_links": len(self.lost),
            "queue_records_read": self.queue_records_read,
        }


_TOTAL_OF_KIND = {KIND_SUCCEEDED: "succeeded", KIND_FAILED: "failed"}


def restore_lost(store: QueueStore, lost: set[bytes]) -> None:
    """Turn the ``a:`` entries that survived a crash into ``l:`` entries; add every ``l:``
    hash to ``lost``."""
    for name, _ in store.scan_meta(LOST):
        lost.add(bytes.fromhex(name[len(LOST) :]))
    announced = list(store.scan_meta(ANNOUNCED))
    if not announced:
        return
    batch = StoreBatch()
    for name, value in announced:
        batch.meta[name] = None
        if len(value) % HASH_BYTES:
            raise ValueError(f"malformed write-ahead entry {name!r}")
        for i in range(0, len(value), HASH_BYTES):
            h = value[i : i + HASH_BYTES]
            if h not in lost:
                lost.add(h)
                batch.meta[lost_name(h)] = b""
    store.write(batch)


def restore(
    store: WriteBehindStore, sched: QueueScheduler, state_dir: Path, crawl_log: Path | None
) -> RestoredState:
    """Rebuild queues into ``sched`` from ``store``, gather the links that may have been lost,
    replay the journal.

    The counts come from the ``tally`` record and the queues in rotation from the ``r:`` index
    (:mod:`crawler.frontier.store.record_tally`) when the ``frontier`` record vouches for them;
    otherwise (a state written before they existed, or by a crawler that did not keep them) from
    one pass over every queue record, which then writes them.

    ``crawl_log`` defaults to ``<state_dir>/../logs/crawl.log`` (the run layout). Raises
    :class:`FrontierStateError` for another format version, ``ValueError`` if records are
    malformed.
    """
    out = RestoredState()
    saved = load_counters(store.get_meta(FRONTIER_META), state_dir)
    out.ordinal_reserved = int(saved.get("ordinal_reserved", 0))
    sched.begin_restore()
    tally = None
    if saved.get("tally") == TALLY_VERSION:
        tally = RecordTally.decode(store.get_meta(TALLY_META))
    in_rotation = _rotation(store, tally) if tally is not None else None
    if tally is not None and in_rotation is not None:
        for q in in_rotation:
            sched.restore(q)
        sched.restore_tally(tally)
    else:
        out.queue_records_read = _restore_all(store, sched)
        tally = sched.tally
    out.queued = tally.queued
    totals = out.totals
    totals["succeeded"] = tally.succeeded
    totals["failed"] = tally.failed
    totals["disregarded"] = tally.disregarded
    restore_lost(store, out.lost)
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
            if getattr(q, attr) > 0:
                setattr(q, attr, getattr(q, attr) - 1)
                totals[attr] -= 1
            if q.state == EXHAUSTED:
                sched.deactivate(q, batch)
            if q.state != RETIRED:
                out.queued += 1
            sched.record(batch, q)
            out.requeued_unlogged += 1
        store.write(batch)
    sched.trim()
    return out


def _rotation(store: WriteBehindStore, tally: RecordTally) -> list[WorkQueue] | None:
    """The queues whose records say they are in rotation, as the ``r:`` index names them;
    None if the index and the records disagree with each other or with ``tally``."""
    skip = len(ROTATION_PREFIX)
    out: list[WorkQueue] = []
    for name, _ in store.iter_meta(ROTATION_PREFIX):
        key = name[skip:]
        raw = store.read_meta(META_PREFIX + key)
        if raw is None:
            return None
        q = WorkQueue.from_meta(key, raw)
        if q.state != READY:
            return None
        out.append(q)
    return out if len(out) == tally.counts[READY] else None


def _restore_all(store: WriteBehindStore, sched: QueueScheduler) -> int:
    """Rebuild from every queue record (into ``sched`` and its tally), then write the tally
    and the ``r:`` index as those records make them; returns how many records were read."""
    tally = sched.tally = RecordTally()
    skip = len(META_PREFIX)
    read = 0
    ready: set[str] = set()
    for name, value in store.iter_meta(META_PREFIX):
        read += 1
        state, n = parse_meta(name, value)
        if state == READY:  # only the queues in rotation are held in RAM
            q = WorkQueue.from_meta(name[skip:], value)
            sched.restore(q)
            ready.add(q.key)
        else:
            sched.restore_record(state, n[N_PRECEDENCE])
        tally.add_record(record_counts(state, n))
    batch = StoreBatch()
    skip_r = len(ROTATION_PREFIX)
    for name, _ in store.iter_meta(ROTATION_PREFIX):
        if name[skip_r:] in ready:
            ready.discard(name[skip_r:])
        else:
            batch.meta[name] = None
    for key in sorted(ready):
        batch.meta[ROTATION_PREFIX + key] = b""
    tally.stamp(batch)
    store.write(batch)
    return read


def open_state(
    store: WriteBehindStore,
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

    Every batch the frontier writes comes from :meth:`batch`, which carries the deletions that
    are due (journal entries whose crawl.log lines are written by now). ``lost`` holds the
    hashes of the links that may have been lost in the last crash (only ever shrinks). Called
    under the frontier lock (``cond``), except :meth:`announce`, :meth:`dismiss` and
    :meth:`delete_later`, which take what they need.
    """

    def __init__(self, store: WriteBehindStore, cond: threading.Condition) -> None:
        self._store = store
        self._cond = cond
        # Appended without the frontier's lock (deque appends and pops are atomic).
        self._done: deque[str] = deque()
        self._seq = 0
        self.lost: set[bytes] = set()

    def batch(self) -> StoreBatch:
        """A new batch, with the deletions that are due."""
        batch = StoreBatch()
        done = self._done
        if done:
            names = [done.popleft() for _ in range(len(done))]
            batch.meta = dict.fromkeys(names)
        return batch

    def announce(self, canonicals: list[str]) -> str:
        """Write, durably, the ``a:`` entry of ``canonicals`` (the uniq filter is about to
        record them as new) and return its name, to delete in the batch that queues them.
        Frontier lock NOT held (the filter's may be)."""
        hashes = [uri_hash(c) for c in canonicals]
        with self._cond:
            self._seq += 1
            name = f"{ANNOUNCED}{self._seq:016x}"
            batch = self.batch()
            batch.meta[name] = b"".join(hashes)
            self._store.write(batch)
        self._store.sync()
        return name

    def dismiss(self, canonicals: list[str]) -> None:
        """``canonicals`` are about to be recorded as new by the filter without being queued
        (fetched elsewhere): none of them is a lost link. Frontier lock NOT held."""
        if not self.lost:
            return
        with self._cond:
            for c in canonicals:
                h = uri_hash(c)
                if h in self.lost:
                    self.lost.discard(h)
                    self._done.append(lost_name(h))

    def maybe_lost(self, canonicals: list[str]) -> list[bool]:
        """For each canonical, whether it may be a lost link (needs no lock: ``lost`` only
        shrinks, and :meth:`take_lost` decides under the lock)."""
        lost = self.lost
        if not lost:
            return [False] * len(canonicals)
        return [uri_hash(c) in lost for c in canonicals]

    def take_lost(self, canonical: str, batch: StoreBatch) -> bool:
        """If ``canonical`` is still a possibly lost link, it is no longer: its ``l:`` entry is
        deleted in ``batch`` (the one that queues it) and True is returned. Of the threads that
        found it possibly lost, the one this answers True queues it. Frontier lock held."""
        lost = self.lost
        if not lost:
            return False
        h = uri_hash(canonical)
        if h not in lost:
            return False
        lost.discard(h)
        batch.meta[lost_name(h)] = None
        return True

    def final(self, q: WorkQueue, kind: bytes, batch: StoreBatch) -> str:
        """Add the final-journal entry of ``q``'s URI to ``batch``; returns the entry's name for
        :meth:`delete_later` once the URI's crawl.log line is written."""
        skey = q.current_key
        name = entry_name(JOURNAL, q.key, skey)
        batch.meta[name] = journal_value(kind, skey, q.current_value)
        return name

    def delete_later(self, name: str) -> None:
        """Delete metadata entry ``name`` in a later batch (a journal entry whose crawl.log
        line is written, an ``a:`` entry nothing was queued for). Needs no lock."""
        self._done.append(name)
