#!/usr/bin/env bash
# fuzz/run.sh - run libFuzzer harnesses one after another.
# Usage: FUZZ_BUILD=dir FUZZ_SECONDS=60 bash fuzz/run.sh HARNESS...
# For each harness: fuzzes for FUZZ_SECONDS with the dictionary and the
# limits below, starting from fuzz/corpus/<h> plus what earlier runs added
# in $FUZZ_BUILD/corpus/<h>; artifacts (crash-*, leak-*, timeout-*, oom-*)
# are kept in $FUZZ_BUILD/artifacts/<h>/; the log is $FUZZ_BUILD/logs/<h>.log
# and a line "harness: runs, exec/s, cov, ft, corpus, seconds" is printed.
# Exits 1 if any harness found something (its artifact is listed).
set -u
cd "$(dirname "$0")/.."
FUZZ_BUILD=${FUZZ_BUILD:-build/fuzz}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_NICE=${FUZZ_NICE:-10}
FUZZ_FLAGS=${FUZZ_FLAGS:-}
status=0
for h in "$@"; do
	bin=$FUZZ_BUILD/$h
	[ -x "$bin" ] || { echo "fuzz: $bin not built" >&2; status=1; continue; }
	mkdir -p "$FUZZ_BUILD/corpus/$h" "$FUZZ_BUILD/artifacts/$h" "$FUZZ_BUILD/logs"
	log=$FUZZ_BUILD/logs/$h.log
	start=$(date +%s)
	# shellcheck disable=SC2086
	nice -n "$FUZZ_NICE" "$bin" -dict=fuzz/rec.dict -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
		-max_total_time="$FUZZ_SECONDS" -print_final_stats=1 \
		-artifact_prefix="$FUZZ_BUILD/artifacts/$h/" $FUZZ_FLAGS \
		"$FUZZ_BUILD/corpus/$h" "fuzz/corpus/$h" >"$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	last=$(grep -E '^#[0-9]+' "$log" | tail -1)
	cov=$(printf '%s\n' "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(printf '%s\n' "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	corp=$(printf '%s\n' "$last" | sed -n 's/.* corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p')
	echo "$h: runs ${runs:-?}, exec/s ${eps:-?}, cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}, ${secs} s, exit $rc"
	found=$(ls "$FUZZ_BUILD/artifacts/$h" 2>/dev/null)
	if [ "$rc" -ne 0 ] || [ -n "$found" ]; then
		status=1
		echo "$h: FOUND (log $log):" >&2
		grep -E 'ERROR|SUMMARY|==[0-9]+==|abort|no progress' "$log" | head -20 >&2
		for a in $found; do echo "  $FUZZ_BUILD/artifacts/$h/$a" >&2; done
	fi
done
exit $status
