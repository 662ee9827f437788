#!/usr/bin/env bash
# query_protocol - HEAP_REQUEST under abuse: a request shorter than its
# struct, field names that run past the payload, unknown flags, and a frame
# announcing more than the agent's request buffer all get an ERROR frame and
# never hurt the JVM; a well-formed bare walk request is answered by
# HEAP_DONE; `memtrace histo` works afterwards. (A refusal as busy right
# after the session before is asked again: the agent serves one at a time.)
# TIMEOUT: 45
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xmx128m QueryWorkload clean
"$MEMTRACE" attach -p "$JVM_PID" >/dev/null || fail "attach"
SOCK=/tmp/.memtrace-$JVM_PID.sock
[ -S "$SOCK" ] || fail "no agent socket"
cat >"$TMPD/client.py" <<'PY'
import socket, struct, sys
MAGIC, VER = 0x5041544d, 1
def hdr(t, n, seq=1):
    return struct.pack("<IHHII", MAGIC, VER, t, n, seq)
def talk(path, data):
    """HELLO, then data; describe the first frame after HELLO_REPLY."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(20)
    s.connect(path)
    s.sendall(hdr(1, 8) + struct.pack("<HHI", 1, 1, 0) + data)
    buf = b""
    try:
        while True:
            while len(buf) >= 16:
                m, v, t, n, q = struct.unpack("<IHHII", buf[:16])
                if len(buf) < 16 + n: break
                p, buf = buf[16:16 + n], buf[16 + n:]
                if t == 2: continue  # HELLO_REPLY
                if t == 7: return "error %d %s" % (struct.unpack("<i", p[:4])[0], p[8:].split(b"\0")[0].decode())
                if t == 15: return "done objects>0=%s" % (struct.unpack("<Q", p[16:24])[0] >= 0)
                return "type %d" % t
            d = s.recv(1 << 16)
            if not d: return "closed"
            buf += d
    except socket.timeout:
        return "timeout"
req = lambda flags, nfields, names=b"": struct.pack("<IIII", flags, 0, nfields, 0) + names
cases = {
    "short":   hdr(13, 8) + b"\0" * 8,
    "names":   hdr(13, 16 + 3) + req(0, 2, b"ab\0"),
    "flags":   hdr(13, 16) + req(1 << 20, 0),
    "huge":    hdr(13, 1 << 19) + b"\0" * 64,
    "bare":    hdr(13, 16) + req(1 << 4, 0),
}
# the session before (attach's, the last case's) may end a moment after its
# client is gone: a refusal as busy (or the socket closed on us before HELLO
# went out) is tried again, for up to 3 s
import time
for i in range(30):
    try:
        got = talk(sys.argv[1], cases[sys.argv[2]])
    except (BrokenPipeError, ConnectionResetError):
        got = "refused"
    if got != "refused" and not got.startswith("error 16 "):
        break
    time.sleep(0.1)
print(got)
PY
expect() { # CASE PATTERN
	local got; got=$(python3 "$TMPD/client.py" "$SOCK" "$1")
	echo "  $1: $got" >&2
	[[ "$got" == *"$2"* ]] || fail "$1: got '$got', expected '$2'"
	kill -0 "$JVM_PID" || fail "JVM died after $1"
}
expect short "malformed heap request"
expect names "malformed heap request"
expect flags "malformed heap request"
expect huge "frame too large"
expect bare "done"
"$MEMTRACE" histo -p "$JVM_PID" --json >"$TMPD/h.json" 2>"$TMPD/e" || { cat "$TMPD/e"; fail "histo after abuse"; }
assert_eq "$(json_get "$TMPD/h.json" '[r["instances"] for r in recs if r.get("class") == "Order"]')" "[50]" "histo after abuse"
