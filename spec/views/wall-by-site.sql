-- rec-view wall-by-site: per call site, the rec.WallSample events
-- (samples), the wall time they stand for (wall: weight x period, ns) and
-- its split by the thread's state (running, lock, cond, sleep, io, poll,
-- wait; any other state: other), exactly as rec-view computes them.  WITH the
-- sites: the call site of each stack (spec/views/site.with.sql).
WITH {site},
sample AS (
  SELECT recording_id, run_id, stack_id, state,
         coalesce(weight, 0) * coalesce(period, 0) AS ns
  FROM rec_WallSample
)
SELECT coalesce(site.site, '[no stack]') AS site,
       count(*) AS samples,
       sum(e.ns) AS wall,
       sum(CASE WHEN e.state = 'running' THEN e.ns ELSE 0 END) AS running,
       sum(CASE WHEN e.state = 'lock' THEN e.ns ELSE 0 END) AS lock,
       sum(CASE WHEN e.state = 'cond' THEN e.ns ELSE 0 END) AS cond,
       sum(CASE WHEN e.state = 'sleep' THEN e.ns ELSE 0 END) AS sleep,
       sum(CASE WHEN e.state = 'io' THEN e.ns ELSE 0 END) AS io,
       sum(CASE WHEN e.state = 'poll' THEN e.ns ELSE 0 END) AS poll,
       sum(CASE WHEN e.state = 'wait' THEN e.ns ELSE 0 END) AS wait,
       sum(CASE WHEN e.state IN ('running', 'lock', 'cond', 'sleep', 'io', 'poll', 'wait')
                THEN 0 ELSE e.ns END) AS other
FROM sample e
LEFT JOIN site
  ON site.recording_id = e.recording_id AND site.run_id = e.run_id AND site.stack_id = e.stack_id
GROUP BY coalesce(site.site, '[no stack]')
ORDER BY wall DESC, site
