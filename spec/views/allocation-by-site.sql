-- rec-view allocation-by-site: per call site, the rec.Alloc events
-- (allocations) and the bytes they stand for (weight; size in a chunk
-- without weight), exactly as rec-view counts them.  WITH the sites: the call site
-- of each stack (spec/views/site.with.sql).  Not here: percent (bytes / all
-- bytes, a fraction).
WITH {site}
SELECT coalesce(site.site, '[no stack]') AS site,
       count(*) AS allocations,
       sum(coalesce(a.weight, a.size, 0)) AS bytes
FROM rec_Alloc a
LEFT JOIN site
  ON site.recording_id = a.recording_id AND site.run_id = a.run_id AND site.stack_id = a.stack_id
GROUP BY coalesce(site.site, '[no stack]')
ORDER BY bytes DESC, site
