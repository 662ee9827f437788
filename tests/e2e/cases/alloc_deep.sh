#!/usr/bin/env bash
# alloc_deep - allocation stacks deeper than JFR's default, whole or cut with a
# mark (#31.14): tests/java/AllocDeep.java allocating 300 calls deep
# (AllocDeep.main -> rec x 301 -> byte[]). Two JVMs: tiered, where C2 inlines
# the recursion (a walk of ~150 compiled frames names 302 Java frames), and
# -Xint (302 interpreted frames). With the default --stack-depth every sampled
# stack reaches AllocDeep.main, none is cut, and the `java stacks:` line says
# 100 % of the bytes are in whole stacks. At --stack-depth 100 every stack
# holds exactly its 100 innermost frames (AllocDeep.rec) under a first frame
# "[stack cut: depth]" and the line says 0 %; likewise at 200 in the tiered
# JVM, where the walk is whole and the names are cut. Before, stacks stopped
# at 128 frames, unmarked when the walk was whole and inlined methods took the
# names past 128 (the line said "100 % complete"). JFR (stackdepth=512) during
# the default run: its share of the bytes reaching main, printed beside
# memtrace's (both 100 % here).
# TIMEOUT: 180
. "$ROOT/tests/e2e/lib.sh"

# JFR: allocation samples only, 10 a second (a 302-frame stack is ~150 KB of JSON)
cat >"$TMPD/alloc.jfc" <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0">
  <event name="jdk.ObjectAllocationSample">
    <setting name="enabled">true</setting>
    <setting name="throttle">10/s</setting>
    <setting name="stackTrace">true</setting>
  </event>
</configuration>
EOF
for mode in tiered int; do
	flags=()
	[ $mode = int ] && flags+=(-Xint)
	jvm_start "w$mode" -Xmx256m "${flags[@]}" -XX:FlightRecorderOptions:stackdepth=512 \
		AllocDeep --depth 300
	pid=$JVM_PID
	[ $mode = tiered ] && sleep 3 # C2 compiles the recursion
	jtool jcmd "$pid" JFR.start name=deep settings="$TMPD/alloc.jfc" >/dev/null ||
		fail "JFR.start"
	depths="default 100"
	[ $mode = tiered ] && depths+=" 200"
	for depth in $depths; do
		args=()
		[ $depth != default ] && args+=(--stack-depth $depth)
		"$MEMTRACE" alloc -p "$pid" --duration 3 --by stack --collapsed "$TMPD/$mode.$depth.collapsed" \
			"${args[@]}" >"$TMPD/$mode.$depth.txt" 2>"$TMPD/$mode.$depth.err" ||
			{ cat "$TMPD/$mode.$depth.err"; fail "alloc failed ($mode, $depth)"; }
		grep "^java stacks:" "$TMPD/$mode.$depth.txt" >&2
		[ $depth = default ] && { jtool jcmd "$pid" JFR.stop name=deep \
			filename="$TMPD/$mode.jfr" >/dev/null || fail "JFR.stop"; }
	done
	jtool jfr print --json --stack-depth 512 --events jdk.ObjectAllocationSample \
		"$TMPD/$mode.jfr" >"$TMPD/$mode.jfr.json" || fail "jfr print"
	jvm_stop "$pid"
	echo "== $mode (JDK $JDK)"
	python3 - "$TMPD" "$mode" <<'PY' || fail "deep stacks wrong ($mode)"
import json, sys
tmpd, mode = sys.argv[1:3]
ok = True

def load(depth):
    line = [l for l in open(f"{tmpd}/{mode}.{depth}.txt") if l.startswith("java stacks:")][-1]
    whole = float(line.split("java stacks: ")[1].split("%")[0])
    stacks = []
    for line in open(f"{tmpd}/{mode}.{depth}.collapsed"):
        st, _, b = line.rstrip("\n").rpartition(" ")
        fr = st.split(";")
        if fr[-1] != "byte[]":
            continue
        stacks.append((fr[:-1], int(b)))
    return whole, stacks

def name(f):  # without the kind suffix (_[0], _[j], _[i], _[1])
    return f.rsplit("_[", 1)[0] if f.endswith("]") and "_[" in f else f

# default depth: every stack whole, reaching main, 302 Java frames
whole, stacks = load("default")
tot = sum(b for _, b in stacks)
main = sum(b for fr, b in stacks if fr and name(fr[0]) == "AllocDeep.main")
cut = sum(b for fr, b in stacks if fr and fr[0].startswith("[stack cut"))
depths = sorted({len(fr) for fr, _ in stacks})
print(f"default: {tot} bytes of byte[] in {len(stacks)} stacks, {100 * main / tot if tot else 0:.2f} % "
      f"reach main, {100 * cut / tot if tot else 0:.2f} % cut; depths {depths}; the text says "
      f"{whole} % in whole stacks")
if not tot or main != tot or cut or whole != 100.0:
    ok = False
    print("FAIL: with the default depth a sampled stack did not reach main, or was cut")
if depths and (min(depths) < 302 or max(depths) > 303):
    ok = False
    print("FAIL: stacks of other than 302 frames (main, rec x 301)")

# --stack-depth N: every stack cut, marked, its N innermost frames (at 200
# the walk of the compiled recursion is whole, ~150 frames, and the cut is
# the names')
for n in (100, 200) if mode == "tiered" else (100,):
    whole, stacks = load(str(n))
    tot = sum(b for _, b in stacks)
    marked = sum(b for fr, b in stacks if fr and fr[0] == "[stack cut: depth]" and len(fr) == n + 1
                 and all(name(f) == "AllocDeep.rec" for f in fr[1:]))
    print(f"--stack-depth {n}: {100 * marked / tot if tot else 0:.2f} % of the bytes in stacks of "
          f"[stack cut: depth] + {n} x AllocDeep.rec; the text says {whole} % in whole stacks")
    if not tot or marked != tot or whole != 0.0:
        ok = False
        print(f"FAIL: a stack deeper than --stack-depth {n} was not cut to its {n} innermost "
              "frames under a mark, or was counted whole")

# JFR on the same run (stackdepth=512): its share of the bytes reaching main
jw = jm = jt = 0
for e in json.load(open(f"{tmpd}/{mode}.jfr.json"))["recording"]["events"]:
    v = e["values"]
    if (v.get("objectClass") or {}).get("name") not in ("byte[]", "[B") or not v.get("stackTrace"):
        continue
    fr = v["stackTrace"]["frames"]
    jw += v["weight"]
    if fr and fr[-1]["method"]["name"] == "main" and not v["stackTrace"].get("truncated"):
        jm += v["weight"]
    jt += 1
print(f"JFR (stackdepth=512, {jt} samples): {100 * jm / jw if jw else 0:.2f} % of the bytes reach "
      f"main; memtrace (default depth): 100.00 %")
if not jt:
    ok = False
    print("FAIL: JFR recorded no byte[] sample")
sys.exit(0 if ok else 1)
PY
done
