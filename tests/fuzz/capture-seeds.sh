#!/usr/bin/env bash
# tests/fuzz/capture-seeds.sh - (re)capture the fuzzers' seeds from real data
# into tests/fuzz/seeds/NAME/ (each file gzip'd; run.sh unpacks them): run
# once by hand (root, both JDKs, after `make all`), commit the result.
#   perfdata       the hsperfdata file of a live JVM
#   vmstructs      what the VMStructs reader reads of a live JVM (capture_vmstructs.c)
#   usdt           libjvm's .note.stapsdt and .stapsdt.base (objcopy), and argument strings
#   recording      `memtrace record` of a live JVM, as it is and as JSON lines
#   agent_frames   the agent's side of real `age` and `histo` sessions (strace)
#   agent_request  memtrace's side of the same sessions
#   http           what curl sends to each endpoint of `memtrace serve`
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
S=tests/fuzz/seeds
W=$(mktemp -d /tmp/mt-seeds.XXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$W"' EXIT
MT=build/memtrace
tests/java/build.sh >/dev/null
objs=$(ls build/obj/user/*/*.o build/obj/dsl/*.o | grep -v cmd/main.o)
cc -O1 -g -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser -I. -Ibuild -Itests/fuzz -o "$W/capture_vmstructs" \
	tests/fuzz/capture_vmstructs.c $objs -lbpf -lelf -lz -lm -lpthread -lncursesw
rm -rf "$S"
mkdir -p "$S"/{perfdata,vmstructs,usdt,recording,agent_frames,agent_request,http}

wait_ready() { for _ in $(seq 300); do grep -q READY "$1" 2>/dev/null && return 0; sleep 0.1; done; return 1; }

# strace_streams LOG OUT_PREFIX: the bytes read from and written to the agent
# socket (the fds whose traffic begins with the protocol's magic "MTAP")
strace_streams() {
	python3 - "$1" "$2" <<'PY'
import re, sys, struct
log, out = sys.argv[1], sys.argv[2]
streams, done = {}, []
pat = re.compile(r'^\d+\s+(read|write)\((\d+),\s+"((?:[^"\\]|\\.)*)"(?:\.\.\.)?,\s*\d+\)\s*=\s*(\d+)')
cl = re.compile(r'^\d+\s+close\((\d+)\)')
for line in open(log, errors="replace"):
    m = cl.match(line)
    if m:  # a file descriptor's life ends: its streams are whole
        fd = int(m.group(1))
        for op in ("read", "write"):
            if (fd, op) in streams:
                done.append((op, streams.pop((fd, op))))
        continue
    m = pat.match(line)
    if not m:
        continue
    op, fd, s, n = m.group(1), int(m.group(2)), m.group(3), int(m.group(4))
    b = bytes(int(h, 16) for h in re.findall(r'\\x([0-9a-f]{2})', s))[:n]
    streams.setdefault((fd, op), bytearray()).extend(b)
done += [(op, b) for (fd, op), b in streams.items()]
magic = struct.pack("<I", 0x5041544d)  # "MTAP"
k = 0
for op, b in done:
    if b[:4] != magic:
        continue
    open(f"{out}.{'from_agent' if op == 'read' else 'to_agent'}.{k}", "wb").write(bytes(b[:65536]))
    k += 1
PY
}

for jdk in 17 25; do
	home=/usr/lib/jvm/java-17-openjdk-amd64
	[ $jdk = 25 ] && home=/usr/lib/jvm/temurin-25-jdk-amd64
	"$home/bin/java" -Xmx64m -cp build/java AgeWorkload >"$W/age$jdk.out" 2>&1 &
	pid=$!
	wait_ready "$W/age$jdk.out"
	sleep 1
	# perfdata: u16 length, u8 how (0: not rewritten), the file
	f=$(ls /tmp/hsperfdata_*/$pid)
	python3 -c "import sys,struct; d=open(sys.argv[1],'rb').read(); sys.stdout.buffer.write(struct.pack('<HB',len(d),0)+d)" "$f" >"$S/perfdata/jdk$jdk"
	"$W/capture_vmstructs" $pid "$S/vmstructs/jdk$jdk.img"
	lib=$(grep -m1 'libjvm.so' /proc/$pid/maps | awk '{print $6}')
	objcopy -O elf64-x86-64 --only-section=.note.stapsdt --only-section=.stapsdt.base "$lib" "$S/usdt/notes$jdk.elf"
	readelf -n "$lib" | sed -n 's/^ *Arguments: //p' | sort -u | awk 'NR <= 60' >"$W/args$jdk"
	i=0; while read -r a; do printf '%s' "$a" >"$S/usdt/args$jdk.$i"; i=$((i + 1)); done <"$W/args$jdk"
	# recordings: all categories of an idle moment, and the object sampling lines
	"$MT" record -p $pid -o "$S/recording/rec$jdk.gz" --duration 2 2>/dev/null
	"$MT" record -p $pid -o "$S/recording/obj$jdk.gz" --duration 3 --categories object,thread,type \
		--object-interval 16k 2>/dev/null
	for r in rec obj; do
		zcat "$S/recording/$r$jdk.gz" | awk "NR <= 400" >"$S/recording/$r$jdk.jsonl"
	done
	# agent sessions through strace: sampling (age) and a heap walk (histo)
	strace -f -qq -e trace=read,write,close -xx -s 70000 -o "$W/age.strace" \
		"$MT" age -p $pid --duration 2 --interval 16k >/dev/null 2>&1
	strace_streams "$W/age.strace" "$W/age$jdk"
	strace -f -qq -e trace=read,write,close -xx -s 70000 -o "$W/histo.strace" \
		"$MT" histo -p $pid >/dev/null 2>&1
	strace_streams "$W/histo.strace" "$W/histo$jdk"
	for s in "$W"/age$jdk.* "$W"/histo$jdk.*; do
		case $s in
		*from_agent*) cp "$s" "$S/agent_frames/$(basename "$s")" ;;
		*to_agent*) # the request parser's input: first byte = receive buffer choice
			{ printf '\x03'; cat "$s"; } >"$S/agent_request/$(basename "$s")" ;;
		esac
	done
	kill $pid
	wait $pid 2>/dev/null || true
done

# http: what curl sends, received by a listener that answers 200 to anything
python3 - "$S/http" <<'PY' &
import socket, sys, os
d = sys.argv[1]
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 19464)); s.listen(8)
for i in range(64):
    c, _ = s.accept()
    c.settimeout(0.5)
    data = b""
    try:
        while True:
            b = c.recv(65536)
            if not b:
                break
            data += b
            if b"\r\n\r\n" in data:
                head, _, body = data.partition(b"\r\n\r\n")
                n = 0
                for l in head.split(b"\r\n"):
                    if l.lower().startswith(b"content-length:"):
                        n = int(l.split(b":")[1])
                if len(body) >= n:
                    break
    except socket.timeout:
        pass
    open(os.path.join(d, f"req{i:02d}"), "wb").write(data)
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    c.close()
PY
lst=$!
sleep 0.5
T="Authorization: Bearer fuzz0123456789abcdef"
U=http://127.0.0.1:19464
prog='set_type big:
    roots <- objects.filter([it | it.size > 1000])
    membership <- false
    n : int <- 0
instances_for big have_names = "big"'
curl -s "$U/metrics" >/dev/null || true
curl -s -H "$T" "$U/api/v1/help" >/dev/null || true
curl -s -H "$T" "$U/api/v1/metrics" >/dev/null || true
curl -s -H "$T" "$U/api/v1/jvms" >/dev/null || true
curl -s -H "$T" "$U/api/v1/jvms/101" >/dev/null || true
curl -s -H "$T" -X POST "$U/api/v1/jvms/101/alloc" >/dev/null || true
curl -s -H "$T" -X DELETE "$U/api/v1/jvms/202/age" >/dev/null || true
curl -s -H "$T" -X POST "$U/api/v1/jvms/101/age?interval=64k" >/dev/null || true
curl -s -H "$T" -X POST --data-binary "$prog" "$U/api/v1/jvms/101/query?max_pause_ms=200" >/dev/null || true
curl -s -H "$T" "$U/api/v1/queries/1" >/dev/null || true
curl -s -H "$T" -X POST "$U/api/v1/jvms/101/record/pause" >/dev/null || true
curl -s -H "Authorization: Bearer wrong" "$U/api/v1/jvms" >/dev/null || true
kill $lst 2>/dev/null || true
wait $lst 2>/dev/null || true

for f in $(find "$S" -type f); do gzip -9 -n -c "$f" >"$f.gz" && rm "$f"; done
du -sh "$S"/*
