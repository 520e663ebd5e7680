# shellcheck shell=bash disable=SC2034 # preload is for the sourcing script
# preload.sh - sourced by the preload library's tests (tests/cli/preload_*.sh)
# after common.sh: $preload, the library (build/lib/librec-preload.so), and
# the skip under SAN=1 (the library is built with ASan then, and ASan's
# runtime must come first in a process: preloaded into a program built
# without it, it refuses to run; and a malloc interposer cannot stand
# before ASan's own in a sanitized program).
#
#   preloaded NAME OUTPUT OPTIONS PROGRAM [ARGS...]: run PROGRAM with the
#   preload, REC_OUTPUT=OUTPUT and REC_OPTIONS=OPTIONS; stdout in
#   $tmp/NAME.out, stderr in $tmp/NAME.err, exit status in $rc.
if [ "${SAN:-}" = 1 ]; then
	echo "skip: the preload library cannot run under ASan (its runtime must be first in the process)"
	exit 0
fi
# The build's own directories, also under REC_VALGRIND=1 (run.sh then points
# REC_BIN and REC_TESTS at valgrind wrappers): the plain programs run
# natively with the preload, as requestwatch-plain does (valgrind would take
# LD_PRELOAD as its own, and runs one thread at a time); the tools reading
# their recordings still run under valgrind through $bin.
build_dir=${BUILD:-$bin/..}
case "$build_dir" in /*) ;; *) build_dir=$root/$build_dir ;; esac
preload=$(cd "$build_dir/lib" && pwd)/librec-preload.so
tests=$(cd "$build_dir/tests" && pwd)
need_exe "$preload"
preloaded() {
	local name=$1 out=$2 opt=$3
	shift 3
	rc=0
	timeout 120 env LD_PRELOAD="$preload" REC_OUTPUT="$out" REC_OPTIONS="$opt" "$@" \
		>"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
}
# value NAME KEY: the value the program printed for KEY
value() { sed -n "s/^$2 //p" "$tmp/$1.out"; }
