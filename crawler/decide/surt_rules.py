"""DecideRules on where a URI is: SURT prefixes, domains and hosts.

SURT prefixes are http-coerced on both sides, so ``http`` and ``https`` URIs are alike to these
rules. Prefix sets are filled once in :meth:`bind` (which may read a file) and only read after,
so the rules are thread-safe. Heritrix counterparts: ``SurtPrefixedDecideRule``,
``NotSurtPrefixedDecideRule``, ``OnDomainsDecideRule`` / ``NotOnDomainsDecideRule``,
``OnHostsDecideRule`` / ``NotOnHostsDecideRule``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated

from pydantic import AfterValidator, Field

from crawler.decide.rules import PredicatedDecideRule, PredicatedParams
from crawler.surt import SurtPrefixSet, surt_prefix_from_seed
from crawler.urls import UriError, host_port, normalize

if TYPE_CHECKING:
    from crawler.curi import CrawlURI
    from crawler.decide.decide_rule import RuleContext


class SurtPrefixedParams(PredicatedParams):
    seeds_as_surt_prefixes: bool = Field(True, description="add each seed's implied SURT prefix")
    surts_file: str | None = Field(
        None,
        description="file of prefixes, relative to the order's directory: URIs or hosts give "
        "their implied prefix, '+entry' lines (and '-entry' for a REJECT rule) add a SURT or "
        "URI, '#' starts a comment",
    )
    surts: list[str] = Field(
        default_factory=list, description="more entries, in the surts_file line syntax"
    )
    also_check_via: bool = Field(False, description="also decide on the via (referring) URI")


class SurtPrefixedDecideRule(PredicatedDecideRule[SurtPrefixedParams]):
    """Applies its decision to URIs under one of its SURT prefixes.

    With ``seeds_as_surt_prefixes`` the seeds (``RuleContext.seeds``) imply the prefixes:
    ``http://example.com`` admits the domain and its subdomains, ``http://www.example.com/``
    that host only, ``http://example.com/docs/a.html`` everything under ``/docs/``. Seed-list
    directives among the seeds always count: ``+entry`` for an ACCEPT rule, ``-entry`` for a
    REJECT rule. ``rejected_entries`` lists entries that were not usable URIs;
    ``operator_prefixes`` the prefixes of ``surts`` and ``surts_file`` alone (not the seeds'),
    which may name private hosts the crawl is allowed to reach (:mod:`crawler.netguard`).
    :meth:`bind` raises ``OSError`` if ``surts_file`` cannot be read. :meth:`seed_added` adds a
    new seed's prefix (copy on write: readers never see a half-changed set).
    """

    def __init__(self, params: SurtPrefixedParams | None = None) -> None:
        super().__init__(params)
        self.prefixes = SurtPrefixSet()
        self.rejected_entries: list[str] = []
        self.operator_prefixes: tuple[str, ...] = ()

    def bind(self, ctx: RuleContext) -> None:
        # Seed-list directives: '+' lines feed ACCEPT rules, '-' lines REJECT rules (Heritrix).
        own = "+" if self.params.decision == "ACCEPT" else "-"
        prefixes = SurtPrefixSet()
        bad = prefixes.import_lines(
            ctx.seeds, plain_lines=self.params.seeds_as_surt_prefixes, directives=own
        )
        operator: list[str] = []
        if self.params.surts_file:
            path = os.path.join(ctx.base_dir, self.params.surts_file)
            with open(path, encoding="utf-8") as lines:
                bad += prefixes.import_lines(lines, directives="+" + own, collect=operator)
        bad += prefixes.import_lines(self.params.surts, directives="+" + own, collect=operator)
        self.prefixes = prefixes
        self.rejected_entries = bad
        self.operator_prefixes = tuple(operator)

    def seed_added(self, uri: str) -> None:
        if not self.params.seeds_as_surt_prefixes:
            return
        try:
            prefix = surt_prefix_from_seed(uri)
        except UriError:
            return
        if self.prefixes.matches(prefix):
            return  # already covered (an http -> https redirect, a path under the seed's)
        widened = self.prefixes.copy()
        widened.add(prefix)
        self.prefixes = widened

    def _under(self, uri: str) -> bool:
        return self.prefixes.matches_uri(uri)

    def evaluate(self, curi: CrawlURI) -> bool:
        if self.prefixes.matches_uri(curi.uri):
            return True
        via = curi.via
        return bool(self.params.also_check_via and via and self._under(via))


class NotSurtPrefixedDecideRule(SurtPrefixedDecideRule):
    """Applies its decision to URIs under NONE of its SURT prefixes."""

    def evaluate(self, curi: CrawlURI) -> bool:
        return not super().evaluate(curi)


def _host_of(entry: str) -> str:
    """The lower-cased (punycode) host named by a domain/host entry or URI."""
    text = entry.strip()
    if "://" not in text:
        text = "http://" + text
    return host_port(normalize(text))[0]


def _check_host(entry: str) -> str:
    try:
        _host_of(entry)
    except UriError as exc:
        raise ValueError(f"not a host name: {entry!r} ({exc})") from None
    return entry


HostEntry = Annotated[str, AfterValidator(_check_host)]
"""A host or domain name (or a URI naming one), checked when the order is loaded."""


class OnDomainsParams(PredicatedParams):
    domains: list[HostEntry] = Field(
        default_factory=list,
        description="domains (or URIs); each admits itself and all its subdomains; "
        "a leading 'www.' is ignored",
    )


class OnDomainsDecideRule(PredicatedDecideRule[OnDomainsParams]):
    """Applies its decision to URIs whose host is one of ``domains`` or a subdomain of one
    (``example.com`` covers ``example.com``, ``www.example.com``, ``a.b.example.com``)."""

    def __init__(self, params: OnDomainsParams | None = None) -> None:
        super().__init__(params)
        domains: set[str] = set()
        for entry in self.params.domains:
            host = _host_of(entry)
            domains.add(host[4:] if host.startswith("www.") and host.count(".") > 1 else host)
        self._domains = frozenset(domains)

    def _on_domains(self, uri: str) -> bool:
        try:
            host = host_port(uri)[0]
        except UriError:
            return False
        domains = self._domains
        while True:
            if host in domains:
                return True
            dot = host.find(".")
            if dot < 0:
                return False
            host = host[dot + 1 :]

    def evaluate(self, curi: CrawlURI) -> bool:
        return self._on_domains(curi.uri)


class NotOnDomainsDecideRule(OnDomainsDecideRule):
    """Applies its decision to URIs NOT on any of ``domains`` (nor their subdomains)."""

    def evaluate(self, curi: CrawlURI) -> bool:
        return not self._on_domains(curi.uri)


class OnHostsParams(PredicatedParams):
    hosts: list[HostEntry] = Field(
        default_factory=list, description="host names (or URIs); only exactly these hosts"
    )


class OnHostsDecideRule(PredicatedDecideRule[OnHostsParams]):
    """Applies its decision to URIs whose host is exactly one of ``hosts`` (any port)."""

    def __init__(self, params: OnHostsParams | None = None) -> None:
        super().__init__(params)
        self._hosts = frozenset(_host_of(entry) for entry in self.params.hosts)

    def _on_hosts(self, uri: str) -> bool:
        try:
            return host_port(uri)[0] in self._hosts
        except UriError:
            return False

    def evaluate(self, curi: CrawlURI) -> bool:
        return self._on_hosts(curi.uri)


class NotOnHostsDecideRule(OnHostsDecideRule):
    """Applies its decision to URIs whose host is none of ``hosts``."""

    def evaluate(self, curi: CrawlURI) -> bool:
        return not self._on_hosts(curi.uri)


class ViaSurtPrefixedParams(PredicatedParams):
    surts_file: str | None = Field(
        None,
        description="file of prefixes, relative to the order's directory, in the "
        "SurtPrefixedDecideRule syntax",
    )
    surts: list[str] = Field(
        default_factory=list, description="more entries (URIs, hosts or '+' SURT directives)"
    )


class ViaSurtPrefixedDecideRule(PredicatedDecideRule[ViaSurtPrefixedParams]):
    """Applies its decision to URIs whose via (the URI they were found on) lies under one of
    its SURT prefixes; seeds (no via) never match. Useful to follow everything linked from a
    set of pages, wherever it leads. :meth:`bind` raises ``OSError`` if ``surts_file`` cannot be
    read. Heritrix counterpart: ``ViaSurtPrefixedDecideRule``."""

    def __init__(self, params: ViaSurtPrefixedParams | None = None) -> None:
        super().__init__(params)
        self.prefixes = SurtPrefixSet()
        self.rejected_entries: list[str] = []
        self.operator_prefixes: tuple[str, ...] = ()

    def bind(self, ctx: RuleContext) -> None:
        prefixes = SurtPrefixSet()
        bad: list[str] = []
        if self.params.surts_file:
            path = os.path.join(ctx.base_dir, self.params.surts_file)
            with open(path, encoding="utf-8") as lines:
                bad += prefixes.import_lines(lines, directives="+")
        bad += prefixes.import_lines(self.params.surts, directives="+")
        self.prefixes = prefixes
        self.rejected_entries = bad

    def evaluate(self, curi: CrawlURI) -> bool:
        via = curi.via
        if not via:
            return False
        try:
            return self.prefixes.matches_uri(via)
        except UriError:
            return False
