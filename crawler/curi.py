"""CrawlURI, the unit of work, with its hop letters, scheduling directives and fetch statuses.

A CrawlURI belongs to exactly one ToeThread from ``Frontier.next()`` to ``Frontier.finished()``,
so it carries no lock. Processors keep per-URI state on it (``annotations``, ``data``), never on
themselves. Heritrix counterpart: ``org.archive.modules.CrawlURI``.
"""

from __future__ import annotations

import json
import operator
from dataclasses import MISSING, dataclass, field, fields
from enum import IntEnum
from typing import Any

from crawler.bounded_memo import remember

MAX_HOPS_SHOWN = 50
"""Only the last 50 hop letters are kept; earlier ones are counted (``12+LL…``)."""
_RECORD_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False)
"""Encodes the frontier's records as ``json.dumps(..., separators=(",", ":"),
ensure_ascii=False)`` does, made once (``json.dumps`` with options builds an encoder a call)."""
_make_c_encoder: Any = getattr(json.encoder, "c_make_encoder", None)
_C_RECORD_ENCODER: Any = (
    None
    if _make_c_encoder is None
    else _make_c_encoder(
        None,  # no circular-reference markers: a record holds plain JSON data
        _RECORD_ENCODER.default,
        json.encoder.encode_basestring,  # ensure_ascii=False
        None,  # indent
        ":",
        ",",
        False,  # sort_keys
        False,  # skipkeys
        True,  # allow_nan
    )
)
"""The C encoder behind :data:`_RECORD_ENCODER`, made once (its ``encode`` makes one a call)."""
_encode_string: Any = json.encoder.encode_basestring
"""The JSON literal of a string as the record's encoder writes it (``ensure_ascii=False``)."""


class Hop:
    """Hop letters of the path from a seed (crawl.log column 5)."""

    LINK = "L"
    EMBED = "E"
    SPECULATIVE = "X"
    REFER = "R"
    PREREQ = "P"
    INFERRED = "I"
    MANIFEST = "M"
    SUBMIT = "S"
    ALL = "LEXRPIMS"


class SchedulingDirective(IntEnum):
    """How urgently a URI is scheduled within its queue; lower sorts first."""

    HIGHEST = 0
    HIGH = 1
    MEDIUM = 2
    NORMAL = 3


class FetchStatus(IntEnum):
    """Heritrix fetch status codes (HTTP statuses are used as they are), -5005 to -5007."""

    DNS_SUCCESS = 1
    UNATTEMPTED = 0
    DOMAIN_UNRESOLVABLE = -1
    CONNECT_FAILED = -2
    CONNECT_LOST = -3
    TIMEOUT = -4
    RUNTIME_EXCEPTION = -5
    DOMAIN_PREREQUISITE_FAILURE = -6
    UNFETCHABLE_URI = -7
    TOO_MANY_RETRIES = -8
    DEFERRED = -50
    UNQUEUEABLE = -60
    ROBOTS_PREREQUISITE_FAILURE = -61
    OTHER_PREREQUISITE_FAILURE = -62
    PREREQUISITE_UNSCHEDULABLE_FAILURE = -63
    DEEMED_NOT_FOUND = -404
    SERIOUS_ERROR = -3000
    DEEMED_CHAFF = -4000
    TOO_MANY_LINK_HOPS = -4001
    TOO_MANY_EMBED_HOPS = -4002
    OUT_OF_SCOPE = -5000
    BLOCKED_BY_USER = -5001
    BLOCKED_BY_CUSTOM_PROCESSOR = -5002
    BLOCKED_BY_QUOTA = -5003
    BLOCKED_BY_RUNTIME_LIMIT = -5004
    BLOCKED_BY_SERVER_GATE = -5005
    """Ours, in Heritrix's "blocked" range: the server's politeness (connection cap, pace,
    Retry-After hold) admitted no fetch start in the time left — a browser page's sub-resource
    whose wait for a server slot outlasted the page's budget (annotated ``serverGateTimeout``)."""
    BLOCKED_BY_ADDRESS = -5006
    """Ours: the host's address is not public (loopback, private, link-local, reserved, ...)
    and neither a seed nor ``fetch.allow_private`` allows it; no connection was attempted
    (annotated ``nonPublicAddress:<reason>:<address>``, :mod:`crawler.netguard`)."""
    BLOCKED_BY_BROWSER_RULE = -5007
    """Ours: a browser page's request matched one of the order's ``browser.block`` rules or
    ``browser.block_lists``; it was not fetched (annotated ``browser:blocked:<rule>``)."""
    DELETED_BY_USER = -6000
    PROCESSING_THREAD_KILLED = -7000
    ROBOTS_PRECLUDED = -9998


RETRYABLE_STATUSES = frozenset({-1, -2, -3, -50})
"""Statuses that put a URI back in its queue while attempts remain."""

DISREGARDED_STATUSES = frozenset({-9998, -5007, -5006, -5002, -5000, -5001, -4002, -4001, -6000})
"""Statuses that are neither success nor failure (not charged to a queue's budget)."""


SERIES_RUN_KEY = "trapRun"
"""``data`` key: how many URIs in a row, this one included, were each found on the page before
it with the same URL template (a series: the next month of a calendar); set by the trap budget
rule (:mod:`crawler.decide.trap_budget`) only when above zero."""
VIA_SERIES_RUN_KEY = "trapViaRun"
"""``data`` key of a new child: its via's ``SERIES_RUN_KEY`` (read and removed by that rule)."""
SERIES_ID_KEY = "trapSeries"
"""``data`` key: the series a URI belongs to (a 64-bit hash of the series' first URI), set by the
trap budget rule with ``SERIES_RUN_KEY``."""
VIA_SERIES_ID_KEY = "trapViaSeries"
"""``data`` key of a new child: its via's ``SERIES_ID_KEY`` (read and removed by that rule)."""


@dataclass(slots=True)
class Link:
    """An outlink found by an extractor: the absolute URI, its hop letter and where it was found."""

    uri: str
    hop: str
    context: str = ""


@dataclass(slots=True)
class RevisitInfo:
    """Why a fetch is a revisit of an earlier capture, and which capture it refers to.

    ``profile`` is ``server-not-modified`` (a 304 answer to a conditional request) or
    ``identical-payload-digest`` (the payload was already captured, by this or another URI).
    """

    profile: str
    refers_to_uri: str
    refers_to_date: str
    refers_to_record_id: str | None = None
    payload_digest: str | None = None


@dataclass(slots=True, eq=False)
class CrawlURI:
    """One URI being crawled, from scheduling to its final disposition.

    Persistent fields (saved while the URI waits in the frontier) are listed in
    ``_PERSISTENT``; everything else describes one processing attempt and is reset by
    :meth:`reset_for_retry`.
    """

    uri: str
    via: str | None = None
    hop_path: str = ""
    hops_dropped: int = 0
    is_seed: bool = False
    source_tag: str | None = None
    directive: int = SchedulingDirective.NORMAL
    precedence: int = 1
    force_fetch: bool = False
    fetch_attempts: int = 0
    via_context: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    # The hop limit of the seed this URI descends from (a seed-list option); -1 = the scope's.
    seed_max_hops: int = -1
    # Assigned by the frontier.
    queue_key: str = ""
    canonical: str = ""
    ordinal: int = 0
    # Results of one processing attempt.
    status: int = FetchStatus.UNATTEMPTED
    content_type: str | None = None
    content_length: int = -1
    content_size: int = -1
    payload_digest: str | None = None
    fetch_start_ms: int = 0
    fetch_duration_ms: int = -1
    http_status: int = 0
    http_version: str = ""
    response_headers: list[tuple[str, str]] = field(default_factory=list)
    ip_address: str | None = None
    outlinks: list[Link] = field(default_factory=list)
    annotations: list[str] = field(default_factory=list)
    extra_info: dict[str, Any] = field(default_factory=dict)
    prerequisite: CrawlURI | None = None
    revisit: RevisitInfo | None = None
    # A 304 whose earlier capture was loaded into ``recording``: that capture's HTTP status.
    earlier_status: int = 0
    politeness_delay_ms: int = -1
    retry_delay_s: float = 0.0
    thread_number: int = 0
    recording: Any = None
    error: BaseException | None = None
    error_traceback: str = ""
    nonfatal_errors: list[tuple[BaseException, str]] = field(default_factory=list)
    # The sheets overlay of this URI (crawler.sheets.Overlay), found once and kept; not persisted.
    sheet: Any = None

    _PERSISTENT = (
        "uri",
        "via",
        "hop_path",
        "hops_dropped",
        "is_seed",
        "source_tag",
        "directive",
        "precedence",
        "force_fetch",
        "fetch_attempts",
        "via_context",
        "data",
        "queue_key",
        "canonical",
        "ordinal",
        "seed_max_hops",
    )

    # ----------------------------------------------------------------- hops
    @property
    def hop_count(self) -> int:
        """Total hops from the seed, counting hops no longer shown."""
        return self.hops_dropped + len(self.hop_path)

    @property
    def last_hop(self) -> str:
        """The last hop letter, or ``""`` for a seed."""
        return self.hop_path[-1:] if self.hop_path else ""

    def hop_path_text(self) -> str:
        """Hop path as crawl.log prints it: ``-`` for a seed, ``N+…`` once hops were dropped."""
        if not self.hop_path:
            return "-"
        if self.hops_dropped:
            return f"{self.hops_dropped}+{self.hop_path}"
        return self.hop_path

    def create_child(self, uri: str, hop: str, context: str = "") -> CrawlURI:
        """A new CrawlURI reached from this one by ``hop``, inheriting its source tag, its
        seed's hop limit and the length of the URL series it is in (see ``SERIES_RUN_KEY``)."""
        path = self.hop_path + hop
        dropped = self.hops_dropped
        if len(path) > MAX_HOPS_SHOWN:
            extra = len(path) - MAX_HOPS_SHOWN
            path = path[extra:]
            dropped += extra
        data: dict[str, Any] = {}
        if self.data:
            run = self.data.get(SERIES_RUN_KEY)
            if run:
                data[VIA_SERIES_RUN_KEY] = run
                series = self.data.get(SERIES_ID_KEY)
                if series:
                    data[VIA_SERIES_ID_KEY] = series
        # By position (the fields _CHILD_FIELDS names, checked below the class): one call per
        # outlink, where keywords cost a third more.
        return CrawlURI(
            uri,
            self.uri,
            path,
            dropped,
            False,
            self.source_tag,
            SchedulingDirective.NORMAL,
            1,
            False,
            0,
            context,
            data,
            self.seed_max_hops,
        )

    # ------------------------------------------------------------- outcome
    @property
    def is_success(self) -> bool:
        """Heritrix's success: any status above zero (a 404 counts as downloaded)."""
        return self.status > 0

    @property
    def payload_status(self) -> int:
        """The HTTP status of the payload in ``recording``, as extractors judge it: ``status``,
        or for a 304 whose earlier capture was loaded (:mod:`crawler.continuity`), that
        capture's status (crawl.log still shows the 304)."""
        return self.earlier_status or self.status

    @property
    def is_disregarded(self) -> bool:
        """Out of scope, robots-precluded, blocked or deleted: neither success nor failure."""
        return self.status in DISREGARDED_STATUSES

    @property
    def mime_type(self) -> str:
        """Content type without parameters, as crawl.log column 7 prints it."""
        ctype = self.content_type
        if not ctype:
            return "no-type"
        for sep in (";", " ", ","):
            cut = ctype.find(sep)
            if cut >= 0:
                ctype = ctype[:cut]
        return ctype.strip().lower() or "no-type"

    def annotate(self, note: str) -> None:
        """Add a crawl.log annotation once, keeping insertion order."""
        if note not in self.annotations:
            self.annotations.append(note)

    def header(self, name: str) -> str | None:
        """First response header named ``name`` (case-insensitive), or None."""
        lname = name.lower()
        for key, value in self.response_headers:
            if key.lower() == lname:
                return value
        return None

    def reset_for_retry(self) -> None:
        """Forget the results of a failed attempt before the URI goes back in its queue."""
        self.status = FetchStatus.UNATTEMPTED
        self.content_type = None
        self.content_length = -1
        self.content_size = -1
        self.payload_digest = None
        self.fetch_start_ms = 0
        self.fetch_duration_ms = -1
        self.http_status = 0
        self.http_version = ""
        self.response_headers = []
        self.ip_address = None
        self.outlinks = []
        self.extra_info = {}
        self.prerequisite = None
        self.revisit = None
        self.earlier_status = 0
        self.politeness_delay_ms = -1
        self.retry_delay_s = 0.0
        self.error = None
        self.error_traceback = ""
        self.nonfatal_errors = []
        self.annotations = [
            a for a in self.annotations if not a.endswith("t") or not a[:-1].isdigit()
        ]
        self.close_recording()

    def close_recording(self) -> None:
        """Release the fetched bytes (temp files) if any; safe to call twice."""
        rec = self.recording
        self.recording = None
        if rec is not None:
            close = getattr(rec, "close", None)
            if close is not None:
                close()

    # ------------------------------------------------------- persistence
    def to_bytes(self) -> bytes:
        """Compact record of the persistent fields, for the frontier's store: their JSON array
        (``json.dumps(values, separators=(",", ":"), ensure_ascii=False)``)."""
        record = _record_by_parts(self)
        if record is not None:
            return record
        values = _persistent_values(self)
        if _C_RECORD_ENCODER is not None:
            return "".join(_C_RECORD_ENCODER(values, 0)).encode()
        return _RECORD_ENCODER.encode(values).encode()

    @classmethod
    def from_bytes(cls, raw: bytes) -> CrawlURI:
        """Inverse of :meth:`to_bytes`; a shorter record (saved before fields were added at the
        end, e.g. by an older version of a resumed crawl) leaves the later fields at default."""
        values = json.loads(raw)
        if len(values) == _RECORD_LENGTH:
            # By position (one call per URI handed out, where keywords cost twice as much):
            # the fields come in the record's order but for seed_max_hops (checked below).
            return cls(*[*values[:12], values[15], values[12], values[13], values[14]])
        if len(values) > len(cls._PERSISTENT):
            raise ValueError(
                f"a CrawlURI record of {len(values)} fields, expected at most "
                f"{len(cls._PERSISTENT)}"
            )
        return cls(**dict(zip(cls._PERSISTENT, values, strict=False)))

    def __repr__(self) -> str:
        return f"CrawlURI({self.uri!r}, hops={self.hop_path_text()!r}, status={self.status})"


_CHILD_FIELDS = (
    ("uri", MISSING),
    ("via", None),
    ("hop_path", ""),
    ("hops_dropped", 0),
    ("is_seed", False),
    ("source_tag", None),
    ("directive", SchedulingDirective.NORMAL),
    ("precedence", 1),
    ("force_fetch", False),
    ("fetch_attempts", 0),
    ("via_context", ""),
    ("data", MISSING),
    ("seed_max_hops", -1),
)
"""The first fields of a CrawlURI and their defaults, as :meth:`CrawlURI.create_child` passes
them by position (``MISSING``: none, or a factory)."""
if [(f.name, f.default) for f in fields(CrawlURI)[: len(_CHILD_FIELDS)]] != list(_CHILD_FIELDS):
    raise ImportError("CrawlURI's first fields changed: update create_child and _CHILD_FIELDS")

_RECORD_LENGTH = len(CrawlURI._PERSISTENT)
_p = CrawlURI._PERSISTENT
if [f.name for f in fields(CrawlURI)[:_RECORD_LENGTH]] != [*_p[:12], _p[15], *_p[12:15]]:
    raise ImportError("CrawlURI's persistent fields moved: update CrawlURI.from_bytes")
del _p

_persistent_values = operator.attrgetter(*CrawlURI._PERSISTENT)
"""The persistent fields of a CrawlURI as a tuple (encoded as the record's JSON array)."""

_MIDDLE = CrawlURI._PERSISTENT[1:11]
_OUTER = ("uri", "data", "queue_key", "canonical", "ordinal", "seed_max_hops")
assert (_OUTER[0], *_MIDDLE, *_OUTER[1:]) == CrawlURI._PERSISTENT, "record layout changed"
_NUMBER_FIELDS = frozenset(
    {"hops_dropped", "is_seed", "directive", "precedence", "force_fetch", "fetch_attempts"}
)
assert [i for i, name in enumerate(_MIDDLE) if name in _NUMBER_FIELDS] == [2, 3, 5, 6, 7, 8]
_middle_values = operator.attrgetter(*_MIDDLE)
_outer_values = operator.attrgetter(*_OUTER)
_MIDDLES: dict[tuple[Any, ...], tuple[tuple[Any, ...], str]] = {}
"""The record's middle fields (via to via_context: the same for most links of a page) -> (the
values the entry was made from, their JSON text); :data:`LITERALS_KEPT` at most."""
_QUEUE_KEYS: dict[str, str] = {}
"""JSON literals of recent queue keys, :data:`LITERALS_KEPT` at most."""
LITERALS_KEPT = 4096
_STRING_SLOTS = tuple(i for i, name in enumerate(_MIDDLE) if name not in _NUMBER_FIELDS)


def _record_by_parts(curi: CrawlURI) -> bytes | None:
    """:meth:`CrawlURI.to_bytes` put together from remembered parts, in the bytes the JSON
    encoder gives; None (the encoder writes it) when ``data`` is not empty or a field has a
    type this cannot write exactly (an ordinal or hop limit that is not an int, a URI or
    queue key that is not a string, a string field holding anything but a string or None).

    The middle fields' JSON is remembered by their values; a hit is taken only when its
    numbers and flags are the very objects the entry was made from (so ``1``, ``True`` and
    ``1.0``, equal as keys, never share a text) and its string fields are equal strings (one
    JSON text). The canonical form, most often the URI itself, is escaped once. Thread-safe:
    the memos are dicts, every operation atomic under the GIL.
    """
    middle = _middle_values(curi)
    uri, data, queue_key, canonical, ordinal, seed_max_hops = _outer_values(curi)
    if data or type(data) is not dict or not (type(ordinal) is type(seed_max_hops) is int):
        return None
    try:
        hit = _MIDDLES.get(middle)
        if (
            hit is not None
            and (made := hit[0])[2] is middle[2]
            and made[3] is middle[3]
            and made[5] is middle[5]
            and made[6] is middle[6]
            and made[7] is middle[7]
            and made[8] is middle[8]
        ):
            text = hit[1]
        else:
            if any(not isinstance(middle[i], str | None) for i in _STRING_SLOTS):
                return None
            text = _RECORD_ENCODER.encode(middle)[1:-1]
            remember(_MIDDLES, middle, (middle, text), LITERALS_KEPT)
        queue = _QUEUE_KEYS.get(queue_key)
        if queue is None:
            queue = remember(_QUEUE_KEYS, queue_key, _encode_string(queue_key), LITERALS_KEPT)
        literal = _encode_string(uri)
        same = canonical == uri
        return (
            f"[{literal},{text},{{}},{queue},{literal if same else _encode_string(canonical)},"
            f"{ordinal},{seed_max_hops}]"
        ).encode()
    except TypeError:
        return None  # a value JSON does not take, or an unhashable one: the encoder decides
