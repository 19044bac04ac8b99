"""The Lua scripts of the Redis frontier: every multi-step transition, atomic, keys declared.

Per frontier shard (hash tag ``{<ns>f<n>}``, so a script touches one Cluster slot) the keys are:

==============  ======  ==================================================================
``T r``         zset    ready/snoozed queues: member queue id, score = ms when it may fetch
``T l``         zset    leases: member queue id, score = ms when the lease expires
``T c``         hash    queue id -> ``worker \\n member`` of its in-flight URI
``T s``         hash    counters: queued, succeeded, failed, disregarded, ops, reaped
``T q:<qid>``   zset    a queue's URIs: score directive/precedence, member 8-byte sort key + URI
``T v:<srv>``   hash    a server's politeness: ``a`` fetches in progress, ``nb`` no start before;
                        its adaptive pace (``pace_rule.PACE_FIELDS``): ``g`` gap ms, ``gp``
                        its last peak,
                        ``gr`` ms of the last increase, ``gk`` healthy answers since, ``gs`` the
                        known limit (0: none yet), ``lb`` usual fetch ms, ``iv`` ms between
                        recent answers, ``la`` last answer, ``ss`` slow answers in a row
``T p:<srv>``   zset    queues parked on a server that had no free connection (FIFO by time)
``T o:<srv>``   zset    slots of a server held by fetches outside the frontier (a browser
                        page's sub-resources, :data:`INLINE_ENTER`): member a token, score =
                        ms when the slot is taken back if not given back
``T b``         hash    per queue (for budgets and reports): ``<qid>`` cost spent (against
                        ``queue_total_budget``); ``<qid>\\n`` + ``s``/``f``/``d`` succeeded,
                        failed, disregarded, ``c`` last cost, ``t`` ms of its last finish,
                        ``e`` URIs ever queued, ``q`` the member last queued, ``p`` its
                        queue precedence, ``x`` cost spent this session, ``w`` the
                        politeness delay ms the queue's ready score waits out (0/absent:
                        not a politeness wait; the lateness guard measures fetch starts
                        against it)
``T i``         zset    ineligible queues (precedence at or past ``precedence_floor``): member
                        queue id, score = its precedence
``T n``         zset    inactive queues (eligible, waiting for their turn: Heritrix's "hold
                        queues"): member queue id, score = :func:`~crawler.frontier.policy.
                        eligible_order.eligible_score` (precedence, then ms since inactive)
``T x``         zset    retired queues (spent their total budget): member queue id, score = spent
``T g``         zset    paced servers: member the server's ``T v:<srv>`` key, score = its pace's
                        gap ms (``g``), while above 0 (kept by :func:`mark_paced` wherever the
                        pace changes, so status readings need no scan)
``T k``         zset    held servers: member a ``T p:<srv>`` key, score = the queues parked in
                        it, while any (kept by :func:`mark_parked` wherever a park set changes)
``T h``         zset    hungry workers: member worker id, score = (ms until when it found
                        nothing due in this shard while its threads waited) x 1024 + the
                        number of URIs it held then (capped at 1023)
==============  ======  ==================================================================

Scheduling follows :mod:`crawler.frontier.policy`: a new queue is *inactive* until a worker's
DUE finds fewer due queues than its threads want (and the worker's lateness guard allows one
more active queue): the worker picks the inactive queues first in line across every shard and
its CLAIM activates them; due queues are served lower precedence first, then earlier due time; a
queue the guard rotates out goes back to the inactive set. The decisions whose inputs are all
in the worker (a finished URI's outcome, cost, delay; the guard) are made there and passed in
as arguments; the rules that must be atomic with Redis state (the server cap and holds, the
pace, the budgets, success precedence, the eligible score) are the Lua translation of the
policy's Python functions (:mod:`crawler.luagen`); the Lua written here moves state between
Redis keys and those rules, and keeps what only a shared frontier has (leases, hungry workers).

A queue id is ``<queue key>\\t<server>``: the shard is chosen by the server, so a server's state
and all its queues share a slot and the server cap is checked in the same script that leases.
An in-flight URI stays in its queue until :data:`FINISH` removes it, so a dead worker's URI is
still at the head when :data:`REAP` hands its queue back. Times come from Redis ``TIME``, so
machines with skewed clocks agree.

A FINISH may lease the queue's next URI to the same worker at once (``reclaim``), unless
another worker is hungry in that shard and holds at least two URIs fewer: then the queue goes
back to the ready set for whoever reads it first, so a worker that joins late is not starved by
one that keeps its queues. Workers holding about as many keep theirs: when there are fewer
queues than threads, queues passed back and forth through the ready set would each time wait
for the next read (a worker holding one queue may thus keep it while another holds none).

Batching: each script handles a list of queues (or shards) in one call. On one redis-server the
frontier sends a whole batch, whatever the shards, as one call; on a Cluster it sends one call
per shard (so every call's keys share one slot), pipelined per node. Scripts return plain
arrays; see each script's header.
"""

from __future__ import annotations

from crawler.frontier.policy.eligible_order import ELIGIBLE_SCORE_LUA
from crawler.frontier.policy.pace_rule import PACE_LUA
from crawler.frontier.policy.queue_budgets import QUEUE_BUDGETS_LUA
from crawler.frontier.policy.queue_precedence import SUCCESS_PRECEDENCE_LUA
from crawler.frontier.policy.server_admission import ADMISSION_LUA, HELD_START_LUA
from crawler.uniq.redis_uniq import UNIQ_ADD_LUA

_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local HUNGRY_SCALE = 1024
"""

_BOUNDS = """
-- On one redis-server (not a Cluster) the frontier passes three node-wide keys as the script's
-- last keys: READY_BOUNDS (zset: member a shard's ready key, score a lower bound of its
-- earliest due ms), INACTIVE_BOUNDS (zset: member a shard's inactive key, score a lower bound
-- of its first eligible score) and ACTIVE_COUNTS (hash: field a shard's ready key, value its
-- ready and leased queues; the field + '!' marks it counted). Only DUE adds a bound (the exact
-- value it read); writers only lower existing ones (XX LT), so a bound never exceeds its set's
-- true minimum and a shard without one is read. EMPTY: the set was empty when DUE read it. DUE
-- counts a shard's active queues once (ZCARD) and marks it; every script that adds to or
-- removes from a ready or lease set adds what it changed (count_active, flush_active).
local READY_BOUNDS, INACTIVE_BOUNDS, ACTIVE_COUNTS = nil, nil, nil
local EMPTY = 9007199254740992
local function bounds_from(first)
  if KEYS[first + 2] then
    READY_BOUNDS, INACTIVE_BOUNDS, ACTIVE_COUNTS = KEYS[first], KEYS[first + 1], KEYS[first + 2]
  end
end
local active_delta = {}
local function count_active(ready_key, delta)
  if ACTIVE_COUNTS and delta ~= 0 then
    active_delta[ready_key] = (active_delta[ready_key] or 0) + delta
  end
end
local function flush_active()
  for key, delta in pairs(active_delta) do
    if delta ~= 0 then redis.call('HINCRBY', ACTIVE_COUNTS, key, delta) end
  end
  active_delta = {}
end
local function note_ready(ready_key, score)
  if READY_BOUNDS then redis.call('ZADD', READY_BOUNDS, 'XX', 'LT', score, ready_key) end
end
local function note_inactive(inactive_key, score)
  if INACTIVE_BOUNDS then redis.call('ZADD', INACTIVE_BOUNDS, 'XX', 'LT', score, inactive_key) end
end
"""

_MARKS = (
    _BOUNDS
    + """
local function mark_parked(park_key, held_key)
  local n = redis.call('ZCARD', park_key)
  if n > 0 then redis.call('ZADD', held_key, n, park_key)
  else redis.call('ZREM', held_key, park_key) end
end
local function mark_paced(srv_key, paced_key)
  local g = tonumber(redis.call('HGET', srv_key, 'g') or '0')
  if g > 0 then redis.call('ZADD', paced_key, g, srv_key)
  else redis.call('ZREM', paced_key, srv_key) end
end
"""
)

_WAKE_PARKED = (
    _MARKS
    + """
local function wake_parked(srv_key, park_key, ready_key, max_conn, held_key)
  if redis.call('EXISTS', park_key) == 0 then return end
  local active = tonumber(redis.call('HGET', srv_key, 'a') or '0')
  local nb = tonumber(redis.call('HGET', srv_key, 'nb') or '0')
  local n = 1000000
  if max_conn > 0 then n = max_conn - active end
  if n <= 0 then return end
  local popped = redis.call('ZPOPMIN', park_key, n)
  local at = now
  if nb > at then at = nb end
  local added = 0
  for i = 1, #popped, 2 do added = added + redis.call('ZADD', ready_key, at, popped[i]) end
  count_active(ready_key, added)
  if #popped > 0 then note_ready(ready_key, at) end
  mark_parked(park_key, held_key)
end
"""
)

_CLAIM_FN = (
    _MARKS
    + ADMISSION_LUA
    + ELIGIBLE_SCORE_LUA
    + """
-- K = offset of the queue's keys: ready, lease, cur, stats, queue, server, park, hungry, spent;
-- inactive: the shard's inactive set (rotate and activate only); held_key: its held servers.
-- how: 0 claim a due queue, 1 the same unless it was due after a politeness wait (then the
-- lateness guard rotates it out to the inactive set), 2 activate an inactive queue (the worker
-- chose it: DUE named it) and claim it.
-- Returns {1, member, due ms, politeness delay ms, now} (leased), {2} (rotated out),
-- {0, due_ms} (not yet), or {0} (not due, gone, or no longer inactive).
local function claim(K, qid, worker, lease_ms, max_conn, interval, how, inactive, held_key)
  if how == 2 then
    if redis.call('ZREM', inactive, qid) == 0 then return {0} end
    count_active(KEYS[K + 1], redis.call('ZADD', KEYS[K + 1], now, qid))
    redis.call('HDEL', KEYS[K + 9], qid .. '\\nw')
    redis.call('HSET', KEYS[K + 9], qid .. '\\nx', 0)
  end
  local due = redis.call('ZSCORE', KEYS[K + 1], qid)
  if not due then return {0} end
  due = tonumber(due)
  if due > now then return {0, due} end
  if redis.call('HEXISTS', KEYS[K + 3], qid) == 1 then
    count_active(KEYS[K + 1], -redis.call('ZREM', KEYS[K + 1], qid))
    return {0}
  end
  local head = redis.call('ZRANGE', KEYS[K + 5], 0, 0)
  if #head == 0 then
    count_active(KEYS[K + 1], -redis.call('ZREM', KEYS[K + 1], qid))
    return {0}
  end
  local f = redis.call('HMGET', KEYS[K + 9], qid .. '\\nw', qid .. '\\np')
  local delay = tonumber(f[1] or '0')
  if how == 1 and delay > 0 then
    count_active(KEYS[K + 1], -redis.call('ZREM', KEYS[K + 1], qid))
    redis.call('HDEL', KEYS[K + 9], qid .. '\\nw')
    local score = eligible_score(tonumber(f[2] or '0'), now)
    redis.call('ZADD', inactive, score, qid)
    note_inactive(inactive, score)
    return {2}
  end
  local admitted = admission(KEYS[K + 6], max_conn, interval, false)
  if admitted < 0 then
    count_active(KEYS[K + 1], -redis.call('ZREM', KEYS[K + 1], qid))
    redis.call('ZADD', KEYS[K + 7], 'NX', now, qid)
    mark_parked(KEYS[K + 7], held_key)
    return {0}
  end
  if admitted > 0 then
    count_active(KEYS[K + 1], redis.call('ZADD', KEYS[K + 1], admitted, qid))
    note_ready(KEYS[K + 1], admitted)
    return {0, admitted}
  end
  count_active(KEYS[K + 1], -redis.call('ZREM', KEYS[K + 1], qid))
  count_active(KEYS[K + 1], redis.call('ZADD', KEYS[K + 2], now + lease_ms, qid))
  redis.call('HSET', KEYS[K + 3], qid, worker .. '\\n' .. head[1])
  redis.call('ZREM', KEYS[K + 8], worker)
  return {1, head[1], due, delay, now}
end
"""
)

_SCHEDULE_BODY = (
    """
-- KEYS: g groups (one per shard) of ready, cur, stats, retired, spent, ineligible, inactive;
-- then one queue zset per entry, then (one server) the bound sets (_BOUNDS)
-- ARGV: g, precedence floor, base queue precedence, mode (1: queue precedence is the base plus
-- the best URI precedence it received; 2: FINISH sets it from the successes, a new queue
-- starts at the base; else the base), then (group 1..g, qid, score, member) per entry.
-- Returns 1/0 per entry (added).
-- A URI added to a retired queue stays there without counting as queued (as single-process).
-- A queue whose precedence is at or past the floor is ineligible: it waits in the ineligible
-- set (score = its precedence) and is never handed out. Any other queue neither ready nor
-- leased waits in the inactive set (by precedence, then FIFO) until a CLAIM activates it.
-- A page's links mostly share a few queues: each URI costs its ZADD; the queue's own state
-- (count, last URI, precedence, where it waits) is updated once per queue, with its added
-- URIs' count, the last of them and the best precedence they bring (the same end state as
-- one update per URI: precedences only ever fall).
local g, floor, base = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local highest, kept = ARGV[4] == '1', ARGV[4] == '2'
local out = {}
local added = {}
local touched, order = {}, {}
"""
    + "{entries}"
    + """
bounds_from(7 * g + n + 1)
for i = 1, n do
  local a = e0 + (i - 1) * 4
  local qkey = KEYS[7 * g + i]
  if admitted(i) and redis.call('ZADD', qkey, 'NX', ARGV[a + 2], ARGV[a + 3]) == 1 then
    out[i] = 1
    local prec = base
    if highest then prec = base + tonumber(ARGV[a + 2]) % 256 end
    local t = touched[qkey]
    if t == nil then
      t = {(tonumber(ARGV[a]) - 1) * 7, ARGV[a + 1], 0, prec, ''}
      touched[qkey] = t
      order[#order + 1] = t
    elseif prec < t[4] then
      t[4] = prec
    end
    t[3] = t[3] + 1
    t[5] = ARGV[a + 3]
  else
    out[i] = 0
  end
end
for _, t in ipairs(order) do
  local k, qid, count, prec = t[1], t[2], t[3], t[4]
  redis.call('HINCRBY', KEYS[k + 5], qid .. '\\ne', count)
  redis.call('HSET', KEYS[k + 5], qid .. '\\nq', t[5])
  local old = redis.call('HGET', KEYS[k + 5], qid .. '\\np')
  if old and (kept or tonumber(old) <= prec) then
    prec = tonumber(old)
  else
    redis.call('HSET', KEYS[k + 5], qid .. '\\np', prec)
  end
  if not redis.call('ZSCORE', KEYS[k + 4], qid) then
    added[k] = (added[k] or 0) + count
    if prec >= floor then
      redis.call('ZADD', KEYS[k + 6], prec, qid)
      redis.call('ZREM', KEYS[k + 7], qid)
    else
      redis.call('ZREM', KEYS[k + 6], qid)
      if redis.call('HEXISTS', KEYS[k + 2], qid) == 0
          and not redis.call('ZSCORE', KEYS[k + 1], qid) then
        local score = eligible_score(prec, now)
        redis.call('ZADD', KEYS[k + 7], 'LT', score, qid)
        note_inactive(KEYS[k + 7], score)
      end
    end
  end
end
for k = 0, 7 * (g - 1), 7 do
  redis.call('HINCRBY', KEYS[k + 3], 'queued', added[k] or 0)
  redis.call('HINCRBY', KEYS[k + 3], 'ops', 1)
end
return out
"""
)


SCHEDULE = (
    _NOW
    + _BOUNDS
    + ELIGIBLE_SCORE_LUA
    + _SCHEDULE_BODY.replace(
        "{entries}",
        """
local n, e0 = (#ARGV - 4) / 4, 5
local function admitted(i) return true end
""",
    )
)

RECORD_SCHEDULE = (
    _NOW
    + _BOUNDS
    + ELIGIBLE_SCORE_LUA
    + UNIQ_ADD_LUA
    + _SCHEDULE_BODY.replace(
        "{entries}",
        """
-- RECORD_SCHEDULE (one redis-server, the uniq filter on it): SCHEDULE's KEYS and ARGV with the
-- entry count n in ARGV[5] (entries from ARGV[6]); after them in ARGV a string of n '0'/'1'
-- (1: force-fetch, queued even when recorded already), then the uniq filter's ARGV
-- (UNIQ_ADD_LUA: width, nb, one (bucket, field) per entry); its KEYS after SCHEDULE's. An
-- entry is queued only if it was new to the uniq filter (or forced), in the same step as it is
-- recorded: two workers scheduling one URI at once queue it once, and a worker killed at any
-- point leaves it both recorded and queued or neither.
local n, e0 = tonumber(ARGV[5]), 6
local ub = e0 + 4 * n
local forced = ARGV[ub]
local recorded = uniq_add(7 * g + n + 3, tonumber(ARGV[ub + 2]), tonumber(ARGV[ub + 1]), ub + 3, n)
local function admitted(i) return recorded[i] == 1 or string.byte(forced, i) == 49 end
""",
    )
)

DUE = (
    _NOW
    + _BOUNDS
    + """
-- KEYS: 6 per shard: ready, hungry, lease, spent, inactive, stats, then (one server) the bound
--       sets (_BOUNDS): a shard whose ready bound is later than now has nothing due and is not
--       read (its bound stands for its next due ms); inactive sets are read in the order of
--       their bounds until no later one can hold a queue first in line. Every read sets the
--       shard's bounds to what it found.
-- ARGV: limit, worker, hungry_ms, held, mode (queue precedence policy: 0 base, else the due
--       queues are sorted by precedence), inactive (how many inactive queues to name per
--       shard), cap (this worker's lateness-guard capacity, kept per worker in each shard's
--       stats hash: -2 keep the last one sent, -1 none yet (not counted), else this one),
--       capacity ttl ms (a worker's capacity not sent again within this no longer counts)
-- Returns {now, active queues (ready or snoozed, and leased), the shared cap (the sum of the
-- workers' capacities; -1: none has one), the
-- inactive queues first in line across this call's shards as {(shard index in the call from
-- 1, qid, eligible score)...}: as many as ``inactive`` exceeds the due queues found, then per
-- shard {next due ms or -1, then (qid, precedence, due ms, politeness delay ms) per queue}}:
-- up to ``limit`` queues whose time has come, lower precedence first, then earlier due
-- (crawler.frontier.policy.eligible_order; with mode 0 all share one precedence), and, if
-- fewer, when the next one will. Nothing is activated here: the worker picks the inactive
-- queues to activate across every call (the lowest scores, then queue ids, for the threads
-- the due queues cannot serve, under the cap) and CLAIM activates them, so one decision holds
-- on one server and on a Cluster alike.
-- When the shards of this call have nothing due and no inactive queue, the worker is recorded
-- as hungry in each for ``hungry_ms`` (0: not hungry), with the number of URIs it holds.
local NK = #KEYS - #KEYS % 6
bounds_from(NK + 1)
local limit, worker, hungry_ms = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local held = math.min(tonumber(ARGV[4] or '0'), HUNGRY_SCALE - 1)
local sorted, inactive, cap = ARGV[5] ~= '0', tonumber(ARGV[6]), tonumber(ARGV[7])
if cap ~= -2 then
  for k = 6, NK, 6 do
    redis.call('HSET', KEYS[k], 'cap\\n' .. worker, cap, 'capt\\n' .. worker, now)
  end
end
cap = -2
local capacities = redis.call('HGETALL', KEYS[6])
local since = now - tonumber(ARGV[8] or '0')
for i = 1, #capacities, 2 do
  local f = capacities[i]
  if string.sub(f, 1, 4) == 'cap\\n' then
    local w = string.sub(f, 5)
    local t = tonumber(redis.call('HGET', KEYS[6], 'capt\\n' .. w) or '0')
    local c = tonumber(capacities[i + 1])
    if t < since then
      redis.call('HDEL', KEYS[6], f, 'capt\\n' .. w)
    elseif c >= 0 then
      cap = math.max(cap, 0) + c
    end
  end
end
if cap == -2 then cap = -1 end
local scan = limit
if sorted then scan = limit * 4 end
local function bounds_of(key)
  local b = {}
  if key then
    local known = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
    for i = 1, #known, 2 do b[known[i]] = tonumber(known[i + 1]) end
  end
  return b
end
local ready_bound = bounds_of(READY_BOUNDS)
local counted = {}
if ACTIVE_COUNTS then
  local all = redis.call('HGETALL', ACTIVE_COUNTS)
  for i = 1, #all, 2 do counted[all[i]] = tonumber(all[i + 1]) end
end
local rows = {}
local found, active = 0, 0
for k = 1, NK, 6 do
  local n = counted[KEYS[k]]
  if n == nil or counted[KEYS[k] .. '!'] == nil then
    n = redis.call('ZCARD', KEYS[k]) + redis.call('ZCARD', KEYS[k + 2])
    if ACTIVE_COUNTS then redis.call('HSET', ACTIVE_COUNTS, KEYS[k], n, KEYS[k] .. '!', 1) end
  end
  active = active + n
  local bound = ready_bound[KEYS[k]]
  local due, nxt = {}, -1
  if bound and bound > now then
    if bound < EMPTY then nxt = bound end
  else
    due = redis.call('ZRANGEBYSCORE', KEYS[k], '-inf', now, 'WITHSCORES', 'LIMIT', 0, scan)
    if #due < 2 * scan then
      local first = redis.call('ZRANGEBYSCORE', KEYS[k], '(' .. now, '+inf', 'WITHSCORES',
        'LIMIT', 0, 1)
      if first[2] then nxt = tonumber(first[2]) end
    end
    if READY_BOUNDS then
      local least = EMPTY
      if #due > 0 then least = tonumber(due[2]) elseif nxt >= 0 then least = nxt end
      redis.call('ZADD', READY_BOUNDS, least, KEYS[k])
    end
  end
  local cands = {}
  for i = 1, #due, 2 do
    local f = redis.call('HMGET', KEYS[k + 3], due[i] .. '\\np', due[i] .. '\\nw')
    cands[#cands + 1] = {due[i], tonumber(f[1] or '0'), tonumber(due[i + 1]),
      tonumber(f[2] or '0')}
  end
  if sorted then
    table.sort(cands, function(x, y)
      if x[2] ~= y[2] then return x[2] < y[2] end
      return x[3] < y[3]
    end)
  end
  local row = {nxt}
  for i = 1, math.min(#cands, limit) do
    local c = cands[i]
    row[#row + 1] = c[1]
    row[#row + 1] = c[2]
    row[#row + 1] = c[3]
    row[#row + 1] = c[4]
    found = found + 1
  end
  rows[#rows + 1] = row
end
-- Hold queues: the first in line across the shards, for the threads no due queue serves.
local line = {}
local want = inactive - found
local function first_in_line(x, y)
  if x[3] ~= y[3] then return x[3] < y[3] end
  return x[2] < y[2]
end
if want > 0 then
  -- shards by their bound (unknown first); a shard whose bound is past the want-th queue
  -- found so far cannot hold one of the first ``want``, nor can any after it
  local inactive_bound = bounds_of(INACTIVE_BOUNDS)
  local order = {}
  for k = 1, NK, 6 do
    local b = inactive_bound[KEYS[k + 4]] or -1
    if b < EMPTY then order[#order + 1] = {k, b} end
  end
  table.sort(order, function(x, y)
    if x[2] ~= y[2] then return x[2] < y[2] end
    return x[1] < y[1]
  end)
  for _, o in ipairs(order) do
    local k = o[1]
    if #line >= want then
      table.sort(line, first_in_line)
      if line[want][3] < o[2] then break end
    end
    local heads = redis.call('ZRANGE', KEYS[k + 4], 0, want - 1, 'WITHSCORES')
    for i = 1, #heads, 2 do
      line[#line + 1] = {(k - 1) / 6 + 1, heads[i], tonumber(heads[i + 1])}
    end
    if INACTIVE_BOUNDS then
      redis.call('ZADD', INACTIVE_BOUNDS, heads[2] or EMPTY, KEYS[k + 4])
    end
  end
  table.sort(line, first_in_line)
end
local named = {}
for i = 1, math.min(#line, math.max(want, 0)) do
  named[#named + 1] = line[i][1]
  named[#named + 1] = line[i][2]
  named[#named + 1] = string.format('%d', line[i][3])
  found = found + 1
end
if found == 0 and hungry_ms > 0 then
  -- one member per worker ever hungry here: no pruning needed, readers ignore old scores
  local score = string.format('%d', (now + hungry_ms) * HUNGRY_SCALE + held)
  for k = 2, NK, 6 do redis.call('ZADD', KEYS[k], score, worker) end
end
local out = {now, active, cap, named}
for i = 1, #rows do out[#out + 1] = rows[i] end
return out
"""
)

UNSCHEDULE = (
    _BOUNDS
    + """
-- KEYS: 6 per entry: ready, cur, stats, queue, retired, inactive, then (one server) the node's
-- keys (_BOUNDS);  ARGV: (qid, member) per entry.  Takes back
-- members SCHEDULE added (another worker recorded the URI first). Returns 1/0 per entry
-- (1: it was still queued).
-- A member already handed out stays (it is being fetched; FINISH removes it).
bounds_from(6 * #ARGV / 2 + 1)
local out = {}
for i = 0, #ARGV / 2 - 1 do
  local K, qid, member = i * 6, ARGV[i * 2 + 1], ARGV[i * 2 + 2]
  local cur = redis.call('HGET', KEYS[K + 2], qid)
  if cur and string.sub(cur, -#member - 1) == '\\n' .. member then
    out[#out + 1] = 0
  elseif redis.call('ZREM', KEYS[K + 4], member) == 0 then
    out[#out + 1] = 0
  else
    if not redis.call('ZSCORE', KEYS[K + 5], qid) then
      redis.call('HINCRBY', KEYS[K + 3], 'queued', -1)
    end
    redis.call('HINCRBY', KEYS[K + 3], 'ops', 1)
    if redis.call('ZCARD', KEYS[K + 4]) == 0 and redis.call('HEXISTS', KEYS[K + 2], qid) == 0 then
      count_active(KEYS[K + 1], -redis.call('ZREM', KEYS[K + 1], qid))
      redis.call('ZREM', KEYS[K + 6], qid)
    end
    out[#out + 1] = 1
  end
end
flush_active()
return out
"""
)

CLAIM = (
    _NOW
    + _CLAIM_FN
    + """
-- KEYS: 12 per queue (ready, lease, cur, stats, queue, server, park, hungry, spent, inactive,
--       paced, held), then (one server) the bound sets (_BOUNDS)
-- ARGV: worker, lease_ms, then (qid, max_conn, min_interval_ms, how) per queue; how (see
-- _CLAIM_FN): 0 claim, 1 the lateness guard rotates the queue out if it was due after a
-- politeness wait, 2 activate the inactive queue and claim it.
-- Returns per queue claim()'s answer (see _CLAIM_FN).
local worker, lease_ms = ARGV[1], tonumber(ARGV[2])
bounds_from(12 * (#ARGV - 2) / 4 + 1)
local out = {}
for i = 0, (#ARGV - 2) / 4 - 1 do
  local a, K = 3 + i * 4, i * 12
  out[#out + 1] = claim(K, ARGV[a], worker, lease_ms, tonumber(ARGV[a + 1]),
    tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), KEYS[K + 10], KEYS[K + 12])
end
flush_active()
return out
"""
)

FINISH_ARGS = 20
"""FINISH arguments per queue."""
FINISH_KEYS = 14
"""FINISH keys per queue: the queue's 8, then spent, retired, ineligible, inactive, paced, held."""
FINISH_HEAD = 9
"""FINISH arguments before the first queue's."""

FINISH = (
    _NOW
    + _WAKE_PARKED
    + _CLAIM_FN.removeprefix(_MARKS)
    + PACE_LUA
    + HELD_START_LUA
    + QUEUE_BUDGETS_LUA
    + SUCCESS_PRECEDENCE_LUA
    + """
-- KEYS: 14 per queue (ready, lease, cur, stats, queue, server, park, hungry, spent, retired,
--       ineligible, inactive, paced, held), then (one server) the bound sets (_BOUNDS)
-- ARGV: worker, lease_ms, held (URIs this worker holds besides these), the 6 pace parameters
--       (pace_rule.PARAMS; factor 0: no pace), then per queue: qid,
--       old member, kind (r retry | succeeded | failed | disregarded), new member (retry), new
--       score (retry), delay_ms, backoff_ms, hold_ms, max_conn, reclaim (1: lease the queue's
--       next URI at once if it may be fetched now and no worker hungry in this shard holds two
--       or more URIs fewer), min_interval_ms, then the pace's kind, age and dur
--       (pace_rule.pace_inputs),
--       then cost (charged to the queue's spent) and total budget (-1: none), session budget
--       (``balance_replenish_amount``, 0: none), precedence floor, success-counts base (-1:
--       another queue precedence policy), politeness delay ms (what the lateness guard
--       measures the next fetch start against; 0: the wait is no politeness wait)
-- The decision (kind, cost, delays) is the worker's crawler.frontier.policy.FinishPolicy; this
-- applies it to the shared state.
-- A queue whose spent reaches its total budget is retired: it leaves the ready set, keeps its
-- URIs, and they stop counting as queued. A queue that spent its session budget while another
-- queue of the shard waits inactive is deactivated: it goes to the back of the inactive set
-- (as the work-queue frontier's) and its session starts again when it is activated.
-- With success-counts precedence, a success sets the
-- queue's precedence (success_counts_precedence); at or past the floor the queue waits in the
-- ineligible set instead of the ready set.
-- Returns per queue {0} when this worker no longer held the lease (it expired and was reaped),
-- {1} when finished, {1, member, due, delay, now} when finished and the next URI leased to
-- this worker (claim()), {2}
-- when finished and the queue left to a hungry worker, {3} when finished and retired.
local worker, lease_ms, held = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local P = pace_params(ARGV, 4)
bounds_from(14 * (#ARGV - 9) / 20 + 1)
local hungry_from = string.format('%d', now * HUNGRY_SCALE)
local out = {}
for i = 0, (#ARGV - 9) / 20 - 1 do
  local K, a = i * 14, 10 + i * 20
  local qid = ARGV[a]
  if redis.call('HGET', KEYS[K + 3], qid) ~= worker .. '\\n' .. ARGV[a + 1] then
    out[#out + 1] = {0}
  else
    redis.call('HDEL', KEYS[K + 3], qid)
    count_active(KEYS[K + 1], -redis.call('ZREM', KEYS[K + 2], qid))
    local removed = redis.call('ZREM', KEYS[K + 5], ARGV[a + 1])
    local kind = ARGV[a + 2]
    local ineligible = nil
    if kind == 'r' then
      redis.call('ZADD', KEYS[K + 5], ARGV[a + 4], ARGV[a + 3])
    else
      redis.call('HINCRBY', KEYS[K + 4], 'queued', -removed)
      redis.call('HINCRBY', KEYS[K + 4], kind, 1)
      local n = redis.call('HINCRBY', KEYS[K + 9], qid .. '\\n' .. string.sub(kind, 1, 1), 1)
      local scbase = tonumber(ARGV[a + 18])
      if kind == 'succeeded' and scbase >= 0 then
        local prec = success_counts_precedence(scbase, n)
        redis.call('HSET', KEYS[K + 9], qid .. '\\np', prec)
        if prec >= tonumber(ARGV[a + 17]) then ineligible = prec end
      end
    end
    redis.call('HINCRBY', KEYS[K + 4], 'ops', 1)
    local active = tonumber(redis.call('HGET', KEYS[K + 6], 'a') or '0')
    if active > 0 then redis.call('HSET', KEYS[K + 6], 'a', active - 1) end
    if P.factor > 0 then
      pace(KEYS[K + 6], tonumber(ARGV[a + 11]), tonumber(ARGV[a + 12]), tonumber(ARGV[a + 13]), P)
      mark_paced(KEYS[K + 6], KEYS[K + 13])
    end
    local backoff, hold = tonumber(ARGV[a + 6]), tonumber(ARGV[a + 7])
    if backoff > 0 or hold > 0 then
      local nb = tonumber(redis.call('HGET', KEYS[K + 6], 'nb') or '0')
      redis.call('HSET', KEYS[K + 6], 'nb', held_start(nb, now, backoff, hold))
    end
    local max_conn = tonumber(ARGV[a + 8])
    local row = {1}
    local cost, budget = tonumber(ARGV[a + 14]), tonumber(ARGV[a + 15])
    local spent = tonumber(redis.call('HINCRBY', KEYS[K + 9], qid, cost))
    redis.call('HSET', KEYS[K + 9], qid .. '\\nc', cost, qid .. '\\nt', now)
    local balance = tonumber(ARGV[a + 16])
    local rotate = false
    if balance > 0 then
      local session = tonumber(redis.call('HINCRBY', KEYS[K + 9], qid .. '\\nx', cost))
      rotate = session_spent_out(session, balance) and redis.call('ZCARD', KEYS[K + 12]) > 0
    end
    local left = redis.call('ZCARD', KEYS[K + 5])
    if over_total_budget(spent, budget) then
      count_active(KEYS[K + 1], -redis.call('ZREM', KEYS[K + 1], qid))
      if not redis.call('ZSCORE', KEYS[K + 10], qid) then
        redis.call('HINCRBY', KEYS[K + 4], 'queued', -left)
      end
      redis.call('ZADD', KEYS[K + 10], spent, qid)
      row[1] = 3
    elseif left > 0 and ineligible then
      redis.call('ZADD', KEYS[K + 11], ineligible, qid)
    elseif left > 0 and rotate then
      local prec = tonumber(redis.call('HGET', KEYS[K + 9], qid .. '\\np') or '0')
      local score = eligible_score(prec, now)
      redis.call('ZADD', KEYS[K + 12], score, qid)
      note_inactive(KEYS[K + 12], score)
      redis.call('HDEL', KEYS[K + 9], qid .. '\\nw')
    elseif left > 0 then
      local due = now + tonumber(ARGV[a + 5])
      count_active(KEYS[K + 1], redis.call('ZADD', KEYS[K + 1], due, qid))
      note_ready(KEYS[K + 1], due)
      local polite = tonumber(ARGV[a + 19])
      if polite > 0 then
        redis.call('HSET', KEYS[K + 9], qid .. '\\nw', polite)
      else
        redis.call('HDEL', KEYS[K + 9], qid .. '\\nw')
      end
      local reclaim = ARGV[a + 9] == '1'
      if reclaim then
        local hungry = redis.call('ZRANGEBYSCORE', KEYS[K + 8], hungry_from, '+inf', 'WITHSCORES')
        for j = 1, #hungry, 2 do
          local theirs = tonumber(hungry[j + 1]) % HUNGRY_SCALE
          if hungry[j] ~= worker and theirs + 1 < held then
            reclaim = false
            row[1] = 2
          end
        end
      end
      if reclaim then
        local got = claim(K, qid, worker, lease_ms, max_conn, tonumber(ARGV[a + 10]), 0, nil,
          KEYS[K + 14])
        if got[1] == 1 then row = got end
      end
    end
    wake_parked(KEYS[K + 6], KEYS[K + 7], KEYS[K + 1], max_conn, KEYS[K + 14])
    out[#out + 1] = row
  end
end
flush_active()
return out
"""
)

INLINE_KEYS = 6
"""INLINE_ENTER/INLINE_LEAVE keys: the server's hash, its inline slots, its parked queues, ready,
the shard's paced and held servers."""

_INLINE_EXPIRE = """
-- Slots whose holder never gave them back (a worker killed mid-fetch) are taken back.
local function expire_inline(srv_key, slots_key, park_key, ready_key, max_conn, held_key)
  local dead = redis.call('ZRANGEBYSCORE', slots_key, '-inf', now)
  if #dead == 0 then return end
  redis.call('ZREMRANGEBYSCORE', slots_key, '-inf', now)
  local active = tonumber(redis.call('HGET', srv_key, 'a') or '0') - #dead
  if active < 0 then active = 0 end
  redis.call('HSET', srv_key, 'a', active)
  wake_parked(srv_key, park_key, ready_key, max_conn, held_key)
end
"""

INLINE_ENTER = (
    _NOW
    + _WAKE_PARKED
    + _INLINE_EXPIRE
    + ADMISSION_LUA
    + """
-- KEYS: server, inline slots, park, ready, paced, held (INLINE_KEYS), then (one server) the
-- bound sets (_BOUNDS)
-- ARGV: token, own (1: under a slot the caller's page already holds: only the server's times
--       apply), max_conn, min_interval_ms, slot_ms (how long the slot is kept if not given back)
-- Returns 0 (admitted: a slot taken unless own, the next start pushed by the gap), -1 (no free
-- slot) or the ms to wait for the server's next start (pace, Retry-After or bandwidth hold).
local token, own = ARGV[1], ARGV[2] == '1'
bounds_from(7)
local max_conn, interval = tonumber(ARGV[3]), tonumber(ARGV[4])
expire_inline(KEYS[1], KEYS[2], KEYS[3], KEYS[4], max_conn, KEYS[6])
flush_active()
-- a call repeated after a lost answer (outage retry) finds its slot taken already
if not own and redis.call('ZSCORE', KEYS[2], token) then return 0 end
local admitted = admission(KEYS[1], max_conn, interval, own)
if admitted < 0 then return -1 end
if admitted > 0 then return admitted - now end
if not own then redis.call('ZADD', KEYS[2], now + tonumber(ARGV[5]), token) end
return 0
"""
)

INLINE_LEAVE = (
    _NOW
    + _WAKE_PARKED
    + PACE_LUA
    + HELD_START_LUA
    + """
-- KEYS: server, inline slots, park, ready, paced, held (INLINE_KEYS), then (one server) the
-- bound sets (_BOUNDS)
-- ARGV: token, own, max_conn, the pace's kind, age and dur (pace_rule.pace_inputs), backoff_ms,
--       hold_ms, then
--       the 6 pace parameters (pace_rule.PARAMS; factor 0: no pace)
-- Gives back a slot INLINE_ENTER took (unless own, or already taken back), lets the server's
-- pace learn from the answer, applies a Retry-After back-off and bandwidth hold as FINISH does,
-- and wakes queues parked on the server. Returns 1 if a slot was given back.
local own, max_conn = ARGV[2] == '1', tonumber(ARGV[3])
bounds_from(7)
local freed = 0
if not own and redis.call('ZREM', KEYS[2], ARGV[1]) == 1 then
  freed = 1
  local active = tonumber(redis.call('HGET', KEYS[1], 'a') or '0')
  if active > 0 then redis.call('HSET', KEYS[1], 'a', active - 1) end
end
local P = pace_params(ARGV, 9)
if P.factor > 0 then
  pace(KEYS[1], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), P)
  mark_paced(KEYS[1], KEYS[5])
end
local backoff, hold = tonumber(ARGV[7]), tonumber(ARGV[8])
if backoff > 0 or hold > 0 then
  local nb = tonumber(redis.call('HGET', KEYS[1], 'nb') or '0')
  redis.call('HSET', KEYS[1], 'nb', held_start(nb, now, backoff, hold))
end
wake_parked(KEYS[1], KEYS[3], KEYS[4], max_conn, KEYS[6])
flush_active()
return freed
"""
)

REAP = (
    _NOW
    + _WAKE_PARKED
    + """
-- KEYS: ready, lease, cur, stats, queue, server, park, hungry, paced, held, then (one server)
-- the bound sets (_BOUNDS);  ARGV: qid, max_conn
-- Hands an expired lease's queue back (its URI is still at the head). Returns 1 if reaped.
local qid = ARGV[1]
bounds_from(11)
local exp = redis.call('ZSCORE', KEYS[2], qid)
if not exp or tonumber(exp) > now then return 0 end
count_active(KEYS[1], -redis.call('ZREM', KEYS[2], qid))
redis.call('HDEL', KEYS[3], qid)
redis.call('HINCRBY', KEYS[4], 'reaped', 1)
redis.call('HINCRBY', KEYS[4], 'ops', 1)
local active = tonumber(redis.call('HGET', KEYS[6], 'a') or '0')
if active > 0 then redis.call('HSET', KEYS[6], 'a', active - 1) end
if redis.call('ZCARD', KEYS[5]) > 0 then
  count_active(KEYS[1], redis.call('ZADD', KEYS[1], now, qid))
  note_ready(KEYS[1], now)
end
wake_parked(KEYS[6], KEYS[7], KEYS[1], tonumber(ARGV[2]), KEYS[10])
flush_active()
return 1
"""
)

RENEW = (
    _NOW
    + """
-- KEYS: lease, cur;  ARGV: worker, lease_ms, qid...   Returns how many leases were renewed.
local prefix = ARGV[1] .. '\\n'
local until_ms = now + tonumber(ARGV[2])
local renewed = 0
for i = 3, #ARGV do
  local cur = redis.call('HGET', KEYS[2], ARGV[i])
  if cur and string.sub(cur, 1, #prefix) == prefix then
    redis.call('ZADD', KEYS[1], 'XX', until_ms, ARGV[i])
    renewed = renewed + 1
  end
end
return renewed
"""
)

SHARD_STATE = (
    _NOW
    + """
-- KEYS: 6 per shard: ready, lease, stats, retired, ineligible, inactive.  Returns per shard
-- {now, queued, ops, succeeded, failed, disregarded, reaped, ready-now, snoozed, in-process,
-- next due ms or -1, next lease expiry or -1, retired queues, ineligible queues, inactive}.
local rows = {}
for K = 0, #KEYS - 6, 6 do
  local s = redis.call('HMGET', KEYS[K + 3], 'queued', 'ops', 'succeeded', 'failed',
    'disregarded', 'reaped')
  local out = {now}
  for i = 1, 6 do out[#out + 1] = tonumber(s[i] or '0') end
  local ready = redis.call('ZCOUNT', KEYS[K + 1], '-inf', now)
  out[#out + 1] = ready
  out[#out + 1] = redis.call('ZCARD', KEYS[K + 1]) - ready
  out[#out + 1] = redis.call('ZCARD', KEYS[K + 2])
  local first = redis.call('ZRANGE', KEYS[K + 1], 0, 0, 'WITHSCORES')
  out[#out + 1] = first[2] and tonumber(first[2]) or -1
  local lease = redis.call('ZRANGE', KEYS[K + 2], 0, 0, 'WITHSCORES')
  out[#out + 1] = lease[2] and tonumber(lease[2]) or -1
  out[#out + 1] = redis.call('ZCARD', KEYS[K + 4])
  out[#out + 1] = redis.call('ZCARD', KEYS[K + 5])
  out[#out + 1] = redis.call('ZCARD', KEYS[K + 6])
  rows[#rows + 1] = out
end
return rows
"""
)

INACTIVE_BY_PRECEDENCE = (
    ELIGIBLE_SCORE_LUA
    + """
-- KEYS: 2 per shard: ineligible (score = precedence), inactive (score = eligible_score).
-- Returns {precedence, queues, ...} of every key in turn: one ZRANGEBYSCORE and one ZCOUNT per
-- precedence present in a key, never its members (every worker reads this for its status each
-- second, and a key may hold millions of queues).
local out = {}
local function walk(key, precedence_of, lowest_score)
  local from = '-inf'
  while true do
    local first = redis.call('ZRANGEBYSCORE', key, from, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
    if #first == 0 then return end
    local prec = precedence_of(tonumber(first[2]))
    local upto = string.format('%.17g', lowest_score(prec + 1))
    out[#out + 1] = prec
    out[#out + 1] = redis.call('ZCOUNT', key, string.format('%.17g', lowest_score(prec)),
      '(' .. upto)
    from = upto
  end
end
local function same(n) return n end
local function first_score(prec) return eligible_score(prec, 0) end
for K = 1, #KEYS, 2 do
  walk(KEYS[K], same, same)
  walk(KEYS[K + 1], score_precedence, first_score)
end
return out
"""
)

QUEUE_LIST = (
    _NOW
    + """
-- KEYS: ready, lease, retired, ineligible, inactive of one shard.  Returns {now, ready {qid,
-- due ms}..., leased {qid}..., retired {qid}..., ineligible {qid, precedence}..., inactive
-- {qid}...} (flat arrays) for the frontier report (not the hot path).
local function flat(key, scores)
  if scores then return redis.call('ZRANGE', key, 0, -1, 'WITHSCORES') end
  return redis.call('ZRANGE', key, 0, -1)
end
return {now, flat(KEYS[1], true), flat(KEYS[2], false), flat(KEYS[3], false),
  flat(KEYS[4], true), flat(KEYS[5], false)}
"""
)

QUEUE_DETAIL = """
-- KEYS: 2 per queue: queue, spent;  ARGV: qid per queue.  Returns per queue {size, head
-- member or '', spent, succeeded, failed, disregarded, last cost, last finish ms, enqueues,
-- last queued member or '', queue precedence or -1, session spent} for the frontier report.
local rows = {}
for i = 1, #ARGV do
  local q, b, qid = KEYS[2 * i - 1], KEYS[2 * i], ARGV[i]
  local head = redis.call('ZRANGE', q, 0, 0)
  local f = redis.call('HMGET', b, qid, qid .. '\\ns', qid .. '\\nf', qid .. '\\nd',
    qid .. '\\nc', qid .. '\\nt', qid .. '\\ne', qid .. '\\nq', qid .. '\\np',
    qid .. '\\nx')
  local row = {redis.call('ZCARD', q), head[1] or ''}
  for j = 1, 7 do row[#row + 1] = tonumber(f[j] or '0') end
  row[#row + 1] = f[8] or ''
  row[#row + 1] = tonumber(f[9] or '-1')
  row[#row + 1] = tonumber(f[10] or '0')
  rows[#rows + 1] = row
end
return rows
"""
