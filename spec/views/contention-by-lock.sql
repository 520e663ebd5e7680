-- rec-view contention-by-lock: per lock, the rec.LockWait events (waits) and
-- the total and longest wait (ns), exactly as rec-view counts them; a lock
-- without a name is 0x and its address in hex, as rec-view spells it.  Not
-- here: p99 (a histogram) and the holder columns (what the holding thread
-- did meanwhile: an interval join over every event table; spec/SCHEMA.md,
-- "Views as SQL").
SELECT coalesce(lockName, printf('0x%x', lockAddress)) AS lock,
       count(*) AS waits,
       sum(duration_ns) AS total,
       max(duration_ns) AS max
FROM rec_LockWait
GROUP BY coalesce(lockName, printf('0x%x', lockAddress))
ORDER BY total DESC, lock
