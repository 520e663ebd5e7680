-- rec-view io-by-site: per call site and kind, the rec.IO events (calls),
-- their bytes, total, mean (rounded half up to whole ns, in integer
-- arithmetic) and longest duration (ns; a negative or missing one counts
-- 0), and the address (peer or path) of the longest call, the earliest of
-- equal ones, exactly as rec-view computes them.  WITH the sites: the call
-- site of each stack (spec/views/site.with.sql); p99: the true nearest-rank
-- value (rec-view's, from a histogram, is within 1/256 of it).
WITH {site},
io AS (
  SELECT e.start_ns, coalesce(site.site, '[no stack]') AS site, coalesce(e.kind, '') AS kind,
         coalesce(e.address, '') AS address, coalesce(e.bytes, 0) AS bytes,
         CASE WHEN e.duration_ns > 0 THEN e.duration_ns ELSE 0 END AS d
  FROM rec_IO e
  LEFT JOIN site
    ON site.recording_id = e.recording_id AND site.run_id = e.run_id AND site.stack_id = e.stack_id
),
r AS (
  SELECT site, kind, address, bytes, d,
         row_number() OVER (PARTITION BY site, kind ORDER BY d) AS rk,
         row_number() OVER (PARTITION BY site, kind ORDER BY d DESC, start_ns) AS lk,
         count(*) OVER (PARTITION BY site, kind) AS n
  FROM io
)
SELECT site,
       kind,
       count(*) AS calls,
       sum(bytes) AS bytes,
       sum(d) AS total,
       (2 * sum(d) + count(*) - (2 * sum(d) + count(*)) % (2 * count(*))) / (2 * count(*)) AS mean,
       max(CASE WHEN rk = (99 * n + 99 - (99 * n + 99) % 100) / 100 THEN d END) AS p99,
       max(d) AS max,
       max(CASE WHEN lk = 1 THEN address END) AS address
FROM r
GROUP BY site, kind
ORDER BY total DESC, site, kind
