-- rec-view allocation-by-site: per call site, the rec.Alloc events
-- (allocations) and the bytes they stand for (weight; size in a chunk
-- without weight), exactly as rec-view counts them.  WITH the sites: the call site
-- of each stack (spec/views/site.with.sql), and percent: 100 x bytes / the
-- bytes of all sites, in floating point as rec-view (0 without bytes).
WITH {site}
SELECT coalesce(site.site, '[no stack]') AS site,
       count(*) AS allocations,
       sum(coalesce(a.weight, a.size, 0)) AS bytes,
       CASE WHEN sum(sum(coalesce(a.weight, a.size, 0))) OVER () > 0
            THEN 100.0 * CAST(sum(coalesce(a.weight, a.size, 0)) AS DOUBLE)
                 / CAST(sum(sum(coalesce(a.weight, a.size, 0))) OVER () AS DOUBLE)
            ELSE 0.0 END AS percent
FROM rec_Alloc a
LEFT JOIN site
  ON site.recording_id = a.recording_id AND site.run_id = a.run_id AND site.stack_id = a.stack_id
GROUP BY coalesce(site.site, '[no stack]')
ORDER BY bytes DESC, site
