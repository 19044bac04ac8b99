"""The crawl order's schema: pydantic models for every section of the YAML.

Key names are a contract users' orders, scripts and docs rely on: add keys freely, never
rename one. Components (processors,
decide rules, frontier parts) are named by dotted path in ``class`` with their own ``params``,
validated against the component's parameter model by :mod:`crawler.order.components`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
    model_validator,
)

from crawler.netguard import parse_networks
from crawler.secrets.secret_refs import SecretBook
from crawler.urls import is_http_url


class Section(BaseModel):
    """Base of every order section: unknown keys are errors, values are not coerced silently."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ComponentSpec(Section):
    """A pluggable component: ``{class: dotted.path.Class, params: {...}}``."""

    class_: str = Field(alias="class", min_length=1, description="dotted path of the class")
    params: dict[str, Any] = Field(default_factory=dict, description="the class's parameters")


class ProcessorSpec(ComponentSpec):
    """One processor of a chain: a unique name, its class, params, switch and filter rules."""

    name: str = Field(min_length=1, description="unique name, used by jumps and reports")
    enabled: bool = True
    should_process_rule: list[ComponentSpec] = Field(
        default_factory=list, description="DecideRuleSequence; REJECT skips this processor"
    )


class OperatorConfig(Section):
    """Who runs the crawl; the contact URL goes into the User-Agent of every request."""

    contact_url: str | None = None
    from_email: str | None = None
    organization: str | None = None
    user_agent_template: str = "Mozilla/5.0 (compatible; crawler/{version}; +{contact_url})"


class SeedsConfig(Section):
    """Where seeds come from: a file in Heritrix seed-list syntax and/or a list of URLs."""

    file: str | None = None
    urls: list[str] = Field(default_factory=list)
    source_tag_seeds: bool = False
    redirects_new_seeds: bool = True


class LimitsConfig(Section):
    """The crawl ends when one limit is reached; 0 means unlimited."""

    max_documents: int = Field(0, ge=0)
    max_bytes: int = Field(0, ge=0)
    max_time_s: float = Field(0, ge=0)
    # Disk guard (not an end of the crawl): pause while the fullest file system under the run
    # directory has less than min_free_disk_mb free (0 = off); resume at min + margin.
    min_free_disk_mb: int = Field(512, ge=0)
    disk_resume_margin_mb: int = Field(64, ge=0)
    disk_check_interval_s: float = Field(5.0, gt=0)


class RobotsConfig(Section):
    """robots.txt handling."""

    policy: Literal["obey", "ignore"] = "obey"
    validity_s: float = Field(86400, gt=0)
    max_size_bytes: int = Field(512 * 1024, gt=0)


class PolitenessConfig(Section):
    """Per-queue delay after each fetch: delay_factor x fetch time, clamped to [min, max]."""

    delay_factor: float = Field(5.0, ge=0)
    min_delay_ms: int = Field(3000, ge=0)
    max_delay_ms: int = Field(30000, ge=0)
    respect_crawl_delay_up_to_s: float = Field(300, ge=0)
    max_per_host_bandwidth_kbps: int = Field(0, ge=0)
    # Server cap, across queues (host:port): concurrent fetches (0 = unlimited) and the minimum
    # time between two fetch starts. Binds when a policy spreads a host over several queues, and
    # on browser sub-resources (crawler.frontier.politeness.inline_gate).
    host_max_connections: int = Field(2, ge=0)
    host_min_interval_ms: int = Field(0, ge=0)
    respect_retry_after_up_to_s: float = Field(300, ge=0)


class RetriesConfig(Section):
    """Retries of -1/-2/-3/-50 statuses, and of HTTP statuses that say "try again later"."""

    max_retries: int = Field(30, ge=0)
    retry_delay_s: float = Field(900, ge=0)
    # HTTP answers retried (crawler.frontier.retry.retry_policy): up to http_max_tries attempts in
    # all, the n-th retry after http_backoff_s x 2^(n-1) capped at http_backoff_max_s (or
    # Retry-After).
    http_statuses: list[int] = Field(
        default_factory=lambda: [408, 429, 500, 502, 503, 504],
        description="HTTP statuses retried; [] = none (Heritrix)",
    )
    http_max_tries: int = Field(4, ge=1, description="attempts in all for an HTTP status above")
    http_backoff_s: float = Field(1.0, ge=0, description="wait before the first HTTP retry")
    http_backoff_max_s: float = Field(60.0, ge=0, description="longest wait between HTTP retries")
    # Deferrals for a prerequisite (dns:, robots.txt, a login) are no tries: they have a cap of
    # their own, then the URI ends -50 (crawler.frontier.retry.retry_policy).
    max_deferrals: int = Field(
        20, ge=0, description="times a URI may be deferred for a prerequisite; once more: -50"
    )
    # A malformed response (bad status line, bad chunking, body shorter than Content-Length) is
    # the server's doing: few tries, soon, and none more once the same error repeats.
    protocol_max_tries: int = Field(
        3, ge=1, description="attempts in all after malformed responses (within max_retries)"
    )
    protocol_retry_delay_s: float = Field(
        60, ge=0, description="wait before retrying after a malformed response"
    )

    @field_validator("http_statuses")
    @classmethod
    def _http_statuses(cls, value: list[int]) -> list[int]:
        bad = [v for v in value if not 100 <= v <= 599]
        if bad:
            raise ValueError(f"not HTTP statuses: {bad}; use codes from 100 to 599")
        return value


class PaceConfig(Section):
    """Adaptive pace per server (host:port): AIMD on the least gap between fetch starts
    (crawler.frontier.politeness.server_pace), across every queue of the server, whatever the
    politeness."""

    enabled: bool = True
    signal_statuses: list[int] = Field(default_factory=lambda: [429, 503])
    increase_factor: float = Field(1.15, ge=1.0)
    fast_increase_factor: float = Field(4.0, ge=1.0)
    decrease_fraction: float = Field(0.001, gt=0, le=1.0)
    max_gap_ms: int = Field(30000, ge=0)
    slow_response_factor: float = Field(4.0, ge=1.0)
    slow_response_min_ms: int = Field(1000, ge=0)


LOCAL_FRONTIER_CLASS = "crawler.frontier.WorkQueueFrontier"
"""The frontier of one crawler process (default), over a local store (LevelDB, memory)."""
SHARED_FRONTIER_CLASS = "crawler.frontier.RedisFrontier"
"""The frontier many crawler processes share (``--workers``, ``crawler worker``), over Redis."""


class FrontierConfig(Section):
    """The frontier's class, its parts and policies."""

    class_: str = Field(
        LOCAL_FRONTIER_CLASS,
        alias="class",
        min_length=1,
        description="dotted path of the Frontier class; it must suit the store (preflight)",
    )
    store: ComponentSpec = ComponentSpec.model_validate(
        {"class": "crawler.frontier.LevelDBQueueStore"}
    )
    queue_assignment: ComponentSpec = ComponentSpec.model_validate(
        {"class": "crawler.frontier.HostnameQueueAssignmentPolicy"}
    )
    uniq_filter: ComponentSpec = ComponentSpec.model_validate(
        {"class": "crawler.uniq.LevelDBUriUniqFilter"}
    )
    politeness: PolitenessConfig = PolitenessConfig()
    retries: RetriesConfig = RetriesConfig()
    pace: PaceConfig = PaceConfig()
    balance_replenish_amount: int = 3000
    queue_total_budget: int = -1
    error_penalty_amount: int = 100
    canonicalization: list[str] = Field(
        default_factory=lambda: [
            "lowercase",
            "strip_userinfo",
            "strip_wwwn",
            "strip_session_ids",
            "strip_session_cfids",
            "fixup_query",
        ],
        description="crawler.canonicalizer.CANONICALIZATION_RULES names, applied in order "
        "(the already-seen key)",
    )
    cost_policy: Literal["unit", "zero", "wag"] = "unit"
    uri_precedence_policy: Literal["cost", "hops", "base", "preset"] = "cost"
    queue_precedence_policy: Literal["base", "highest_uri", "success_counts"] = "base"
    base_queue_precedence: int = Field(3, ge=0)
    precedence_floor: int = Field(255, ge=1)
    cached_queues: int = Field(
        65536,
        ge=0,
        description="work queues out of rotation kept in RAM (LevelDB/memory store); the "
        "others are records in the store, read back when touched",
    )
    lateness_tolerance: float = Field(
        0.05,
        ge=0,
        description="lateness guard: the hosts in rotation are capped at what the threads "
        "serve on time, learned from the fetch times (threads x (hold + wait) / hold), lowered "
        "while more than 1% of fetches start later than half this share of their politeness "
        "delay; 0 = off",
    )

    @field_validator("canonicalization")
    @classmethod
    def _known_rules(cls, rules: list[str]) -> list[str]:
        from crawler.canonicalizer import CANONICALIZATION_RULES

        unknown = [r for r in rules if r not in CANONICALIZATION_RULES]
        if unknown:
            raise ValueError(f"unknown rule(s) {unknown}; known: {sorted(CANONICALIZATION_RULES)}")
        return rules


class ChainsConfig(Section):
    """The five processor chains, each an ordered list."""

    pre: list[ProcessorSpec] = Field(default_factory=list)
    fetch: list[ProcessorSpec] = Field(default_factory=list)
    extract: list[ProcessorSpec] = Field(default_factory=list)
    write: list[ProcessorSpec] = Field(default_factory=list)
    post: list[ProcessorSpec] = Field(default_factory=list)


CHAIN_NAMES: tuple[str, ...] = tuple(ChainsConfig.model_fields)
"""The chains in the order a CrawlURI goes through them: pre, fetch, extract, write, post."""


def _cidr(value: str) -> str:
    parse_networks([value])  # ValueError: "... is not a network: use CIDR notation ..."
    return value


class FetchConfig(Section):
    """What every fetch (HTTP and browser) obeys: by default no connection goes to a
    non-public address (:mod:`crawler.netguard`) unless a seed names that server or
    ``allow_private`` lists its network."""

    allow_private: list[Annotated[str, AfterValidator(_cidr)]] = Field(
        default_factory=list,
        description="networks (CIDR) fetches may reach although not public, e.g. 10.0.0.0/8",
    )


class LoggingConfig(Section):
    """Logs and progress reporting."""

    progress_interval_s: float = Field(20, gt=0)
    level: Literal["debug", "info", "warning", "error"] = "info"
    console: bool = True
    crawl_log_extra_info: bool = True
    display: bool = True


def _webhook_url(value: str) -> str:
    if not is_http_url(value):
        raise ValueError(f"{value!r} is not a URL: a webhook is an http:// or https:// URL")
    return value


class AlertsConfig(Section):
    """``alerts``: where alerts go besides ``logs/alerts.log``. Every event at ``min_level`` or
    above, and the info events named in ``events``, are POSTed as JSON to each webhook, from a
    thread of their own: a slow or dead endpoint never slows the crawl (see crawler.alerts)."""

    webhooks: list[Annotated[str, AfterValidator(_webhook_url)]] = Field(
        default_factory=list, description="http(s) URLs that receive every alert as a JSON POST"
    )
    min_level: Literal["warning", "error", "critical"] = "warning"
    events: list[str] = Field(
        default_factory=lambda: ["crawl_finished"],
        description="info events sent too (crawl_state, crawl_finished, ...)",
    )
    timeout_s: float = Field(5.0, gt=0, description="longest wait for one POST's answer")
    max_tries: int = Field(5, ge=1, description="attempts per alert and webhook")
    backoff_s: float = Field(1.0, ge=0, description="wait before the first retry, then doubled")
    backoff_max_s: float = Field(60.0, ge=0, description="longest wait between two tries")
    max_pending: int = Field(1000, ge=1, description="alerts kept per webhook; oldest dropped")
    flush_timeout_s: float = Field(
        5.0, ge=0, description="at the crawl's end, longest wait for pending alerts to go out"
    )


class MetricsConfig(Section):
    """``metrics``: Prometheus ``/metrics`` of this crawl process (see crawler.metrics)."""

    port: int | None = Field(
        None, ge=0, le=65535, description="port of /metrics; null: none; 0: any free port"
    )
    address: str = Field("127.0.0.1", min_length=1, description="address to listen on")


class MemoryConfig(Section):
    """``memory``: what keeps a long crawl's resident memory flat (see crawler.memory)."""

    malloc_arena_max: int = Field(
        2, ge=0, description="cap on glibc's malloc arenas (0: glibc's default, 8 per core)"
    )
    trim_interval_s: float = Field(
        60, ge=0, description="seconds between returns of the C heap's free pages (0: never)"
    )
    mmap_threshold_bytes: int = Field(
        1_048_576,
        ge=0,
        le=33_554_432,
        description="blocks of this size and more are mmapped and go back to the system when "
        "freed (0: glibc's sliding default)",
    )
    trim_threshold_bytes: int = Field(
        33_554_432,
        ge=0,
        le=1 << 30,
        description="free memory an arena's top keeps between trims instead of returning it "
        "at every free (0: glibc's 128 KiB; not applied when mmap_threshold_bytes is 0)",
    )
    max_cached_servers: int = Field(
        50_000, ge=0, description="servers whose robots.txt is kept (0: all); others re-fetch it"
    )
    max_cached_hosts: int = Field(
        200_000, ge=0, description="hosts whose address is kept (0: all); others look it up again"
    )
    max_cookie_partitions: int = Field(
        10_000,
        ge=0,
        description="sites whose cookies stay in memory (0: all); others are read "
        "back from state/cookies.sqlite when needed",
    )


class HistoryConfig(Section):
    """The crawl history in state/history: fetch history (conditional requests) and payload digests
    (revisit records). ``import_from``: state or run directory of a finished earlier crawl, or
    ``previous``: the job's latest finished run (:mod:`crawler.schedule.previous_run`)."""

    enabled: bool = True
    import_from: str | None = None


class DigestIndexConfig(Section):
    """The payload-digest index (URL-agnostic dedup) kept per job between crawls.
    ``job_index``: its LevelDB, relative to the job directory (the one holding ``runs/``) or
    absolute; null = each run's own alone."""

    job_index: str | None = Field("digest-index", min_length=1)


class DedupCollectionConfig(Section):
    """One earlier collection: sorted CDXJ/CDX index(es) (``cdxj``: a file, plain or .gz, a
    directory of them, or an earlier run directory; relative to the order) or a CDX server
    endpoint (``cdx_server``: pywb's /<coll>/cdx, OutbackCDX)."""

    cdxj: str | None = Field(None, min_length=1)
    cdx_server: str | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _one_source(self) -> DedupCollectionConfig:
        if (self.cdxj is None) == (self.cdx_server is None):
            raise ValueError(
                "give exactly one of cdxj (a sorted CDXJ file) or cdx_server (a CDX server URL), "
                "e.g. {cdxj: ../old-crawl/indexes/index.cdxj}"
            )
        server = self.cdx_server
        if server is not None and not is_http_url(server):
            raise ValueError(
                f"cdx_server {server!r} is not an http(s) URL, e.g. http://localhost:8080/coll/cdx"
            )
        return self


class DedupConfig(Section):
    """Dedup against earlier collections: a fetch whose payload an earlier capture of the same
    URI holds (same SURT key and digest in one of ``collections``) becomes a revisit of it."""

    collections: list[DedupCollectionConfig] = Field(default_factory=list)
    timeout_s: float = Field(5.0, gt=0, description="longest wait for a CDX server's answer")
    retry_after_s: float = Field(
        60.0, ge=0, description="a CDX server that failed is not asked again for this long"
    )


class BrowserConfig(Section):
    """Browser capture (FetchBrowser, ``processors.browser``): which HTML pages are loaded in
    headless Chromium after their HTTP fetch, and the pool of browsers that loads them."""

    enabled: bool = False
    all_html: bool = False
    auto: bool = True
    executable: str = "/usr/bin/chromium"
    pages_at_once: int = Field(4, ge=1, le=64)
    pages_per_browser: int = Field(100, ge=1)
    page_budget_s: float = Field(30.0, gt=0, le=3600)
    memory_ceiling_mb: int = Field(1500, ge=100)
    behaviours: bool | list[str] = Field(
        True,
        description="true: the built-in behaviours; false: none; a list of JS files (relative "
        "to the order): the built-ins, then these (see processors.browser.behaviour_script)",
    )
    behaviour_timeout_s: float = Field(10.0, gt=0, le=600)
    media_wait_s: float = Field(3.0, ge=0, le=120)
    browsertrix_behaviors: str | None = None
    profile: str | None = None
    max_scrolls: int = Field(20, ge=0)
    max_clicks: int = Field(10, ge=0)
    idle_ms: int = Field(400, ge=0)
    screenshots: bool | list[Literal["view", "full", "thumbnail"]] = False
    text: bool = True
    subresource_timeout_s: float = Field(20.0, gt=0)
    capture_methods: list[Literal["POST", "PUT", "PATCH", "DELETE"]] = Field(
        ["POST"],
        description="methods besides GET whose requests are sent and captured; others refused",
    )
    block: list[str] = Field(
        default_factory=list,
        description="requests not fetched: URL regexes, or surt:<SURT prefix, host or URL>",
    )
    block_lists: list[Literal["ads"]] = Field(
        default_factory=list, description="bundled host lists blocked too (ads: ad/tracker hosts)"
    )

    @field_validator("block")
    @classmethod
    def _block_patterns(cls, patterns: list[str]) -> list[str]:
        from crawler.decide.url_pattern import parse_url_pattern

        for i, text in enumerate(patterns):
            try:
                parse_url_pattern(text)
            except ValueError as exc:
                raise ValueError(f"entry {i}: {exc}") from None
        return patterns

    def screenshot_kinds(self) -> tuple[str, ...]:
        """The screenshots taken of each page (``true`` is the viewport alone)."""
        if isinstance(self.screenshots, bool):
            return ("view",) if self.screenshots else ()
        return tuple(dict.fromkeys(self.screenshots))

    def behaviour_files(self) -> list[str]:
        """The custom behaviour files, as written in the order."""
        return list(self.behaviours) if isinstance(self.behaviours, list) else []


class ArchiveConfig(Section):
    """What the crawl makes of its WARCs (:mod:`crawler.archive`): CDXJ indexes as files close,
    a WACZ package at the end."""

    index: bool = True
    wacz: bool = False
    wacz_file: str | None = None


class SheetConfig(Section):
    """A sheet: settings overlaid on the URIs under some SURT prefixes or hosts (crawler.sheets).

    ``settings`` maps dotted keys (or nested mappings of them) to values, e.g.
    ``frontier.politeness.min_delay_ms: 300`` or ``chains.fetch.fetch_http.params.timeout_s: 60``;
    which keys a sheet may set is checked by :mod:`crawler.sheets.sheet_compiler`.
    """

    name: str = Field(min_length=1, description="unique name of the sheet")
    surt_prefixes: list[str] = Field(
        default_factory=list, description="SURT prefixes, or URLs whose implied prefix is used"
    )
    hosts: list[str] = Field(
        default_factory=list, description="host names (any port), or host:port"
    )
    settings: dict[str, Any] = Field(default_factory=dict, description="dotted key -> value")


class CrawlOrder(Section):
    """A whole crawl order, after ``extends:`` and ``--set`` overrides were applied."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9._-]+$")
    description: str = ""
    operator: OperatorConfig = OperatorConfig()
    seeds: SeedsConfig = SeedsConfig()
    toe_threads: int = Field(25, ge=1, le=1000)
    cpu_affinity: Literal["auto", "none"] | list[int] = Field(
        "auto", description="auto | none | CPU numbers; see crawler.control.affinity"
    )
    pause_at_start: bool = False
    schedule: str | None = Field(
        None, description="cron expression (UTC) of recurring runs; see crawler.schedule"
    )
    limits: LimitsConfig = LimitsConfig()
    robots: RobotsConfig = RobotsConfig()
    scope: list[ComponentSpec] = Field(default_factory=list)
    frontier: FrontierConfig = FrontierConfig()
    chains: ChainsConfig = ChainsConfig()
    fetch: FetchConfig = FetchConfig()
    history: HistoryConfig = HistoryConfig()
    digest_index: DigestIndexConfig = DigestIndexConfig()
    dedup: DedupConfig = DedupConfig()
    browser: BrowserConfig = BrowserConfig()
    logging: LoggingConfig = LoggingConfig()
    alerts: AlertsConfig = AlertsConfig()
    metrics: MetricsConfig = MetricsConfig()
    memory: MemoryConfig = MemoryConfig()
    archive: ArchiveConfig = ArchiveConfig()
    sheets: list[SheetConfig] = Field(
        default_factory=list, description="per-site overlays; see crawler.sheets"
    )
    base_dir: str = Field(".", description="directory of the order file; set by the loader")
    _secrets: SecretBook | None = PrivateAttr(default=None)

    @property
    def secrets(self) -> SecretBook | None:
        """Where the order's secrets were (set by the loader; never dumped):
        order.effective.yaml writes references in their place (crawler.secrets)."""
        return self._secrets

    def with_secrets(self, book: SecretBook | None) -> CrawlOrder:
        """This order, knowing where its secrets were."""
        self._secrets = book
        return self

    @field_validator("schedule")
    @classmethod
    def _cron(cls, value: str | None) -> str | None:
        if value is None:
            return value
        # croniter (~60 ms to import) only for orders that are scheduled
        from crawler.schedule.cron_schedule import cron_problem

        problem = cron_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("cpu_affinity", mode="before")
    @classmethod
    def _cpu_list(cls, value: object) -> object:
        if not isinstance(value, list) and value not in ("auto", "none"):
            raise ValueError("use auto, none or a list of CPU numbers such as [0, 1]")
        if isinstance(value, list):
            if not value:
                raise ValueError("an empty CPU list: list CPU numbers, or use auto or none")
            if any(not isinstance(cpu, int) or isinstance(cpu, bool) or cpu < 0 for cpu in value):
                raise ValueError("CPU numbers are integers from 0")
        return value
