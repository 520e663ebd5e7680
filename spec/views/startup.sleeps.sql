-- rec-view startup, its table sleeps: per call site, the rec.Sleep events
-- (count) and their durations (total, ns; a negative one counts 0) that
-- start strictly before the first span (the first event of a duration type
-- whose name does not start with rec., as startup.sql finds it; the whole
-- recording without one), exactly as rec-view counts them; [no stack] for an
-- event without a stack.  WITH the sites and frames of
-- spec/views/site.with.sql.  rec-view leaves the table out when it has no
-- row; the query then gives none.
WITH {site},
cut AS (
  SELECT min(epoch_ns(start_ns)) AS t
  FROM all_events
  WHERE duration_ns IS NOT NULL AND substr(type, 1, 4) <> 'rec.'
)
SELECT coalesce(site.site, '[no stack]') AS site,
       count(*) AS count,
       sum(CASE WHEN e.duration_ns > 0 THEN e.duration_ns ELSE 0 END) AS total
FROM "rec_Sleep" e
CROSS JOIN cut
LEFT JOIN site
  ON site.recording_id = e.recording_id AND site.run_id = e.run_id AND site.stack_id = e.stack_id
WHERE cut.t IS NULL OR epoch_ns(e.start_ns) < cut.t
GROUP BY coalesce(site.site, '[no stack]')
ORDER BY total DESC, site
