"""CrawlerError: the root of the crawler's own exceptions.

``except CrawlerError`` catches every error the crawler raises on purpose, and nothing else (a
bug's ``KeyError``, a library's exception). Each error keeps the built-in base its callers catch
(``except ValueError`` still catches a :class:`~crawler.urls.UriError`). Raising or catching is
thread-safe; the classes hold no state. The hierarchy (built-in bases in brackets)::

    CrawlerError
    ├── UriError [ValueError]                      crawler.urls
    ├── UniqStateError [RuntimeError]              crawler.uniq.uniq_filter
    ├── FrontierStateError                         crawler.frontier.frontier
    ├── RedisUnavailableError [RuntimeError]       crawler.frontier.redis.redis_conn
    ├── CrawlRegistryError [RuntimeError]          crawler.frontier.redis.redis_registry
    ├── UnreadableCaptureError                     crawler.continuity.earlier_payload
    ├── DigestCodecError [ValueError]              crawler.continuity.digest_codec
    ├── DigestIndexBusyError [OSError]             crawler.continuity.leveldb_digest_index
    ├── YamlTooLargeError [yaml.YAMLError]         crawler.order.bounded_loader
    ├── AddressRefusedError                        crawler.netguard.address_policy
    ├── LuaTranslationError                        crawler.luagen.lua_translator
    ├── OrderError                                 crawler.order.errors
    │   └── CpuAffinityError                       crawler.control.affinity
    ├── CrawlInUseError [OSError]                  crawler.control.crawl_builder
    ├── MetricsPortError                           crawler.metrics.metrics_server
    ├── CrawlArgsError [ValueError]                crawler.cli.commands.crawl
    ├── CronError [ValueError]                     crawler.schedule.cron_schedule
    ├── ReplayError                                crawler.archive.replay
    ├── NothingToPackageError                      crawler.archive.wacz
    ├── NothingToReplayError                       crawler.archive.collection
    ├── IndexFileError                             crawler.archive.cdxj_file
    ├── CdxServerError                             crawler.archive.cdx_server
    ├── UnsupportedWarcError                       crawler.archive.warc_scan
    ├── CollectionSetError                         crawler.archive.collection_set
    ├── ChangeReportError                          crawler.continuity.change_report
    ├── ApiError                                   crawler.console.errors
    ├── NotFoundError [LookupError]                crawler.console.workspace
    ├── BadNameError [ValueError]                  crawler.console.workspace
    ├── XmlAbortError                              processors.extract.safe_xml
    │   └── _SitemapError                          processors.extract.xml_links
    ├── CrawlStoppingError                         processors.fetch.guarded_backend
    ├── CookieFileError [ValueError]               processors.cookies.netscape
    ├── BehaviourFileError [ValueError]            processors.browser.behaviour_script
    ├── ProfileError [ValueError]                  processors.browser.browser_profile
    └── ProfileLoginError [RuntimeError]           processors.browser.profile_login
"""

from __future__ import annotations


class CrawlerError(Exception):
    """Base of every exception the crawler defines (see the module docstring)."""
