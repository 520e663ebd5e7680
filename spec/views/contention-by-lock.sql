-- rec-view contention-by-lock: per lock, the rec.LockWait events (waits) and
-- the total and longest wait (ns), exactly as rec-view counts them.  A lock
-- without a name is spelt here 'address ' and its address in decimal
-- (rec-view: 0x and hex).  Not here: p99 (a histogram) and the holder
-- columns (what the holding thread did meanwhile: an interval join over
-- every event table; spec/SCHEMA.md, "Views as SQL").
SELECT coalesce(lockName, 'address ' || CAST(lockAddress AS VARCHAR)) AS lock,
       count(*) AS waits,
       sum(duration_ns) AS total,
       max(duration_ns) AS max
FROM rec_LockWait
GROUP BY coalesce(lockName, 'address ' || CAST(lockAddress AS VARCHAR))
ORDER BY total DESC, lock
