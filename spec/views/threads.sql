-- rec-view threads: per thread (run and OS tid), its events of every type
-- (all_events: the union of the event tables, spec/SCHEMA.md "Views as
-- SQL"), CPU time (rec.CPUSample, period x (1 + overruns)), lock waits
-- (rec.LockWait), condition waits (rec.CondWait), sleeps (rec.Sleep), I/O
-- waits (rec.IO) and allocated bytes (rec.Alloc weight, else size), the
-- durations as rec-view adds them (a negative one counts 0), exactly as
-- rec-view counts them.  The thread's name is the first non-empty one its
-- events carry in time order, (unnamed) without one.  Not here: I/O of a
-- program's own types of category rec/IO (rec-view counts them; a query
-- names its tables).
WITH ev AS (
  SELECT recording_id, run_id, thread_id, thread_name, start_ns
  FROM all_events
  WHERE thread_id IS NOT NULL
),
counts AS (
  SELECT recording_id, run_id, thread_id, count(*) AS events
  FROM ev
  GROUP BY recording_id, run_id, thread_id
),
named AS (
  SELECT recording_id, run_id, thread_id, thread_name,
         row_number() OVER (PARTITION BY recording_id, run_id, thread_id ORDER BY start_ns) AS rn
  FROM ev
  WHERE thread_name <> ''
),
waits AS (
  SELECT recording_id, run_id, thread_id, k,
         sum(CASE WHEN duration_ns > 0 THEN duration_ns ELSE 0 END) AS d
  FROM (
    SELECT recording_id, run_id, thread_id, duration_ns, 1 AS k FROM rec_LockWait
    UNION ALL
    SELECT recording_id, run_id, thread_id, duration_ns, 2 AS k FROM rec_CondWait
    UNION ALL
    SELECT recording_id, run_id, thread_id, duration_ns, 3 AS k FROM rec_Sleep
    UNION ALL
    SELECT recording_id, run_id, thread_id, duration_ns, 4 AS k FROM rec_IO
  ) x
  WHERE thread_id IS NOT NULL
  GROUP BY recording_id, run_id, thread_id, k
),
cpu AS (
  SELECT recording_id, run_id, thread_id,
         sum(coalesce(period, 0) * (1 + coalesce(overruns, 0))) AS cpu
  FROM rec_CPUSample
  WHERE thread_id IS NOT NULL
  GROUP BY recording_id, run_id, thread_id
),
alloc AS (
  SELECT recording_id, run_id, thread_id, sum(coalesce(weight, size, 0)) AS bytes
  FROM rec_Alloc
  WHERE thread_id IS NOT NULL
  GROUP BY recording_id, run_id, thread_id
),
row AS (
  SELECT coalesce(n.thread_name, '(unnamed)') AS thread,
         c.thread_id AS tid,
         c.events,
         coalesce(p.cpu, 0) AS cpu,
         coalesce((SELECT w.d FROM waits w WHERE w.recording_id = c.recording_id AND w.run_id = c.run_id
                   AND w.thread_id = c.thread_id AND w.k = 1), 0) AS lock_wait,
         coalesce((SELECT w.d FROM waits w WHERE w.recording_id = c.recording_id AND w.run_id = c.run_id
                   AND w.thread_id = c.thread_id AND w.k = 2), 0) AS cond_wait,
         coalesce((SELECT w.d FROM waits w WHERE w.recording_id = c.recording_id AND w.run_id = c.run_id
                   AND w.thread_id = c.thread_id AND w.k = 3), 0) AS sleep,
         coalesce((SELECT w.d FROM waits w WHERE w.recording_id = c.recording_id AND w.run_id = c.run_id
                   AND w.thread_id = c.thread_id AND w.k = 4), 0) AS io,
         coalesce(a.bytes, 0) AS allocated
  FROM counts c
  LEFT JOIN named n
    ON n.recording_id = c.recording_id AND n.run_id = c.run_id AND n.thread_id = c.thread_id AND n.rn = 1
  LEFT JOIN cpu p
    ON p.recording_id = c.recording_id AND p.run_id = c.run_id AND p.thread_id = c.thread_id
  LEFT JOIN alloc a
    ON a.recording_id = c.recording_id AND a.run_id = c.run_id AND a.thread_id = c.thread_id
)
SELECT thread, tid, events, cpu, lock_wait, cond_wait, sleep, io, allocated
FROM row
ORDER BY cpu DESC, lock_wait + cond_wait + sleep + io DESC, events DESC, tid
