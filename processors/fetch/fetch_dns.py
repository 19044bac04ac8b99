"""FetchDNS: resolve ``dns:<host>`` prerequisites into the ServerCache.

The PreconditionEnforcer defers a URI whose host was never looked up (or whose lookup is older
than its ``ip_validity_s``) behind a ``dns:<host>`` prerequisite in the same queue; this
processor answers it with ``socket.getaddrinfo`` (the system resolver) run on a small thread
pool, so a hung resolver costs at most ``timeout_s`` (the stuck lookup keeps one pool thread until
the OS gives up). With ``nameservers`` set (``["127.0.0.1:5353"]``) the lookups go to those DNS
servers instead (:class:`NameserverResolver`, dnspython), and the records carry their TTLs.

Success: status 1, the host's preferred address (first IPv4, else first IPv6) stored with
``ServerCache.update_host``, and a recording whose body, like Heritrix's, is the 14-digit lookup
time then one zone-file line per address (``host.<TAB>ttl<TAB>IN<TAB>A|AAAA<TAB>address``; the
system resolver reports no TTL, so the column is 0 unless ``nameservers`` is set), content type
``text/dns``, written to the WARC as a ``response`` record. No address (or a resolver timeout):
status -1, retried by the frontier; the host is marked looked-up without an address so its URIs
get -6 meanwhile. An IP literal needs no lookup: status 1, no recording, the IP cached for good.
A malformed name: -7.

Reads ``curi.uri``; writes ``status``, ``content_type``, ``content_size``, ``payload_digest``,
``fetch_start_ms``, ``fetch_duration_ms``, ``recording``, annotations ``err=…``. Thread-safe (the
pool and the ServerCache are). Starting enabled sets ``ServerCache.resolver_active``, which turns
on ``dns:`` prerequisites; disable this processor to let FetchHTTP resolve names itself.
Heritrix counterpart: ``org.archive.modules.fetcher.FetchDNS`` (dnsjava A lookups there).
"""

from __future__ import annotations

import contextlib
import ipaddress
import math
import socket
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from pydantic import Field, field_validator

from crawler import CrawlURI, FetchStatus, Params, Processor, ProcessorContext, Recording
from processors.fetch.nameserver_resolver import NameserverResolver, parse_nameserver

DNS_CONTENT_TYPE = "text/dns"
_MAX_HOST_CHARS = 253


class FetchDNSParams(Params):
    """Parameters of :class:`FetchDNS`."""

    timeout_s: float = Field(10, gt=0, description="longest wait for one lookup (then -1)")
    max_parallel_lookups: int = Field(
        4, ge=1, description="resolver threads; lookups beyond these wait their turn"
    )
    nameservers: list[str] = Field(
        default_factory=list,
        description="DNS servers to ask (IP[:port]); empty: the system resolver",
    )

    @field_validator("nameservers")
    @classmethod
    def _valid_nameservers(cls, value: list[str]) -> list[str]:
        for spec in value:
            parse_nameserver(spec)  # ValueError names the bad entry
        return value


def _addresses(infos: Sequence[tuple[object, ...]]) -> list[str]:
    """Unique addresses of a getaddrinfo answer, in the resolver's order."""
    seen: dict[str, None] = {}
    for info in infos:
        sockaddr = info[4]
        if isinstance(sockaddr, tuple) and sockaddr:
            seen.setdefault(str(sockaddr[0]), None)
    return list(seen)


def _preferred(addresses: list[str]) -> str:
    """The first IPv4 address (Heritrix looks up A records only), else the first IPv6."""
    for address in addresses:
        if ":" not in address:
            return address
    return addresses[0]


def dns_body(
    host: str, addresses: list[str], now_s: float, ttls: Sequence[int] | None = None
) -> bytes:
    """The recorded lookup: ``yyyymmddhhmmss`` then a zone-file line per address."""
    lines = [time.strftime("%Y%m%d%H%M%S", time.gmtime(now_s))]
    for i, address in enumerate(addresses):
        kind = "AAAA" if ":" in address else "A"
        ttl = ttls[i] if ttls is not None else 0
        lines.append(f"{host}.\t{ttl}\tIN\t{kind}\t{address}")
    return ("\n".join(lines) + "\n").encode("ascii", "replace")


class FetchDNS(Processor[FetchDNSParams]):
    """Resolves ``dns:`` URIs and caches the answers in ``ctx.servers``."""

    _pool: ThreadPoolExecutor | None = None
    _resolver: NameserverResolver | None = None

    def should_process(self, curi: CrawlURI) -> bool:
        return curi.uri[:4].lower() == "dns:"

    def start(self, ctx: ProcessorContext) -> None:
        super().start(ctx)
        self._pool = ThreadPoolExecutor(
            self.params.max_parallel_lookups, thread_name_prefix=f"{self.name}-resolver"
        )
        if self.params.nameservers:
            self._resolver = NameserverResolver(self.params.nameservers)
        if self.enabled:
            ctx.servers.resolver_active = True

    def stop(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            with contextlib.suppress(Exception):
                pool.shutdown(wait=False, cancel_futures=True)

    def inner_process(self, curi: CrawlURI) -> None:
        ctx = self.context
        pool = self._pool
        if pool is None:
            raise RuntimeError(f"processor {self.name!r} used after stop()")
        host = curi.uri[4:].strip().lower().rstrip(".")
        now_s = ctx.clock.time()
        curi.fetch_start_ms = int(now_s * 1000)
        try:
            literal = ipaddress.ip_address(host.strip("[]"))
        except ValueError:
            pass
        else:
            ctx.servers.update_host(host, str(literal), now_s, math.inf)
            curi.status = FetchStatus.DNS_SUCCESS
            curi.fetch_duration_ms = 0
            return
        if not host or len(host) > _MAX_HOST_CHARS or any(c in host for c in "/@ \t\r\n[]"):
            curi.status = FetchStatus.UNFETCHABLE_URI
            return
        began = time.monotonic()
        ttls: list[int] | None = None
        try:
            if self._resolver is not None:
                answers = pool.submit(self._resolver.lookup, host, self.params.timeout_s).result(
                    self.params.timeout_s + 1
                )
                addresses, ttls = [a for a, _ in answers], [t for _, t in answers]
            else:
                future = pool.submit(socket.getaddrinfo, host, None, 0, socket.SOCK_STREAM)
                addresses = _addresses(future.result(self.params.timeout_s))
        except (OSError, UnicodeError, FutureTimeout) as exc:
            # gaierror (no such name, no network) is an OSError; a timeout leaves the lookup
            # running in its pool thread.
            addresses = []
            curi.annotate(f"err={type(exc).__name__}")
        finally:
            curi.fetch_duration_ms = int((time.monotonic() - began) * 1000)
        if not addresses:
            ctx.servers.update_host(host, None, now_s, 0.0)
            curi.status = FetchStatus.DOMAIN_UNRESOLVABLE
            return
        ctx.servers.update_host(host, _preferred(addresses), now_s, 0.0)
        body = dns_body(host, addresses, now_s, ttls)
        rec = Recording(len(body) + 1)
        rec.write_body(body)
        curi.close_recording()
        curi.recording = rec
        curi.status = FetchStatus.DNS_SUCCESS
        curi.content_type = DNS_CONTENT_TYPE
        curi.content_size = rec.body_size
        curi.payload_digest = rec.payload_digest
