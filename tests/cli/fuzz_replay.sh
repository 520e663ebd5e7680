#!/usr/bin/env bash
# Replays the fuzzing seed corpus (fuzz/corpus/<h>/) and every input a fuzzer
# ever crashed on (testdata/fuzz-regressions/<h>/) through each harness's
# LLVMFuzzerTestOneInput, built without libFuzzer as $BUILD/fuzz/<h>_replay
# (make test builds them; with SAN=1 they run under ASan+UBSan).  Passes when
# every harness exits 0 on every input; a crash prints the input's name and
# the sanitizer report.
set -u
cd "$REC_ROOT"
fail=0 ran=0
for src in fuzz/*.c; do
	h=$(basename "$src" .c)
	[ "$h" = regression_driver ] && continue
	bin=$BUILD/fuzz/${h}_replay
	if [ ! -x "$bin" ]; then
		echo "fuzz_replay: $bin is missing (make test builds it)"
		fail=1
		continue
	fi
	inputs=()
	[ -d "fuzz/corpus/$h" ] && inputs+=("fuzz/corpus/$h")
	[ -d "testdata/fuzz-regressions/$h" ] && inputs+=("testdata/fuzz-regressions/$h")
	if [ ${#inputs[@]} -eq 0 ]; then
		echo "fuzz_replay: no inputs for $h (fuzz/corpus/$h is missing)"
		fail=1
		continue
	fi
	log=$(mktemp)
	if "$bin" "${inputs[@]}" >"$log" 2>&1 && grep -q '^Tested [1-9][0-9]* files: Success!$' "$log"; then
		echo "$h: $(tail -1 "$log")"
		ran=$((ran + 1))
	else
		echo "$h: FAILED on:"
		# The last "replay: <file>" line names the input that crashed.
		grep '^replay: ' "$log" | tail -1
		grep -v '^replay: ' "$log" | head -60
		fail=1
	fi
	rm -f "$log"
done
[ "$ran" -gt 0 ] || { echo "fuzz_replay: no harness ran"; fail=1; }
exit $fail
