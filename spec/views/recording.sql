-- rec-view recording, its first table: files (the inputs with readable
-- chunks), chunks (readable chunks), events and dropped (their
-- Event_Count and Dropped_Events statistics), runs (as in
-- recording.runs.sql: rows of runs with the same run_id, pid and
-- process_start_ns are one), restarts (runs - 1), crashes (the runs that
-- ended with a crash event, as recording.runs.sql tells it),
-- write_failures (rec.WriteFailed events) and chunks_not_written (their
-- chunks, for action 0: chunks discarded); chunks_damaged from runs'
-- damaged_chunks (a damaged chunk is no row of chunks: rec-sql reports it
-- on stderr, exits 1, and counts it to the run of the good chunk before
-- it, or after it; the damaged chunks of an input without a good chunk
-- are not counted, as that input is not in files).
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
SELECT (SELECT count(DISTINCT recording_id) FROM chunks) AS files,
       (SELECT count(*) FROM chunks) AS chunks,
       (SELECT coalesce(sum(damaged_chunks), 0) FROM runs) AS chunks_damaged,
       (SELECT coalesce(sum(events), 0) FROM chunks) AS events,
       (SELECT coalesce(sum(dropped_events), 0) FROM chunks) AS dropped,
       (SELECT count(*) FROM run) AS runs,
       CASE WHEN (SELECT count(*) FROM run) > 1 THEN (SELECT count(*) FROM run) - 1 ELSE 0 END AS restarts,
       (SELECT count(*) FROM run WHERE ended = 'crash event') AS crashes,
       (SELECT count(*) FROM rec_WriteFailed) AS write_failures,
       (SELECT coalesce(sum(CASE WHEN w.action = 0 THEN w.chunks ELSE 0 END), 0)
        FROM rec_WriteFailed w) AS chunks_not_written
