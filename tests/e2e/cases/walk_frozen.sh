#!/usr/bin/env bash
# walk_frozen - heap snapshots from a frozen copy of the JVM (the agent forks
# at the walk's first root callback, inside the pause; HotSpot's own walk
# goes on in the copy). On one quiescent QueryWorkload heap:
#  - the same snapshot: `snapshot --walk frozen` and `--walk paused` files
#    hold the same records byte for byte (the callbacks' visits with the
#    objects' addresses, values, strings, classes, threads), so every
#    object, reference, root and value is the same; histo too, whether
#    memtrace reads the records out of the copy (the default) or the agent
#    does and sends them (MEMTRACE_TEST_FREEZE=pull);
#  - the pause is the JVM's own account: the printed pause equals the
#    -Xlog:safepoint HeapWalkOperation entry (within 0.2 ms), one per walk
#    (the copy's VM thread writes nothing to the log), and is shorter than
#    the walk in a pause of the same heap;
#  - nothing outlives a walk: no child of the JVM, no zombie, nothing on the
#    JVM's stdout/stderr;
#  - the copy dying or hanging (test hooks) gives the same answer from a
#    walk in a pause, and says why; memtrace killed -9 while the copy walks
#    leaves no copy behind and the next walk works.
# The copy here walks with JVMTI, as it does when its own mark cannot
# (MEMTRACE_MARK=0): the records are then the paused walk's, byte for byte.
# The mark is walk_mark's.
# ALONE: the frozen pause against the JVM's log and against a paused walk
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"
export MEMTRACE_MARK=0

LOG="$TMPD/safepoint.log"
walks() { grep -c '"HeapWalkOperation"' "$LOG" || true; }
last_total() { grep '"HeapWalkOperation"' "$LOG" | tail -1 | sed -n 's/.*Total: \([0-9]*\) ns.*/\1/p' |
	awk '{ printf "%.3f", $1 / 1e6 }'; }
printed() { sed -n 's/.*heap walk paused JVM [0-9]* for \([0-9.]*\) ms.*/\1/p' "$1" | tail -1; }
# no_child WHAT: the JVM has no child process (the copy was killed and reaped)
no_child() {
	local k
	k=$(ps -o pid=,stat= --ppid "$JVM_PID" || true)
	[ -z "$k" ] || fail "$1: the JVM still has a child: $k"
}

SP="-XX:+UnlockDiagnosticVMOptions -XX:GuaranteedSafepointInterval=0"
jvm_start w "-Xlog:safepoint:file=$LOG" $SP -Xmx256m QueryWorkload planted 100000
out0=$(grep -cv -e READY -e WARNING "$TMPD/w.out" || true)
fds() { ls -l "/proc/$JVM_PID/fd" | awk 'NR > 1 { print $(NF - 2), $NF }' | sort; }
std() { for f in 0 1 2; do readlink "/proc/$JVM_PID/fd/$f"; done; }
std0=$(std) # the JVM's stdin, stdout, stderr before memtrace ever came

# the same snapshot both ways (no GC in between: the workload idles)
"$MEMTRACE" --walk frozen snapshot -p "$JVM_PID" -o "$TMPD/f.snap" 2>"$TMPD/f.err" ||
	{ cat "$TMPD/f.err"; fail "frozen snapshot"; }
grep -q "frozen: fork" "$TMPD/f.err" || { cat "$TMPD/f.err"; fail "the snapshot was not frozen"; }
fds0=$(fds) # with the agent's own (its socket, eventfd): from here on nothing changes
fz=$(printed "$TMPD/f.err") s=$(last_total)
note "frozen: memtrace ${fz} ms, JVM safepoint log ${s} ms"
python3 -c "import sys; sys.exit(0 if abs($fz - $s) <= 0.2 else 1)" || fail "frozen pause $fz ms vs the JVM's $s ms"
assert_eq "$(walks)" 1 "one HeapWalkOperation for the frozen walk"
no_child "frozen snapshot"
"$MEMTRACE" --walk paused snapshot -p "$JVM_PID" -o "$TMPD/p.snap" 2>"$TMPD/p.err" ||
	{ cat "$TMPD/p.err"; fail "paused snapshot"; }
grep -q "frozen: fork" "$TMPD/p.err" && { cat "$TMPD/p.err"; fail "--walk paused froze"; }
pz=$(printed "$TMPD/p.err")
note "paused: memtrace ${pz} ms, JVM safepoint log $(last_total) ms"
python3 -c "import sys; sys.exit(0 if $fz < $pz else 1)" || fail "frozen pause $fz ms not below the paused walk's $pz ms"
python3 - "$TMPD/f.snap" "$TMPD/p.snap" <<'PY' || fail "the frozen and the paused snapshots differ"
import struct, sys
def recs(path):
    b = open(path, "rb").read()
    n = struct.unpack_from("<Q", b, len(b) - 16)[0]
    body, off, out = b[32:32 + n], 0, {}
    while off < len(body):
        kind, ln, arg = struct.unpack_from("<HHI", body, off)
        if kind in (36, 43): # PRIMS, VISITS: one stream, however records cut it
            out.setdefault(kind, []).append(body[off + 8: off + 8 + (24 if kind == 36 else 32) * arg])
        elif kind not in (40, 41, 45, 46): # DONE, AGES, FREEZE, COPY: how, not what
            out.setdefault(kind, []).append(body[off: off + ln])
        off += ln
    for k in (36, 43):
        out[k] = [b"".join(out.get(k, []))]
    return out
f, p = recs(sys.argv[1]), recs(sys.argv[2])
assert set(f) == set(p), (sorted(f), sorted(p))
# a thread may change state between the two walks (seconds apart): once in
# a clean-clone run one primitive value read 225 (JVMTI: alive, sleeping)
# in one walk and 5 (alive, runnable) in the other - java.lang.Thread's
# threadStatus. Up to two such values may differ; nothing else.
a, b = f[36][0], p[36][0]
if a != b and len(a) == len(b):
    d = [(struct.unpack_from("<QQQ", a, i), struct.unpack_from("<QQQ", b, i))
         for i in range(0, len(a), 24) if a[i:i + 24] != b[i:i + 24]]
    state = lambda v: v & 1 and v < 0x1000  # a JVMTI thread state of a live thread
    assert len(d) <= 2 and all(x[0] == y[0] and x[2] == y[2] and state(x[1]) and state(y[1])
                               for x, y in d), "primitive values differ: %s" % d[:4]
    print("  a thread's state moved between the walks: %s" % d, file=sys.stderr)
    p[36] = f[36]
for k in sorted(f):
    assert f[k] == p[k], "record kind %d differs" % k
print("  identical: %d visits, %d records of %d kinds" % (len(f[43][0]) // 32,
      sum(len(v) for v in f.values()), len(f)), file=sys.stderr)
PY
# histo: equal both ways, and when the agent sends the copy's records itself
"$MEMTRACE" --json histo -p "$JVM_PID" >"$TMPD/hf.json" 2>"$TMPD/e" || { cat "$TMPD/e"; fail "histo"; }
"$MEMTRACE" --json --walk paused histo -p "$JVM_PID" >"$TMPD/hp.json" 2>"$TMPD/e" || { cat "$TMPD/e"; fail "histo paused"; }
h() { json_get "$1" 'sorted((r["class"], r["instances"], r["bytes"]) for r in recs if "class" in r)'; }
assert_eq "$(h "$TMPD/hf.json")" "$(h "$TMPD/hp.json")" "frozen histo = paused histo"
assert_eq "$(json_get "$TMPD/hf.json" '[r["walk_mode"] for r in recs if r.get("event") == "histo_total"][0]')" \
	frozen "histo --json walk_mode"
no_child "histo"
MEMTRACE_TEST_FREEZE=pull "$MEMTRACE" --json histo -p "$JVM_PID" >"$TMPD/hu.json" 2>"$TMPD/e" ||
	{ cat "$TMPD/e"; fail "histo (pull)"; }
grep -q "frozen: fork" "$TMPD/e" || { cat "$TMPD/e"; fail "pull: not frozen"; }
assert_eq "$(h "$TMPD/hu.json")" "$(h "$TMPD/hp.json")" "frozen histo sent by the agent = paused histo"
no_child "histo (pull)"

# the fork fails, the copy dies or hangs: the answer comes from a walk in a
# pause (the fork's own pause, if any, then the walk's), and says why
for t in nofork:"fork in the pause failed: Resource temporarily unavailable" \
	fail:"exited with 80" hang:"made no progress"; do
	MEMTRACE_TEST_FREEZE=${t%%:*} "$MEMTRACE" --json histo -p "$JVM_PID" >"$TMPD/ht.json" 2>"$TMPD/e" ||
		{ cat "$TMPD/e"; fail "histo (${t%%:*})"; }
	grep -q "frozen heap walk failed (.*${t#*:}" "$TMPD/e" || { cat "$TMPD/e"; fail "${t%%:*}: no reason"; }
	assert_eq "$(h "$TMPD/ht.json")" "$(h "$TMPD/hp.json")" "histo after a ${t%%:*}ed copy"
	no_child "${t%%:*}ed copy"
done

# memtrace killed -9 while the copy walks: the copy goes too
MEMTRACE_TEST_FREEZE=hang "$MEMTRACE" histo -p "$JVM_PID" >/dev/null 2>&1 &
mpid=$!
for _ in $(seq 50); do [ -n "$(ps -o pid= --ppid "$JVM_PID")" ] && break; sleep 0.1; done
[ -n "$(ps -o pid= --ppid "$JVM_PID")" ] || fail "no copy to kill"
kill -9 "$mpid"; wait "$mpid" 2>/dev/null
for _ in $(seq 50); do [ -z "$(ps -o pid= --ppid "$JVM_PID")" ] && break; sleep 0.1; done
no_child "memtrace killed -9"
"$MEMTRACE" --json histo -p "$JVM_PID" >"$TMPD/hk.json" 2>"$TMPD/e" || { cat "$TMPD/e"; fail "histo after kill -9"; }
grep -q "frozen: fork" "$TMPD/e" || { cat "$TMPD/e"; fail "not frozen after kill -9"; }
assert_eq "$(h "$TMPD/hk.json")" "$(h "$TMPD/hp.json")" "histo after kill -9"

kill -0 "$JVM_PID" || fail "the JVM died"
[ "$(grep -cv -e READY -e WARNING "$TMPD/w.out" || true)" = "$out0" ] || { cat "$TMPD/w.out"; fail "output on the JVM's stdout/stderr"; }
# every fd the JVM had after the first walk is still open on the same file
[ "$(fds)" = "$fds0" ] || { diff <(echo "$fds0") <(fds); fail "the JVM's fds changed"; }
assert_eq "$(std)" "$std0" "the JVM's fds 0-2"
[ -z "$(ps -eo stat=,ppid= | awk -v p="$JVM_PID" '$1 ~ /Z/ && $2 == p')" ] || fail "a zombie"
