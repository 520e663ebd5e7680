-- rec-view latency --type {type}: count, mean, p50, p90, p99, p99.9, max and
-- total of the event type's durations (ns; a negative one counts 0).  count,
-- mean (rounded half up to whole ns, in integer arithmetic), max and total
-- are exactly rec-view's.  The percentiles are the true nearest-rank values
-- (the value of rank ceil(p/100 x count) in ascending order: p50 rank
-- (n + 1) div 2, p90 (9n + 9) div 10, p99 (99n + 99) div 100, p99.9
-- (999n + 999) div 1000, in integer arithmetic both engines agree on); rec-view
-- reads them from a log-linear histogram, within 1/256 of these values
-- (spec/SCHEMA.md, "Views as SQL").  The window sorts every duration.
WITH d AS (
  SELECT CASE WHEN duration_ns > 0 THEN duration_ns ELSE 0 END AS d
  FROM "{table}"
  WHERE duration_ns IS NOT NULL
),
r AS (
  SELECT d, row_number() OVER (ORDER BY d) AS rk, count(*) OVER () AS n
  FROM d
)
SELECT '{type}' AS type,
       count(*) AS count,
       (2 * sum(d) + count(*) - (2 * sum(d) + count(*)) % (2 * count(*))) / (2 * count(*)) AS mean,
       max(CASE WHEN rk = (n + 1 - (n + 1) % 2) / 2 THEN d END) AS p50,
       max(CASE WHEN rk = (9 * n + 9 - (9 * n + 9) % 10) / 10 THEN d END) AS p90,
       max(CASE WHEN rk = (99 * n + 99 - (99 * n + 99) % 100) / 100 THEN d END) AS p99,
       max(CASE WHEN rk = (999 * n + 999 - (999 * n + 999) % 1000) / 1000 THEN d END) AS p99_9,
       max(d) AS max,
       sum(d) AS total
FROM r
HAVING count(*) > 0
