-- rec-view contention-by-site: per call site of the waiter and lock, the
-- rec.LockWait events (waits), the total and longest wait (ns), p99 and
-- holders as in contention-by-lock.sql, exactly as rec-view counts them; its
-- first table.  WITH the sites: the call site of each stack
-- (spec/views/site.with.sql); the lock as in contention-by-lock.sql.  Not
-- here: the columns of what the holder did meanwhile (holder_site,
-- holder_sleeping ... holder_other: an interval join over every event
-- table), and rec-view's second table (contention-by-lock.sql).
WITH {site},
w AS (
  SELECT x.recording_id, x.run_id, x.holderOsThreadId AS holder,
         coalesce(site.site, '[no stack]') AS site,
         coalesce(x.lockName, printf('0x%x', x.lockAddress)) AS lock, x.duration_ns AS d
  FROM rec_LockWait x
  LEFT JOIN site
    ON site.recording_id = x.recording_id AND site.run_id = x.run_id AND site.stack_id = x.stack_id
),
r AS (
  SELECT site, lock, d, row_number() OVER (PARTITION BY site, lock ORDER BY d) AS rk,
         count(*) OVER (PARTITION BY site, lock) AS n
  FROM w
),
holder AS (
  SELECT w.site, w.lock, CASE WHEN coalesce(w.holder, 0) = 0 THEN '(released)'
                          WHEN coalesce(t.name, '') <> '' THEN t.name
                          ELSE 'tid=' || CAST(w.holder AS VARCHAR) END AS name,
         count(*) AS c, sum(w.d) AS ns
  FROM w
  LEFT JOIN (SELECT recording_id, run_id, thread_id, max(name) AS name
             FROM threads GROUP BY recording_id, run_id, thread_id) t
    ON t.recording_id = w.recording_id AND t.run_id = w.run_id AND t.thread_id = w.holder
  GROUP BY w.site, w.lock, 3
),
holder_rank AS (
  SELECT site, lock, name, c,
         row_number() OVER (PARTITION BY site, lock ORDER BY ns DESC, name) AS rk,
         count(*) OVER (PARTITION BY site, lock) AS k
  FROM holder
),
holders AS (
  SELECT site, lock,
         max(CASE WHEN rk = 1 THEN name || ' (' || CAST(c AS VARCHAR) || ')' END)
         || coalesce(max(CASE WHEN rk = 2 THEN ', ' || name || ' (' || CAST(c AS VARCHAR) || ')' END), '')
         || coalesce(max(CASE WHEN rk = 3 THEN ', ' || name || ' (' || CAST(c AS VARCHAR) || ')' END), '')
         || CASE WHEN max(k) > 3 THEN ', ...' ELSE '' END AS holders
  FROM holder_rank
  GROUP BY site, lock
)
SELECT r.site,
       r.lock,
       count(*) AS waits,
       sum(r.d) AS total,
       max(r.d) AS max,
       max(CASE WHEN r.rk = (99 * r.n + 99 - (99 * r.n + 99) % 100) / 100 THEN r.d END) AS p99,
       min(h.holders) AS holders
FROM r
LEFT JOIN holders h ON h.site = r.site AND h.lock = r.lock
GROUP BY r.site, r.lock
ORDER BY total DESC, r.site, r.lock
