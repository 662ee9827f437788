#!/usr/bin/env bash
# tests/e2e/run.sh [CASE...] - run the end-to-end cases against both JDKs.
# Prints one line per case and JDK as each ends, then "N passed, N failed,
# N skipped"; E2E_NOTES=1 also prints the notes of the cases that pass.
#
# Two at a time (E2E_JOBS, default 2; 1 runs them one by one, in order):
# each case has its own TMPD, its own JVMs and free ports. A case whose
# header says "# ALONE: why" runs with nothing else in flight, after the
# others: those that compare times or costs (a park's time against JFR's, a
# pause against the JVM's log, memtrace's cost budget), which a second JVM
# on the other core would change.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export ROOT MEMTRACE="$ROOT/build/memtrace" CLASSES="$ROOT/build/java"
JDKS=("17:${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}" "25:${JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}")
JOBS=${E2E_JOBS:-2}
pass=0 failn=0 skipn=0 failed=() faillogs=()

"$ROOT/tests/java/build.sh" || { echo "0 passed, 1 failed"; exit 1; }

# Perf maps in /tmp before the run: one a test's JVM leaves behind is named
# at the end (memtrace removes those it made; a JVM killed while one was
# being written, or a workload that asks for one itself, may leave one)
PERFMAPS_BEFORE=$(ls /tmp/perf-*.map 2>/dev/null)
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=("$ROOT"/tests/e2e/cases/*.sh)
RES=$(mktemp -d /tmp/mt-e2e-res.XXXX)
# The cases run python3 hundreds of times (stdlib only). Debian's
# (scripts/install-deps.sh) starts in 40 ms; a pyenv shim first in PATH, as
# on this project's VMs, takes 400 ms a start: it cost serve_query alone
# 20 of its 37 s. So python3 is Debian's here when it exists.
if [ -x /usr/bin/python3 ]; then
	mkdir "$RES/bin" && ln -s /usr/bin/python3 "$RES/bin/python3" && export PATH="$RES/bin:$PATH"
fi

# run_one ID CASE JDK HOME: run one case on one JDK; its verdict line (and a
# failure's log tail) goes to $RES/ID.out, its status to $RES/ID.st
# ("pass", "skip", or "fail NAME[JDK] LOG").
run_one() {
	local id=$1 c=$2 jdk=$3 home=$4 name rc t0 dt out=$RES/$1.out
	name=$(basename "$c" .sh)
	local tmpd; tmpd=$(mktemp -d "/tmp/mt-e2e.$name.$jdk.XXXX")
	local tmo; tmo=$(sed -n 's/^# TIMEOUT: *//p' "$c"); tmo=${tmo:-120}
	t0=$(date +%s)
	JDK=$jdk JAVA_HOME=$home TMPD=$tmpd timeout -k 5 "$tmo" bash "$c" >"$tmpd/log" 2>&1
	rc=$?
	dt=$(( $(date +%s) - t0 ))
	if [ $rc -eq 0 ]; then
		echo "PASS  $name [jdk $jdk] (${dt}s)" >"$out"
		[ -n "${E2E_NOTES:-}" ] && sed "s/^/    /" "$tmpd/log" >>"$out"
		rm -rf "$tmpd"; echo pass >"$RES/$id.st"
	elif [ $rc -eq 77 ]; then
		echo "SKIP  $name [jdk $jdk]: $(grep -m1 '^SKIP' "$tmpd/log")" >"$out"
		rm -rf "$tmpd"; echo skip >"$RES/$id.st"
	else
		{
			[ $rc -eq 124 ] && echo "  (timed out after ${tmo}s)"
			echo "FAIL  $name [jdk $jdk] (${dt}s, exit $rc); log $tmpd/log:"
			sed 's/^/    /' "$tmpd/log" | tail -40
		} >"$out"
		echo "fail $name[$jdk] $tmpd/log" >"$RES/$id.st"
	fi
}

# reap ID: print a finished run's lines and count its verdict
reap() {
	local st; read -r -a st <"$RES/$1.st" 2>/dev/null || st=(fail "job$1" "$RES/$1.out")
	cat "$RES/$1.out" 2>/dev/null
	case ${st[0]} in
	pass) pass=$((pass + 1)) ;;
	skip) skipn=$((skipn + 1)) ;;
	*) failn=$((failn + 1)); failed+=("${st[1]}"); faillogs+=("${st[2]}") ;;
	esac
}

# the runs: "CASE JDK HOME" lines, shared ones first, the ALONE ones last
shared=() alone=()
for c in "${cases[@]}"; do
	runs=()
	if grep -q '^# JDKS: none' "$c"; then
		runs+=("$c none ${JDKS[0]#*:}")
	else
		for j in "${JDKS[@]}"; do
			jdk=${j%%:*} home=${j#*:}
			if [ ! -x "$home/bin/java" ]; then
				skipn=$((skipn + 1))
				echo "SKIP  $(basename "$c" .sh) [jdk $jdk]: $home is absent on this machine"
				continue
			fi
			runs+=("$c $jdk $home")
		done
	fi
	if grep -q '^# ALONE:' "$c"; then alone+=("${runs[@]}"); else shared+=("${runs[@]}"); fi
done

declare -A inflight=() # pid of a background run -> its ID
# reap_next: wait for any run in flight to end, then reap it
reap_next() {
	local done_pid d
	wait -n -p done_pid; d=${inflight[$done_pid]}; unset "inflight[$done_pid]"; reap "$d"
}
id=0
for r in "${shared[@]}"; do
	while [ ${#inflight[@]} -ge "$JOBS" ]; do reap_next; done
	id=$((id + 1)); read -r c jdk home <<<"$r"
	run_one "$id" "$c" "$jdk" "$home" &
	inflight[$!]=$id
done
while [ ${#inflight[@]} -gt 0 ]; do reap_next; done
for r in "${alone[@]}"; do
	id=$((id + 1)); read -r c jdk home <<<"$r"
	run_one "$id" "$c" "$jdk" "$home"; reap "$id"
done
rm -rf "$RES"

[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
# again at the end, where a log shortened from the middle still shows it:
# each failed case's last lines and those that say what differed
for i in "${!faillogs[@]}"; do
	echo "-- ${failed[$i]}: what failed"
	grep -E -i 'fail|differ|mismatch|wrong|lacks|not the expected|no samples|error' "${faillogs[$i]}" |
		tail -12 | sed 's/^/    /'
done
left=$(comm -13 <(echo "$PERFMAPS_BEFORE") <(ls /tmp/perf-*.map 2>/dev/null))
for f in $left; do
	p=${f#/tmp/perf-}; p=${p%.map}
	[ -d "/proc/$p" ] || echo "warning: $f of a JVM that has ended was left in /tmp by this run"
done
echo "e2e: $pass passed, $failn failed, $skipn skipped"
[ $failn -eq 0 ]
