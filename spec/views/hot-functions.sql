-- rec-view hot-functions: per function (a frame spelt as rec-view spells
-- it: frame_all, WITH the sites of spec/views/site.with.sql; a function
-- inlined into a frame counts as a function of its own, as in rec-view), the
-- rec.CPUSample events whose leaf it is (self_samples: the innermost function
-- inlined at the leaf frame, else that frame) and their CPU time
-- (self_cpu: period x (1 + overruns), ns), and the samples whose stack holds
-- it (total_samples, once per sample however often it is on the stack) and
-- their CPU time (total_cpu), exactly as rec-view counts them; a sample
-- without a stack is [no stack]; self_percent and total_percent: 100 x
-- self_cpu (total_cpu) / the CPU time of all the samples, in floating point
-- as rec-view (0 without CPU time).
WITH {site},
per_stack AS (
  SELECT recording_id, run_id, stack_id, count(*) AS samples,
         sum(coalesce(period, 0) * (1 + coalesce(overruns, 0))) AS cpu
  FROM rec_CPUSample
  GROUP BY recording_id, run_id, stack_id
),
self AS (
  SELECT coalesce(n.name, '[no stack]') AS name, sum(p.samples) AS samples, sum(p.cpu) AS cpu
  FROM per_stack p
  LEFT JOIN frame_all n
    ON n.recording_id = p.recording_id AND n.run_id = p.run_id AND n.stack_id = p.stack_id
   AND n.position = 0 AND n.inline_depth = n.innermost
  GROUP BY coalesce(n.name, '[no stack]')
),
on_stack AS (
  SELECT DISTINCT p.recording_id, p.run_id, p.stack_id, coalesce(n.name, '[no stack]') AS name
  FROM per_stack p
  LEFT JOIN frame_all n
    ON n.recording_id = p.recording_id AND n.run_id = p.run_id AND n.stack_id = p.stack_id
),
total AS (
  SELECT o.name, sum(p.samples) AS samples, sum(p.cpu) AS cpu
  FROM on_stack o
  JOIN per_stack p
    ON p.recording_id = o.recording_id AND p.run_id = o.run_id
   AND (p.stack_id = o.stack_id OR (p.stack_id IS NULL AND o.stack_id IS NULL))
  GROUP BY o.name
)
SELECT t.name AS "function",
       coalesce(s.samples, 0) AS self_samples,
       coalesce(s.cpu, 0) AS self_cpu,
       CASE WHEN a.cpu > 0 THEN 100.0 * CAST(coalesce(s.cpu, 0) AS DOUBLE) / CAST(a.cpu AS DOUBLE)
            ELSE 0.0 END AS self_percent,
       t.samples AS total_samples,
       t.cpu AS total_cpu,
       CASE WHEN a.cpu > 0 THEN 100.0 * CAST(t.cpu AS DOUBLE) / CAST(a.cpu AS DOUBLE)
            ELSE 0.0 END AS total_percent
FROM total t
CROSS JOIN (SELECT sum(cpu) AS cpu FROM per_stack) a
LEFT JOIN self s ON s.name = t.name
ORDER BY self_cpu DESC, total_cpu DESC, "function"
