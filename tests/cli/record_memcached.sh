#!/usr/bin/env bash
# A real program nobody here wrote (issue 18): Debian's memcached, unmodified
# and multithreaded (-t 4: 4 mc-worker threads and its maintenance threads),
# run twice on 127.0.0.1 under the same load, once alone and once under
# rec-record: memcaslap (libmemcached-tools) for 3 s, 2 threads x 16
# connections, 90 % get / 10 % set, verifying 10 % of the values read.
# Both ways memcached must keep working: memcaslap reports no failed or
# missed verification, a value set is read back byte for byte, and SIGTERM
# ends it with the same exit status as without rec-record.  Its recording:
# one run of memcached's pid, closed cleanly; its threads by name (mc-worker
# x 4, and 2 of its maintenance threads: a thread is named by its events,
# and an idle one whose events precede its naming keeps its first name);
# at least 10 rec.CPUSample events with frames in /usr/bin/memcached
# (Debian's binary is stripped: addresses, no names); rec.LockWait events
# (threshold 20 us) on mc-worker threads, where its workers share locks;
# the stacks of its threads' lock waits, sleeps and CPU samples reach the
# thread's root (see below).
# memcached and libmemcached-tools are installed with apt-get when missing.
# (redis-server is tests/cli/record_redis.sh.)  tests/cli/lib/servers.sh
# has the steps.
# Skipped under SAN=1 (the ASan-built preload library cannot load into
# Debian's servers); under REC_VALGRIND=1 the servers run natively, as in
# the other preload tests.  Was tests/pending/: the names memcached's main
# thread gives its workers (pthread_setname_np on another thread) reached
# the recording for 2 to 4 of the 4 until thread_interpose.c passed a
# rename of another thread on (bcadd7a).
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/servers.sh
source "$(dirname "$0")/lib/servers.sh"
servers_setup memcached libmemcached-tools elfutils libc6-dbg

mc_rc=x
run_memcached plain
mc_plain=$mc_rc
run_memcached rec
[ "$mc_rc" = "$mc_plain" ] || fail "memcached's exit status after SIGTERM: $mc_rc under rec-record, $mc_plain without"
echo "exit status after SIGTERM: memcached $mc_plain without rec-record, $mc_rc with it"
check_recording "$tmp/memcached.rec" "$mc_pid" memcached \
	'{"threads": {"mc-worker": 4}, "some_threads": {"names": ["mc-lrumaint", "mc-slabmaint", "mc-assocmaint", "mc-itemcrawler", "mc-log", "mc-conncheck"], "at_least": 2}, "waits": {"rec.LockWait": "mc-worker"}}'

# Its threads' stacks reach their root although neither memcached nor
# libevent keeps frame pointers (Debian builds them without): the stacks the
# threads captured themselves inside the preload's interposers (rec.LockWait,
# rec.Sleep) walk the call-frame information as the CPU samples do.  The last
# frame of each stack of memcached's named threads (mc-*), resolved by
# elfutils' eu-addr2line with Debian's libc6-dbg, is libc's start_thread or
# __clone3 for at least 99 % of them (bench/stack_roots.py; the frame-pointer
# walk, REC_UNWIND=fp, gave 0-1 % and one frame a stack), and no frame is the
# recorder's own (the preload's start routine stood between start_thread and
# memcached's thread function).
for t in rec.LockWait rec.Sleep rec.CPUSample; do
	timeout 60 "$bin/rec-print" --json-lines --events "$t" --stack-depth 4096 "$tmp/memcached.rec" \
		>"$tmp/stacks-$t.jsonl" 2>/dev/null || fail "rec-print --events $t failed"
	python3 "$root/bench/stack_roots.py" "$tmp/stacks-$t.jsonl" "$(command -v memcached)" \
		--thread mc- --stacked --require 10:99 >"$tmp/roots-$t.txt" 2>"$tmp/roots-$t.err" ||
		fail "$t on memcached's threads: $(cat "$tmp/roots-$t.err")"
	sed "s/^/  $t: /" "$tmp/roots-$t.txt" | head -4
done

cli_done record_memcached
