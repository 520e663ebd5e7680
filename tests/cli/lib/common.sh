# shellcheck shell=bash disable=SC2034 # bin, tests, root are for the sourcing script
# common.sh - sourced (not run) by tests/cli/*.sh scripts: the set-up they
# share.  Not directly under tests/cli/ because tests/run.sh runs every
# tests/cli/*.sh as a test.
#
#   # shellcheck source=tests/cli/lib/common.sh
#   source "$(dirname "$0")/lib/common.sh"
#
# Sets:
#   bin      the tools: $REC_BIN, or $BUILD/bin when REC_BIN is not a directory
#            (tests/run.sh sets REC_BIN; BUILD=... bash tests/cli/X.sh works too)
#   tests    the test programs: $REC_TESTS, or $BUILD/tests
#   root     the source tree: $REC_ROOT, or two levels above this file
#   tmp      a scratch directory, removed at exit (an EXIT trap; a script that
#            sets its own EXIT trap removes $tmp there)
#   fails    0; fail MESSAGE prints "FAIL: MESSAGE" and counts it
# Functions:
#   need_exe PATH...   exit 1 with "FAIL: PATH missing" unless each is executable
#   cli_done NAME      print "NAME: ok" if nothing failed, exit 0 or 1
# Exits (through ${VAR:?}) when neither REC_BIN/REC_TESTS nor BUILD give them.

if [ ! -d "${REC_BIN:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/bin" ]; then REC_BIN=$BUILD/bin; fi
if [ ! -d "${REC_TESTS:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/tests" ]; then REC_TESTS=$BUILD/tests; fi
bin=${REC_BIN:?REC_BIN (or BUILD) must name the build}
tests=${REC_TESTS:?REC_TESTS (or BUILD) must name the build}
root=${REC_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

need_exe() {
	local p
	for p in "$@"; do
		[ -x "$p" ] || { echo "FAIL: $p missing"; exit 1; }
	done
}

cli_done() {
	[ "$fails" = 0 ] && echo "$1: ok"
	exit $((fails != 0))
}
