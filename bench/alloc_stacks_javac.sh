#!/usr/bin/env bash
# bench/alloc_stacks_javac.sh - a real program: javac (javax.tools, one JVM)
# compiling java.xml's sources from the JDK's lib/src.zip, with `memtrace alloc`
# and JFR (jdk.ObjectAllocationSample, settings=profile) on the same run.
# Prints both weighted median Java depths (bytes as weights) and both shares
# of bytes with a com.sun.tools.javac frame. SRC= another src.zip (default
# the JDK's own, installed when missing on a Debian JDK); REPEAT=N
# compiles N times in the one JVM (default 3: memtrace's walks come in
# windows of a few ms, ~3 a second under the default budget, each window
# one moment of javac, so its median moves with the number of windows: one
# compile gave ~45 of them and medians 39-46 over runs). Also prints the
# kernel's BPF statistics of the TLAB program (its time per run). Needs root.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
JDK=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
tmp=$(mktemp -d /tmp/mt-javac.XXXX)
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
# KEEP=DIR: memtrace's JSON and collapsed stacks and JFR's events kept there
trap 'kill $(jobs -p) 2>/dev/null || true; sysctl -qw kernel.bpf_stats_enabled=$stats_was
	[ -n "${KEEP:-}" ] && mkdir -p "$KEEP" &&
	cp "$tmp"/m.json "$tmp"/c "$tmp"/r.json "$KEEP"/ 2>/dev/null; rm -rf "$tmp"' EXIT
# the kernel's own time in memtrace's TLAB program (run_time_ns, run_cnt)
sysctl -qw kernel.bpf_stats_enabled=1
prog_stats() {
	bpftool prog show -j | python3 -c '
import json, sys
ps = [p for p in json.load(sys.stdin) if p.get("name") == "handle_new_tlab" and p.get("run_cnt")]
p = max(ps, key=lambda p: p["id"]) if ps else {}
print(p.get("run_time_ns", 0), p.get("run_cnt", 0))'
}
"$ROOT/tests/java/build.sh"
src=${SRC:-$JDK/lib/src.zip}
# Debian's JDK links lib/src.zip to openjdk-N-source's file: installed here
# when missing (JDK 17 compiling JDK 25's java.xml stopped at its errors
# after ~8 s, 23-27 windows: a median of few moments), unless that would
# upgrade an installed package (the source package wants the same version
# as the JDK): then the user decides
if [ ! -e "$src" ] && [[ $(readlink -f "$JDK") =~ java-([0-9]+)-openjdk ]]; then
	pkg=openjdk-${BASH_REMATCH[1]}-source
	if apt-get -s install --no-install-recommends "$pkg" 2>/dev/null | grep -q '^Inst .* \['; then
		echo "error: $src is missing, and installing $pkg would upgrade the JDK:" \
			"apt-get install $pkg, or SRC= another src.zip" >&2
		exit 1
	fi
	echo "installing $pkg for $src"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null
fi
[ -e "$src" ] || { echo "error: no sources at $src (SRC= names a src.zip)" >&2; exit 1; }
(cd "$tmp" && unzip -q "$src" 'java.xml/*')
find "$tmp/java.xml" -name '*.java' >"$tmp/files"
mkdir "$tmp/out"
"$JDK/bin/java" -Xmx1g -XX:StartFlightRecording=name=mt,settings=profile -cp "$ROOT/build/java" \
	JavacRun --go "$tmp/go" --repeat "${REPEAT:-3}" -d "$tmp/out" --module-source-path "$tmp" -proc:none -nowarn \
	-XDignore.symbol.file --module java.xml -implicit:none >"$tmp/w.out" 2>&1 &
pid=$!
until grep -q READY "$tmp/w.out"; do sleep 0.1; done
"$ROOT/build/memtrace" alloc -p "$pid" ${MT_ARGS:-} --json --collapsed "$tmp/c" >"$tmp/m.json" 2>"$tmp/m.err" &
mt=$!
sleep 1
touch "$tmp/go"
until grep -q DONE "$tmp/w.out"; do sleep 0.2; done
prog_stats >"$tmp/bpfstats"
kill -INT $mt; wait $mt
"$JDK/bin/jcmd" "$pid" JFR.dump name=mt filename="$tmp/r.jfr" >/dev/null
"$JDK/bin/jfr" print --json --stack-depth 256 --events jdk.ObjectAllocationSample "$tmp/r.jfr" >"$tmp/r.json"
echo "== javac on java.xml ($(grep -c . "$tmp/files") files), JDK $("$JDK/bin/java" -version 2>&1 | head -1); $(grep DONE "$tmp/w.out")"
python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]

def wmedian(pairs):
    pairs = sorted(pairs)
    half, acc = sum(w for _, w in pairs) / 2, 0
    for d, w in pairs:
        acc += w
        if acc >= half:
            return d
    return 0

mt, mj, tot, jav = [], 0, 0, 0
for line in open(f"{tmp}/c"):
    stack, _, b = line.rstrip("\n").rpartition(" ")
    fr = [f for f in stack.split(";")[:-1] if not f.startswith("[")]
    b = int(b)
    mt.append((len(fr), b))
    tot += b
    jav += b if any(f.startswith("com.sun.tools.javac") for f in fr) else 0
jd, jt, jj = [], 0, 0
for e in json.load(open(f"{tmp}/r.json"))["recording"]["events"]:
    v = e["values"]
    if not v.get("stackTrace"):
        continue
    fr = [f["method"]["type"]["name"].replace("/", ".") for f in v["stackTrace"]["frames"]]
    jd.append((len(fr), v["weight"]))
    jt += v["weight"]
    jj += v["weight"] if any(f.startswith("com.sun.tools.javac") for f in fr) else 0
final = [json.loads(l) for l in open(f"{tmp}/m.json") if l.startswith('{"event":"alloc"')][-1]
print("  memtrace walks:", final["java_stacks"]["walks"], "lost:", final["java_stacks"]["lost_stacks"], "stops:",
      {k: v for k, v in final["java_stacks"]["stops"].items() if v},
      "unknown frames:", final["java_stacks"]["unknown_frames"])
dc = final.get("duty_cycle", {})
if dc.get("windows"):
    print(f"  memtrace duty cycle: {100 * dc['duty']:.1f} % of {dc['period_ms']:.0f} ms periods "
          f"at the end, {dc['windows']} windows, measured loss {100 * dc['measured_loss']:.2f} %")
ns, runs = map(int, open(f"{tmp}/bpfstats").read().split())
if runs:
    print(f"  memtrace's TLAB program (kernel BPF statistics): {runs} runs, {ns / runs / 1e3:.1f} us "
          f"each; the duty cycle's cost per kept sample {dc.get('cost_per_sample_ns', 0) / 1e3:.1f} us")
print(f"  weighted median Java depth: memtrace {wmedian(mt)}, JFR {wmedian(jd)}")
print(f"  bytes with a com.sun.tools.javac frame: memtrace {100 * jav / tot:.1f} %, "
      f"JFR {100 * jj / jt:.1f} %")
PY
