-- rec-view contention-by-lock: per lock, the rec.LockWait events (waits),
-- the total and longest wait (ns) and p99 (the true nearest-rank value,
-- where rec-view gives its histogram's, within 1/256), exactly as rec-view
-- counts them; a lock without a name is 0x and its address in hex, as
-- rec-view spells it; holders: the threads holding the lock when waits
-- began (holderOsThreadId: its name, tid=N for a thread no event names,
-- (released) for 0), the three with the most wait time first, each with its
-- number of waits, ", ..." after them when there are more.  Not here: the
-- columns of what the holder did meanwhile (holder_site, holder_sleeping
-- ... holder_other: an interval join over every event table;
-- spec/SCHEMA.md, "Views as SQL").
WITH w AS (
  SELECT recording_id, run_id, holderOsThreadId AS holder,
         coalesce(lockName, printf('0x%x', lockAddress)) AS lock, duration_ns AS d
  FROM rec_LockWait
),
r AS (
  SELECT lock, d, row_number() OVER (PARTITION BY lock ORDER BY d) AS rk,
         count(*) OVER (PARTITION BY lock) AS n
  FROM w
),
holder AS (
  SELECT w.lock, CASE WHEN coalesce(w.holder, 0) = 0 THEN '(released)'
                          WHEN coalesce(t.name, '') <> '' THEN t.name
                          ELSE 'tid=' || CAST(w.holder AS VARCHAR) END AS name,
         count(*) AS c, sum(w.d) AS ns
  FROM w
  LEFT JOIN (SELECT recording_id, run_id, thread_id, max(name) AS name
             FROM threads GROUP BY recording_id, run_id, thread_id) t
    ON t.recording_id = w.recording_id AND t.run_id = w.run_id AND t.thread_id = w.holder
  GROUP BY w.lock, 2
),
holder_rank AS (
  SELECT lock, name, c,
         row_number() OVER (PARTITION BY lock ORDER BY ns DESC, name) AS rk,
         count(*) OVER (PARTITION BY lock) AS k
  FROM holder
),
holders AS (
  SELECT lock,
         max(CASE WHEN rk = 1 THEN name || ' (' || CAST(c AS VARCHAR) || ')' END)
         || coalesce(max(CASE WHEN rk = 2 THEN ', ' || name || ' (' || CAST(c AS VARCHAR) || ')' END), '')
         || coalesce(max(CASE WHEN rk = 3 THEN ', ' || name || ' (' || CAST(c AS VARCHAR) || ')' END), '')
         || CASE WHEN max(k) > 3 THEN ', ...' ELSE '' END AS holders
  FROM holder_rank
  GROUP BY lock
)
SELECT r.lock,
       count(*) AS waits,
       sum(r.d) AS total,
       max(r.d) AS max,
       max(CASE WHEN r.rk = (99 * r.n + 99 - (99 * r.n + 99) % 100) / 100 THEN r.d END) AS p99,
       min(h.holders) AS holders
FROM r
LEFT JOIN holders h ON h.lock = r.lock
GROUP BY r.lock
ORDER BY total DESC, r.lock
