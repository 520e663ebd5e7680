#!/usr/bin/env bash
# Complete stacks (issue 19): the CPU samples of requestwatch under load on
# its allocating endpoint (its CPU time is in libc's malloc, built without
# frame pointers) reach the thread's root.  The recorder's walk follows
# .eh_frame (libfmt/record/stack_unwind.c) and stops where the CFI says the
# return address is undefined; this test checks that independently: the
# last frame of each rec.CPUSample stack, as module + offset from rec-print,
# is resolved by elfutils' eu-addr2line (with Debian's libc6-dbg for libc's
# unexported functions; both installed here when missing) and must be libc's
# start_thread/__clone3 (a thread) or the program's main/_start (the main
# thread).  At least 99 % of the samples, and at least 100 samples.
# The load: bench/loadgen.c (compiled here), 4 keep-alive connections in a
# closed loop for 4 s on /requests/allocating, recording with REC_OUTPUT and
# a CPU sample every 2 ms of a thread's CPU time (several hundred samples).
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tmp, root, fail, need_exe, cli_done
need_exe "$bin/requestwatch" "$bin/rec-print"
command -v python3 >/dev/null || { echo "FAIL: python3 missing"; exit 1; }
if [ "$(uname -m)" != x86_64 ]; then
	echo "skip: the CFI walk is x86-64 only (elsewhere stacks are frame-pointer walks)"
	exit 0
fi

install_deb() { # install_deb TEST PACKAGE: TEST is a command, or a path that must exist
	if [ "${1#/}" != "$1" ]; then [ -e "$1" ] && return 0; else command -v "$1" >/dev/null 2>&1 && return 0; fi
	[ "$(id -u)" = 0 ] || return 1
	echo "stacks_complete: installing Debian's $2"
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2") \
		>"$tmp/apt-$2.log" 2>&1 || { cat "$tmp/apt-$2.log"; return 1; }
}
install_deb eu-addr2line elfutils || { echo "FAIL: eu-addr2line (elfutils) is needed"; exit 1; }
install_deb /usr/lib/debug/.build-id libc6-dbg || { echo "FAIL: libc6-dbg is needed"; exit 1; }

${CC:-cc} -O2 -std=c17 -Wall -Wextra -Werror -D_GNU_SOURCE -pthread -o "$tmp/loadgen" "$root/bench/loadgen.c" -lm ||
	{ echo "FAIL: bench/loadgen.c does not compile"; exit 1; }

rec=$tmp/run.rec
out=$(REC_OUTPUT=$rec REC_CPU_SAMPLE_PERIOD=2ms timeout 60 "$tmp/loadgen" closed --conns 4 --duration 4 --keepalive \
	--path /requests/allocating -- "$bin/requestwatch" --port 0 2>"$tmp/server.err")
echo "  load: $out"
case "$out" in *" exit=0"*) ;; *) fail "loadgen/requestwatch: $out $(cat "$tmp/server.err")" ;; esac
ok=$(tr ' ' '\n' <<<"$out" | sed -n 's/^ok=//p')
[ "${ok:-0}" -ge 100 ] || fail "only ${ok:-0} requests answered"

timeout 60 "$bin/rec-print" --json-lines --events rec.CPUSample --stack-depth 4096 "$rec" >"$tmp/samples.jsonl" ||
	fail "rec-print failed"

# the share that ends at a root, by eu-addr2line (bench/stack_roots.py)
python3 "$root/bench/stack_roots.py" "$tmp/samples.jsonl" "$bin/requestwatch" --require 100:99 \
	>"$tmp/roots.txt" 2>"$tmp/roots.err" || fail "CPU samples: $(cat "$tmp/roots.err")"
sed 's/^/  /' "$tmp/roots.txt"

cli_done stacks_complete
