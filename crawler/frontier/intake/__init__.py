"""How a new URI joins a work queue of the work-queue frontier.

* :mod:`~crawler.frontier.intake.intake`: FrontierIntake, from a scheduled CrawlURI to its queue
  (canonical key, uniq filter, ordinal, store);
* :mod:`~crawler.frontier.intake.preparer`: FrontierPreparer, the canonical key, URI precedence
  and queue key a URI needs first;
* :mod:`~crawler.frontier.intake.precedence`: the cost, URI precedence and queue precedence
  policies the order chooses by name;
* :mod:`~crawler.frontier.intake.recently_seen`: RecentlySeen, which of a page's links surely
  were seen, before their scope (both frontiers call it).

Nothing is imported here.
"""
