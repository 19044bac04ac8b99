"""What the workers of one crawl share about servers and hosts: robots.txt and DNS outcomes.

:class:`~crawler.server_facts.redis_server_facts.RedisServerFacts` is the
:class:`~crawler.servers.ServerFactsShare` of a ``--workers`` crawl, in the crawl's Redis. It is
imported only by who uses it (it imports ``redis``).
"""
