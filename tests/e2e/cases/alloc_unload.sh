#!/usr/bin/env bash
# alloc_unload - a class is loaded, allocates, is unloaded (its loader
# collected), then another class is loaded (possibly at the same Klass*) and
# allocates: no bytes of the second class are attributed to the first. Checked
# exactly with --exact (object counts) and approximately with TLAB sampling
# (every sample kept).
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"
DYN="$ROOT/build/java-dyn"
N=300000

for mode in exact tlab; do
	rm -f "$TMPD/go"
	flags=(-Xmx128m -XX:+UseSerialGC)
	# TLAB sampling with every sample kept: what is checked is the unload,
	# not the budget's thinning (alloc_mix checks that against its stated
	# errors). Under the default budget a busy machine thinned this run's
	# ~50 samples to 39 once (DynA share 0.64 +- 0.077: 1.8 standard errors,
	# a bytes ratio of 1.83, outside the band below on noise alone).
	extra=(--budget 0)
	[ $mode = exact ] && { flags+=(-XX:+DTraceAllocProbes); extra=(--exact); }
	jvm_start "w$mode" "${flags[@]}" ClassUnload "$DYN" --go "$TMPD/go"
	"$MEMTRACE" alloc -p "$JVM_PID" "${extra[@]}" --json --top 1000 >"$TMPD/$mode.json" 2>"$TMPD/$mode.err" &
	mt=$!
	wait_for_line "$TMPD/$mode.json" '"start"' 20 || { cat "$TMPD/$mode.err"; fail "alloc did not start"; }
	touch "$TMPD/go"
	wait_for_line "$TMPD/w$mode.out" DONE 60 || fail "workload did not finish"
	kill -INT $mt; wait $mt || { cat "$TMPD/$mode.err"; fail "alloc exited non-zero"; }
	grep -q '^unloaded' "$TMPD/w$mode.out" || skip "DynA was not unloaded by this JVM ($mode)"
	python3 - "$TMPD/$mode.json" $mode $N <<'PY' || fail "bytes attributed across an unload ($mode)"
import json, sys
path, mode, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
final = [json.loads(l) for l in open(path) if l.startswith("{")][-1]
c = {x["class"]: x for x in final["classes"]}
a, b = c.get("DynA"), c.get("DynB")
print("DynA:", a, "\nDynB:", b, "\nunloads seen:", final["classes_unloaded"])
assert a and b, "both classes must appear"
assert final["classes_unloaded"] >= 1, "the unload was not seen"
if mode == "exact":
    # N objects in run() plus the instance that runs them
    assert a["samples"] == n + 1 and b["samples"] == n + 1, "exact counts"
else:
    # 64-byte objects, N of each: equal bytes by construction; with every
    # sample kept each TLAB's contents are parsed, so the ratio read
    # 0.978-0.998 in 5 runs under load (a misattributed TLAB moves it ~4 %)
    ratio = a["bytes"] / b["bytes"]
    print("DynA/DynB bytes ratio", round(ratio, 3))
    assert 0.8 < ratio < 1.25, "DynA and DynB should weigh about the same"
PY
	jvm_stop "$JVM_PID"
done
