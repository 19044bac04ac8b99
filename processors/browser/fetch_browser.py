"""FetchBrowser: HTML pages loaded in headless Chromium after their HTTP fetch.

Sits in the fetch chain after FetchHTTP. With the order's ``browser.enabled`` false it turns
itself off at start (no per-URI cost beyond the chain's ``enabled`` check). Otherwise a page
with a 2xx HTML response goes to the browser when its ``should_process_rule`` ACCEPTs it
(``rule``: SURT prefixes, regexes, …), when ``browser.all_html`` is set (``html``), or when
``browser.auto`` finds it script-built (``auto:<sign>``, see
:mod:`~processors.browser.needs_browser_rule`). The browser is given the page's document as
FetchHTTP recorded it (the page is not fetched twice) and fetches everything else through
:class:`~processors.browser.subresource_fetcher.SubresourceFetcher`: each sub-resource is
recorded, written and logged once with the annotation ``browser``, after the server's gate
(connection cap, pace, holds; not the queue's per-URI delay) admitted it; a page's POSTs
(``browser.capture_methods``) are sent and recorded with their bodies; requests matching
``browser.block`` / ``block_lists`` are not fetched, and ``reports/browser-blocks-report.txt``
counts them per rule (written at stop). Behaviours run within
``browser.page_budget_s`` (media played, parts opened in place, scrolling, "more" clicks, then
the order's custom behaviours: :mod:`~processors.browser.page_extras`); the rendered DOM's links
become outlinks (L for links, E for embeds). Screenshots (``browser.screenshots``) and the
rendered text (``browser.text``) go into the WARC as ``resource`` records (``urn:screenshot:``,
``urn:fullPage:``, ``urn:thumbnail:``, ``urn:text:`` + the page's URI; logged too). With
``browser.profile`` every tab starts with the saved profile's cookies and localStorage
(:mod:`~processors.browser.browser_profile`), and its cookies go into FetchHTTP's jar at start.

Reads ``curi.recording``, ``status``, ``content_type``, ``response_headers``. Writes
``curi.outlinks`` (appends), annotations (``browser``, ``browser:<reason>``, and any
event: ``browser:timeout``, ``browser:loadTimeout``, ``browser:neverIdle``, ``browser:crash``,
``browser:popupClosed``, ``browser:dialogDismissed``, ``browser:navigationBlocked``,
``browser:websocketClosed``, ``browser:scrollLimit``, …) and adds the browser's time to
``fetch_duration_ms`` (so the queue's politeness wait scales with the whole visit).
Thread-safe: one pool serves all threads; counters are under a lock. No Heritrix counterpart
(brozzler plays this part beside Heritrix).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path

from pydantic import Field

from crawler import CrawlURI, Link, Params, Processor, ProcessorContext, Recording
from crawler.decide import DecideResult
from crawler.order.errors import OrderError, OrderIssue
from processors.browser.behaviour_script import BehaviourFileError, load_behaviours
from processors.browser.block_rules import REPORT_NAME, BrowserBlockRules
from processors.browser.browser_pool import BrowserPool
from processors.browser.browser_profile import ProfileError, load_profile
from processors.browser.chromium_process import reap_orphans
from processors.browser.needs_browser_rule import script_built_reason
from processors.browser.page_extras import Capture, PageExtras
from processors.browser.page_visit import BrowserCookie, PageJob, PageOutcome, Served
from processors.browser.subresource_fetcher import BROWSER_NOTE, SubresourceFetcher
from processors.cookies.cookie_store import CookieRecord, CookieStore
from processors.fetch.user_agent import user_agent

_HTML = ("text/html", "application/xhtml+xml")
_MAX_DOCUMENT_BYTES = 32 * 1024 * 1024


class FetchBrowserParams(Params):
    """Which FetchHTTP serves the browser (the pool itself is the order's ``browser:`` block)."""

    http_processor: str = Field(
        "fetch_http", description="name of the FetchHTTP processor that fetches for the browser"
    )


class FetchBrowser(Processor[FetchBrowserParams]):
    """Loads pages in Chromium and captures what it fetches (see the module docstring)."""

    _pool: BrowserPool | None = None

    def start(self, ctx: ProcessorContext) -> None:
        super().start(ctx)
        self._lock = threading.Lock()
        self._reasons: Counter[str] = Counter()
        self._events: Counter[str] = Counter()
        self._links = 0
        self._browser_ms = 0
        self._subs: SubresourceFetcher | None = None
        self._cookies_learnt = 0
        self._captures: Counter[str] = Counter()
        killed = reap_orphans(ctx.state_dir)
        if killed:
            ctx.logger.warning("browser_orphans_killed", processes=killed)
        cfg = ctx.order.browser
        if not cfg.enabled and not cfg.profile:
            self.enabled = False
            return
        find = ctx.find_processor
        http = find(self.params.http_processor) if find is not None else None
        if http is None:
            raise RuntimeError(
                f"{self.name}: no processor named {self.params.http_processor!r} to fetch for "
                "the browser (params.http_processor)"
            )
        self._cookies: CookieStore | None = getattr(http, "cookies", None)
        base_dir = Path(ctx.order.base_dir)
        state = (
            self._load_profile(base_dir / Path(cfg.profile).expanduser()) if cfg.profile else None
        )
        if not cfg.enabled:  # the profile's cookies serve the HTTP fetches alone
            self.enabled = False
            return
        try:
            scripts = load_behaviours(
                cfg.behaviour_files(), cfg.browsertrix_behaviors, base_dir, cfg.behaviour_timeout_s
            )
        except BehaviourFileError as exc:
            raise OrderError([OrderIssue(exc.key, str(exc))]) from None
        self._extras = PageExtras(
            scripts=tuple(scripts),
            behaviour_timeout_s=cfg.behaviour_timeout_s,
            media_wait_s=cfg.media_wait_s,
            screenshots=cfg.screenshot_kinds(),
            text=cfg.text,
            storage_state=state,
        )
        self._user_agent = user_agent(ctx.order)
        blocks = BrowserBlockRules(cfg.block, cfg.block_lists)
        methods = frozenset(cfg.capture_methods)
        self._subs = SubresourceFetcher(ctx, http, self._user_agent, blocks=blocks, methods=methods)
        self._pool = BrowserPool(cfg, ctx.state_dir, ctx.logger)

    def _load_profile(self, path: Path) -> dict[str, object]:
        """The profile's storage state; its cookies go into the crawl's jar."""
        try:
            profile = load_profile(path)
        except ProfileError as exc:
            hint = "a profile made by `crawler profile create` (storage-state JSON)"
            raise OrderError([OrderIssue("browser.profile", str(exc), hint=hint)]) from None
        cookies = profile.cookies
        if self._cookies is not None:
            for record in cookies:
                self._cookies.add(record)
        self.context.logger.info(
            "browser_profile_loaded",
            path=str(path),
            cookies=len(cookies),
            origins=len(profile.origins),
        )
        return profile.state

    def stop(self) -> None:
        # The pool object stays for report(); closing is idempotent.
        if self._pool is not None:
            self._pool.close()
        subs = self._subs
        if subs is not None and subs.blocks:
            reports = self.context.run_dir / "reports"
            try:
                reports.mkdir(parents=True, exist_ok=True)
                (reports / REPORT_NAME).write_text(subs.blocks.report(), encoding="utf-8")
            except OSError as exc:  # stop() never raises
                self.context.logger.error("browser_block_report_failed", error=str(exc))

    def should_process(self, curi: CrawlURI) -> bool:
        return (
            200 <= curi.status < 300
            and curi.recording is not None
            and curi.revisit is None
            and curi.mime_type in _HTML
            and BROWSER_NOTE not in curi.annotations
        )

    def inner_process(self, curi: CrawlURI) -> None:
        pool, subs = self._pool, self._subs
        if pool is None or subs is None:
            raise RuntimeError(f"processor {self.name!r} used after stop()")
        cfg = self.context.order.browser
        body = curi.recording.decoded_body(curi.header("content-encoding"), _MAX_DOCUMENT_BYTES)
        reason = self._reason(curi, body)
        if reason is None:
            return
        fetchers = subs.for_page(curi)
        job = PageJob(
            uri=curi.uri,
            document=Served(curi.http_status, list(curi.response_headers), body),
            fetch=fetchers.fetch,
            sender=fetchers.posts if fetchers.posts.methods else None,
            user_agent=self._user_agent,
            budget_s=cfg.page_budget_s,
            behaviours=cfg.behaviours is not False,
            max_scrolls=cfg.max_scrolls,
            max_clicks=cfg.max_clicks,
            idle_ms=cfg.idle_ms,
            extras=self._extras,
        )
        if self._cookies is not None:
            job.cookies_in = self._cookies_in
            job.cookies_out = self._cookies_out
        started = time.monotonic()
        try:
            outcome = pool.visit(job)
        finally:
            subs.page_done(fetchers)
        spent_ms = int((time.monotonic() - started) * 1000)
        curi.fetch_duration_ms = max(0, curi.fetch_duration_ms) + spent_ms
        curi.annotate(BROWSER_NOTE)
        curi.annotate(f"browser:{reason}")
        for note in outcome.notes:
            curi.annotate(note)
        added = self._add_links(curi, outcome)
        for capture in outcome.captures:
            self._store_capture(curi, capture)
        kinds = Counter(capture.uri.split(":", 2)[1] for capture in outcome.captures)
        with self._lock:
            self._reasons[reason.split(":", 1)[0]] += 1
            self._events.update(outcome.notes)
            self._links += added
            self._browser_ms += spent_ms
            self._captures.update(kinds)

    def _cookies_in(self, uri: str) -> list[BrowserCookie]:
        """The crawl's cookies for a page, as the browser takes them (host-only ones by URL)."""
        store = self._cookies
        out: list[BrowserCookie] = []
        for c in store.cookies_for(uri) if store is not None else []:
            cookie: BrowserCookie = {"name": c.name, "value": c.value}
            if c.host_only:
                scheme = "https" if c.secure else "http"
                cookie["url"] = f"{scheme}://{c.domain}{c.path or '/'}"
            else:
                cookie.update(domain=c.domain, path=c.path or "/")
            cookie.update(secure=c.secure, httpOnly=c.http_only)
            if c.expires is not None:
                cookie["expires"] = c.expires
            out.append(cookie)
        return out

    def _cookies_out(self, cookies: list[BrowserCookie]) -> None:
        """Cookies a page set or changed (by script too) go into the crawl's jar."""
        store = self._cookies
        if store is None:
            return
        for c in cookies:
            expires = c.get("expires", -1)
            try:
                record = CookieRecord(
                    name=str(c["name"]),
                    value=str(c["value"]),
                    domain=str(c["domain"]),
                    path=str(c.get("path") or "/"),
                    secure=bool(c.get("secure")),
                    http_only=bool(c.get("httpOnly")),
                    expires=None if expires is None or expires < 0 else int(expires),
                )
                store.add(record)
            except (KeyError, TypeError, ValueError):
                continue
        with self._lock:
            self._cookies_learnt += len(cookies)

    def _reason(self, curi: CrawlURI, body: bytes) -> str | None:
        rule = self.should_process_rule
        if rule is not None and rule.rules and rule.decide(curi) is DecideResult.ACCEPT:
            return "rule"
        cfg = self.context.order.browser
        if cfg.all_html:
            return "html"
        if cfg.auto:
            sign = script_built_reason(body)
            if sign is not None:
                return f"auto:{sign}"
        return None

    @staticmethod
    def _add_links(curi: CrawlURI, outcome: PageOutcome) -> int:
        seen = {link.uri for link in curi.outlinks}
        seen.add(curi.uri)
        added = 0
        for uri, hop, context in outcome.links:
            uri = uri.split("#", 1)[0]
            if not uri.startswith(("http://", "https://")) or uri in seen:
                continue
            seen.add(uri)
            curi.outlinks.append(Link(uri, hop, context))
            added += 1
        return added

    def _store_capture(self, curi: CrawlURI, capture: Capture) -> None:
        """A screenshot or the text as a WARC ``resource`` record, logged like a fetch."""
        shot = curi.create_child(capture.uri, "E", capture.uri.split(":", 2)[1])
        shot.thread_number = curi.thread_number
        shot.status = shot.http_status = 200
        shot.content_type = capture.content_type
        shot.fetch_start_ms = int(self.context.clock.time() * 1000)
        shot.fetch_duration_ms = 0
        rec = Recording()
        rec.write_body(capture.body)
        shot.recording = rec
        shot.content_size = rec.body_size
        shot.payload_digest = rec.payload_digest
        shot.annotate(BROWSER_NOTE)
        finish = self.context.finish_inline
        if finish is None:
            rec.close()
        else:
            finish(shot)

    def counts(self) -> dict[str, int]:
        with self._lock:
            pages = sum(self._reasons.values())
        return {**super().counts(), "browser_pages": pages}

    def report(self) -> list[str]:
        lines = super().report()
        with self._lock:
            reasons = dict(self._reasons)
            events = dict(self._events)
            links, browser_ms = self._links, self._browser_ms
            learnt = self._cookies_learnt
            captures = ", ".join(f"{k} {v}" for k, v in sorted(self._captures.items()))
        pages = sum(reasons.values())
        why = ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())) or "none"
        lines.append(f"  pages through the browser: {pages} ({why})")
        lines.append(f"  HTML pages left to HTTP only: {self.uris_handled - pages}")
        lines.append(f"  browser time: {browser_ms / 1000:.1f} s; rendered-DOM outlinks: {links}")
        lines.append(f"  cookies the browser set or changed (into the crawl's jar): {learnt}")
        lines.append(f"  resource records (screenshots, text): {captures or 'none'}")
        subs, pool = self._subs, self._pool
        if subs is not None:
            lines.append(
                f"  sub-resources recorded: {subs.recorded}, fetched again for the browser "
                f"(already captured or queued): {subs.repeated}, refused by robots.txt: "
                f"{subs.robots_blocked}, no server slot in time (-5005): {subs.gate_timeouts}, "
                f"non-public address (-5006): {subs.address_refusals}"
            )
            lines.append(
                f"  requests other than GET recorded: {subs.sent}, out of scope (-5000): "
                f"{subs.out_of_scope}, repeated within a page (answered again): {subs.resent}"
            )
            if subs.blocks:
                counts = subs.blocks.counts()
                text = ", ".join(f"{rule} {n}" for rule, (n, _u) in counts.items())
                lines.append(f"  blocked by browser rules (-5007): {subs.blocked} ({text})")
        if pool is not None:
            replaced = ", ".join(f"{k} {v}" for k, v in sorted(pool.browsers_replaced.items()))
            lines.append(
                f"  browsers started: {pool.browsers_started} (stopped: {replaced or 'none'}); "
                f"peak browser memory {pool.peak_memory_bytes // (1024 * 1024)} MB"
            )
        if events:
            text = ", ".join(f"{k} {v}" for k, v in sorted(events.items()))
            lines.append(f"  page events: {text}")
        return lines
