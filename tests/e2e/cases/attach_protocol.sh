#!/usr/bin/env bash
# attach_protocol - the agent's socket under abuse: another uid cannot connect
# (socket mode 0600), and even through a world-writable socket the agent
# refuses it (SO_PEERCRED) without a reply; bad magic, another version, an
# unknown type, an oversized or wrong-sized length, a frame before HELLO, a
# truncated frame and garbage all get an ERROR frame (or a close) and never
# hurt the JVM; memtrace still attaches afterwards.
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"

jvm_start w AttachWorkload
"$MEMTRACE" attach -p "$JVM_PID" >/dev/null || fail "attach"
# the JVM shares our mount namespace: /tmp is its /tmp (uid 65534 may not
# traverse /proc/PID/root, so the host path is used)
SOCK=/tmp/.memtrace-$JVM_PID.sock
[ -S "$SOCK" ] || fail "no agent socket"
assert_eq "$(stat -c %a "$SOCK")" 600 "socket mode"

cat >"$TMPD/client.py" <<'PY'
import socket, struct, sys, time
MAGIC, VER = 0x5041544d, 1
def hdr(t, n, magic=MAGIC, ver=VER, seq=1):
    return struct.pack("<IHHII", magic, ver, t, n, seq)
def frames(buf):
    """Split buf into complete frames: [(type, payload)]."""
    out = []
    while len(buf) >= 16:
        m, v, t, n, q = struct.unpack("<IHHII", buf[:16])
        if len(buf) < 16 + n: break
        out.append((t, buf[16:16 + n])); buf = buf[16 + n:]
    return out
def describe(t, p):
    if t == 7:
        return "error %d %s" % (struct.unpack("<i", p[:4])[0], p[8:].split(b"\0")[0].decode())
    return "type %d" % t
def talk(path, data, want):
    """Send data; describe the want-th frame the agent answers, or how it ended."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(8)
    s.connect(path)
    out = b""
    try:
        s.sendall(data)
        while len(frames(out)) < want:
            d = s.recv(4096)
            if not d: break
            out += d
    except socket.timeout:
        return "timeout"
    except (ConnectionResetError, BrokenPipeError):  # closed on us: a close too
        pass
    f = frames(out)
    if len(f) >= want:
        return describe(*f[want - 1])
    return "closed" if not out else "short %r" % out
path, case = sys.argv[1], sys.argv[2]
hello = hdr(1, 8) + struct.pack("<HHI", 1, 1, 0)
cases = {
    "hello":     hello,
    "badmagic":  hdr(1, 8, magic=0xdeadbeef) + b"\0" * 8,
    "version":   hdr(1, 8, ver=99) + b"\0" * 8,
    "unknown":   hello + hdr(77, 0),
    "oversized": hello + hdr(3, 0xffffffff),
    "wrongsize": hello + hdr(3, 4) + b"abcd",
    "nohello":   hdr(3, 8) + b"\0" * 8,
    "replytype": hello + hdr(2, 224) + b"\0" * 224,
    "truncated": hdr(1, 8) + b"\1\0",
    "garbage":   b"GET / HTTP/1.0\r\n\r\n",
}
if case == "connect":
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path); print("connected")
    except OSError as e:
        print("refused", e.errno)
    sys.exit(0)
print(talk(path, cases[case], 2 if cases[case].startswith(hello) and case != "hello" else 1))
PY
py() { python3 "$TMPD/client.py" "$@"; }

# python for uid 65534: the system one (root's pyenv shims are not readable by it)
PYN=/usr/bin/python3
[ -x $PYN ] || skip "no /usr/bin/python3 for the foreign-uid client"
chmod 755 "$TMPD"; chmod 644 "$TMPD/client.py"
# another uid: the socket file's mode stops it
r=$(setpriv --reuid=65534 --regid=65534 --clear-groups $PYN "$TMPD/client.py" "$SOCK" connect)
note "uid 65534 connect: $r"
[[ $r == refused* ]] || fail "uid 65534 could connect: $r"
# even through a world-writable socket, SO_PEERCRED refuses it, silently
chmod 666 "$SOCK"
r=$(setpriv --reuid=65534 --regid=65534 --clear-groups $PYN "$TMPD/client.py" "$SOCK" hello)
note "uid 65534 HELLO through a 0666 socket: $r"
assert_eq "$r" closed "foreign uid"
chmod 600 "$SOCK"

assert_eq "$(py "$SOCK" hello)" "type 2" "HELLO"
for c in badmagic version unknown oversized wrongsize nohello replytype; do
	r=$(py "$SOCK" $c)
	note "$c: $r"
	[[ $r == error* ]] || fail "$c: expected an ERROR frame, got '$r'"
done
# a truncated frame: the agent times it out (5 s) with an ERROR frame
r=$(py "$SOCK" truncated); note "truncated: $r"
[[ $r == "error 110"* || $r == timeout ]] || fail "truncated: $r"
r=$(py "$SOCK" garbage); note "garbage: $r"
[[ $r == error* || $r == closed || $r == timeout ]] || fail "garbage: $r"

# still healthy: memtrace attaches and detaches, the JVM computes
"$MEMTRACE" attach -p "$JVM_PID" >/dev/null || fail "attach after abuse"
"$MEMTRACE" detach -p "$JVM_PID" >/dev/null || fail "detach after abuse"
t0=$(grep -c '^tick ' "$TMPD/w.out")
wait_for_line "$TMPD/w.out" "^tick $((t0 + 1)) " 10 || fail "JVM stopped ticking"
[ "$(awk '/^tick /{print $4}' "$TMPD/w.out" | sort -u | wc -l)" -eq 1 ] || fail "checksum changed"
exit 0
