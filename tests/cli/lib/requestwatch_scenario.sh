# shellcheck shell=bash
# requestwatch_scenario.sh - sourced (not run) by tests/cli/requestwatch.sh,
# tests/cli/lockgraph.sh and examples/demo.sh: run the example service
# examples/requestwatch under REC_OUTPUT and send it requests.  Not directly
# under tests/cli/ because tests/run.sh runs every tests/cli/*.sh as a test.
#
# The caller provides: $BIN (the build's bin directory), $work (a scratch
# directory), fail MESSAGE (prints and exits 1), and a variable server_pid
# that its EXIT trap kills if still set.  Sets $port while the server runs.
# (burst alone needs only $port, and $work unless rw_burst_show=1.)
#
#   rw_start REC_FILE [ARG...]
#                       start requestwatch --port 0 ARG... recording to REC_FILE, wait
#                       (15 s max) until it prints "listening on 127.0.0.1:PORT";
#                       with rw_plain=1 the plain build, unmodified, under
#                       rec-record "${rw_record_opts[@]}" -o REC_FILE (the program:
#                       $rw_record_prog, default requestwatch-plain)
#                       (requestwatch-plain, without rec: issue 18; rec-record's
#                       report at the end goes to $work/server.err)
#   burst N PATH        N concurrent GET requests to PATH, sent at the same
#                       moment (one curl process with --parallel; without curl,
#                       bash's /dev/tcp: all connections opened first, then
#                       every request written); appends one line "PATH STATUS"
#                       per request to $work/statuses, or with rw_burst_show=1
#                       prints "   PATH -> HTTP STATUS in SECONDS s" per
#                       request (" in SECONDS s" only with curl).  20 s cap.
#                       REC_TEST_NO_CURL=1 forces the /dev/tcp client.
#   rw_stop             SIGINT (SIGTERM with rw_plain=1: rec-record passes it on,
#                       SIGINT is the terminal's to send), wait (15 s max) for
#                       the exit, fail unless the exit status is 0
#   rw_kill             (EXIT traps) SIGKILL the server and its timeout(1) wrapper
#                       (and rec-record between them)

# _rw_burst N PATH: the requests; one line "PATH STATUS SECONDS" per request
# (SECONDS is "-" without curl).
if command -v curl >/dev/null 2>&1 && [ -z "${REC_TEST_NO_CURL:-}" ]; then
	_rw_burst() {
		local n=$1 path=$2 i args=()
		for ((i = 0; i < n; i++)); do
			args+=(-o /dev/null "http://127.0.0.1:$port$path")
		done
		timeout 20 curl -s --no-progress-meter --parallel --parallel-immediate --parallel-max 64 \
			--max-time 15 -w "$path %{http_code} %{time_total}\n" "${args[@]}" || true
	}
else
	_rw_burst() {
		timeout 20 bash -c '
			n=$1 path=$2 port=$3 fds=()
			for ((i = 0; i < n; i++)); do
				exec {fd}<>"/dev/tcp/127.0.0.1/$port" || exit 1
				fds+=("$fd")
			done
			for fd in "${fds[@]}"; do
				printf "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" "$path" >&"$fd"
			done
			for fd in "${fds[@]}"; do
				read -r _ code _ <&"$fd" || code=000
				echo "$path $code -"
				cat <&"$fd" >/dev/null
			done' _ "$1" "$2" "$port" || true
	}
fi

burst() {
	if [ "${rw_burst_show:-0}" = 1 ]; then
		_rw_burst "$1" "$2" | awk '{ printf "   %s -> HTTP %s%s\n", $1, $2, ($3 == "-" ? "" : " in " $3 " s") }'
	else
		_rw_burst "$1" "$2" | awk '{ print $1, $2 }' >>"$work/statuses"
	fi
}

rw_start() {
	local rec=$1
	shift
	: >"$work/server.out" # there before the server's shell opens it (the wait below reads it)
	if [ "${rw_plain:-0}" = 1 ]; then
		timeout 120 "$BIN/rec-record" "${rw_record_opts[@]}" -o "$rec" -- \
			"$BIN/${rw_record_prog:-requestwatch-plain}" --port 0 "$@" \
			>"$work/server.out" 2>"$work/server.err" &
	else
		REC_OUTPUT="$rec" timeout 120 "$BIN/requestwatch" --port 0 "$@" >"$work/server.out" 2>"$work/server.err" &
	fi
	server_pid=$!
	port=
	for _ in $(seq 1 150); do
		port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$work/server.out")
		[ -n "$port" ] && break
		kill -0 "$server_pid" 2>/dev/null || fail "requestwatch exited before listening"
		sleep 0.1
	done
	[ -n "$port" ] || fail "requestwatch did not print 'listening on 127.0.0.1:PORT' within 15 s"
}

# rw_kill: for the caller's EXIT trap: SIGKILL the server if still running.
# rw_start runs it under timeout(1), which does not pass SIGKILL on, so the
# children go first (killing only timeout would leave requestwatch running),
# and theirs (rec-record's requestwatch-plain) before them.
_rw_kill_tree() {
	local c
	for c in $(pgrep -P "$1" 2>/dev/null); do _rw_kill_tree "$c"; done
	kill -KILL "$1" 2>/dev/null || true
}
rw_kill() {
	[ -n "${server_pid:-}" ] || return 0
	_rw_kill_tree "$server_pid"
}

rw_stop() {
	local rc=0
	if [ "${rw_plain:-0}" = 1 ]; then kill -TERM "$server_pid"; else kill -INT "$server_pid"; fi
	for _ in $(seq 1 150); do
		kill -0 "$server_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$server_pid" 2>/dev/null && fail "requestwatch still running 15 s after SIGINT"
	wait "$server_pid" || rc=$?
	server_pid=
	[ "$rc" -eq 0 ] || fail "requestwatch exited with status $rc after SIGINT"
}
