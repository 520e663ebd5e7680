# Sourced by tests/run.sh when REC_VALGRIND=1 (make test-valgrind): the test
# suite under valgrind memcheck, leaks included (definite and indirect).
#  - each unit test binary runs as `valgrind ... $BUILD/tests/test_x`;
#  - the CLI scripts get REC_BIN and REC_TESTS pointing at directories of
#    wrapper scripts, one per program of $BUILD/bin and $BUILD/tests, that
#    exec the program under valgrind (exec: a pid a script waits for or
#    signals is the program's), so the scripts need no change;
#  - valgrind writes to its own log files, never to the program's stderr
#    (which scripts compare); after each test its logs are checked, and a test
#    whose programs had any memcheck error or definite/indirect leak fails,
#    with the report printed, whatever the exit status was (--error-exitcode
#    alone would miss a program a script expects to fail);
#  - REC_TEST_SCALE and REC_TEST_SLOWDOWN reach every program: heavy or
#    timing-based tests do less work or allow more time (tests/lib/scale.h).
# Defines vg_run, vg_script_env and vg_check for run.sh; its files live in
# run.sh's $res directory.
# shellcheck shell=bash

export REC_TEST_SCALE=${REC_TEST_SCALE:-0.1} REC_TEST_SLOWDOWN=${REC_TEST_SLOWDOWN:-30}
vg_cmd=(valgrind --tool=memcheck --error-exitcode=99 --leak-check=full
	--errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect
	--num-callers=30 --read-inline-info=yes --fair-sched=yes
	--suppressions="$PWD/tests/valgrind.supp")

# Programs the wrappers start WITHOUT valgrind, and why:
#  rec_test_crash: crashes on purpose (SIGSEGV, SIGBUS, ...) to test the
#    recorder's crash handler; memcheck would report the deliberate fault.
#  requestwatch: the demo service (requestwatch.sh, lockgraph.sh); its
#    scenario needs real concurrency (lock contention between request
#    threads), and valgrind runs one thread at a time: it recorded 2 lock
#    waits where the script requires 3.  The tools reading its recording
#    still run under valgrind; the recorder's code runs under valgrind in the
#    unit tests and the rec_test_* helpers.
#  requestwatch-plain: the same service built without rec, which rec-record
#    runs with the preload library (record_seed.sh, make demo): the same
#    concurrency, and valgrind would also take LD_PRELOAD as its own.
#    rec-record itself runs under valgrind.
#  requestwatch-shared: the same service linked against librec.so
#    (stacks_no_rec.sh), for the same reason.
vg_unwrapped=" rec_test_crash requestwatch requestwatch-shared requestwatch-plain "
# Timing-based scripts that run alone, not beside another valgrind job (run.sh
# REC_TEST_SOLO): requestwatch (its service must answer a request within
# 350 ms; beside a valgrind job on 2 cores it took 403 ms).
export REC_TEST_SOLO="${REC_TEST_SOLO:-} cli/requestwatch"
# CLI scripts run with the real programs, and why:
#  limits: runs the tools under `ulimit -v` 512 MiB (valgrind alone needs
#    more address space) and compares their CPU time on N and 8N inputs
#    (valgrind's start-up cost makes the ratio meaningless).
vg_plain_scripts=" limits "
# Program starts of the CLI scripts are sampled, to keep make test-valgrind
# near its CI budget (8 minutes on 2 cores; one tool start costs ~0.8 s of
# CPU under valgrind, and the scripts start ~1700): in each script, the first
# start of each program and every K-th start run under valgrind, the others
# natively.  K is 3, except for the scripts below (NAME:K); REC_VG_STRIDE=K
# (make test-valgrind VG_STRIDE=K) sets it for every script, 1 = all starts.
#  damaged:10  670 starts of rec-summary and rec-print over testdata's damaged
#    files (the fuzz replays run such input under ASan in make test-asan).
vg_user_stride=${REC_VG_STRIDE:-}
vg_stride=" damaged:10 "

mkdir -p "$res/vg-bin" "$res/vg-tests"
vg_wrap_dir() { # SRC DST: in DST, a wrapper per executable of SRC
	local src=$1 dst=$2 f name
	for f in "$src"/*; do
		[ -f "$f" ] && [ -x "$f" ] || continue
		name=$(basename "$f")
		case "$vg_unwrapped" in
		*" $name "*) ln -s "$f" "$dst/$name" ;;
		*)
			{
				echo '#!/usr/bin/env bash'
				echo '# Runs the program under valgrind (tests/valgrind.sh), its log in'
				echo '# $REC_VG_LOGS; with REC_VG_STRIDE=K > 1 only its first start in the'
				echo '# script and every K-th start of a program in the script.'
				echo 'if [ "${REC_VG_STRIDE:-1}" -gt 1 ]; then'
				echo '	exec 9>>"$REC_VG_LOGS/starts"; flock 9'
				echo '	n=$(wc -l <"$REC_VG_LOGS/starts"); seen=0'
				printf '\tgrep -qx %q "$REC_VG_LOGS/starts" && seen=1\n' "$name"
				printf '\techo %q >&9; exec 9>&-\n' "$name"
				printf '\tif [ "$seen" = 1 ] && [ $((n %% REC_VG_STRIDE)) -ne 0 ]; then exec %q "$@"; fi\n' "$f"
				echo 'fi'
				printf 'exec %s--log-file="${REC_VG_LOGS:?}/%%p.log" %q "$@"\n' "$(printf '%q ' "${vg_cmd[@]}")" "$f"
			} >"$dst/$name"
			chmod +x "$dst/$name"
			;;
		esac
	done
}
vg_wrap_dir "$REC_BIN" "$res/vg-bin"
vg_wrap_dir "$REC_TESTS" "$res/vg-tests"

# test_sampler runs with REC_SYMBOLIZE_SOURCES=off: under valgrind the
# recorder's background thread takes seconds to read libc's DWARF for the
# first source line, which holds up the CPU sampler's arming rounds, and the
# test's timing checks (samples of a thread that runs 300 ms) then fail.  A
# known cost of resolving sources in the background thread (a resolver
# thread of its own would remove it); the sources are tested elsewhere.
vg_run() { # N PROGRAM: runs a unit test binary under valgrind, logs in $res/vg.N
	mkdir -p "$res/vg.$1"
	case "${2##*/}" in
	test_sampler) REC_SYMBOLIZE_SOURCES=off "${vg_cmd[@]}" --log-file="$res/vg.$1/%p.log" "$2" ;;
	*) "${vg_cmd[@]}" --log-file="$res/vg.$1/%p.log" "$2" ;;
	esac
}

vg_script_env() { # N NAME: the environment of CLI script NAME (run.sh's test N)
	local k
	mkdir -p "$res/vg.$1"
	export REC_VG_LOGS=$res/vg.$1 REC_VG_STRIDE=3
	case "$vg_plain_scripts" in *" $2 "*) return 0 ;; esac
	export REC_BIN=$res/vg-bin REC_TESTS=$res/vg-tests
	for k in $vg_stride; do
		[ "${k%%:*}" = "$2" ] && REC_VG_STRIDE=${k#*:}
	done
	[ -z "$vg_user_stride" ] || REC_VG_STRIDE=$vg_user_stride
	return 0
}

# vg_check N: 0 when no log of test N reports an error; else prints those
# logs (indented) and returns 1.
vg_check() {
	local bad=0 f
	for f in "$res/vg.$1"/*.log; do
		[ -f "$f" ] || continue
		# The summary line counts errors, leaks of the kinds above included;
		# a process killed by a signal writes no summary: its log is also
		# searched for the reports themselves.
		if grep -Eq '== ERROR SUMMARY: [1-9]' "$f" ||
		   grep -Eq '^==[0-9]+== (Invalid (read|write|free)|Mismatched free|Conditional jump|Use of uninitialised|Syscall param|Source and destination overlap|Argument .* of function .* has a fishy|[0-9,]+ bytes in [0-9,]+ blocks are (definitely|indirectly) lost)' "$f"; then
			bad=1
			echo "[  FAILED  ] valgrind: $(grep -m1 -o 'Command: .*' "$f")"
			sed 's/^/    /' "$f"
		fi
	done
	rm -rf "$res/vg.$1"
	return "$bad"
}
