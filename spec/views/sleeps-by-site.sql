-- rec-view sleeps-by-site: per call site, the rec.Sleep events (sleeps),
-- their total, mean (rounded half up to whole ns, in integer arithmetic)
-- and longest duration (ns; a negative or missing one counts 0), exactly as
-- rec-view computes them.  WITH the sites: the call site of each stack
-- (spec/views/site.with.sql); p99: the true nearest-rank value (rec-view's,
-- from a histogram, is within 1/256 of it).
WITH {site},
sleep AS (
  SELECT e.recording_id, e.run_id, e.stack_id, coalesce(site.site, '[no stack]') AS site,
         CASE WHEN e.duration_ns > 0 THEN e.duration_ns ELSE 0 END AS d
  FROM rec_Sleep e
  LEFT JOIN site
    ON site.recording_id = e.recording_id AND site.run_id = e.run_id AND site.stack_id = e.stack_id
),
r AS (
  SELECT site, d, row_number() OVER (PARTITION BY site ORDER BY d) AS rk,
         count(*) OVER (PARTITION BY site) AS n
  FROM sleep
)
SELECT site,
       count(*) AS sleeps,
       sum(d) AS total,
       (2 * sum(d) + count(*) - (2 * sum(d) + count(*)) % (2 * count(*))) / (2 * count(*)) AS mean,
       max(CASE WHEN rk = (99 * n + 99 - (99 * n + 99) % 100) / 100 THEN d END) AS p99,
       max(d) AS max
FROM r
GROUP BY site
ORDER BY total DESC, site
