-- rec-view latency --type {type} --by {by}: per value of the field, count,
-- mean, max and total of the durations (ns), exactly as rec-view computes
-- them; the mean is rounded half up to whole ns.  Not here: p50, p90, p99,
-- p99.9 (rec-view reads them from a histogram; see spec/SCHEMA.md, "Views as SQL").
SELECT '{type}' AS type,
       "{column}" AS "by",
       count(*) AS count,
       (2 * sum(duration_ns) + count(*) - (2 * sum(duration_ns) + count(*)) % (2 * count(*)))
         / (2 * count(*)) AS mean,
       max(duration_ns) AS max,
       sum(duration_ns) AS total
FROM "{table}"
WHERE duration_ns IS NOT NULL AND "{column}" IS NOT NULL
GROUP BY "{column}"
ORDER BY total DESC, "by"
