"""Fetch processors: FetchHTTP (http/https) and the User-Agent helper they share."""

from processors.fetch.fetch_http import FetchHTTP, FetchHTTPParams
from processors.fetch.user_agent import user_agent

__all__ = ["FetchHTTP", "FetchHTTPParams", "user_agent"]
