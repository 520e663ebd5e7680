-- rec-view live-heap: the blocks (rec.Alloc events with an address not 0)
-- whose address has no later rec.Free in the same run by the end of the
-- recording, per stack (root first, frames as rec-view spells them, joined
-- with ';', librec's leaf frames left out: the frames from the root down to
-- the call site of spec/views/site.with.sql; [truncated]; first for a
-- stack cut short; [no stack]) and kind (sampled, reported): blocks, bytes
-- (their sizes) and weight (the bytes they stand for: weight, else size),
-- exactly as rec-view counts them.  The last of an address's rec.Alloc and
-- rec.Free in time order decides (a rec.Free first of two at the same ns).
-- The stack's text is built by a recursive query (SQLite 3.40 has no
-- ordered string aggregate).  percent: 100 x bytes / the bytes of all live
-- blocks, in floating point as rec-view (0 without bytes).
WITH RECURSIVE {site},
top AS (
  SELECT s.recording_id, s.run_id, s.stack_id, s.depth, s.truncated, p.position AS site
  FROM stacks s
  JOIN site_position p
    ON p.recording_id = s.recording_id AND p.run_id = s.run_id AND p.stack_id = s.stack_id
  WHERE s.position = 0
),
path AS (
  SELECT t.recording_id, t.run_id, t.stack_id, t.depth - 1 AS position, t.site,
         CASE WHEN t.truncated THEN '[truncated];' ELSE '' END || n.name AS text
  FROM top t
  JOIN frame_name n
    ON n.recording_id = t.recording_id AND n.run_id = t.run_id AND n.stack_id = t.stack_id
   AND n.position = t.depth - 1
  UNION ALL
  SELECT p.recording_id, p.run_id, p.stack_id, p.position - 1, p.site, p.text || ';' || n.name
  FROM path p
  JOIN frame_name n
    ON n.recording_id = p.recording_id AND n.run_id = p.run_id AND n.stack_id = p.stack_id
   AND n.position = p.position - 1
  WHERE p.position > p.site
),
stack_text AS (
  SELECT recording_id, run_id, stack_id, text FROM path WHERE position = site
),
last AS (
  SELECT x.*,
         row_number() OVER (PARTITION BY recording_id, run_id, address
                            ORDER BY start_ns DESC, k DESC) AS rn
  FROM (
    SELECT recording_id, run_id, start_ns, address, stack_id, 0 AS k,
           CASE WHEN sampled THEN 'sampled' ELSE 'reported' END AS kind,
           coalesce(size, 0) AS size, coalesce(weight, size, 0) AS weight
    FROM rec_Alloc
    WHERE address <> 0
    UNION ALL
    SELECT recording_id, run_id, start_ns, address, NULL AS stack_id, 1 AS k, NULL AS kind,
           0 AS size, 0 AS weight
    FROM rec_Free
    WHERE address <> 0
  ) x
)
SELECT coalesce(t.text, '[no stack]') AS stack,
       l.kind,
       count(*) AS blocks,
       sum(l.size) AS bytes,
       CASE WHEN sum(sum(l.size)) OVER () > 0 THEN 100.0 * CAST(sum(l.size) AS DOUBLE)
                 / CAST(sum(sum(l.size)) OVER () AS DOUBLE)
            ELSE 0.0 END AS percent,
       sum(l.weight) AS weight
FROM last l
LEFT JOIN stack_text t
  ON t.recording_id = l.recording_id AND t.run_id = l.run_id AND t.stack_id = l.stack_id
WHERE l.rn = 1 AND l.k = 0
GROUP BY coalesce(t.text, '[no stack]'), l.kind
ORDER BY bytes DESC, stack, l.kind
