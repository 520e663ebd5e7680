-- rec-view requests --type {type} --by {by}, its second table: the {top} slowest spans
-- (rec-view's --top, 10 by default) by wall time, the earliest first among equal
-- ones (at a tie at the last row's wall time rec-view shows those the stream
-- settled first, which may be others), each with: start (ns from the first
-- event of the recording, of any type), thread (the span event's thread
-- name, tid=N without one), its wall time and parts as in requests.sql (not
-- averaged), and the lock of its longest rec.LockWait inside it (the time
-- cut at the span's end; the earliest of equal ones; '' for a lock without
-- a name; NULL when it has none longer than 0) with that wait's holder
-- (holderOsThreadId: its name in threads, tid=N without one, (unknown) for
-- 0).  Times through epoch_ns() as in requests.sql: in DuckDB over Parquet
-- start is rounded down to the microsecond (within 1 us of rec-view's).
-- Not here: I/O of a program's own types of category rec/IO.
WITH span AS (
  SELECT row_number() OVER (ORDER BY recording_id, run_id, thread_id, start_ns, chunk_seq) AS id,
         recording_id, run_id, thread_id, thread_name, "{column}" AS v, start_ns AS start_ns0, epoch_ns(start_ns) AS s,
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
  SELECT id, wall, CASE WHEN cpu + lock_wait + cond_wait + sleep + io <= wall THEN cpu
              WHEN lock_wait + cond_wait + sleep + io < wall
              THEN wall - (lock_wait + cond_wait + sleep + io) ELSE 0 END AS cpu,
         lock_wait, cond_wait, sleep, io,
         CASE WHEN cpu + lock_wait + cond_wait + sleep + io < wall
              THEN wall - (cpu + lock_wait + cond_wait + sleep + io) ELSE 0 END AS unaccounted
  FROM parts
),
slowest AS (
  SELECT p.*, row_number() OVER (ORDER BY p.wall DESC, sp.s, p.id) AS rk
  FROM per_span p
  JOIN span sp ON sp.id = p.id
),
lock_wait AS (
  SELECT sp.id, w.lockName, w.holderOsThreadId AS holder, w.t,
         (CASE WHEN w.te < sp.e THEN w.te ELSE sp.e END) - w.t AS d
  FROM span sp
  JOIN (SELECT recording_id, run_id, thread_id, lockName, holderOsThreadId, epoch_ns(start_ns) AS t,
               epoch_ns(start_ns) + CASE WHEN duration_ns > 0 THEN duration_ns ELSE 0 END AS te
        FROM rec_LockWait WHERE thread_id IS NOT NULL) w
    ON w.recording_id = sp.recording_id AND w.run_id = sp.run_id AND w.thread_id = sp.thread_id
   AND w.t >= sp.s AND w.t < sp.e
  WHERE sp.id IN (SELECT id FROM slowest WHERE rk <= {top})
),
longest AS (
  SELECT id, lockName, holder,
         row_number() OVER (PARTITION BY id ORDER BY d DESC, t) AS rk
  FROM lock_wait
  WHERE d > 0
)
SELECT epoch_ns(sp.start_ns0) - (SELECT min(epoch_ns(start_ns)) FROM all_events) AS start,
       CASE WHEN coalesce(sp.thread_name, '') <> '' THEN sp.thread_name
            ELSE 'tid=' || CAST(sp.thread_id AS VARCHAR) END AS thread,
       '{type}' AS type,
       sp.v AS "by",
       x.wall, x.cpu, x.lock_wait, x.cond_wait, x.sleep, x.io, x.unaccounted,
       CASE WHEN l.id IS NULL THEN NULL ELSE coalesce(l.lockName, '') END AS lock,
       CASE WHEN l.id IS NULL THEN NULL
            WHEN coalesce(l.holder, 0) = 0 THEN '(unknown)'
            WHEN coalesce(t.name, '') <> '' THEN t.name
            ELSE 'tid=' || CAST(l.holder AS VARCHAR) END AS holder
FROM slowest x
JOIN span sp ON sp.id = x.id
LEFT JOIN longest l ON l.id = x.id AND l.rk = 1
LEFT JOIN (SELECT recording_id, run_id, thread_id, max(name) AS name
           FROM threads GROUP BY recording_id, run_id, thread_id) t
  ON t.recording_id = sp.recording_id AND t.run_id = sp.run_id AND t.thread_id = l.holder
WHERE x.rk <= {top}
ORDER BY x.rk
