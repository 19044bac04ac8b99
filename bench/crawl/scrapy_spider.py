"""The Scrapy peer of the crawl benchmark: follow every in-corpus link and page requisite.

Run by the benchmark with the Scrapy virtual environment::

    scrapy runspider bench/crawl/scrapy_spider.py -a starts=URL,URL -a out=DIR [-s JOBDIR=...]

Follows ``a/@href``, ``img/@src``, ``link/@href`` and ``script/@src`` of HTML responses (the
same semantics as the ground-truth walker in ``linkgraph.py``) when the URL's origin
(scheme://host:port) is one of the start URLs' origins, and writes every response body to
``out/<sha1 of the URL>``. Scrapy's own duplicate filter keeps a URL from being fetched twice.
Concurrency and politeness are set below to match the other peers: 16 requests at a time, all
allowed on one host, no delay, robots.txt ignored.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy.http import Response, TextResponse

_SELECTOR = "a::attr(href), img::attr(src), link::attr(href), script::attr(src)"


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


class BenchSpider(scrapy.Spider):
    name = "bench"
    custom_settings = {
        "CONCURRENT_REQUESTS": 16,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 16,
        "CONCURRENT_REQUESTS_PER_IP": 0,
        "DOWNLOAD_DELAY": 0,
        "RANDOMIZE_DOWNLOAD_DELAY": False,
        "AUTOTHROTTLE_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "INFO",
        "LOGSTATS_INTERVAL": 10,
        "USER_AGENT": "bench-scrapy (+http://127.0.0.1/)",
    }

    def __init__(self, starts: str = "", out: str = "scrapy-out", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = [u for u in starts.split(",") if u]
        self.origins = {_origin(u) for u in self.start_urls}
        self.out = out
        os.makedirs(out, exist_ok=True)

    async def start(self) -> AsyncIterator[Any]:
        # Unlike Scrapy's default start requests, these go through the duplicate filter, so a
        # start page that other pages link to is not fetched twice.
        for url in self.start_urls:
            yield scrapy.Request(url, callback=self.parse)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[scrapy.Request]:
        name = hashlib.sha1(response.url.encode()).hexdigest()
        with open(os.path.join(self.out, name), "wb") as fh:
            fh.write(response.body)
        if not isinstance(response, TextResponse):
            return
        ctype = response.headers.get(b"Content-Type", b"").split(b";")[0].strip().lower()
        if ctype not in (b"text/html", b"application/xhtml+xml"):
            return
        for href in response.css(_SELECTOR).getall():
            href = href.strip()
            if not href or href.startswith("#"):
                continue
            url = response.urljoin(href)
            if _origin(url) in self.origins:
                yield scrapy.Request(url, callback=self.parse)
