#!/usr/bin/env bash
# tests/e2e/run.sh [CASE...] - run the end-to-end cases against both JDKs.
# Prints one line per case and JDK, then "N passed, N failed, N skipped";
# E2E_NOTES=1 also prints the notes of the cases that pass.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export ROOT MEMTRACE="$ROOT/build/memtrace" CLASSES="$ROOT/build/java"
JDKS=("17:${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}" "25:${JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}")
pass=0 failn=0 skipn=0 failed=() faillogs=()

"$ROOT/tests/java/build.sh" || { echo "0 passed, 1 failed"; exit 1; }

cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=("$ROOT"/tests/e2e/cases/*.sh)

run_one() { # case jdk home
	local c=$1 jdk=$2 home=$3 name rc t0 dt
	name=$(basename "$c" .sh)
	local tmpd; tmpd=$(mktemp -d "/tmp/mt-e2e.$name.$jdk.XXXX")
	local tmo; tmo=$(sed -n 's/^# TIMEOUT: *//p' "$c"); tmo=${tmo:-120}
	t0=$(date +%s)
	JDK=$jdk JAVA_HOME=$home TMPD=$tmpd timeout -k 5 "$tmo" bash "$c" >"$tmpd/log" 2>&1
	rc=$?
	dt=$(( $(date +%s) - t0 ))
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1)); echo "PASS  $name [jdk $jdk] (${dt}s)"
		[ -n "${E2E_NOTES:-}" ] && sed "s/^/    /" "$tmpd/log"
		rm -rf "$tmpd"
	elif [ $rc -eq 77 ]; then
		skipn=$((skipn + 1)); echo "SKIP  $name [jdk $jdk]: $(grep -m1 '^SKIP' "$tmpd/log")"
		rm -rf "$tmpd"
	else
		failn=$((failn + 1)); failed+=("$name[$jdk]"); faillogs+=("$tmpd/log")
		[ $rc -eq 124 ] && echo "  (timed out after ${tmo}s)"
		echo "FAIL  $name [jdk $jdk] (${dt}s, exit $rc); log $tmpd/log:"
		sed 's/^/    /' "$tmpd/log" | tail -40
	fi
}

for c in "${cases[@]}"; do
	if grep -q '^# JDKS: none' "$c"; then
		run_one "$c" none "${JDKS[0]#*:}"
		continue
	fi
	for j in "${JDKS[@]}"; do
		jdk=${j%%:*} home=${j#*:}
		if [ ! -x "$home/bin/java" ]; then
			skipn=$((skipn + 1))
			echo "SKIP  $(basename "$c" .sh) [jdk $jdk]: $home is absent on this machine"
			continue
		fi
		run_one "$c" "$jdk" "$home"
	done
done
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
# again at the end, where a log shortened from the middle still shows it:
# each failed case's last lines and those that say what differed
for i in "${!faillogs[@]}"; do
	echo "-- ${failed[$i]}: what failed"
	grep -E -i 'fail|differ|mismatch|wrong|lacks|not the expected|no samples|error' "${faillogs[$i]}" |
		tail -12 | sed 's/^/    /'
done
echo "e2e: $pass passed, $failn failed, $skipn skipped"
[ $failn -eq 0 ]
