#!/usr/bin/env bash
# record_cut - recordings survive their writer. Three `memtrace record`s of
# one JVM at once: one ends normally, one is killed -9, one writes into a
# tmpfs (a private mount) filled up to its last free page before it starts,
# so the disk fills once the recording passes 4 KiB, however fast the JVM
# (a 256 KiB room, on a busy machine, filled only at the last block: the
# message there lacked "readable up to ..."); a fourth finds the disk full
# at its header: nothing recorded, said so. Then the complete
# one is cut at every 4 KiB boundary, re-framed as one gzip stream (a
# recording from before the framing), and given zeros in place of its end
# (a host crash), for 24 sizes. Every time `check` exits 0 with no violation and reads
# exactly the events zlib itself decodes from the same bytes (python's zlib,
# member by member: the oracle), says "complete" only for the whole file,
# and names the cut; `report` exits 0 and says where it was cut.
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xmx256m DemoWorkload
pid=$JVM_PID
"$MEMTRACE" record -p "$pid" -o "$TMPD/full.rec.gz" --duration 4 2>"$TMPD/full.err" &
r1=$!
"$MEMTRACE" record -p "$pid" -o "$TMPD/killed.rec.gz" 2>"$TMPD/killed.err" &
r2=$!
mkdir -p "$TMPD/small" "$TMPD/none"
# ENOSPC: a tmpfs in a mount namespace of its own (nothing left mounted),
# filled but for one page: the header fits, the recording's first 4 KiB do
# not (DemoWorkload writes more than that a second, however slow)
unshare --mount bash -c "mount -t tmpfs -o size=256k tmpfs '$TMPD/small' &&
	head -c \$(( \$(df --output=avail -B1 '$TMPD/small' | tail -1) - 4096 )) /dev/zero >'$TMPD/small/filler' &&
	df --output=avail -B1 '$TMPD/small' | tail -1 | tr -d ' ' >'$TMPD/enospc.avail' &&
	'$MEMTRACE' record -p $pid -o '$TMPD/small/rec.gz' --duration 20 2>'$TMPD/enospc.err';
	echo \$? >'$TMPD/enospc.rc'; cp '$TMPD/small/rec.gz' '$TMPD/enospc.rec.gz'" &
r3=$!
# and a disk full before the header
unshare --mount bash -c "mount -t tmpfs -o size=64k tmpfs '$TMPD/none' &&
	head -c 1M /dev/zero >'$TMPD/none/filler' 2>/dev/null;
	'$MEMTRACE' record -p $pid -o '$TMPD/none/rec.gz' --duration 2 2>'$TMPD/none.err';
	echo \$? >'$TMPD/none.rc'"
wait_for_line "$TMPD/killed.err" 'recording pid' 20 || { cat "$TMPD/killed.err"; fail "record did not start"; }
sleep 3.5
kill -9 "$r2"
wait "$r1" || { cat "$TMPD/full.err"; fail "record (complete) failed"; }
wait "$r2" 2>/dev/null
wait "$r3"
assert_eq "$(cat "$TMPD/enospc.avail")" 4096 "room left on the small tmpfs"
[ "$(cat "$TMPD/enospc.rc")" = 1 ] || { cat "$TMPD/enospc.err"; fail "record on a full disk exited $(cat "$TMPD/enospc.rc"), expected 1"; }
assert_contains "$TMPD/enospc.err" "No space left on device; the recording stops there, readable up to its last complete block"
note "full disk: $(grep -m1 'No space' "$TMPD/enospc.err")"
[ "$(cat "$TMPD/none.rc")" = 1 ] || { cat "$TMPD/none.err"; fail "record with no room for its header exited $(cat "$TMPD/none.rc")"; }
assert_contains "$TMPD/none.err" "No space left on device; nothing was recorded"

python3 - "$MEMTRACE" "$TMPD" <<'PY' || fail "a cut recording was not read as it should"
import gzip, json, os, subprocess, sys, zlib
mt, d = sys.argv[1], sys.argv[2]

def torn_lines(out):
    """the complete lines of a torn member's decoded start, up to the first
    that is not JSON (the part after the last newline is not a line)"""
    got = out.split(b"\n")[:-1]
    for i, l in enumerate(got):
        try:
            json.loads(l)
        except ValueError:
            return got[:i]
    return got

def oracle(data):
    """complete lines zlib decodes, member by member, a torn one's prefix
    included, a corrupt one's excluded; and whether the trailer is there.
    Zeros that end the file (8 bytes or more: no member ends so) are not
    data: a member that does not end whole before them is torn where they
    begin (zlib run on into them makes up lines)."""
    lines, pos = [], 0
    zs = len(data.rstrip(b"\0"))
    if len(data) - zs < 8:
        zs = len(data)
    while pos < len(data):
        if data[pos:pos + 2] != b"\x1f\x8b":
            break
        z = zlib.decompressobj(31)
        try:
            out = z.decompress(data[pos:])
        except zlib.error:
            out = None
        if out is not None and z.eof:
            lines += out.split(b"\n")[:-1]
            pos = len(data) - len(z.unused_data)
            continue
        if pos < zs < len(data):
            z = zlib.decompressobj(31)
            try:
                out = z.decompress(data[pos:zs])
            except zlib.error:
                out = None
        if out is not None:
            lines += torn_lines(out)
        break
    trailer = any(l.startswith(b'{"k":"end"') for l in lines)
    return len(lines), trailer

def check(path):
    p = subprocess.run([mt, "check", "--json", path], capture_output=True, text=True)
    recs = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    c = [r for r in recs if r["event"] == "check"]
    assert c, (path, p.returncode, p.stdout, p.stderr)
    return p.returncode, c[-1], p.stderr

def expect(path, data, whole):
    rc, c, err = check(path)
    n, trailer = oracle(data)
    want = n - 1 - (1 if trailer else 0)
    assert rc == 0, (path, rc, c, err)
    assert c["violations"] == 0, (path, c)
    assert c["events"] == max(want, 0), (path, len(data), c, n, trailer)
    assert c["complete"] == whole, (path, c)
    if not whole:
        assert c["cut"]["at_byte"] <= len(data) and c["cut"]["file_bytes"] == len(data), c
        assert "was cut short" in err, err
    return c

full = open(f"{d}/full.rec.gz", "rb").read()
c = expect(f"{d}/full.rec.gz", full, True)
print(f"complete: {c['events']} events in {len(full)} bytes")
assert c["events"] > 1000, c
# the zeros below replace up to its last 24 KiB: the header must stay (a 4 s
# recording held one poll's events, 17-19 KiB, when its setup outlasted
# --duration: it counted from before the setup)
assert len(full) > 32 * 1024, len(full)

killed = open(f"{d}/killed.rec.gz", "rb").read()
c = expect(f"{d}/killed.rec.gz", killed, False)
assert c["cut"]["reason"] in ("no_trailer", "torn"), c
assert c["events"] > 1000, c
print(f"kill -9 after 3.5 s: {c['events']} events, cut {c['cut']['reason']} at byte {c['cut']['at_byte']}")

# the page held the header and, the data's first block refused, the
# trailer saying why: read as cut by the writer's error
small = open(f"{d}/enospc.rec.gz", "rb").read()
assert len(small) <= 4096, len(small)
c = expect(f"{d}/enospc.rec.gz", small, False)
assert c["cut"]["reason"] in ("writer_error", "no_trailer"), c
print(f"full disk: {c['events']} events in {len(small)} bytes, cut {c['cut']['reason']}")

# cut at every 4 KiB boundary
cut = f"{d}/cut.rec.gz"
prev, sizes = -1, list(range(4096, len(full), 4096))
for k in sizes:
    open(cut, "wb").write(full[:k])
    c = expect(cut, full[:k], False)
    assert c["events"] >= prev, (k, c, prev)
    prev = c["events"]
print(f"{len(sizes)} cuts at 4 KiB boundaries: each read exactly what zlib decodes")
# report on a cut: exit 0, the gc records, the cut named
open(cut, "wb").write(full[:len(full) // 2])
p = subprocess.run([mt, "report", "--json", cut], capture_output=True, text=True)
assert p.returncode == 0, (p.returncode, p.stderr)
recs = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
rc = [r for r in recs if r["event"] == "recording"]
assert rc and rc[0]["complete"] is False and rc[0]["cut"]["reason"] == "torn", rc
assert any(r["event"] == "gc" for r in recs), "no collections reported from half a recording"
assert "was cut short" in p.stderr, p.stderr

# a recording from before the framing: one gzip stream
text = gzip.decompress(full)
old = f"{d}/old.rec.gz"
with gzip.open(old, "wb") as f:
    f.write(text)
c = expect(old, open(old, "rb").read(), True)
# a host crash: zeros where the file's last bytes were, for every 1 KiB from
# 1 to 24 KiB (zlib decodes lines from such zeros that were never written:
# a CI run read 10 of them; the oracle reads up to the zeros)
reasons = {}
for k in range(1024, 24 * 1024 + 1, 1024):
    z = full[:-k] + b"\0" * k
    open(cut, "wb").write(z)
    c = expect(cut, z, False)
    assert c["cut"]["reason"] in ("garbage", "corrupt", "torn"), c
    reasons[c["cut"]["reason"]] = reasons.get(c["cut"]["reason"], 0) + 1
print(f"zeros for the last 1-24 KiB: each read what zlib decodes before them; cuts {reasons}")
PY
