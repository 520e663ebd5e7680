-- WITH the sites: the call site of each stack, the CTEs site_position and site
-- (recording_id, run_id, stack_id, site) that rec-view --sql puts in the
-- views that group by site.  The site is the first frame of the stack whose
-- function does not start with rec_ (librec's own; the leaf when every frame
-- is), spelt as rec-view spells it: the function; without one
-- MODULE+0xOFFSET (the module's base name), or 0xOFFSET without a module;
-- [unknown] for a frame not in frames.  An event without a stack matches no
-- row: the view spells it [no stack].
site_position AS (
  SELECT s.recording_id, s.run_id, s.stack_id,
         coalesce(min(CASE WHEN f.function IS NULL OR substr(f.function, 1, 4) <> 'rec_'
                           THEN s.position END), 0) AS position
  FROM stacks s
  LEFT JOIN frames f
    ON f.recording_id = s.recording_id AND f.run_id = s.run_id AND f.frame_id = s.frame_id
  GROUP BY s.recording_id, s.run_id, s.stack_id
),
site AS (
  SELECT p.recording_id, p.run_id, p.stack_id,
         CASE WHEN f.frame_id IS NULL THEN '[unknown]'
              WHEN f.function <> '' THEN f.function
              WHEN coalesce(f.module, '') <> ''
                THEN replace(f.module, rtrim(f.module, replace(f.module, '/', '')), '')
                     || '+0x' || lower(printf('%x', f.module_offset))
              ELSE '0x' || lower(printf('%x', f.module_offset)) END AS site
  FROM site_position p
  JOIN stacks s
    ON s.recording_id = p.recording_id AND s.run_id = p.run_id AND s.stack_id = p.stack_id
   AND s.position = p.position
  LEFT JOIN frames f
    ON f.recording_id = s.recording_id AND f.run_id = s.run_id AND f.frame_id = s.frame_id
)
