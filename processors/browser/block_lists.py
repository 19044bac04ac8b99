"""The bundled block lists an order names in ``browser.block_lists``: small, hand-kept lists of
hosts (each with its subdomains) that only serve ads, tracking or analytics, so a page's capture
loses nothing a reader looks at when they are left out. Off unless named."""

from __future__ import annotations

BLOCK_LISTS: dict[str, tuple[str, ...]] = {
    "ads": (
        "2mdn.net",
        "adnxs.com",
        "adsafeprotected.com",
        "adservice.google.com",
        "adsrvr.org",
        "amazon-adsystem.com",
        "bat.bing.com",
        "chartbeat.com",
        "criteo.com",
        "criteo.net",
        "doubleclick.net",
        "google-analytics.com",
        "googleadservices.com",
        "googlesyndication.com",
        "googletagmanager.com",
        "googletagservices.com",
        "hotjar.com",
        "moatads.com",
        "outbrain.com",
        "pubmatic.com",
        "quantserve.com",
        "rubiconproject.com",
        "scorecardresearch.com",
        "taboola.com",
        "connect.facebook.net",
        "analytics.twitter.com",
        "ads-twitter.com",
    ),
}
"""List name -> hosts; a host blocks itself and every subdomain."""
