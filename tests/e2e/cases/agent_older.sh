#!/usr/bin/env bash
# agent_older - an agent loaded by an older memtrace refuses a freeze flag it
# does not know ("malformed heap request"), and memtrace asks again without
# it, the newest flag first (snaptake.c's older_agent()), for the rest of the
# session. Forced here with MEMTRACE_AGENT_TEST_FREEZE_FLAGS in the JVM's
# environment (the freeze flags the agent then knows, request.c):
# - 0x1ffff, an agent of stops 50-57: references by position, each object's
#   CLASS reference a record (no MT_AP_FREEZE_NOCLASS);
# - 0xffff, an agent of stops 46-49: no references by position
#   (MT_AP_FREEZE_REFPOS), the records still kept where the copy wrote them,
#   by id;
# - 0x0fff, an agent of stops 44-45: neither, nor the records in place
#   (MT_AP_FREEZE_INPLACE): read out of the copy;
# and a JVM with this memtrace's agent: by position. RetainWorkload's heap is
# the same in the four JVMs: `heap --retained` gives the same rows for its
# classes (retained by class and the largest retainers of them), and the
# query tests/query/retain/retain.mq the same answer, also twice in one
# session (--count 2: the second take asks the older way at once).
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"

# take NAME: heap --retained (JSON, phases) and the query on $JVM_PID
take() {
	MEMTRACE_PHASES=1 "$MEMTRACE" --json heap -p "$JVM_PID" --retained --top 2000 \
		>"$TMPD/$1.json" 2>"$TMPD/$1.err" || { cat "$TMPD/$1.err"; fail "heap --retained ($1)"; }
	"$MEMTRACE" query -p "$JVM_PID" -f "$ROOT/tests/query/retain/retain.mq" >"$TMPD/$1.q" \
		2>"$TMPD/$1.qerr" || { cat "$TMPD/$1.qerr"; fail "query ($1)"; }
}

jvm_start now -Xmx64m RetainWorkload
take now
grep -q "kept where the copy wrote them, references by position, CLASS ones implied" \
	"$TMPD/now.err" || { cat "$TMPD/now.err"; fail "this agent: not in place by position"; }

export MEMTRACE_AGENT_TEST_FREEZE_FLAGS=0x1ffff
jvm_start s50 -Xmx64m RetainWorkload
unset MEMTRACE_AGENT_TEST_FREEZE_FLAGS
take s50
grep -q "kept where the copy wrote them, references by position;" "$TMPD/s50.err" ||
	{ cat "$TMPD/s50.err"; fail "an agent without NOCLASS: not by position, CLASS records"; }

export MEMTRACE_AGENT_TEST_FREEZE_FLAGS=0xffff
jvm_start s46 -Xmx64m RetainWorkload
unset MEMTRACE_AGENT_TEST_FREEZE_FLAGS
take s46
grep -q "kept where the copy wrote them" "$TMPD/s46.err" && ! grep -q "by position" "$TMPD/s46.err" ||
	{ cat "$TMPD/s46.err"; fail "an agent without REFPOS: not in place by id"; }
MEMTRACE_PHASES=1 "$MEMTRACE" query -p "$JVM_PID" -f "$ROOT/tests/query/retain/retain.mq" --count 2 \
	--every 0.2 >"$TMPD/s46c.q" 2>"$TMPD/s46c.err" || { cat "$TMPD/s46c.err"; fail "query --count 2"; }
assert_eq "$(grep -c "kept where the copy wrote them" "$TMPD/s46c.err")" 2 "two takes in place in one session"
grep -q "by position" "$TMPD/s46c.err" && fail "a take of the session by position"

export MEMTRACE_AGENT_TEST_FREEZE_FLAGS=0x0fff
jvm_start s44 -Xmx64m RetainWorkload
unset MEMTRACE_AGENT_TEST_FREEZE_FLAGS
take s44
grep -q "kept where the copy wrote them" "$TMPD/s44.err" &&
	{ cat "$TMPD/s44.err"; fail "an agent without INPLACE kept them in place"; }
grep -q "its records [0-9.]* ms" "$TMPD/s44.err" || { cat "$TMPD/s44.err"; fail "no frozen copy's mark"; }

python3 - "$TMPD" <<'PY' || fail "the four agents answer differently"
import json, sys
d = sys.argv[1]
def rows(name):  # the rows of RetainWorkload's classes and objects
    out = []
    for l in open(f"{d}/{name}.json"):
        r = json.loads(l) if l.startswith("{") else {}
        if r.get("event", "").startswith("retained") and "RetainWorkload" in json.dumps(r):
            out.append({k: v for k, v in r.items() if not k.endswith("_ms") and k not in ("id", "pid")})
    return out
a = rows("now")
assert len(a) >= 3, a
for n in ("s50", "s46", "s44"):
    b = rows(n)
    assert a == b, (n, len(a), len(b), [x for x in a if x not in b][:2], [x for x in b if x not in a][:2])
print(len(a), "rows alike")
PY
for n in s50 s46 s44; do
	cmp "$TMPD/now.q" "$TMPD/$n.q" || fail "the query's answer differs ($n)"
done
# --count 2: each walk's answer, as the single one's
assert_eq "$(sort -u "$TMPD/s46c.q")" "$(cat "$TMPD/now.q")" "query --count 2: each walk's answer"
note "by position, by id in place, read out: $(python3 -c "print(sum(1 for l in open('$TMPD/now.json') if 'RetainWorkload' in l))") rows and the query alike"
