#!/bin/bash
# tests/fuzz/run.sh [--each SECONDS | SECONDS] [NAME...] - build the libFuzzer
# harnesses (make fuzz-build: clang, coverage, ASan, UBSan) and run each of
# them (or the NAMEs given) on its corpus, two at a time:
#   SECONDS         the whole run's budget, shared out (make check: 24)
#   --each SECONDS  every harness that long (make fuzz: FUZZ_SECONDS)
# A harness's corpus lives in build/fuzz/corpus/NAME (kept between runs, so
# coverage accumulates) and starts from its seeds: tests/fuzz/seeds/NAME/
# (real data, capture-seeds.sh), tests/dsl/*.mq for the DSL, the unit
# tests' fixture heap for the heap readers (mkseeds.c). Prints one line per
# harness - runs, libFuzzer's coverage (cov: edges, ft: features), corpus -
# and exits non-zero if any finds a crash, a leak, undefined behaviour or a
# timeout (the input is kept in build/fuzz/crash-NAME-*).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-build}
out=$root/$build/fuzz
each=0 total=24
if [ "${1:-}" = --each ]; then each=$2; shift 2; elif [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then total=$1; shift; fi

# name  max_len  weight (share of the budget)
table="dsl 4096 3
readers 16384 2
recording 65536 2
agent_frames 65536 2
agent_request 4096 1
vmstructs 262144 2
perfdata 70000 1
usdt 65536 1
http 8192 2"
names=("$@")
[ ${#names[@]} -eq 0 ] && names=($(echo "$table" | awk '{print $1}'))

cd "$root"
make -s -j"$(nproc)" BUILD="$build" fuzz-build >"$out.build.log" 2>&1 || {
	mkdir -p "$out"; cat "$out.build.log"; echo "fuzz: the harnesses do not build"; exit 1; }

# seeds into the corpora
seed() { # NAME: unpack tests/fuzz/seeds/NAME/*.gz into the corpus (once per seed)
	local d=$out/corpus/$1 f
	mkdir -p "$d"
	for f in tests/fuzz/seeds/$1/*.gz; do
		[ -e "$f" ] || continue
		[ -e "$d/seed-$(basename "$f" .gz)" ] || gzip -dc "$f" >"$d/seed-$(basename "$f" .gz)"
	done
}
for n in "${names[@]}"; do seed "$n"; done
if [[ " ${names[*]} " == *" dsl "* ]]; then cp tests/dsl/*.mq "$out/corpus/dsl/"; fi
if [[ " ${names[*]} " == *" readers "* ]]; then
	# built by fuzz-build from the Makefile's FUZZ_readers (its link once
	# failed here unseen when the readers gained sources: a corpus without
	# the fixture heap's seeds); a failure now fails the stage
	if ! "$out/mkseeds" "$out/corpus/readers" "$out/corpus/readers" >/dev/null; then
		echo "fuzz: the readers' seeds (build/fuzz/mkseeds) could not be made"
		exit 1
	fi
fi

wsum=0
for n in "${names[@]}"; do wsum=$((wsum + $(echo "$table" | awk -v n="$n" '$1 == n {print $3}'))); done
jobs=$(( $(nproc) > 1 ? 2 : 1 ))

run_one() { # NAME SECONDS MAX_LEN
	local n=$1 s=$2 len=$3 log=$out/log-$1
	cd "$out/corpus/$n" || return 1
	"$out/fuzz_$n" -max_total_time="$s" -max_len="$len" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$out/crash-$n-" . >"$log" 2>&1
	local rc=$?
	local done_line; done_line=$(grep -E "^#[0-9]+[[:space:]]+DONE" "$log" | tail -1)
	local runs; runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	local cov ft corp
	cov=$(echo "$done_line" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$done_line" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
	corp=$(echo "$done_line" | sed -n 's/.*corp: \([0-9]*\).*/\1/p')
	if [ $rc -eq 0 ]; then
		printf 'fuzz %-14s %9s runs in %3s s  cov %5s  ft %6s  corpus %5s\n' "$n" "${runs:-?}" \
			"$s" "${cov:-?}" "${ft:-?}" "${corp:-?}"
	else
		echo "fuzz $n FAILED (exit $rc):"
		grep -E 'ERROR|SUMMARY|==[0-9]+==|#[0-9]+ in |artifact|Test unit written|deadly' "$log" | head -40
	fi
	return $rc
}

fail=0 pids=()
for n in "${names[@]}"; do
	len=$(echo "$table" | awk -v n="$n" '$1 == n {print $2}')
	w=$(echo "$table" | awk -v n="$n" '$1 == n {print $3}')
	if [ -z "$len" ]; then echo "fuzz: no harness '$n'"; fail=1; continue; fi
	if [ "$each" -gt 0 ]; then s=$each; else s=$(( total * jobs * w / wsum )); [ $s -lt 2 ] && s=2; fi
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || fail=1; done
	run_one "$n" "$s" "$len" &
done
while [ "$(jobs -rp | wc -l)" -gt 0 ]; do wait -n || fail=1; done
[ $fail -eq 0 ]
