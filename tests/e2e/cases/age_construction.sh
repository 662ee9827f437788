#!/usr/bin/env bash
# age_construction - AgeWorkload keeps objects of site keepK alive for exactly
# k System.gc() collections (k = 0, 1, 3, 6, 12, 20; nothing else collects).
# `memtrace age --by site` must put every live sample of keepK in an age
# range no higher than k's, have samples in k's own range (the oldest batch),
# and show none of keep0 (dropped before any GC) older than 0.
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xmx128m AgeWorkload
"$MEMTRACE" --json age -p "$JVM_PID" --duration 6 --interval 2k --by site >"$TMPD/a.json" 2>"$TMPD/a.err" ||
	{ cat "$TMPD/a.err"; fail "memtrace age"; }
python3 "$ROOT/tests/e2e/check_ages.py" "$TMPD/a.json" || fail "ages"
kill -0 "$JVM_PID" || fail "JVM died"
exit 0
