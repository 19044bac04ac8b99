"""The Lua scripts of the Redis frontier: every multi-step transition, atomic, keys declared.

Per frontier shard (hash tag ``{<ns>f<n>}``, so a script touches one Cluster slot) the keys are:

==============  ======  ==================================================================
``T r``         zset    ready/snoozed queues: member queue id, score = ms when it may fetch
``T l``         zset    leases: member queue id, score = ms when the lease expires
``T c``         hash    queue id -> ``worker \\n member`` of its in-flight URI
``T s``         hash    counters: queued, succeeded, failed, disregarded, ops, reaped
``T q:<qid>``   zset    a queue's URIs: score directive/precedence, member 8-byte sort key + URI
``T v:<srv>``   hash    a server's politeness: ``a`` fetches in progress, ``nb`` no start before
``T p:<srv>``   zset    queues parked on a server that had no free connection (FIFO by time)
==============  ======  ==================================================================

A queue id is ``<queue key>\\t<server>``: the shard is chosen by the server, so a server's state
and all its queues share a slot and the server cap is checked in the same script that leases.
An in-flight URI stays in its queue until :data:`FINISH` removes it, so a dead worker's URI is
still at the head when :data:`REAP` hands its queue back. Times come from Redis ``TIME``, so
machines with skewed clocks agree. Scripts return plain arrays; see each script's header.
"""

from __future__ import annotations

_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""

_WAKE_PARKED = """
local function wake_parked(srv_key, park_key, ready_key, now, max_conn)
  local active = tonumber(redis.call('HGET', srv_key, 'a') or '0')
  local nb = tonumber(redis.call('HGET', srv_key, 'nb') or '0')
  local n = 1000000
  if max_conn > 0 then n = max_conn - active end
  if n <= 0 then return end
  local popped = redis.call('ZPOPMIN', park_key, n)
  local at = now
  if nb > at then at = nb end
  for i = 1, #popped, 2 do redis.call('ZADD', ready_key, at, popped[i]) end
end
"""

SCHEDULE = (
    _NOW
    + """
-- KEYS: ready, cur, stats, then one queue zset per entry
-- ARGV: n, then (qid, score, member) per entry. Returns how many were added.
local n = tonumber(ARGV[1])
local added = 0
for i = 1, n do
  local qid = ARGV[2 + (i - 1) * 3]
  local score = ARGV[3 + (i - 1) * 3]
  local member = ARGV[4 + (i - 1) * 3]
  if redis.call('ZADD', KEYS[3 + i], 'NX', score, member) == 1 then
    added = added + 1
    if redis.call('HEXISTS', KEYS[2], qid) == 0 then
      redis.call('ZADD', KEYS[1], 'NX', now, qid)
    end
  end
end
redis.call('HINCRBY', KEYS[3], 'queued', added)
redis.call('HINCRBY', KEYS[3], 'ops', 1)
return added
"""
)

DUE = (
    _NOW
    + """
-- KEYS: ready;  ARGV: limit.  Returns {now, next due ms or -1, qid...}: up to ``limit`` queues
-- whose time has come (earliest first) and, if fewer, when the next one will.
local limit = tonumber(ARGV[1])
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, limit)
local nxt = -1
if #due < limit then
  local first = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES',
    'LIMIT', 0, 1)
  if first[2] then nxt = tonumber(first[2]) end
end
local out = {now, nxt}
for i = 1, #due do out[#out + 1] = due[i] end
return out
"""
)

UNSCHEDULE = """
-- KEYS: ready, cur, stats, queue;  ARGV: qid, member.  Takes back a member SCHEDULE added
-- (another worker recorded the URI first). Returns 1 if it was still queued.
if redis.call('ZREM', KEYS[4], ARGV[2]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[3], 'queued', -1)
redis.call('HINCRBY', KEYS[3], 'ops', 1)
if redis.call('ZCARD', KEYS[4]) == 0 and redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then
  redis.call('ZREM', KEYS[1], ARGV[1])
end
return 1
"""

CLAIM = (
    _NOW
    + """
-- KEYS: ready, lease, cur, stats, queue, server, park
-- ARGV: qid, worker, lease_ms, max_conn, min_interval_ms
-- Returns {1, member} (leased), {0, due_ms} (not yet), or {0} (nothing to hand out here).
local qid = ARGV[1]
local due = redis.call('ZSCORE', KEYS[1], qid)
if not due then return {0} end
due = tonumber(due)
if due > now then return {0, due} end
if redis.call('HEXISTS', KEYS[3], qid) == 1 then
  redis.call('ZREM', KEYS[1], qid)
  return {0}
end
local head = redis.call('ZRANGE', KEYS[5], 0, 0)
if #head == 0 then
  redis.call('ZREM', KEYS[1], qid)
  return {0}
end
local max_conn = tonumber(ARGV[4])
local active = tonumber(redis.call('HGET', KEYS[6], 'a') or '0')
if max_conn > 0 and active >= max_conn then
  redis.call('ZREM', KEYS[1], qid)
  redis.call('ZADD', KEYS[7], 'NX', now, qid)
  return {0}
end
local nb = tonumber(redis.call('HGET', KEYS[6], 'nb') or '0')
if now < nb then
  redis.call('ZADD', KEYS[1], nb, qid)
  return {0, nb}
end
redis.call('ZREM', KEYS[1], qid)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), qid)
redis.call('HSET', KEYS[3], qid, ARGV[2] .. '\\n' .. head[1])
redis.call('HINCRBY', KEYS[6], 'a', 1)
local interval = tonumber(ARGV[5])
if interval > 0 then redis.call('HSET', KEYS[6], 'nb', now + interval) end
return {1, head[1]}
"""
)

FINISH = (
    _NOW
    + _WAKE_PARKED
    + """
-- KEYS: ready, lease, cur, stats, queue, server, park
-- ARGV: qid, worker, old member, kind (r retry | succeeded | failed | disregarded),
--       new member (retry), new score (retry), delay_ms, backoff_ms, hold_ms, max_conn
-- Returns 1, or 0 when this worker no longer holds the lease (it expired and was reaped).
local qid = ARGV[1]
if redis.call('HGET', KEYS[3], qid) ~= ARGV[2] .. '\\n' .. ARGV[3] then return 0 end
redis.call('HDEL', KEYS[3], qid)
redis.call('ZREM', KEYS[2], qid)
redis.call('ZREM', KEYS[5], ARGV[3])
local kind = ARGV[4]
if kind == 'r' then
  redis.call('ZADD', KEYS[5], ARGV[6], ARGV[5])
else
  redis.call('HINCRBY', KEYS[4], 'queued', -1)
  redis.call('HINCRBY', KEYS[4], kind, 1)
end
redis.call('HINCRBY', KEYS[4], 'ops', 1)
local active = tonumber(redis.call('HGET', KEYS[6], 'a') or '0')
if active > 0 then redis.call('HSET', KEYS[6], 'a', active - 1) end
local nb = tonumber(redis.call('HGET', KEYS[6], 'nb') or '0')
local backoff = tonumber(ARGV[8])
if backoff > 0 and now + backoff > nb then nb = now + backoff end
local hold = tonumber(ARGV[9])
if hold > 0 then
  if nb < now then nb = now end
  nb = nb + hold
end
if backoff > 0 or hold > 0 then redis.call('HSET', KEYS[6], 'nb', nb) end
if redis.call('ZCARD', KEYS[5]) > 0 then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[7]), qid)
end
wake_parked(KEYS[6], KEYS[7], KEYS[1], now, tonumber(ARGV[10]))
return 1
"""
)

REAP = (
    _NOW
    + _WAKE_PARKED
    + """
-- KEYS: ready, lease, cur, stats, queue, server, park;  ARGV: qid, max_conn
-- Hands an expired lease's queue back (its URI is still at the head). Returns 1 if reaped.
local qid = ARGV[1]
local exp = redis.call('ZSCORE', KEYS[2], qid)
if not exp or tonumber(exp) > now then return 0 end
redis.call('ZREM', KEYS[2], qid)
redis.call('HDEL', KEYS[3], qid)
redis.call('HINCRBY', KEYS[4], 'reaped', 1)
redis.call('HINCRBY', KEYS[4], 'ops', 1)
local active = tonumber(redis.call('HGET', KEYS[6], 'a') or '0')
if active > 0 then redis.call('HSET', KEYS[6], 'a', active - 1) end
if redis.call('ZCARD', KEYS[5]) > 0 then redis.call('ZADD', KEYS[1], now, qid) end
wake_parked(KEYS[6], KEYS[7], KEYS[1], now, tonumber(ARGV[2]))
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
-- KEYS: ready, lease, stats.  Returns {now, queued, ops, succeeded, failed, disregarded,
-- reaped, ready-now, snoozed, in-process, next due ms or -1, next lease expiry or -1}.
local s = redis.call('HMGET', KEYS[3], 'queued', 'ops', 'succeeded', 'failed', 'disregarded',
  'reaped')
local out = {now}
for i = 1, 6 do out[#out + 1] = tonumber(s[i] or '0') end
local ready = redis.call('ZCOUNT', KEYS[1], '-inf', now)
out[#out + 1] = ready
out[#out + 1] = redis.call('ZCARD', KEYS[1]) - ready
out[#out + 1] = redis.call('ZCARD', KEYS[2])
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
out[#out + 1] = first[2] and tonumber(first[2]) or -1
local lease = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
out[#out + 1] = lease[2] and tonumber(lease[2]) or -1
return out
"""
)
