-- rec-view requests --type {type}, its first table: the spans of the type
-- (events with a thread), their mean and
-- longest wall time, and the mean per span of its parts, exactly as rec-view
-- computes them: cpu (the span's own thread's rec.CPUSample inside it,
-- period x (1 + overruns) each, at most what the waits leave of the wall
-- time), lock_wait (rec.LockWait), cond_wait
-- (rec.CondWait, and rec.Sleep of kind cond of older recordings), sleep
-- (rec.Sleep), io (rec.IO) and unaccounted (the rest of the wall time): the
-- events of the span's thread that start inside it (start <= t < end),
-- their durations cut at the span's end.  Means rounded half up to whole
-- ns.  Times as integer ns through epoch_ns() (rec-sql: the identity;
-- DuckDB over Parquet: ns rounded down to the microsecond, so an event
-- within 1 us of a span's bounds may fall the other way there).  Not here:
-- the slowest spans table, and I/O of a program's own types of category
-- rec/IO (rec-view counts them; a query names its tables).
WITH span AS (
  SELECT row_number() OVER (ORDER BY recording_id, run_id, thread_id, start_ns, chunk_seq) AS id,
         recording_id, run_id, thread_id, epoch_ns(start_ns) AS s,
         epoch_ns(start_ns) + CASE WHEN duration_ns > 0 THEN duration_ns ELSE 0 END AS e
  FROM "{table}"
  WHERE thread_id IS NOT NULL
),
part AS (
  SELECT recording_id, run_id, thread_id, epoch_ns(start_ns) AS t,
         epoch_ns(start_ns) + CASE WHEN duration_ns > 0 THEN duration_ns ELSE 0 END AS te, k, w
  FROM (
    SELECT recording_id, run_id, thread_id, start_ns, duration_ns, 0 AS k,
           coalesce(period, 0) * (1 + coalesce(overruns, 0)) AS w
    FROM rec_CPUSample WHERE thread_id IS NOT NULL
    UNION ALL
    SELECT recording_id, run_id, thread_id, start_ns, duration_ns, 1 AS k, 0 AS w
    FROM rec_LockWait WHERE thread_id IS NOT NULL
    UNION ALL
    SELECT recording_id, run_id, thread_id, start_ns, duration_ns, 2 AS k, 0 AS w
    FROM rec_CondWait WHERE thread_id IS NOT NULL
    UNION ALL
    SELECT recording_id, run_id, thread_id, start_ns, duration_ns,
           CASE WHEN kind = 'cond' THEN 2 ELSE 3 END AS k, 0 AS w
    FROM rec_Sleep WHERE thread_id IS NOT NULL
    UNION ALL
    SELECT recording_id, run_id, thread_id, start_ns, duration_ns, 4 AS k, 0 AS w
    FROM rec_IO WHERE thread_id IS NOT NULL
  ) x
),
parts AS (
  SELECT sp.id, sp.e - sp.s AS wall,
         coalesce(sum(CASE WHEN p.k = 0 THEN p.w END), 0) AS cpu,
         coalesce(sum(CASE WHEN p.k = 1 THEN (CASE WHEN p.te < sp.e THEN p.te ELSE sp.e END) - p.t END), 0) AS lock_wait,
         coalesce(sum(CASE WHEN p.k = 2 THEN (CASE WHEN p.te < sp.e THEN p.te ELSE sp.e END) - p.t END), 0) AS cond_wait,
         coalesce(sum(CASE WHEN p.k = 3 THEN (CASE WHEN p.te < sp.e THEN p.te ELSE sp.e END) - p.t END), 0) AS sleep,
         coalesce(sum(CASE WHEN p.k = 4 THEN (CASE WHEN p.te < sp.e THEN p.te ELSE sp.e END) - p.t END), 0) AS io
  FROM span sp
  LEFT JOIN part p
    ON p.recording_id = sp.recording_id AND p.run_id = sp.run_id AND p.thread_id = sp.thread_id
   AND p.t >= sp.s AND p.t < sp.e
  GROUP BY sp.id, sp.s, sp.e
),
per_span AS (
  SELECT wall, CASE WHEN cpu + lock_wait + cond_wait + sleep + io <= wall THEN cpu
              WHEN lock_wait + cond_wait + sleep + io < wall
              THEN wall - (lock_wait + cond_wait + sleep + io) ELSE 0 END AS cpu,
         lock_wait, cond_wait, sleep, io,
         CASE WHEN cpu + lock_wait + cond_wait + sleep + io < wall
              THEN wall - (cpu + lock_wait + cond_wait + sleep + io) ELSE 0 END AS unaccounted
  FROM parts
)
SELECT '{type}' AS type,
       count(*) AS spans,
       (2 * sum(wall) + count(*) - (2 * sum(wall) + count(*)) % (2 * count(*))) / (2 * count(*)) AS mean,
       max(wall) AS max,
       (2 * sum(cpu) + count(*) - (2 * sum(cpu) + count(*)) % (2 * count(*))) / (2 * count(*)) AS cpu,
       (2 * sum(lock_wait) + count(*) - (2 * sum(lock_wait) + count(*)) % (2 * count(*))) / (2 * count(*)) AS lock_wait,
       (2 * sum(cond_wait) + count(*) - (2 * sum(cond_wait) + count(*)) % (2 * count(*))) / (2 * count(*)) AS cond_wait,
       (2 * sum(sleep) + count(*) - (2 * sum(sleep) + count(*)) % (2 * count(*))) / (2 * count(*)) AS sleep,
       (2 * sum(io) + count(*) - (2 * sum(io) + count(*)) % (2 * count(*))) / (2 * count(*)) AS io,
       (2 * sum(unaccounted) + count(*) - (2 * sum(unaccounted) + count(*)) % (2 * count(*))) / (2 * count(*)) AS unaccounted
FROM per_span
HAVING count(*) > 0
