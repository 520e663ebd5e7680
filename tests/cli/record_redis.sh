#!/usr/bin/env bash
# A real program nobody here wrote (issue 18): Debian's redis-server,
# unmodified (the main thread, bio_* and jemalloc_bg_thd threads), run on
# 127.0.0.1 alone and under rec-record, driven by redis-benchmark (set, get,
# lpush, lpop; 20 clients, 20,000 requests each), then 3 sets of 100,000
# elements UNLINKed (freed by the bio_lazy_free thread).  Both ways it must
# keep working: redis-benchmark reports all 4 tests, a value set is read back
# byte for byte, and SIGTERM ends it with the same exit status.  Its
# recording: one run of its pid, closed cleanly; its threads by name
# (redis-server, bio_close_file, bio_aof_fsync, bio_lazy_free); CPU samples
# with frames in /usr/bin/redis-server (a link to redis-check-rdb, the
# module the recording names), 10 or more of their frames named by redis's
# exported symbols (processCommand, call, dictAddRaw...: which ones, by
# chance: ~100 samples, and its frames without frame pointers end the
# unwinding early); rec.CondWait events of its bio_* threads, which wait
# on condition variables for jobs.  tests/cli/lib/servers.sh has the steps.
# Skipped under SAN=1 (the ASan-built preload library cannot load into
# Debian's servers); under REC_VALGRIND=1 the servers run natively, as in
# the other preload tests.  Was tests/pending/: redis-server (linked with
# libjemalloc.so.2) hung at start under the preload library, first
# re-entering jemalloc from the recorder's lock bookkeeping while jemalloc
# held its own mutex (bcadd7a: the real allocator runs inside the
# recorder), then in a lock order inversion between rec_g_lock and a
# jemalloc mutex (efa8e6b: thread buffers are mmap'ed).
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/servers.sh
source "$(dirname "$0")/lib/servers.sh"
servers_setup redis-server redis-tools

rd_rc=x
run_redis plain
rd_plain=$rd_rc
run_redis rec
[ "$rd_rc" = "$rd_plain" ] || fail "redis-server's exit status after SIGTERM: $rd_rc under rec-record, $rd_plain without"
echo "exit status after SIGTERM: redis-server $rd_plain without rec-record, $rd_rc with it"
check_recording "$tmp/redis.rec" "$rd_pid" redis-server \
	'{"threads": {"redis-server": 1, "bio_close_file": 1, "bio_aof_fsync": 1, "bio_lazy_free": 1},
	  "named_frames": 10, "waits": {"rec.CondWait": "bio_.*"}}'

cli_done record_redis
