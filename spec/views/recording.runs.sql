-- rec-view recording, its runs table: one row per run (rows of runs with
-- the same run_id, pid and process_start_ns, from any input, are one run,
-- as rec-summary counts them), in the order first met (input, then chunk):
-- run_id, pid, start (its first event, ns since the epoch), duration (to
-- the end of its last event), chunks, events and dropped (sums over its
-- chunks: a chunk in two inputs counts twice, as in rec-view), and ended,
-- how the run ended as rec-summary tells it: 'clean close' (the chunk
-- with its highest chunk_seq is flagged final), else 'crash event' (a
-- chunk of it has rec.Crash events), else 'truncated' (an input ends
-- inside a chunk after one of the run), else 'no final chunk'.  Times
-- through epoch_ns() (DuckDB over Parquet: rounded down to the
-- microsecond).
-- --top: every row (rec-view does not cut this table; no LIMIT)
WITH last_chunk AS (
  SELECT run_id, max(chunk_seq) AS seq FROM chunks GROUP BY run_id
),
run AS (
  SELECT r.run_id, r.pid, r.process_start_ns,
         min(epoch_ns(r.first_event_ns)) AS first_ns, max(epoch_ns(r.last_event_ns)) AS last_ns,
         sum(r.chunks) AS chunks, sum(r.events) AS events, sum(r.dropped_events) AS dropped,
         CASE WHEN (SELECT max(CASE WHEN c.final THEN 1 ELSE 0 END)
                    FROM chunks c JOIN last_chunk l ON l.run_id = c.run_id AND l.seq = c.chunk_seq
                    WHERE c.run_id = r.run_id) = 1 THEN 'clean close'
              WHEN sum(r.crash_events) > 0 THEN 'crash event'
              WHEN max(CASE WHEN r.truncated THEN 1 ELSE 0 END) = 1 THEN 'truncated'
              ELSE 'no final chunk' END AS ended,
         (SELECT min(c.recording_id * 4294967296 + c.chunk_index) FROM chunks c
          WHERE c.run_id = r.run_id) AS seen
  FROM runs r
  GROUP BY r.run_id, r.pid, r.process_start_ns
)
SELECT run_id, pid, first_ns AS start, last_ns - first_ns AS duration, chunks, events, dropped, ended
FROM run
ORDER BY seen
