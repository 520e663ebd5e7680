-- rec-view recording, its drops table: the events lost (lost) per
-- type and reason, from the rec.Dropped rows of drops, exactly as rec-view
-- counts them when every chunk with rec.Dropped events counts them in its
-- Dropped_Events statistic (rec-view reads rec.Dropped only in such chunks,
-- as the writers write them).  A type not known is (not known); rec-view
-- spells a type id missing from the chunk's METADATA "type id N", which
-- drops does not carry (its type_name is NULL).  A reason without a name
-- is "reason N".
SELECT coalesce(d.type_name, '(not known)') AS type,
       coalesce(d.reason_name, 'reason ' || CAST(d.reason AS VARCHAR)) AS reason,
       sum(d.count) AS lost
FROM drops d
GROUP BY coalesce(d.type_name, '(not known)'), d.reason, d.reason_name
ORDER BY lost DESC, type, d.reason
