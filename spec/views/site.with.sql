-- {site}: the CTEs frame_all (recording_id, run_id, stack_id, position,
-- inline_depth, function, name, innermost: each function of each stack, the
-- functions inlined into a frame (inline_depth 1 the outermost) with its
-- position; innermost: the largest inline_depth at that position, the
-- function the code is in at the leaf when position is 0), frame_name (the
-- frames themselves, inline_depth 0: each frame of each stack, position 0
-- the leaf) and site
-- (recording_id, run_id, stack_id, site: the call site of each stack) that
-- rec-view --sql puts in the views that group by frame or site.  A frame's
-- name is spelt as rec-view spells it: the function (';' as ':'); without
-- one MODULE+0xOFFSET (the module's base name), or 0xOFFSET without a
-- module; [unknown] for a frame not in frames.  The site is the first frame
-- of the stack whose function does not start with rec_ (librec's own; the
-- leaf when every frame is).  An event without a stack matches no row: the
-- view spells it [no stack].
frame_all AS (
  SELECT s.recording_id, s.run_id, s.stack_id, s.position,
         coalesce(f.inline_depth, 0) AS inline_depth, f.function,
         CASE WHEN f.frame_id IS NULL THEN '[unknown]'
              WHEN f.function <> '' THEN replace(f.function, ';', ':')
              WHEN coalesce(f.module, '') <> ''
                THEN replace(f.module, rtrim(f.module, replace(f.module, '/', '')), '')
                     || '+0x' || lower(printf('%x', f.module_offset))
              ELSE '0x' || lower(printf('%x', f.module_offset)) END AS name,
         max(coalesce(f.inline_depth, 0)) OVER (PARTITION BY s.recording_id, s.run_id, s.stack_id,
                                                 s.position) AS innermost
  FROM stacks s
  LEFT JOIN frames f
    ON f.recording_id = s.recording_id AND f.run_id = s.run_id AND f.frame_id = s.frame_id
),
frame_name AS (
  SELECT recording_id, run_id, stack_id, position, function, name
  FROM frame_all
  WHERE inline_depth = 0
),
site_position AS (
  SELECT recording_id, run_id, stack_id,
         coalesce(min(CASE WHEN function IS NULL OR substr(function, 1, 4) <> 'rec_'
                           THEN position END), 0) AS position
  FROM frame_name
  GROUP BY recording_id, run_id, stack_id
),
site AS (
  SELECT n.recording_id, n.run_id, n.stack_id, n.name AS site
  FROM site_position p
  JOIN frame_name n
    ON n.recording_id = p.recording_id AND n.run_id = p.run_id AND n.stack_id = p.stack_id
   AND n.position = p.position
)
