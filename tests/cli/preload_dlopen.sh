#!/usr/bin/env bash
# A library dlopen'ed after the recording started: tests/helpers/
# plain_dlopen.c (without librec) sleeps 20 ms, then loads a library built
# here from tests/cli/dlopen/plain_dl_lib.c and calls it: a thread of the
# library holds the library's static plain_dl_lock for 80 ms (sleeping in
# it) while the caller waits for it, then the caller allocates 1 MiB in
# 4 KiB blocks (alloc=16KiB: about 64 samples).  The recording has the lock
# wait (40 ms or more, the lock named by the library's symbol, a holder
# other than the waiter) with the library's frames named
# (plain_dl_waiter, plain_dl_run in libplaindl.so, then the program's
# main), the holder's 80 ms sleep in plain_dl_holder, and at least 20
# sampled allocations in plain_dl_allocate (about 64 expected).
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/preload.sh
source "$(dirname "$0")/lib/preload.sh"
need_exe "$tests/plain_dlopen" "$bin/rec-print"
command -v cc >/dev/null || { echo "skip: no C compiler to build the library"; exit 0; }

lib=$tmp/libplaindl.so
cc -shared -fPIC -O1 -g -fno-omit-frame-pointer -pthread -o "$lib" "$root/tests/cli/dlopen/plain_dl_lib.c" ||
	fail "cc -shared failed"
preloaded dl "$tmp/dl.rec" "alloc=16KiB" "$tests/plain_dlopen" "$lib"
[ "$rc" = 0 ] || fail "plain_dlopen: exit $rc: $(cat "$tmp/dl.err")"
[ "$(value dl run)" = 257 ] || fail "plain_dl_run gave $(value dl run), want 257"
main=$(value dl main_tid)

"$bin/rec-print" --events rec.LockWait "$tmp/dl.rec" >"$tmp/w.txt" || fail "rec-print failed"
[ "$(grep -c '^rec.LockWait' "$tmp/w.txt")" = 1 ] || fail "not one lock wait: $(cat "$tmp/w.txt")"
grep -q 'lockName = "plain_dl_lock"' "$tmp/w.txt" || fail "the lock is not named plain_dl_lock: $(cat "$tmp/w.txt")"
grep -q "eventThread = .* (tid $main)" "$tmp/w.txt" || fail "the wait is not the main thread's"
holder=$(sed -n 's/^ *holderOsThreadId = //p' "$tmp/w.txt")
[ -n "$holder" ] && [ "$holder" != 0 ] && [ "$holder" != "$main" ] || fail "holder $holder"
ms=$(sed -n 's/^ *duration = \([0-9.]*\) ms$/\1/p' "$tmp/w.txt")
awk -v m="${ms:-0}" 'BEGIN { exit !(m >= 40 && m < 2000) }' || fail "the wait lasted '${ms}' ms, want 40 or more"
# the frames, in order: the library's two, then the program's main
# (a frame is "function+0xOFF (module)", or "function (file:line)" when the
# debug information gave its source line)
sed -n '/stackTrace = \[/,/\]/p' "$tmp/w.txt" | sed -n 2,4p | sed 's/+0x[0-9a-f]*//; s/^ *//' >"$tmp/frames.txt"
printf '%s\n' "plain_dl_waiter [(](libplaindl[.]so|plain_dl_lib[.]c:[0-9]+)[)]" \
	"plain_dl_run [(](libplaindl[.]so|plain_dl_lib[.]c:[0-9]+)[)]" \
	"main [(](plain_dlopen|plain_dlopen[.]c:[0-9]+)[)]" >"$tmp/want.txt"
paste -d '\n' "$tmp/want.txt" "$tmp/frames.txt" | awk 'NR % 2 { re = "^" $0 "$"; next } $0 !~ re { bad = 1 } END { exit bad }' &&
	[ "$(wc -l <"$tmp/frames.txt")" -eq 3 ] || fail "the wait's frames: $(cat "$tmp/frames.txt")"

"$bin/rec-print" --events rec.Sleep "$tmp/dl.rec" >"$tmp/s.txt" || fail "rec-print failed"
grep -A12 'requested = 80' "$tmp/s.txt" | grep -Eq 'plain_dl_holder(\+0x[0-9a-f]* \(libplaindl.so\)| \(plain_dl_lib.c:[0-9]+\))' ||
	fail "the holder's 80 ms sleep is not in plain_dl_holder: $(cat "$tmp/s.txt")"

"$bin/rec-print" --events rec.Alloc "$tmp/dl.rec" >"$tmp/a.txt" || fail "rec-print failed"
n=$(grep -Ec 'plain_dl_allocate(\+0x[0-9a-f]* \(libplaindl.so\)| \(plain_dl_lib.c:[0-9]+\))' "$tmp/a.txt")
[ "$n" -ge 20 ] || fail "$n sampled allocations in plain_dl_allocate, want about 64"
cli_done preload_dlopen
