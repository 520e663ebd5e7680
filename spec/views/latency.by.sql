-- rec-view latency --type {type} --by {by}: per value of the field, count,
-- mean, p50, p90, p99, p99.9, max and total of the durations (ns; a
-- negative one counts 0), as latency.sql computes them per value: count,
-- mean (rounded half up to whole ns), max and total exactly rec-view's, the
-- percentiles the true nearest-rank values, which rec-view's histogram gives
-- within 1/256 (spec/SCHEMA.md, "Views as SQL").
WITH d AS (
  SELECT "{column}" AS v, CASE WHEN duration_ns > 0 THEN duration_ns ELSE 0 END AS d
  FROM "{table}"
  WHERE duration_ns IS NOT NULL AND "{column}" IS NOT NULL
),
r AS (
  SELECT v, d, row_number() OVER (PARTITION BY v ORDER BY d) AS rk,
         count(*) OVER (PARTITION BY v) AS n
  FROM d
)
SELECT '{type}' AS type,
       v AS "by",
       count(*) AS count,
       (2 * sum(d) + count(*) - (2 * sum(d) + count(*)) % (2 * count(*))) / (2 * count(*)) AS mean,
       max(CASE WHEN rk = (n + 1 - (n + 1) % 2) / 2 THEN d END) AS p50,
       max(CASE WHEN rk = (9 * n + 9 - (9 * n + 9) % 10) / 10 THEN d END) AS p90,
       max(CASE WHEN rk = (99 * n + 99 - (99 * n + 99) % 100) / 100 THEN d END) AS p99,
       max(CASE WHEN rk = (999 * n + 999 - (999 * n + 999) % 1000) / 1000 THEN d END) AS p99_9,
       max(d) AS max,
       sum(d) AS total
FROM r
GROUP BY v
ORDER BY total DESC, "by"
