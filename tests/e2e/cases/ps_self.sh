#!/usr/bin/env bash
# ps_self - memtrace's own processes are no JVMs: a `memtrace locks` session
# maps libjvm.so (libelf reads its symbols through mmap) and the frozen copy
# the agent forks for a heap walk maps it as its JVM does; neither is listed
# by `memtrace ps` (so neither is offered by the shell completion of -p,
# which reads ps), watched by `serve --all`, or taken by -p, while the JVM
# beside them is.
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"

jvm_start w GcWorkload --go "$TMPD/never"
PORT=$(free_port)
serve_token
serve_start "$TMPD/serve.log" --all --listen "127.0.0.1:$PORT" --token-file "$TMPD/token" --rescan 1

# listed PID: whether `memtrace ps --json` lists PID
listed() {
	"$MEMTRACE" ps --json >"$TMPD/ps.json" || fail "ps exited $?"
	[ "$(json_get "$TMPD/ps.json" "len([r for r in recs if r['pid'] == $1])")" != 0 ]
}

# A memtrace session beside the JVM, with libjvm.so mapped.
"$MEMTRACE" locks -p "$JVM_PID" --duration 30 >"$TMPD/locks.out" 2>&1 &
MT=$!
H=
trap 'kill $MT $H 2>/dev/null; cleanup_all' EXIT
for ((i = 0; i < 200; i++)); do grep -q libjvm.so "/proc/$MT/maps" 2>/dev/null && break; sleep 0.1; done
grep -q libjvm.so "/proc/$MT/maps" || { cat "$TMPD/locks.out" >&2; fail "memtrace locks never mapped libjvm.so"; }
listed "$JVM_PID" || fail "ps does not list the JVM $JVM_PID"
! listed "$MT" || { cat "$TMPD/ps.json" >&2; fail "ps lists memtrace locks ($MT) as a JVM"; }
"$MEMTRACE" ps >"$TMPD/ps.txt" || fail "ps (text)"
! grep -q "^$MT " "$TMPD/ps.txt" || { cat "$TMPD/ps.txt" >&2; fail "ps (text) lists memtrace locks"; }
"$MEMTRACE" gc -p "$MT" --duration 1 >"$TMPD/gc-mt.out" 2>&1 && fail "gc -p accepted memtrace's own pid"
assert_contains "$TMPD/gc-mt.out" "is not a HotSpot JVM"

# The frozen copy of a heap walk: MEMTRACE_TEST_FREEZE=hang keeps it for
# 1.5 s after the roots (then the walk is done again in a pause).
MEMTRACE_TEST_FREEZE=hang "$MEMTRACE" histo -p "$JVM_PID" >"$TMPD/histo.out" 2>&1 &
H=$!
COPY=
for ((i = 0; i < 600; i++)); do
	for c in $(pgrep -P "$JVM_PID"); do grep -q libjvm.so "/proc/$c/maps" 2>/dev/null && COPY=$c; done
	[ -n "$COPY" ] && break
	sleep 0.05
done
[ -n "$COPY" ] || { cat "$TMPD/histo.out" >&2; fail "no frozen copy of $JVM_PID seen"; }
comm=$(cat "/proc/$COPY/comm" 2>/dev/null)
! listed "$COPY" || { cat "$TMPD/ps.json" >&2; fail "ps lists the frozen copy $COPY ($comm) as a JVM"; }
"$MEMTRACE" gc -p "$COPY" --duration 1 >"$TMPD/gc-copy.out" 2>&1 && fail "gc -p accepted the frozen copy"
if kill -0 "$COPY" 2>/dev/null; then # the message is read while the copy lives
	assert_contains "$TMPD/gc-copy.out" "frozen copy of JVM $JVM_PID"
	assert_eq "$comm" memtrace-copy "the copy's name"
fi
wait "$H" || { cat "$TMPD/histo.out" >&2; fail "histo exited non-zero"; }
sleep 1.5 # a rescan after the copy's life
kill -INT "$MT"; wait "$MT" || { cat "$TMPD/locks.out" >&2; fail "locks exited non-zero"; }

serve_stop
assert_contains "$TMPD/serve.log" "watching pid $JVM_PID "
for p in "$MT" "$COPY" "$H"; do
	! grep -q "watching pid $p " "$TMPD/serve.log" || { cat "$TMPD/serve.log" >&2; fail "serve --all watched memtrace's process $p"; }
done
note "ps and serve --all saw JVM $JVM_PID, not memtrace locks ($MT), histo ($H) or the copy ($COPY, $comm)"
