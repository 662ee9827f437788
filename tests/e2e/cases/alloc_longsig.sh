#!/usr/bin/env bash
# alloc_longsig - a method whose JVM signature is longer than 512 bytes (18
# parameters of java.util.concurrent classes: 766 bytes; Derby's
# B2IForwardScan.init has 615) is named in `alloc --by stack`, interpreted
# and compiled: before, its name could not be read (the signature did not
# fit memtrace's buffer) and the frame was "[unknown]" (Derby: 124 frames).
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xmx64m LongSig
sig=$("$JAVA_HOME/bin/javap" -s -cp "$CLASSES" LongSig 2>/dev/null | grep -A1 ' allocate(' | sed -n 's/.*descriptor: //p')
[ "${#sig}" -gt 512 ] || fail "LongSig.allocate's signature is ${#sig} bytes, not over 512"
"$MEMTRACE" alloc -p "$JVM_PID" --by stack --duration 4 --collapsed "$TMPD/a.collapsed" >"$TMPD/a.out" 2>&1 ||
	{ cat "$TMPD/a.out" >&2; fail "alloc exited $?"; }
grep -q 'LongSig.allocate' "$TMPD/a.collapsed" || { head "$TMPD/a.collapsed" >&2; fail "no LongSig.allocate frame"; }
! grep -q '\[unknown\]' "$TMPD/a.collapsed" || { grep '\[unknown\]' "$TMPD/a.collapsed" | head -3 >&2; fail "[unknown] frames"; }
! grep -q "unknown frames [1-9]" "$TMPD/a.out" || { cat "$TMPD/a.out" >&2; fail "alloc counts unknown frames"; }
note "signature ${#sig} bytes; $(grep -c 'LongSig.allocate' "$TMPD/a.collapsed") stacks through LongSig.allocate, none [unknown]"
