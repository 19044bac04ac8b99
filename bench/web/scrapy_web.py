"""The Scrapy peer on the synthetic web: the same politeness as the crawler's order.

Run by ``run_scrapy.py`` with the Scrapy virtual environment (``make bench-crawl-setup``)::

    scrapy runspider bench/web/scrapy_web.py -a starts_file=seeds.txt -a out=DIR \
        -s CLOSESPIDER_TIMEOUT=240

Follows ``a/@href``, ``img/@src``, ``link/@href`` of HTML responses under ``web.test``, writes
every body to ``out/<sha1 of the URL>`` (Scrapy writes no WARC). Politeness as the crawler's:
one request at a time per host, ``DOWNLOAD_DELAY`` 2 s randomized to 1-3 s, robots.txt obeyed;
300 requests at a time in all. Names are resolved by asking dnsmasq (``DNS_SERVER``, default
127.0.0.1:5353) with dnspython (installed in the Scrapy environment by ``run_scrapy.py``), through
``-s TWISTED_DNS_RESOLVER=scrapy_web.LocalResolver`` (a process-level setting).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urlsplit

import dns.nameserver
import dns.resolver
import scrapy
from scrapy.http import Response, TextResponse
from scrapy.resolver import CachingThreadedResolver
from twisted.internet import threads

_SELECTOR = "a::attr(href), img::attr(src), link::attr(href)"
_DNS = os.environ.get("DNS_SERVER", "127.0.0.1:5353")


class LocalResolver(CachingThreadedResolver):
    """Scrapy's caching resolver, asking the bench's dnsmasq instead of the system."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        host, _, port = _DNS.partition(":")
        self._dns = dns.resolver.Resolver(configure=False)
        self._dns.nameservers = [dns.nameserver.Do53Nameserver(host, int(port or 53))]
        self._cache: dict[str, str] = {}

    def _lookup(self, name: str | bytes) -> str:
        text = name.decode("idna") if isinstance(name, bytes) else name
        answer = self._dns.resolve(text.rstrip(".") + ".", "A", lifetime=10, search=False)
        return str(answer[0].address)

    def getHostByName(self, name: str, timeout: Any = ()) -> Any:  # noqa: N802 (Twisted's name)
        if name in self._cache:
            from twisted.internet import defer

            return defer.succeed(self._cache[name])
        d = threads.deferToThreadPool(
            self.reactor, self.reactor.getThreadPool(), self._lookup, name
        )

        def keep(address: str) -> str:
            self._cache[name] = address
            return address

        return d.addCallback(keep)


class WebSpider(scrapy.Spider):
    name = "web"
    custom_settings = {
        "CONCURRENT_REQUESTS": 300,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "CONCURRENT_REQUESTS_PER_IP": 0,
        "DOWNLOAD_DELAY": 2.0,
        "RANDOMIZE_DOWNLOAD_DELAY": True,
        "AUTOTHROTTLE_ENABLED": False,
        "ROBOTSTXT_OBEY": True,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "INFO",
        "LOGSTATS_INTERVAL": 10,
        "USER_AGENT": "bench-scrapy (+https://crawler.web.test/)",
    }

    def __init__(self, starts_file: str = "", out: str = "scrapy-out", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with open(starts_file) as fh:
            self.start_urls = [line.strip() for line in fh if line.strip()]
        self.out = out
        os.makedirs(out, exist_ok=True)

    async def start(self) -> AsyncIterator[Any]:
        for url in self.start_urls:
            yield scrapy.Request(url, callback=self.parse)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[scrapy.Request]:
        name = hashlib.sha1(response.url.encode()).hexdigest()
        with open(os.path.join(self.out, name), "wb") as fh:
            fh.write(response.body)
        if not isinstance(response, TextResponse):
            return
        ctype = response.headers.get(b"Content-Type", b"").split(b";")[0].strip().lower()
        if ctype != b"text/html":
            return
        for href in response.css(_SELECTOR).getall():
            href = href.strip()
            if not href or href.startswith("#"):
                continue
            url = response.urljoin(href)
            if (urlsplit(url).hostname or "").endswith(".web.test"):
                yield scrapy.Request(url, callback=self.parse)
