-- rec-view allocation-by-span --type {type}: the spans of the type (events
-- with a thread), the rec.Alloc bytes
-- (weight, else size) of each span's own thread that start inside it
-- (start <= t < start + duration), their total (bytes), mean per span
-- (per_span, rounded half up) and the largest span's (max), exactly as
-- rec-view counts them.  Times as integer ns through epoch_ns() (rec-sql:
-- the identity; DuckDB over Parquet: ns rounded down to the microsecond,
-- so an allocation within 1 us of a span's bounds may fall the other way
-- there; spec/SCHEMA.md, "Views as SQL").
WITH span AS (
  SELECT row_number() OVER (ORDER BY recording_id, run_id, thread_id, start_ns, chunk_seq) AS id,
         recording_id, run_id, thread_id, epoch_ns(start_ns) AS s,
         epoch_ns(start_ns) + CASE WHEN duration_ns > 0 THEN duration_ns ELSE 0 END AS e
  FROM "{table}"
  WHERE thread_id IS NOT NULL
),
per_span AS (
  SELECT sp.id, coalesce(sum(coalesce(a.weight, a.size, 0)), 0) AS bytes
  FROM span sp
  LEFT JOIN rec_Alloc a
    ON a.recording_id = sp.recording_id AND a.run_id = sp.run_id AND a.thread_id = sp.thread_id
   AND epoch_ns(a.start_ns) >= sp.s AND epoch_ns(a.start_ns) < sp.e
  GROUP BY sp.id
)
SELECT '{type}' AS type,
       count(*) AS spans,
       sum(bytes) AS bytes,
       (2 * sum(bytes) + count(*) - (2 * sum(bytes) + count(*)) % (2 * count(*))) / (2 * count(*)) AS per_span,
       max(bytes) AS max
FROM per_span
HAVING count(*) > 0
