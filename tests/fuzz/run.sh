#!/bin/bash
# tests/fuzz/run.sh SECONDS - build the DSL fuzzer (libFuzzer, ASan, UBSan) and
# run it for SECONDS with tests/dsl/*.mq as the seed corpus. Exits non-zero
# if the fuzzer finds a crash, a leak or undefined behaviour.
set -euo pipefail
secs=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${BUILD:-$root/build}/fuzz
mkdir -p "$out/corpus"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-std=gnu11 -D_GNU_SOURCE -I"$root/dsl" \
	-o "$out/fuzz_dsl" "$root"/dsl/*.c "$root/tests/fuzz/fuzz_dsl.c" -lm
cp "$root"/tests/dsl/*.mq "$out/corpus/"
cd "$out"
exec ./fuzz_dsl -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 corpus
