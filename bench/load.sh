#!/usr/bin/env bash
# bench/load.sh [--quick] - issue #7 item 4: the example HTTP service
# (examples/requestwatch.c) under an open-loop load, recording off and on.
#
#   BUILD=build bash bench/load.sh           full: 3 runs x 10 s per setting
#   BUILD=build bash bench/load.sh --quick   quick: 3 runs x 2 s per setting, 6 settings
#   (LOAD_ALL_SETTINGS=1: all nine)
#
# Environment: LOAD_RATE (requests/s with a connection per request; default
# 70 % of the capacity measured first), LOAD_RATE_KEEPALIVE (the same with
# persistent connections), LOAD_DURATION (s per run), LOAD_RUNS (runs per setting),
# LOAD_TIMEOUT (s the client waits for a response: 10, quick 3),
# LOAD_STARTUP_RUNS (start-up measurements per setting), LOAD_CAP_RUNS,
# LOAD_SETTINGS (names of the settings to run, e.g. "koff kon"; default all).
# Prints a markdown section on stdout, writes it to $BUILD/bench/load.md and
# the figures as key=value lines to $BUILD/bench/load.kv (bench/run.sh puts
# them in the leading table).  Expects $BUILD/bin/requestwatch and
# rec-summary, rec-print built (make all).
#
# What it does:
# 1. compiles bench/loadgen.c (the load generator) with the Makefile's flags;
# 2. capacity: `loadgen closed --conns 2` (2 connections, one per core, in a
#    closed loop, recording off), LOAD_CAP_RUNS runs, median requests/s (and
#    --conns 8 for information); the same with --keepalive (persistent
#    connections: the service's threads live for the whole run);
# 3. rate = 70 % of that capacity (of the keep-alive one for the k* settings),
#    both measured again at the start of every round (one run each) and the
#    round's rates taken from those; for run 1..RUNS, for each setting in turn
#    (interleaved, so slow phases of this shared machine hit every setting):
#    `loadgen open [--keepalive] --rate RATE --duration D -- requestwatch --port 0`, which
#    starts the service, times its start-up, sends GET /requests/fast on a
#    fixed schedule, latency from each request's scheduled send time
#    (coordinated omission corrected, as wrk2), SIGINTs the service and waits
#    for its exit (the recording is finished then);
# 4. for each recording: rec-summary --json (app.Request count, events,
#    dropped) and a per-connection reconciliation: every connection thread
#    conn-N serves one request, so requests sent = app.Request recorded +
#    connection threads whose events were dropped (rec.Dropped naming the
#    thread) without an app.Request in the file; with persistent connections
#    a thread serves many requests: sent = app.Request recorded exactly, or
#    short by at most the events dropped on conn-N threads;
# 5. start-up: `loadgen startup -- requestwatch --port 0` (fork -> the line
#    "listening on ..." read), STARTUP_RUNS per setting, interleaved.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
quick_args 34 "$@"
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
if [ "$QUICK" = 1 ]; then
	DURATION=${LOAD_DURATION:-2}; RUNS=${LOAD_RUNS:-3}; SRUNS=${LOAD_STARTUP_RUNS:-3}; CAPRUNS=${LOAD_CAP_RUNS:-1}; CAPDUR=2; TIMEOUT=${LOAD_TIMEOUT:-3}
else
	TIMEOUT=${LOAD_TIMEOUT:-10}; DURATION=${LOAD_DURATION:-10}; RUNS=${LOAD_RUNS:-3}; SRUNS=${LOAD_STARTUP_RUNS:-11}; CAPRUNS=${LOAD_CAP_RUNS:-3}; CAPDUR=3
fi
OUT="$BUILD/bench"
DATA="$OUT/load-data"
LOG="$OUT/load-log.txt"
MD="$OUT/load.md"
KV="$OUT/load.kv"
rm -rf "$DATA"
mkdir -p "$OUT" "$DATA"
: >"$LOG"
: >"$KV"
say() { printf '[load %s] %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$LOG" >&2; }
die() { say "error: $*"; printf '## A service under load\n\nnot measured: %s\n' "$*" | tee "$MD"; exit 0; }
BIN="$BUILD/bin"
for t in requestwatch rec-summary rec-print; do
	[ -x "$BIN/$t" ] || die "$BIN/$t is missing (make all BUILD=$BUILD)"
done
command -v python3 >/dev/null || die "python3 is missing"
bench_flags
LG="$OUT/loadgen"
LG_CMD="$B_CC $B_CFLAGS -o $LG bench/loadgen.c"
say "compiling: $LG_CMD"
# shellcheck disable=SC2086
$LG_CMD >>"$LOG" 2>&1 || die "bench/loadgen.c does not compile (see $LOG)"
RW="$BIN/requestwatch"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
T0=$EPOCHREALTIME

minmax() { sort -g | awk 'NR==1{a=$1} {b=$1} END{ if (NR==0) print "nan nan"; else print a, b }'; }

# ---- settings --------------------------------------------------------------
# name|REC_OUTPUT?|REC_OPTIONS|label|service arguments|loadgen arguments
# The first three: a new connection (so a new connection thread) for every
# request; k*: persistent connections (--keepalive, 16 of them, requests sent
# one after another on each, as wrk2 does), at their own rate.
SETTINGS=(
	"off|0||recording off|"
	"on|1||recording on, defaults (REC_OUTPUT only: lock waits >= 10 us, sleeps, reported allocations, CPU samples at 100 Hz, no stacks on app.Request)|"
	"all|1|events=*:stack=on:threshold=0|recording on, everything with a stack trace on every event (REC_OPTIONS='events=*:stack=on:threshold=0')|"
	"koff|0||persistent connections, recording off||--keepalive"
	"kon|1||persistent connections, recording on, defaults||--keepalive"
	"kall|1|events=*:stack=on:threshold=0|persistent connections, recording on, everything with a stack trace on every event||--keepalive"
	"small|1|buffer=16KiB|recording on, defaults but 16 KiB thread buffers (REC_OPTIONS='buffer=16KiB'; see the drops)|"
	"off8m|0||recording off, connection threads with the system's default stack (--stack-kib 0: 8 MiB here)|--stack-kib 0"
	"on8m|1||recording on, defaults, connection threads with the system's default stack (--stack-kib 0)|--stack-kib 0"
)
# quick mode: the first six settings only
[ "$QUICK" = 1 ] && [ -z "${LOAD_ALL_SETTINGS:-}" ] && SETTINGS=("${SETTINGS[@]:0:6}")
# LOAD_SETTINGS="koff kon": only those (a setting's base must be among them)
if [ -n "${LOAD_SETTINGS:-}" ]; then
	kept=()
	for s in "${SETTINGS[@]}"; do
		case " $LOAD_SETTINGS " in *" ${s%%|*} "*) kept+=("$s") ;; esac
	done
	[ ${#kept[@]} -gt 0 ] || { echo "load.sh: LOAD_SETTINGS='$LOAD_SETTINGS' names no setting" >&2; exit 2; }
	SETTINGS=("${kept[@]}")
fi
names() { # [FROM [COUNT]] -> the names of SETTINGS[FROM..FROM+COUNT-1], one a line
	local s
	for s in "${SETTINGS[@]:${1:-0}:${2:-${#SETTINGS[@]}}}"; do echo "${s%%|*}"; done
}
setting() { # NAME FIELD -> that field of the setting: 2 recording on (1/0), 3 REC_OPTIONS, 4 label, 5 service arguments, 6 loadgen arguments
	local s f
	for s in "${SETTINGS[@]}"; do
		IFS='|' read -r -a f <<<"$s"
		if [ "${f[0]}" = "$1" ]; then echo "${f[$2 - 1]:-}"; return; fi
	done
}
run_env() { # NAME -> runs "$@" with the setting's environment
	local rec opts
	rec=$(setting "$1" 2); opts=$(setting "$1" 3); shift
	if [ "$rec" = 1 ]; then
		if [ -n "$opts" ]; then
			REC_OUTPUT="$CUR_REC" REC_OPTIONS="$opts" "$@"
		else
			REC_OUTPUT="$CUR_REC" "$@"
		fi
	else
		env -u REC_OUTPUT -u REC_OPTIONS "$@"
	fi
}

# ---- 1. capacity -----------------------------------------------------------------
# closed loop, recording off: 2 connections (one per core: the capacity the
# rate is taken from) and 8 connections (burst capacity, for information)
: >"$DATA/cap"; : >"$DATA/cap8"; : >"$DATA/capk"
for ((r = 1; r <= CAPRUNS; r++)); do
	for c in 2 k $( [ "$QUICK" = 1 ] || echo 8); do
		if [ "$c" = k ]; then ka=(--keepalive); n=2; else ka=(); n=$c; fi
		line=$("$LG" closed "${ka[@]}" --conns "$n" --duration "$CAPDUR" -- env -u REC_OUTPUT -u REC_OPTIONS "$RW" --port 0 2>>"$LOG") ||
			die "loadgen closed failed (see $LOG)"
		echo "closed $c $line" >>"$LOG"
		kv throughput "$line" >>"$DATA/cap${c#2}"
	done
done
CAP=$(median <"$DATA/cap")
CAP8=$(median <"$DATA/cap8")  # nan in quick mode
CAPK=$(median <"$DATA/capk")
RATE=${LOAD_RATE:-$(awk -v c="$CAP" 'BEGIN{printf "%.0f", 0.7 * c}')}
RATEK=${LOAD_RATE_KEEPALIVE:-$(awk -v c="$CAPK" 'BEGIN{printf "%.0f", 0.7 * c}')}
say "capacity (closed loop, recording off): 2 connections $CAP requests/s, 8 connections $CAP8, 2 persistent connections $CAPK; open-loop rates $RATE and (persistent) $RATEK requests/s"
rate_of() { # NAME -> the open-loop rate of the setting
	case " $(setting "$1" 6) " in *" --keepalive "*) echo "$RATEK" ;; *) echo "$RATE" ;; esac
}
# calibrate ROUND: the capacities measured again (one closed-loop run each) and
# this round's rates set to 70 % of them (unless LOAD_RATE/LOAD_RATE_KEEPALIVE
# say otherwise).  This host's speed drifts 1.4-3x within the hour: a rate
# fixed from the measurement before all rounds was at or above the capacity of
# the moment some rounds later, and every setting of that round queued.
: >"$DATA/rate"; : >"$DATA/ratek"
calibrate() {
	local c ka line
	for c in 2 k; do
		if [ "$c" = k ]; then ka=(--keepalive); else ka=(); fi
		line=$("$LG" closed "${ka[@]}" --conns 2 --duration "$CAPDUR" -- env -u REC_OUTPUT -u REC_OPTIONS "$RW" --port 0 2>>"$LOG") ||
			die "loadgen closed failed (see $LOG)"
		echo "round $1 closed $c $line" >>"$LOG"
		if [ "$c" = k ]; then
			RATEK=${LOAD_RATE_KEEPALIVE:-$(awk -v c="$(kv throughput "$line")" 'BEGIN{printf "%.0f", 0.7 * c}')}
		else
			RATE=${LOAD_RATE:-$(awk -v c="$(kv throughput "$line")" 'BEGIN{printf "%.0f", 0.7 * c}')}
		fi
	done
	echo "$RATE" >>"$DATA/rate"; echo "$RATEK" >>"$DATA/ratek"
	say "round $1: open-loop rates $RATE and (persistent) $RATEK requests/s (70 % of the capacities just measured)"
}

# ---- 2. open-loop runs --------------------------------------------------------------
# split_kv NAME LINE [SKIP]: every key=value of LINE (but SKIP) appended to
# $DATA/NAME.KEY (one awk, not a fork per key)
split_kv() {
	awk -v pre="$DATA/$1." -v skip="${3:-}" '{ for (i = 1; i <= NF; i++) { k = $i; sub(/=.*/, "", k); v = $i; sub(/^[^=]*=/, "", v); if (skip == "" || k != skip) print v >> (pre k) } }' <<<"$2"
}
# per_sent VALUE SENT FORMAT SCALE: VALUE / SENT * SCALE, or nan without requests
per_sent() { awk -v c="$1" -v n="$2" -v f="$3" -v m="$4" 'BEGIN{ if (n>0) printf f "\n", c/n*m; else print "nan" }'; }
for ((r = 1; r <= RUNS; r++)); do
	calibrate "$r"
	for name in $(names); do
		CUR_REC="$DATA/$name-$r.rec"
		rm -f "$CUR_REC"
		read -r -a sargs <<<"$(setting "$name" 5)"
		read -r -a largs <<<"$(setting "$name" 6)"
		rate=$(rate_of "$name")
		say "run $r, $name: loadgen open ${largs[*]} --rate $rate --duration $DURATION -- requestwatch --port 0 ${sargs[*]}"
		line=$(run_env "$name" "$LG" open "${largs[@]}" --rate "$rate" --duration "$DURATION" --timeout "$TIMEOUT" -- "$RW" --port 0 "${sargs[@]}" 2>>"$LOG") ||
			say "loadgen/service failed: $line"
		echo "$name $r $line" >>"$LOG"
		split_kv "$name" "$line"
		# the service's CPU time (all threads, start-up and shutdown included) per request sent
		per_sent "$(kv service_cpu_s "$line")" "$(kv sent "$line")" %.2f 1e6 >>"$DATA/$name.cpu_us"
		# and at the load: from the first measured request to the last response, per measured request
		per_sent "$(kv window_cpu_s "$line")" "$(kv measured "$line")" %.2f 1e6 >>"$DATA/$name.wcpu_us"
		per_sent "$(kv service_minflt "$line")" "$(kv sent "$line")" %.3f 1 >>"$DATA/$name.flt"
		if [ "$(setting "$name" 2)" = 1 ]; then
			# recorded app.Request, events, dropped; per-connection reconciliation
			sent=$(kv sent "$line")
			rec_line=$(python3 - "$BIN" "$CUR_REC" "$sent" "$(kv timeouts "$line")" "$(kv keepalive "$line")" <<'EOF'
import json, subprocess, sys
bin_, rec, sent, timeouts = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4] or 0)
keepalive = sys.argv[5] == "1"
s = json.loads(subprocess.run([bin_ + "/rec-summary", "--json", rec], check=True,
                              capture_output=True, text=True).stdout)
types = {t["name"]: t["count"] for t in s["types"]}
req = types.get("app.Request", 0)
p = json.loads(subprocess.run([bin_ + "/rec-print", "--json", "--events", "app.Request,rec.Dropped", rec],
                              check=True, capture_output=True, text=True).stdout)
served, dropped_conn, drop_ev_conn = set(), set(), 0
for e in p["recording"]["events"]:
    v = e["values"]
    if e["type"] == "app.Request":
        served.add((v.get("eventThread") or {}).get("name"))
    else:
        name = (v.get("thread") or {}).get("name") or ""
        if name.startswith("conn-") and v.get("reason") in (0, 1, 2):
            dropped_conn.add(name)
            drop_ev_conn += v["count"]
# a new connection thread per request: a thread with drops and no
# app.Request lost its request; persistent connections: a thread serves many,
# so the drops on conn-N threads bound the requests lost
lost = len(dropped_conn - served)
# exact, or short by at most the requests the client abandoned after its
# timeout (the service may never have read those: still in its accept queue
# when SIGINT stopped it), or not explained
short = sent - (req + (0 if keepalive else lost))
if short == 0:
    ok = "yes"
elif keepalive and 0 < short <= drop_ev_conn:
    ok = "short-by-%d-within-%d-dropped" % (short, drop_ev_conn)
elif 0 < short <= timeouts:
    ok = "short-by-%d-of-%d-abandoned" % (short, timeouts)
else:
    ok = "NO"
print("requests=%d lost=%d sent=%d agree=%s events=%d dropped=%d conn_drops=%d size=%d" % (
    req, lost, sent, ok, s["events"], s["dropped"], drop_ev_conn, s["total_size"]))
EOF
) || rec_line="requests=nan lost=nan sent=$sent agree=n/a events=nan dropped=nan conn_drops=nan size=nan"
			echo "$name $r $rec_line" >>"$LOG"
			split_kv "$name" "$rec_line" sent
		fi
	done
done

# ---- 3. start-up ---------------------------------------------------------------------
# (off, on, all: the start-up goal is on against off; none of them with a
# LOAD_SETTINGS that leaves off out)
startup_names() {
	local n
	setting off 1 | grep -q . || return 0
	for n in $(names); do case $n in off|on|all) echo "$n" ;; esac; done
}
for ((r = 1; r <= SRUNS; r++)); do
	for name in $(startup_names); do
		CUR_REC="$DATA/startup-$name.rec"
		line=$(run_env "$name" "$LG" startup -- "$RW" --port 0 2>>"$LOG") || say "startup run failed: $line"
		kv startup_ms "$line" >>"$DATA/$name.startup_only"
	done
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
ELAPSED=$(awk -v a="$T0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.0f", b-a}')

# ---- 4. report ---------------------------------------------------------------------------
med() { median <"$DATA/$1.$2"; }
mm() { minmax <"$DATA/$1.$2"; }
sum() { awk '{s+=$1} END{print s+0}' "$DATA/$1.$2"; }
cell() { # name key divisor(1=us->us, 1000=us->ms) digits
	local m a b
	m=$(med "$1" "$2"); read -r a b < <(mm "$1" "$2")
	awk -v m="$m" -v a="$a" -v b="$b" -v d="${3:-1000}" -v p="${4:-2}" 'BEGIN{
		if (m=="nan") {print "n/a"; exit} printf "%.*f (%.*f-%.*f)\n", p, m/d, p, a/d, p, b/d }'
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a=="nan"||b=="nan"||b==0) print "nan"; else printf "%+.1f\n", (a-b)/b*100 }'; }
join() { # SEP WORD... -> the words joined by SEP
	local sep=$1 out=$2 w; shift 2
	for w in "$@"; do out+="$sep$w"; done
	printf '%s\n' "$out"
}
cells() { # NAME KEY[:DIVISOR[:DIGITS]]... -> cell of each key, joined by " | "
	local name=$1 spec k d p out=(); shift
	for spec in "$@"; do IFS=: read -r k d p <<<"$spec"; out+=("$(cell "$name" "$k" "$d" "$p")"); done
	join " | " "${out[@]}"
}
base_of() { # NAME -> the setting it is compared with: the same service with the recording off
	case "$1" in on8m) echo off8m ;; k*) echo koff ;; *) echo off ;; esac
}
vs_base() { # NAME KEY... -> "+x.y %" of each key's median against base_of NAME's, joined by " | "
	local name=$1 base k out=(); shift
	base=$(base_of "$name")
	for k in "$@"; do out+=("$(pct "$(med "$name" "$k")" "$(med "$base" "$k")") %"); done
	join " | " "${out[@]}"
}
paired() { # NAME KEY... -> per key, the median over runs r of (run r against run r of base_of NAME), "+x.y % (min..max)"
	local name=$1 base k out=(); shift
	base=$(base_of "$name")
	for k in "$@"; do
		out+=("$(paste "$DATA/$name.$k" "$DATA/$base.$k" | awk '{ if ($2 > 0 && $1 != "nan" && $2 != "nan") printf "%.2f\n", ($1 - $2) / $2 * 100 }' |
			sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "n/a"; exit }
				m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
				printf "%+.1f %% (%+.1f..%+.1f)\n", m, v[1], v[NR] }')")
	done
	join " | " "${out[@]}"
}
pmed() { # NAME KEY -> the median over runs r of (run r / run r of base_of NAME - 1) in %, or nan
	paste "$DATA/$1.$2" "$DATA/$(base_of "$1").$2" | awk '{ if ($2 > 0 && $1 != "nan" && $2 != "nan") printf "%.4f\n", ($1 - $2) / $2 * 100 }' |
		sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit }
			printf "%.4f\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
compared() { # -> the names of the settings compared with another (base_of NAME is not NAME)
	local n
	for n in $(names); do [ "$(base_of "$n")" != "$n" ] && echo "$n"; done
}
recorded() { # -> the names of the settings with the recording on
	local n
	for n in $(names); do [ "$(setting "$n" 2)" = 1 ] && echo "$n"; done
}
run_row() { # NAME RUN KEY... -> line RUN of each $DATA/NAME.KEY, joined by " | "
	local name=$1 r=$2 k out=(); shift 2
	for k in "$@"; do out+=("$(sed -n "${r}p" "$DATA/$name.$k")"); done
	join " | " "${out[@]}"
}
{
	echo "## A service under load (issue #7 item 4; bench/load.sh)"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'); $ELAPSED s; load average $LOAD_START at the start, $LOAD_END at the end."
	echo "Service: \`$RW --port 0\` (examples/requestwatch.c: one thread per connection with a 256 KiB"
	echo "stack), every request \`GET /requests/fast\`. Load generator: \`$LG\`"
	echo "(bench/loadgen.c, one thread, epoll, compiled with \`$LG_CMD\`), on the same 2 cores."
	echo "Two ways to connect, each with its own capacity and rate:"
	echo "- **a new connection per request** (off, on, all, ...): \`Connection: close\`, so every request"
	echo "  is a new connection thread in the service: it registers with the recorder, gets a buffer, emits"
	echo "  rec.ThreadStart, app.Request and rec.ThreadEnd, and exits; the worst case for a recorder with"
	echo "  per-thread buffers;"
	echo "- **persistent connections** (koff, kon, kall; \`loadgen --keepalive\`): 16 HTTP/1.1 keep-alive"
	echo "  connections, a request sent on a free one when due (a request due while all 16 are busy waits"
	echo "  for one, its latency still counted from its scheduled time), as wrk2 does with its fixed"
	echo "  connections; the service's 16 connection threads live for the whole run, one app.Request per request."
	if [ -n "$(setting off8m 1)" ]; then
		echo "The settings off8m and on8m start it with \`--stack-kib 0\`: connection threads get the system's"
		echo "default stack ($(ulimit -s) KiB, \`ulimit -s\`). glibc keeps the stacks of exited threads for reuse"
		echo "up to 40 MiB in all, so with 8 MiB stacks only four: once more connection threads are in flight, each"
		echo "new one maps a fresh stack and faults its pages in (bench/ANALYSIS.md)."
	fi
	echo
	echo "Capacity: \`loadgen closed --conns 2 --duration $CAPDUR -- requestwatch --port 0\` (2 connections, one"
	echo "per core, in a closed loop, recording off), median of $CAPRUNS before the runs: **$CAP requests/s**."
	echo "Persistent connections: \`loadgen closed --keepalive --conns 2 ...\` reaches **$CAPK requests/s**."
	echo "Both are measured again at the start of every round, and that round's open-loop rates are 70 % of"
	echo "them$( [ -n "${LOAD_RATE:-}${LOAD_RATE_KEEPALIVE:-}" ] && echo " (but where LOAD_RATE or LOAD_RATE_KEEPALIVE sets one)")"
	echo "(the host's speed drifts 1.4-3x within the hour): round by round **$(tr '\n' ' ' <"$DATA/rate" | sed 's/ $//')** requests/s, and"
	echo "with persistent connections **$(tr '\n' ' ' <"$DATA/ratek" | sed 's/ $//')** requests/s."
	if [ "$CAP8" != nan ]; then
		echo "With 8 connections the closed loop reaches $CAP8 requests/s,"
		echo "but that is a burst figure: in trial runs on this shared machine, open-loop arrivals at 70 % of the"
		echo "8-connection figure queued up (latencies of tens of milliseconds and more) with the recording off."
	fi
	echo "Each run: \`loadgen open --rate R --duration $DURATION -- requestwatch --port 0\`"
	echo "(persistent: \`loadgen open --keepalive --rate RK ...\`)"
	echo "with the setting's environment; $RUNS runs per setting, the settings interleaved (run 1 of each, then"
	echo "run 2 of each, ...). Open loop: request i is sent at t0 + i/rate whatever the earlier responses"
	echo "did, and its latency runs from that scheduled time to the end of its response, so a stall of"
	echo "the service delays every request due during it (coordinated omission corrected, as wrk2 does;"
	echo "the uncorrected p99 from connect() is shown for comparison). The first second of each run is"
	echo "sent and counted but left out of the percentiles (warm-up). Figures: median of the $RUNS runs (min-max)."
	echo "Service CPU, two figures: over its whole life, user + sys time of the requestwatch process (all"
	echo "threads, from wait4, its start-up, warm-up and shutdown included) divided by the requests sent; and"
	echo "at the load, its CPU clock (clock_getcpuclockid) read when the first measured request was due and"
	echo "after the last response, divided by the measured requests. The recorder's start-up (symbol tables,"
	echo "unwind tables, the DWARF of the first frames' source lines: tens of milliseconds once) is in the"
	echo "first and not in the second, so a $DURATION-second run makes the first larger than a long-running"
	echo "service would see. Minor faults as the first (wait4's ru_minflt)."
	echo
	echo "| setting | throughput, req/s | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | p99 uncorrected ms | service CPU us/request, whole life | at the load | minor faults/request | errors + timeouts |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
	for name in $(names); do
		echo "| $name: $(setting "$name" 4) | $(cells "$name" throughput:1:1 p50_us p90_us p99_us p999_us max_us raw_p99_us cpu_us:1:1 wcpu_us:1:1 flt:1:2) | $(( $(sum "$name" errors) + $(sum "$name" timeouts) )) |"
	done
	echo
	echo "Difference from the same service with the recording off (medians of each setting, for information:"
	echo "the rounds ran at different rates; kon and kall against koff, on8m against off8m, and off8m against"
	echo "off: what 8 MiB stacks cost the service by themselves):"
	echo
	echo "| setting | against | throughput | p50 | p90 | p99 | p99.9 | service CPU per request, whole life | at the load | goal |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	for name in $(compared); do
		echo "| $name | $(base_of "$name") | $(vs_base "$name" throughput p50_us p90_us p99_us p999_us cpu_us wcpu_us) | (judged run by run, below) |"
	done
	echo
	echo "The same, run by run: run r of a setting against run r of the setting it is compared with (they"
	echo "ran one after the other, so a drift of the host's speed over minutes cancels out), median of the"
	echo "$RUNS per-run differences (min..max). The goals (the leading table of bench/RESULTS.md) are judged"
	echo "on these, as each round has its own rate:"
	echo
	echo "| setting | against | p50 | p90 | p99 | p99.9 | service CPU per request, whole life | at the load |"
	echo "|---|---|---|---|---|---|---|---|"
	for name in $(compared); do
		echo "| $name | $(base_of "$name") | $(paired "$name" p50_us p90_us p99_us p999_us cpu_us wcpu_us) |"
	done
	echo
	echo "Requests sent by the client against the recording (per run: \`rec-summary --json\` for the"
	echo "app.Request count, events and dropped; \`rec-print --json --events app.Request,rec.Dropped\` for"
	echo "which connection threads lost their events):"
	echo
	echo "| setting, run | sent (client) | ok (200) | app.Request recorded | connection threads with dropped events and no app.Request | recorded + lost = sent? | events recorded | events dropped (all types) | of them on conn-N threads | file bytes |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	for name in $(recorded); do
		for ((r = 1; r <= RUNS; r++)); do
			echo "| $name, $r | $(run_row "$name" "$r" sent ok requests lost agree events dropped conn_drops size) |"
		done
	done
	echo
	echo "Events emitted = events recorded + events dropped (the recorder counts every failed emit"
	echo "attempt in rec.Dropped with the thread and the reason; spec/EVENTS.md): each connection thread"
	echo "emits rec.ThreadStart, app.Request and rec.ThreadEnd, and a thread that gets no buffer loses all"
	echo "three (reason 1, memory limit). So the client's count and the file agree exactly once the lost"
	echo "requests (connection threads with drops and no app.Request) are added. \"short-by-K-of-T-abandoned\" means"
	echo "K requests are in neither, and K is at most the T requests the client abandoned after its timeout"
	echo "($TIMEOUT s, \`--timeout\`): the service never read those (still in its accept queue when SIGINT stopped it)."
	echo "With persistent connections a connection thread serves many requests and emits only app.Request"
	echo "between its rec.ThreadStart and rec.ThreadEnd, so there the client's count must equal the app.Request"
	echo "count, or fall short by at most the events dropped on conn-N threads (\"short-by-K-within-D-dropped\")."
	echo
	if [ -n "$(startup_names)" ]; then
	echo "Start-up: \`loadgen startup -- requestwatch --port 0\`, time from fork() to reading the line"
	echo "\"listening on 127.0.0.1:PORT\" (the service sleeps 400 ms in its warm-up), $SRUNS runs per setting, interleaved;"
	echo "median (min-max) in ms:"
	echo
	echo "| setting | start-up ms | difference from off | goal |"
	echo "|---|---|---|---|"
	for name in $(startup_names); do
		m=$(med "$name" startup_only); o=$(med off startup_only)
		echo "| $name | $(cell "$name" startup_only 1 1) | $(awk -v a="$m" -v b="$o" 'BEGIN{printf "%+.1f ms\n", a-b}') | within 5 ms |"
	done
	fi
} | tee "$MD"

# key=value figures for bench/run.sh's leading table
{
	echo "cap=$CAP"
	echo "cap8=$CAP8"
	echo "capk=$CAPK"
	echo "rate=$(median <"$DATA/rate")"
	echo "ratek=$(median <"$DATA/ratek")"
	echo "runs=$RUNS"
	echo "duration=$DURATION"
	for name in $(names); do
		for k in throughput p50_us p90_us p99_us p999_us startup_ms cpu_us wcpu_us; do
			echo "$name.$k=$(med "$name" "$k")"
		done
		[ -f "$DATA/$name.startup_only" ] && echo "$name.startup=$(med "$name" startup_only)"
		# paired with the base setting, round by round (each round has its own rate)
		if [ "$(base_of "$name")" != "$name" ]; then
			for k in throughput p50_us p90_us p99_us cpu_us wcpu_us; do echo "$name.d_$k=$(pmed "$name" "$k")"; done
		fi
		if [ "$(setting "$name" 2)" = 1 ]; then
			echo "$name.agree=$(sort -u "$DATA/$name.agree" | tr '\n' ' ' | sed 's/ $//')"
			echo "$name.dropped=$(sum "$name" dropped)"
			echo "$name.requests=$(sum "$name" requests)"
			echo "$name.sent=$(sum "$name" sent)"
		fi
	done
	echo "load_start=$LOAD_START"
	echo "load_end=$LOAD_END"
} >"$KV"
say "wrote $MD and $KV"
