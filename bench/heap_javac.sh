#!/usr/bin/env bash
# bench/heap_javac.sh - heap snapshots of a real program while it works: javac
# (javax.tools in one JVM, tests/java/JavacRun) compiling java.xml's sources
# from the JDK's own src.zip twice in a row (~20 s, both CPUs busy). AT
# seconds into the compile (default 3) one tool takes one snapshot:
#   none      the baseline
#   histo     memtrace histo
#   retained  memtrace heap --retained
#   jmap      jmap -histo:live
# ROUNDS runs per tool (default 3), the tools interleaved, a fresh JVM each.
# Per tool, medians: the tool's wall time, the JVM's pause for it
# (-Xlog:safepoint: memtrace's walk, "HeapWalkOperation"; jmap's
# "GC_HeapInspection"), and javac's compile time against the baseline's
# (what the snapshot cost the program, pause and copy-on-write and CPU
# alike). JDKS: the JDKs (both of this machine's by default). Needs root.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
JDKS=${JDKS:-"/usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64"}
ROUNDS=${ROUNDS:-3}
AT=${AT:-3}
tmp=$(mktemp -d /tmp/mt-heapjavac.XXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
"$ROOT/tests/java/build.sh" >/dev/null

# run JDK TOOL N: one compile with TOOL's snapshot; appends "tool wall_s
# pause_ms compile_ms" to $tmp/res.JDKNAME
run() {
	local jdk=$1 tool=$2 d=$tmp/run.$2.$3 pid t0 t1 op
	mkdir -p "$d/out"
	"$jdk/bin/java" -Xmx1g -XX:+UseG1GC -Xlog:safepoint:file="$d/sp.log" -cp "$ROOT/build/java" \
		JavacRun --go "$d/go" --repeat 2 -d "$d/out" --module-source-path "$src" -proc:none \
		-nowarn -XDignore.symbol.file --module java.xml -implicit:none >"$d/w.out" 2>&1 &
	pid=$!
	until grep -q READY "$d/w.out"; do sleep 0.1; done
	touch "$d/go"
	sleep "$AT"
	t0=$(date +%s.%N)
	case $tool in
	none) ;;
	histo) "$ROOT/build/memtrace" histo -p "$pid" >/dev/null 2>"$d/t.err" ;;
	retained) "$ROOT/build/memtrace" heap -p "$pid" --retained >/dev/null 2>"$d/t.err" ;;
	jmap) "$jdk/bin/jmap" -histo:live "$pid" >/dev/null 2>"$d/t.err" ;;
	esac
	t1=$(date +%s.%N)
	until grep -q DONE "$d/w.out"; do
		kill -0 "$pid" 2>/dev/null || { cat "$d/w.out" "$d/t.err"; echo "javac died ($tool)" >&2; exit 1; }
		sleep 0.2
	done
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	case $tool in histo | retained) op=HeapWalkOperation ;; jmap) op=GC_HeapInspection ;; *) op=- ;; esac
	python3 - "$d/sp.log" "$op" "$tool" "$t0" "$t1" "$(awk '/^DONE/ { print $3 }' "$d/w.out")" \
		>>"$tmp/res.$name" <<'PY'
import re, sys
log, op, tool, t0, t1, ms = sys.argv[1:7]
pause = sum(int(m.group(1)) for m in (re.search(r'Safepoint "' + re.escape(op) + r'".*Total: (\d+) ns', l)
                                      for l in open(log)) if m) / 1e6
print(tool, round(float(t1) - float(t0), 3), round(pause, 2), ms)
PY
	rm -rf "$d"
}

for jdk in $JDKS; do
	name=$(basename "$jdk")
	[ -x "$jdk/bin/java" ] || { echo "== $name: not installed, skipped"; continue; }
	zip=$jdk/lib/src.zip
	# Debian's JDK links lib/src.zip to openjdk-N-source's file; when that
	# package is missing its .deb is fetched and unpacked here (installing
	# it could upgrade the JDK: it wants the same version)
	if [ ! -e "$zip" ] && [[ $(readlink -f "$jdk") =~ java-([0-9]+)-openjdk ]]; then
		(cd "$tmp" && apt-get download -q "openjdk-${BASH_REMATCH[1]}-source" >/dev/null 2>&1 &&
			dpkg-deb -x openjdk-*-source_*.deb deb && rm -f openjdk-*-source_*.deb) || true
		zip=$(find "$tmp/deb" -name src.zip 2>/dev/null | head -1)
	fi
	[ -e "$zip" ] || { echo "== $name: no sources (openjdk-N-source), skipped"; continue; }
	src=$tmp/src.$name
	mkdir -p "$src"
	(cd "$src" && unzip -q "$zip" 'java.xml/*')
	rm -rf "$tmp/deb"
	: >"$tmp/res.$name"
	for ((r = 0; r < ROUNDS; r++)); do
		for tool in none histo retained jmap; do
			run "$jdk" "$tool" "$r"
		done
	done
	echo "== javac on java.xml ($(find "$src/java.xml" -name '*.java' | wc -l) files, twice), $name," \
		"a snapshot $AT s in; medians of $ROUNDS"
	python3 - "$tmp/res.$name" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
by = {}
for t, wall, pause, ms in rows:
    by.setdefault(t, []).append((float(wall), float(pause), float(ms)))
base = st.median(r[2] for r in by["none"])
print(f"{'tool':<10} {'wall s':>8} {'pause ms':>9} {'compile s':>10} {'vs none':>8}")
for t in ("none", "histo", "retained", "jmap"):
    r = by[t]
    c = st.median(x[2] for x in r)
    print(f"{t:<10} {st.median(x[0] for x in r):8.3f} {st.median(x[1] for x in r):9.2f} "
          f"{c / 1000:10.2f} {c / base:8.3f}")
PY
	rm -rf "$src"
done
