#!/bin/bash
# tests/fuzz/run.sh SECONDS - build the DSL fuzzer (libFuzzer, ASan, UBSan) and
# run it for SECONDS with tests/dsl/*.mq as the seed corpus; then the
# snapshot and HPROF readers' fuzzer for SECONDS/2. Exits non-zero
# if the fuzzer finds a crash, a leak or undefined behaviour.
set -euo pipefail
secs=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${BUILD:-$root/build}/fuzz
mkdir -p "$out/corpus"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-std=gnu11 -D_GNU_SOURCE -I"$root" \
	-o "$out/fuzz_dsl" "$root"/dsl/*.c "$root/tests/fuzz/fuzz_dsl.c" -lm
cp "$root"/tests/dsl/*.mq "$out/corpus/"
cd "$out"
./fuzz_dsl -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 corpus

# The snapshot and HPROF readers (user/heap/snapfile.c, snaprec.c, hprof.c,
# walkids.c) and the heap built from what they read (heapview.c): one fuzzer
# dispatching on the input's magic, for half the time (at least 5 s), seeded
# with the unit tests' fixture heap in both formats.
rsecs=$(( secs / 2 > 5 ? secs / 2 : 5 ))
readers=("$root/user/heap/snapshot.c" "$root/user/heap/snaprec.c" "$root/user/heap/snapfile.c"
	"$root/user/heap/hprof.c" "$root/user/heap/walkids.c" "$root/user/heap/heapview.c"
	"$root/user/analysis/ageranges.c" "$root/user/analysis/dominators.c"
	"$root/user/analysis/heapgraph.c" "$root/user/lib/util.c" "$root/user/lib/offmap.c"
	"$root/user/lib/idmap.c" "$root"/dsl/*.c)
mkdir -p "$out/corpus_readers"
cc -O1 -g -std=gnu11 -D_GNU_SOURCE -I"$root/include" -I"$root/user" -I"$root" \
	-I"$root/tests/unit" -o "$out/mkseeds" "$root/tests/fuzz/mkseeds.c" "${readers[@]}" -lz -lm
"$out/mkseeds" "$out/corpus_readers" "$out/corpus_readers"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-std=gnu11 -D_GNU_SOURCE -I"$root/include" -I"$root/user" -I"$root" \
	-o "$out/fuzz_readers" "$root/tests/fuzz/fuzz_readers.c" "${readers[@]}" -lz -lm
./fuzz_readers -max_total_time="$rsecs" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 corpus_readers
