-- rec-view contention-by-site: per call site of the waiter and lock, the
-- rec.LockWait events (waits) and the total and longest wait (ns), exactly
-- as rec-view counts them; its first table.  WITH the sites: the call site of each
-- stack (spec/views/site.with.sql); the lock as in contention-by-lock.sql.
-- Not here: p99 (a histogram), the holder columns (an interval join over
-- every event table), and rec-view's second table (contention-by-lock.sql).
WITH {site}
SELECT coalesce(site.site, '[no stack]') AS site,
       coalesce(w.lockName, printf('0x%x', w.lockAddress)) AS lock,
       count(*) AS waits,
       sum(w.duration_ns) AS total,
       max(w.duration_ns) AS max
FROM rec_LockWait w
LEFT JOIN site
  ON site.recording_id = w.recording_id AND site.run_id = w.run_id AND site.stack_id = w.stack_id
GROUP BY coalesce(site.site, '[no stack]'), coalesce(w.lockName, printf('0x%x', w.lockAddress))
ORDER BY total DESC, site, lock
