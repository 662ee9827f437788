#!/usr/bin/env bash
# tests/run-unit.sh BIN... - run cmocka unit binaries (built with ASan+UBSan);
# prints each binary's cmocka summary and a last line "unit: N passed, N failed".
set -u
pass=0 fail=0
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
for b in "$@"; do
	out=$("$b" 2>&1); rc=$?
	echo "$out" | grep -E '^\[ *(PASSED|FAILED|  FAILED|==========) *\]|^\[  ERROR|FAILED' | sed "s|^|$(basename "$b"): |"
	n_ok=$(echo "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -1)
	n_bad=$(echo "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -1)
	pass=$((pass + ${n_ok:-0})); fail=$((fail + ${n_bad:-0}))
	if [ $rc -ne 0 ] && [ -z "$n_bad" ]; then
		echo "$out" | tail -30
		echo "$(basename "$b"): crashed (exit $rc)"
		fail=$((fail + 1))
	fi
done
echo "unit: $pass passed, $fail failed"
[ $fail -eq 0 ]
