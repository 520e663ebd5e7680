-- rec-view startup, its first table: what happened before the first event
-- of a user duration type (a type with a duration whose name does not
-- start with rec.: all_events' rows with a duration_ns, e.g. the first
-- request), the whole recording without one: before (that type; the first
-- in name order of two at the same ns), the rec.Sleep events (sleeps) and
-- their time (sleep), the rec.Alloc events (allocations) and their bytes
-- (allocated: weight, else size), the rec.CPUSample CPU time (cpu, period x
-- (1 + overruns)), the rec.LockWait events (lock_waits) and their time
-- (lock_wait), the rec.CondWait time (cond_wait); a negative duration
-- counts 0.  Exactly rec-view's numbers, for events that start strictly
-- before that first event (rec-view reads them in time order and stops
-- there; of two at the same ns it counts the one read first).  Times
-- through epoch_ns() (DuckDB over Parquet: rounded down to the
-- microsecond).  at: that first event's start in ns from the first event
-- of the recording (of any type), NULL without one.  Not here: the
-- per-site tables of each kind (startup.sleeps ... startup.cond_waits).
WITH spans AS (
  SELECT epoch_ns(start_ns) AS t, type
  FROM all_events
  WHERE duration_ns IS NOT NULL AND substr(type, 1, 4) <> 'rec.'
),
cut AS (
  SELECT min(t) AS t FROM spans
),
ev AS (
  SELECT x.k, x.w
  FROM (
    SELECT start_ns, 0 AS k, CASE WHEN duration_ns > 0 THEN duration_ns ELSE 0 END AS w FROM rec_Sleep
    UNION ALL
    SELECT start_ns, 1 AS k, coalesce(weight, size, 0) AS w FROM rec_Alloc
    UNION ALL
    SELECT start_ns, 2 AS k, coalesce(period, 0) * (1 + coalesce(overruns, 0)) AS w FROM rec_CPUSample
    UNION ALL
    SELECT start_ns, 3 AS k, CASE WHEN duration_ns > 0 THEN duration_ns ELSE 0 END AS w FROM rec_LockWait
    UNION ALL
    SELECT start_ns, 4 AS k, CASE WHEN duration_ns > 0 THEN duration_ns ELSE 0 END AS w FROM rec_CondWait
  ) x, cut
  WHERE cut.t IS NULL OR epoch_ns(x.start_ns) < cut.t
)
SELECT coalesce((SELECT min(s.type) FROM spans s, cut WHERE s.t = cut.t),
                '(no span: the whole recording)') AS before,
       (SELECT t FROM cut) - (SELECT min(epoch_ns(start_ns)) FROM all_events) AS "at",
       coalesce(sum(CASE WHEN k = 0 THEN 1 ELSE 0 END), 0) AS sleeps,
       coalesce(sum(CASE WHEN k = 0 THEN w ELSE 0 END), 0) AS sleep,
       coalesce(sum(CASE WHEN k = 1 THEN 1 ELSE 0 END), 0) AS allocations,
       coalesce(sum(CASE WHEN k = 1 THEN w ELSE 0 END), 0) AS allocated,
       coalesce(sum(CASE WHEN k = 2 THEN w ELSE 0 END), 0) AS cpu,
       coalesce(sum(CASE WHEN k = 3 THEN 1 ELSE 0 END), 0) AS lock_waits,
       coalesce(sum(CASE WHEN k = 3 THEN w ELSE 0 END), 0) AS lock_wait,
       coalesce(sum(CASE WHEN k = 4 THEN w ELSE 0 END), 0) AS cond_wait
FROM ev
