#!/usr/bin/env bash
# leaks_rank - LeakWorkload plants two leaks (LeakedSession + long[] from
# leakSessions, byte[] from leakBuffers), a 40 MB cache filled once and churn
# from 16 sites. `memtrace leaks` must rank both leak sites above everything
# else, never list the cache (char[]) or churn as suspects, name the
# allocating Java frames, and leave the JVM running with the agent dormant.
# Both leak sites keep about all they allocate (survival, from the samples:
# between 0.2 and 1, with an interval inside [0, 1]), every churn site about
# nothing (< 0.05); the BPF per-site counters (sites.bpf.c) give them their
# allocation rates, and the fixed map must not overflow here.
# TIMEOUT: 75
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xmx256m LeakWorkload
"$MEMTRACE" --json leaks -p "$JVM_PID" --sampled --duration 16 --interval 64k --top 200 >"$TMPD/l.json" 2>"$TMPD/l.err" ||
	{ cat "$TMPD/l.err"; fail "memtrace leaks"; }
python3 "$ROOT/tests/e2e/check_leaks.py" "$TMPD/l.json" --strict || fail "ranking"
# the JVM keeps running; the agent went dormant and serves the next session
kill -0 "$JVM_PID" || fail "JVM died"
"$MEMTRACE" --json attach -p "$JVM_PID" >"$TMPD/a.json" || fail "attach after leaks"
assert_eq "$(json_get "$TMPD/a.json" 'recs[-1]["loaded_now"]')" False "agent reused"
exit 0
