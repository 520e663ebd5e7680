-- rec-view startup, its table cpu: per leaf function (the innermost
-- function inlined at the leaf frame, else that frame, as hot-functions'
-- self; not per site), the rec.CPUSample events (count) and their CPU time
-- (total: period x (1 + overruns), ns) that start strictly before the first
-- span (the first event of a duration type whose name does not start with
-- rec., as startup.sql finds it; the whole recording without one), exactly
-- as rec-view counts them; [no stack] for an event without a stack.  WITH
-- the frames of spec/views/site.with.sql.  rec-view leaves the table out
-- when it has no row; the query then gives none.
WITH {site},
cut AS (
  SELECT min(epoch_ns(start_ns)) AS t
  FROM all_events
  WHERE duration_ns IS NOT NULL AND substr(type, 1, 4) <> 'rec.'
)
SELECT coalesce(n.name, '[no stack]') AS site,
       count(*) AS count,
       sum(coalesce(e.period, 0) * (1 + coalesce(e.overruns, 0))) AS total
FROM "rec_CPUSample" e
CROSS JOIN cut
LEFT JOIN frame_all n
  ON n.recording_id = e.recording_id AND n.run_id = e.run_id AND n.stack_id = e.stack_id
 AND n.position = 0 AND n.inline_depth = n.innermost
WHERE cut.t IS NULL OR epoch_ns(e.start_ns) < cut.t
GROUP BY coalesce(n.name, '[no stack]')
ORDER BY total DESC, site
