#!/usr/bin/env bash
# tests/run-all.sh - what `make check` runs after building: the layout check,
# unit tests (cmocka, ASan+UBSan), the short fuzz runs, then the end-to-end cases on both JDKs.
# Ends with one line "N passed, N failed" summing every stage.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
total_pass=0 total_fail=0 total_skip=0
count() { # parse the "X: N passed, N failed[, N skipped]" line of a stage's log
	local line; line=$(grep -E '^[a-z0-9]+: [0-9]+ passed, [0-9]+ failed' "$1" | tail -1)
	local p f s
	p=$(echo "$line" | sed -n 's/.*: \([0-9]*\) passed.*/\1/p')
	f=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
	s=$(echo "$line" | sed -n 's/.* \([0-9]*\) skipped.*/\1/p')
	if [ -z "$line" ]; then f=1; echo "(stage printed no summary: counted as a failure)"; fi
	total_pass=$((total_pass + ${p:-0})); total_fail=$((total_fail + ${f:-0})); total_skip=$((total_skip + ${s:-0}))
}
log=$(mktemp -d /tmp/mt-check.XXXX)
t0=$(date +%s)
# the podman cases' images, made meanwhile (minutes once on a fresh machine)
tests/e2e/prepare-containers.sh >"$log/containers" 2>&1 &
containers=$!

echo "== layout (scripts/check-layers.py: the stack of folders in user/README.md)"
if scripts/check-layers.py >"$log/layers.out" 2>&1; then
	tail -1 "$log/layers.out"
	echo "layers: 1 passed, 0 failed" | tee "$log/layers"
else
	cat "$log/layers.out"
	echo "layers: 0 passed, 1 failed" | tee "$log/layers"
fi
count "$log/layers"

echo "== unit tests (cmocka, ASan+UBSan)"
tests/run-unit.sh build/tests/test_* 2>&1 | tee "$log/unit"
count "$log/unit"

if [ -x tests/fuzz/run.sh ]; then
	echo "== fuzzing (short run)"
	if tests/fuzz/run.sh "${FUZZ_SECONDS:-24}" >"$log/fuzz.out" 2>&1; then
		grep -E '^fuzz ' "$log/fuzz.out"
		echo "fuzz: 1 passed, 0 failed" | tee "$log/fuzz"
	else
		tail -40 "$log/fuzz.out"
		echo "fuzz: 0 passed, 1 failed" | tee "$log/fuzz"
	fi
	count "$log/fuzz"
fi

echo "== end-to-end (real JVMs, real BPF)"
if ! wait $containers; then
	MEMTRACE_E2E_NO_CONTAINERS=$(tail -1 "$log/containers")
	export MEMTRACE_E2E_NO_CONTAINERS
fi
echo "containers: $(tail -1 "$log/containers")"
tests/e2e/run.sh 2>&1 | tee "$log/e2e"
count "$log/e2e"

echo "== took $(( $(date +%s) - t0 )) s"
if [ $total_skip -gt 0 ]; then
	echo "$total_pass passed, $total_fail failed, $total_skip skipped"
else
	echo "$total_pass passed, $total_fail failed"
fi
[ $total_fail -eq 0 ]
