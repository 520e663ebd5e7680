-- rec-view contention-by-lock: per lock, the rec.LockWait events (waits),
-- the total and longest wait (ns) and p99 (the true nearest-rank value,
-- where rec-view gives its histogram's, within 1/256), exactly as rec-view
-- counts them; a lock without a name is 0x and its address in hex, as
-- rec-view spells it; holders: the threads holding the lock when waits
-- began (holderOsThreadId: its name in threads once rec-view has seen it,
-- that is when it has a rec.Sleep, rec.CondWait, rec.IO, rec.LockWait or
-- rec.CPUSample event that starts by the wait's end, else tid=N;
-- (unknown) for 0), the three with the most wait time first, each with its
-- number of waits, ", ..." after them when there are more; what the holder
-- did during the waits: the overlap of its rec.Sleep (holder_sleeping),
-- rec.CondWait and rec.Sleep of kind cond (holder_cond_wait), rec.IO
-- (holder_io) and rec.LockWait (holder_lock_wait) with each wait, its
-- rec.CPUSample inside each wait (holder_running: period x (1 + overruns)),
-- the rest (holder_other); each of these per wait at most the wait's length
-- (a holder cannot run or sleep longer than the wait lasted: samples closer
-- together than their period, or overlapping I/O, would claim more), and
-- holder_site: per wait the holder's event
-- that overlaps it most (the earliest of equal ones), the site (WITH
-- spec/views/site.with.sql) of those with the most overlap.  rec-view keeps
-- a holder's last 32 such events (and 2^20 samples: it reads them as
-- digests; 128 given as events): exact while it does fewer
-- during one wait.  Times through epoch_ns() (DuckDB over Parquet:
-- microseconds, the overlaps within 2 us per wait).  Not here: I/O of a
-- program's own types of category rec/IO.
WITH {site},
w AS (
  SELECT recording_id, run_id, holderOsThreadId AS holder,
         coalesce(lockName, printf('0x%x', lockAddress)) AS lock, duration_ns AS d,
         epoch_ns(start_ns) AS s, epoch_ns(start_ns) + duration_ns AS e,
         row_number() OVER (ORDER BY recording_id, run_id, start_ns, thread_id, chunk_seq) AS id
  FROM rec_LockWait
),
r AS (
  SELECT lock, d, row_number() OVER (PARTITION BY lock ORDER BY d) AS rk,
         count(*) OVER (PARTITION BY lock) AS n
  FROM w
),
seen AS (
  SELECT recording_id, run_id, thread_id, min(epoch_ns(start_ns)) AS first
  FROM (
    SELECT recording_id, run_id, thread_id, start_ns FROM rec_Sleep
    UNION ALL
    SELECT recording_id, run_id, thread_id, start_ns FROM rec_CondWait
    UNION ALL
    SELECT recording_id, run_id, thread_id, start_ns FROM rec_IO
    UNION ALL
    SELECT recording_id, run_id, thread_id, start_ns FROM rec_LockWait
    UNION ALL
    SELECT recording_id, run_id, thread_id, start_ns FROM rec_CPUSample
  ) x
  WHERE thread_id IS NOT NULL
  GROUP BY recording_id, run_id, thread_id
),
holder AS (
  SELECT w.lock, CASE WHEN coalesce(w.holder, 0) = 0 THEN '(unknown)'
                          WHEN coalesce(t.name, '') <> '' AND sn.first <= w.e THEN t.name
                          ELSE 'tid=' || CAST(w.holder AS VARCHAR) END AS name,
         count(*) AS c, sum(w.d) AS ns
  FROM w
  LEFT JOIN (SELECT recording_id, run_id, thread_id, max(name) AS name
             FROM threads GROUP BY recording_id, run_id, thread_id) t
    ON t.recording_id = w.recording_id AND t.run_id = w.run_id AND t.thread_id = w.holder
  LEFT JOIN seen sn
    ON sn.recording_id = w.recording_id AND sn.run_id = w.run_id AND sn.thread_id = w.holder
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
),
act AS (
  SELECT recording_id, run_id, thread_id, stack_id, k, epoch_ns(start_ns) AS s,
         epoch_ns(start_ns) + CASE WHEN duration_ns > 0 THEN duration_ns ELSE 0 END AS e
  FROM (
    SELECT recording_id, run_id, thread_id, stack_id, start_ns, duration_ns,
           CASE WHEN kind = 'cond' THEN 1 ELSE 0 END AS k
    FROM rec_Sleep
    UNION ALL
    SELECT recording_id, run_id, thread_id, stack_id, start_ns, duration_ns, 1 AS k FROM rec_CondWait
    UNION ALL
    SELECT recording_id, run_id, thread_id, stack_id, start_ns, duration_ns, 2 AS k FROM rec_IO
    UNION ALL
    SELECT recording_id, run_id, thread_id, stack_id, start_ns, duration_ns, 3 AS k FROM rec_LockWait
  ) x
  WHERE thread_id IS NOT NULL
),
overlap AS (
  SELECT w.id, a.k, a.recording_id, a.run_id, a.stack_id, a.s,
         (CASE WHEN a.e < w.e THEN a.e ELSE w.e END) - (CASE WHEN a.s > w.s THEN a.s ELSE w.s END) AS o
  FROM w
  JOIN act a
    ON a.recording_id = w.recording_id AND a.run_id = w.run_id AND a.thread_id = w.holder
   AND a.s < w.e AND a.e > w.s
),
running AS (
  SELECT w.id, sum(coalesce(c.period, 0) * (1 + coalesce(c.overruns, 0))) AS ns
  FROM w
  JOIN rec_CPUSample c
    ON c.recording_id = w.recording_id AND c.run_id = w.run_id AND c.thread_id = w.holder
   AND epoch_ns(c.start_ns) >= w.s AND epoch_ns(c.start_ns) < w.e
  GROUP BY w.id
),
per_wait_raw AS (
  SELECT w.id, w.lock, w.d,
         coalesce(sum(CASE WHEN o.k = 0 THEN o.o END), 0) AS sleeping,
         coalesce(sum(CASE WHEN o.k = 1 THEN o.o END), 0) AS cond_wait,
         coalesce(sum(CASE WHEN o.k = 2 THEN o.o END), 0) AS io,
         coalesce(sum(CASE WHEN o.k = 3 THEN o.o END), 0) AS lock_wait,
         coalesce(min(c.ns), 0) AS running
  FROM w
  LEFT JOIN overlap o ON o.id = w.id
  LEFT JOIN running c ON c.id = w.id
  GROUP BY w.id, w.lock, w.d
),
per_wait AS (
  SELECT id, lock, d,
         CASE WHEN sleeping > d THEN d ELSE sleeping END AS sleeping,
         CASE WHEN cond_wait > d THEN d ELSE cond_wait END AS cond_wait,
         CASE WHEN io > d THEN d ELSE io END AS io,
         CASE WHEN lock_wait > d THEN d ELSE lock_wait END AS lock_wait,
         CASE WHEN running > d THEN d ELSE running END AS running
  FROM per_wait_raw
),
doing AS (
  SELECT lock,
         sum(sleeping) AS sleeping, sum(cond_wait) AS cond_wait, sum(io) AS io,
         sum(lock_wait) AS lock_wait, sum(running) AS running,
         sum(CASE WHEN sleeping + cond_wait + io + lock_wait + running < d
                  THEN d - (sleeping + cond_wait + io + lock_wait + running) ELSE 0 END) AS other
  FROM per_wait
  GROUP BY lock
),
top_overlap AS (
  SELECT o.id, o.o, coalesce(st.site, '[no stack]') AS hsite,
         row_number() OVER (PARTITION BY o.id ORDER BY o.o DESC, o.s) AS rk
  FROM overlap o
  LEFT JOIN site st
    ON st.recording_id = o.recording_id AND st.run_id = o.run_id AND st.stack_id = o.stack_id
),
hsite AS (
  SELECT w.lock, t.hsite, sum(t.o) AS ns,
         row_number() OVER (PARTITION BY w.lock ORDER BY sum(t.o) DESC, t.hsite) AS rk
  FROM top_overlap t
  JOIN w ON w.id = t.id
  WHERE t.rk = 1
  GROUP BY w.lock, t.hsite
)
SELECT r.lock,
       count(*) AS waits,
       sum(r.d) AS total,
       max(r.d) AS max,
       max(CASE WHEN r.rk = (99 * r.n + 99 - (99 * r.n + 99) % 100) / 100 THEN r.d END) AS p99,
       min(h.holders) AS holders,
       min(hs.hsite) AS holder_site,
       min(dg.sleeping) AS holder_sleeping,
       min(dg.cond_wait) AS holder_cond_wait,
       min(dg.io) AS holder_io,
       min(dg.lock_wait) AS holder_lock_wait,
       min(dg.running) AS holder_running,
       min(dg.other) AS holder_other
FROM r
LEFT JOIN holders h ON h.lock = r.lock
LEFT JOIN hsite hs ON hs.lock = r.lock AND hs.rk = 1
LEFT JOIN doing dg ON dg.lock = r.lock
GROUP BY r.lock
ORDER BY total DESC, r.lock
