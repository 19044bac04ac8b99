"""The frontier's decisions, as plain functions and small policy objects every store calls.

* :mod:`~crawler.frontier.policy.finish_policy`: a finished URI's outcome (retry, success,
  failure, disregarded), its cost to the queue's budgets and the queue's wait;
* :mod:`~crawler.frontier.policy.queue_budgets`: when a queue is retired (total budget) or
  ends its session (session budget);
* :mod:`~crawler.frontier.policy.queue_precedence`: success-count precedence and the precedence
  modes the Redis scripts take;
* :mod:`~crawler.frontier.policy.server_admission`: the server cap and parking rule;
* :mod:`~crawler.frontier.policy.pace_rule`: the adaptive pace in the Redis scripts (its
  arithmetic is :func:`~crawler.frontier.politeness.server_pace.pace_step`);
* :mod:`~crawler.frontier.policy.lateness_guard`: the hosts in rotation the threads can serve
  on time, learned from fetch times and lateness (Redis keeps only each worker's figure and
  sums them);
* :mod:`~crawler.frontier.policy.eligible_order`: the order eligible queues are served in.

The LevelDB and memory stores keep what the
:class:`~crawler.frontier.workqueue_frontier.WorkQueueFrontier` decides; the Redis store's Lua
does only what must be atomic in Redis, with these decisions' results passed as arguments, or
runs the rules that must be atomic with Redis state (server admission and holds, the pace,
budgets, success-count precedence, the eligible score) as the Lua translation of the same
Python functions (:mod:`~crawler.luagen`): no rule is written twice.
``tests/contracts/test_policy_parity.py`` feeds every store the same traces.
"""
