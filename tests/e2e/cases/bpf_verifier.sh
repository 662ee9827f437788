#!/usr/bin/env bash
# bpf_verifier - every BPF program memtrace loads stays far below the
# verifier's limit of 1 M instructions: `alloc --by stack` (the Java stack
# walker), `top`, `locks` and `record` (the park and JVM-event programs, the
# walker in both) load each of the alloc, gc, park and jvmev objects against
# this JDK's VMStructs, and MEMTRACE_BPF_STATS=1 prints each program's
# count (bpf_prog_info.verified_insns). Budget: 150 k a program. Each 100 k
# cost ~0.2 s of the kernel's CPU at every load here, and a program near
# the limit fails to load on a kernel whose verifier explores more: with the
# walker's segment-map search and nmethod check inlined, a walker program
# took 625 k (JDK 25) and the two took 4.9 s to load on JDK 17 (now global
# functions, checked once: ~36 k).
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"

jvm_start idle -Xmx128m Idle
pid=$JVM_PID
run() { # NAME ARGS...: one command, its "bpf:" lines into $TMPD/NAME.bpf
	local n=$1; shift
	MEMTRACE_BPF_STATS=1 "$MEMTRACE" "$@" >"$TMPD/$n.out" 2>"$TMPD/$n.err" ||
		{ cat "$TMPD/$n.err"; fail "memtrace $* failed"; }
	grep '^bpf: ' "$TMPD/$n.err" >"$TMPD/$n.bpf" || { cat "$TMPD/$n.err"; fail "$n: no program counted"; }
}
run stack alloc -p "$pid" --duration 1 --by stack
run top top -p "$pid" --duration 1 --json
run locks locks -p "$pid" --duration 1
run record record -p "$pid" -o "$TMPD/r.rec" --duration 1
cat "$TMPD"/*.bpf >"$TMPD/all"
python3 - "$TMPD/all" <<'PY' || fail "a program over the verifier budget, or an object not loaded"
import sys
BUDGET = 150_000
worst = {}
for line in open(sys.argv[1]):
    _, obj, prog, _, n, _ = line.split()
    n = int(n)
    assert n > 0, line
    if n > worst.get(obj, (0, ""))[0]:
        worst[obj] = (n, prog)
for need in ("alloc", "gc", "park", "jvmev"):
    assert need in worst, f"no {need} programs loaded: {sorted(worst)}"
over = {o: w for o, w in worst.items() if w[0] > BUDGET}
for o, (n, p) in sorted(worst.items()):
    print(f"  {o}: at most {n} instructions ({p})", file=sys.stderr)
assert not over, f"over {BUDGET}: {over}"
PY
grep -q "alloc handle_new_tlab" "$TMPD/stack.bpf" || fail "alloc --by stack loaded no walker program"
