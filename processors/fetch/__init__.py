"""Fetch processors: FetchDNS (dns:), FetchHTTP (http/https) and what they share."""

from processors.fetch.credentials import Credential
from processors.fetch.fetch_dns import FetchDNS, FetchDNSParams
from processors.fetch.fetch_http import FetchHTTP
from processors.fetch.fetch_http_params import FetchHTTPParams
from processors.fetch.user_agent import user_agent

__all__ = [
    "Credential",
    "FetchDNS",
    "FetchDNSParams",
    "FetchHTTP",
    "FetchHTTPParams",
    "user_agent",
]
