#!/usr/bin/env bash
# pthread_setname_np after the thread was written out: tests/helpers/
# plain_rename.c (without librec) has a thread that names itself "before"
# at its start, sleeps 30 ms and 900 ms (recorded with flush=100ms: the
# thread is written out under "before" long before), names itself "after",
# sleeps 50 ms, waits about 100 ms for a mutex the main thread holds, sleeps
# 70 ms and exits.  The name follows: the 30 and 900 ms sleeps are
# "before"'s, a rec.ThreadStart "after" of the same tid comes next, and the
# 50 ms sleep, the lock wait, the 70 ms sleep and the rec.ThreadEnd are
# "after"'s (rec-print); rec-view threads shows the tid on one row, under
# "after".  Its second thread is renamed by the main thread: "o-before"
# right after its start, "o-after" long after it was written out (when the
# worker renamed itself); its 30 ms sleep is "o-before"'s, and a
# rec.ThreadStart "o-after" of the same tid precedes its 50 ms sleep and
# its rec.ThreadEnd.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/preload.sh
source "$(dirname "$0")/lib/preload.sh"
need_exe "$tests/plain_rename" "$bin/rec-print" "$bin/rec-view"

preloaded rn "$tmp/rn.rec" "flush=100ms" "$tests/plain_rename"
[ "$rc" = 0 ] || fail "plain_rename: exit $rc: $(cat "$tmp/rn.err")"
w=$(value rn worker_tid)
o=$(value rn other_tid)
# one line per event of thread $1: TYPE NAME [requested ms]
events_of() {
	"$bin/rec-print" --events 'rec.Sleep,rec.LockWait,rec.ThreadStart,rec.ThreadEnd' "$tmp/rn.rec" |
	awk -v w="$1" '
		/^rec\./ { type = $1; name = ""; req = ""; mine = 0 }
		/eventThread = / { if ($0 ~ "\\(tid " w "\\)") { mine = 1; n = $0; sub(/.*eventThread = "/, "", n); sub(/".*/, "", n); name = n } }
		/requested = / { r = $0; sub(/.*requested = /, "", r); sub(/\..*/, "", r); req = r }
		/^}/ { if (mine) print type, name, req }
	'
}
events_of "$w" >"$tmp/worker.txt"
cat >"$tmp/want.txt" <<'WANT'
rec.ThreadStart before 
rec.Sleep before 30
rec.Sleep before 900
rec.ThreadStart after 
rec.Sleep after 50
rec.LockWait after 
rec.Sleep after 70
rec.ThreadEnd after 
WANT
diff "$tmp/want.txt" "$tmp/worker.txt" >"$tmp/d.txt" || fail "the worker's events (type, thread name, ms):
$(cat "$tmp/d.txt")"
events_of "$o" >"$tmp/other.txt"
cat >"$tmp/want-o.txt" <<'WANT'
rec.ThreadStart o-before 
rec.Sleep o-before 30
rec.ThreadStart o-after 
rec.Sleep o-after 50
rec.ThreadEnd o-after 
WANT
diff "$tmp/want-o.txt" "$tmp/other.txt" >"$tmp/d.txt" || fail "the other thread's events (type, thread name, ms):
$(cat "$tmp/d.txt")"

"$bin/rec-view" threads "$tmp/rn.rec" >"$tmp/view.txt" || fail "rec-view threads failed"
row=$(awk -v w="$w" '$2 == w' "$tmp/view.txt")
[ "$(awk '{print $1}' <<<"$row")" = after ] || fail "rec-view threads: tid $w is not 'after': $(cat "$tmp/view.txt")"
[ "$(grep -c " $w " "$tmp/view.txt")" = 1 ] || fail "rec-view threads: tid $w not on one row"
row=$(awk -v o="$o" '$2 == o' "$tmp/view.txt")
[ "$(awk '{print $1}' <<<"$row")" = o-after ] || fail "rec-view threads: tid $o is not 'o-after': $(cat "$tmp/view.txt")"
[ "$(grep -c " $o " "$tmp/view.txt")" = 1 ] || fail "rec-view threads: tid $o not on one row"
cli_done preload_rename
