#!/usr/bin/env bash
# The output file of rec-cat (-o OUT), rec-scrub and rec-recover (OUT):
#   - a character device (/dev/full, a null device) or a symlink to one is
#     written directly, never replaced: /dev/full gives exit 1 and exactly
#     one line "TOOL: OUT: No space left on device", and stays a device;
#   - a FIFO is written directly: a reader gets bytes identical to the
#     regular-file output, and the FIFO stays a FIFO;
#   - a regular file is replaced atomically: a write that fails half-way
#     (RLIMIT_FSIZE: EFBIG) exits 1 with "TOOL: OUT: File too large" and
#     leaves the old content intact and no temporary file; through a
#     symlink the file it names is replaced and the symlink stays.
# rec-split (pieces written directly): a piece on /dev/full is named in the
# one error line.  Uses a recording made by the real recorder (REC_OUTPUT).
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
need_exe "$bin/rec-cat" "$bin/rec-scrub" "$bin/rec-recover" "$bin/rec-split" "$tests/rec_test_recorder_env"

REC_OPTIONS="chunk=16384,full=wait" REC_OUTPUT="$tmp/in.rec" "$tests/rec_test_recorder_env" 20000 \
	>/dev/null 2>&1 || fail "recording"
[ "$(stat -c %s "$tmp/in.rec" 2>/dev/null || echo 0)" -gt 8192 ] || { fail "recording too small"; cli_done archive_outfile; }

# run TOOL OUT: the tool writing in.rec to OUT, quietly; exit status in $rc,
# stderr in $tmp/err
run() {
	rc=0
	case $1 in
	rec-cat) "$bin/rec-cat" -q -o "$2" "$tmp/in.rec" 2>"$tmp/err" || rc=$? ;;
	rec-scrub) "$bin/rec-scrub" -q --exclude-events='rec.Log' "$tmp/in.rec" "$2" 2>"$tmp/err" || rc=$? ;;
	rec-recover) "$bin/rec-recover" -q "$tmp/in.rec" "$2" 2>"$tmp/err" || rc=$? ;;
	esac
}

# one_line TOOL WANT: stderr is exactly the line WANT
one_line() {
	local got
	got=$(cat "$tmp/err")
	[ "$got" = "$2" ] || fail "$1: stderr '$got', want exactly '$2'"
}

full_is_device() {
	if [ ! -c /dev/full ]; then
		fail "$1: /dev/full is no longer a character device (restored)"
		rm -f /dev/full && mknod -m 666 /dev/full c 1 7
	fi
}

[ -c /dev/full ] || { echo "archive_outfile: no /dev/full character device: skipped"; exit 0; }

for t in rec-cat rec-scrub rec-recover; do
	# the regular-file output, the reference
	run "$t" "$tmp/$t.ref"
	[ "$rc" = 0 ] || fail "$t: regular output: exit $rc: $(cat "$tmp/err")"
	[ -s "$tmp/$t.ref" ] || { fail "$t: no regular output"; continue; }
	"$bin/rec-check" -q "$tmp/$t.ref" >/dev/null 2>&1 || fail "$t: its output does not check"

	# /dev/full, directly and through a symlink
	full_is_device "$t (before)"
	run "$t" /dev/full
	[ "$rc" = 1 ] || fail "$t: /dev/full: exit $rc, want 1"
	one_line "$t /dev/full" "$t: /dev/full: No space left on device"
	full_is_device "$t -> /dev/full"
	ln -sf /dev/full "$tmp/full-link"
	run "$t" "$tmp/full-link"
	[ "$rc" = 1 ] || fail "$t: symlink to /dev/full: exit $rc, want 1"
	one_line "$t link" "$t: $tmp/full-link: No space left on device"
	[ -L "$tmp/full-link" ] || fail "$t: the symlink to /dev/full was replaced"
	full_is_device "$t -> symlink to /dev/full"

	# a null device (a private node: a tool that replaced it must not
	# replace the system's /dev/null): success, still a device
	if mknod -m 666 "$tmp/null" c 1 3 2>/dev/null && [ -c "$tmp/null" ]; then
		run "$t" "$tmp/null"
		[ "$rc" = 0 ] || fail "$t: null device: exit $rc: $(cat "$tmp/err")"
		[ -c "$tmp/null" ] || fail "$t: the null device was replaced"
		rm -f "$tmp/null"
	fi

	# a FIFO: a reader gets the same bytes as the regular file
	rm -f "$tmp/fifo" "$tmp/copy"
	mkfifo "$tmp/fifo"
	cat "$tmp/fifo" >"$tmp/copy" &
	reader=$!
	run "$t" "$tmp/fifo"
	[ "$rc" = 0 ] || fail "$t: FIFO: exit $rc: $(cat "$tmp/err")"
	for _ in $(seq 100); do kill -0 "$reader" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$reader" 2>/dev/null; then
		fail "$t: the FIFO's reader got no end of file (the FIFO was not written)"
		kill "$reader" 2>/dev/null
	fi
	wait "$reader" 2>/dev/null
	[ -p "$tmp/fifo" ] || fail "$t: the FIFO was replaced"
	cmp -s "$tmp/copy" "$tmp/$t.ref" || fail "$t: what the FIFO carried differs from the regular output"

	# a regular file: a write that fails half-way leaves the old content
	# (not under make test-valgrind: the limit would cut valgrind's own logs)
	if [ "${REC_VALGRIND:-0}" != 1 ]; then
		printf 'old content\n' >"$tmp/old"
		rc=0
		(
			trap '' XFSZ
			ulimit -f 4 # KiB: the output is larger
			run "$t" "$tmp/old"
			exit "$rc"
		) || rc=$?
		[ "$rc" = 1 ] || fail "$t: failing write: exit $rc, want 1"
		one_line "$t EFBIG" "$t: $tmp/old: File too large"
		[ "$(cat "$tmp/old")" = "old content" ] || fail "$t: the old content was not kept after a failed write"
		left=$(find "$tmp" -name '*.tmp.*')
		[ -z "$left" ] || { fail "$t: temporary file left: $left"; rm -f "$left"; }
	fi

	# through a symlink to a regular file: the file is replaced, the symlink stays
	printf 'old content\n' >"$tmp/target"
	ln -sf "$tmp/target" "$tmp/link"
	run "$t" "$tmp/link"
	[ "$rc" = 0 ] || fail "$t: symlink: exit $rc: $(cat "$tmp/err")"
	[ -L "$tmp/link" ] || fail "$t: the symlink was replaced by a file"
	cmp -s "$tmp/target" "$tmp/$t.ref" || fail "$t: the symlink's target does not hold the output"
done

# rec-split writes its pieces directly (no rename): a piece name that is a
# symlink to /dev/full fails with one line naming the piece, and /dev/full
# stays a device
mkdir "$tmp/split"
ln -s /dev/full "$tmp/split/p-0001.rec"
rc=0; "$bin/rec-split" --by run -o "$tmp/split/p" "$tmp/in.rec" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "rec-split: piece on /dev/full: exit $rc, want 1"
one_line "rec-split" "rec-split: $tmp/split/p-0001.rec: No space left on device"
[ -L "$tmp/split/p-0001.rec" ] || fail "rec-split: the symlink to /dev/full was replaced"
full_is_device rec-split

cli_done archive_outfile
