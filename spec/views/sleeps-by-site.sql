-- rec-view sleeps-by-site: per call site, the rec.Sleep events (sleeps),
-- their total, mean (rounded half up to whole ns, in integer arithmetic)
-- and longest duration (ns; a negative or missing one counts 0), exactly as
-- rec-view computes them.  WITH the sites: the call site of each stack
-- (spec/views/site.with.sql).  Not here: p99 (a histogram).
WITH {site},
sleep AS (
  SELECT recording_id, run_id, stack_id,
         CASE WHEN duration_ns > 0 THEN duration_ns ELSE 0 END AS d
  FROM rec_Sleep
)
SELECT coalesce(site.site, '[no stack]') AS site,
       count(*) AS sleeps,
       sum(e.d) AS total,
       (2 * sum(e.d) + count(*) - (2 * sum(e.d) + count(*)) % (2 * count(*))) / (2 * count(*)) AS mean,
       max(e.d) AS max
FROM sleep e
LEFT JOIN site
  ON site.recording_id = e.recording_id AND site.run_id = e.run_id AND site.stack_id = e.stack_id
GROUP BY coalesce(site.site, '[no stack]')
ORDER BY total DESC, site
