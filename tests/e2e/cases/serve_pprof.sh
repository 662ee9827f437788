#!/usr/bin/env bash
# serve_pprof - `memtrace serve`'s GET /debug/pprof/allocs fetched by the real
# client, `go tool pprof http://memtrace:TOKEN@HOST/...` (basic auth with the
# token, as Go sends it): a gzip'd profile.proto of a 2 s window whose leaves
# are AllocShares' three classes with their shares by construction (50/30/20
# of the bytes, within 3 points, every sample kept), under their allocating methods; the
# endpoint refuses a missing or wrong token (401), an unknown pid (404), a
# bad window (400) and an unknown profile (404).
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"

command -v go >/dev/null || skip "go is not installed (apt-get install golang-go; make deps does it)"
export HOME=${HOME:-$TMPD} GOCACHE="$TMPD/gocache"
PORT=$(free_port)
serve_token
ETOKEN=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$TOKEN")

jvm_start w -Xmx256m -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,AllocShares::big \
	-XX:CompileCommand=dontinline,AllocShares::mid -XX:CompileCommand=dontinline,AllocShares::small \
	AllocShares --go "$TMPD/go" --mb 65536
pid=$JVM_PID
# every sample kept (the tests' fixed duty cycle): the shares below check the
# profile's weights and stacks, not the budget's thinning, whose spread in a
# 2 s window is not in the profile (it swung Big and Mid by 5 points on a VM
# whose uprobe trap costs 5 us; alloc_budget and alloc_shares check thinning
# against memtrace's own standard errors)
MEMTRACE_TEST_DUTY=1:1 serve_start "$TMPD/serve.log" -p "$pid" --listen "127.0.0.1:$PORT" --token-file "$TMPD/token"
status() { # PATH [AUTH]: the HTTP status
	python3 - "$PORT" "$1" "${2:-}" <<'PY'
import sys, urllib.request, urllib.error
req = urllib.request.Request("http://127.0.0.1:%s%s" % (sys.argv[1], sys.argv[2]))
if sys.argv[3]:
    req.add_header("Authorization", sys.argv[3])
try:
    print(urllib.request.urlopen(req, timeout=10).status)
except urllib.error.HTTPError as e:
    print(e.code)
except Exception as e:
    print("none", e)
PY
}
for ((i = 0; i < 50; i++)); do [ "$(status /metrics)" = 200 ] && break; sleep 0.2; done
for ((i = 0; i < 50; i++)); do grep -q "watching pid $pid" "$TMPD/serve.log" && break; sleep 0.2; done
grep -q "watching pid $pid" "$TMPD/serve.log" || { cat "$TMPD/serve.log"; fail "serve did not watch $pid"; }

assert_eq "$(status "/debug/pprof/allocs?seconds=1")" 401 "no token"
assert_eq "$(status "/debug/pprof/allocs?seconds=1" "Bearer wrong-token-wrong-token")" 401 "wrong token"
assert_eq "$(status "/debug/pprof/allocs?seconds=1" "Basic $(printf 'x:wrong' | base64)")" 401 "wrong basic auth"
assert_eq "$(status "/debug/pprof/allocs?pid=1&seconds=1" "Bearer $TOKEN")" 404 "a pid serve does not watch"
assert_eq "$(status "/debug/pprof/allocs?seconds=0" "Bearer $TOKEN")" 400 "seconds=0"
assert_eq "$(status "/debug/pprof/allocs?seconds=1y" "Bearer $TOKEN")" 400 "seconds=1y"
assert_eq "$(status "/debug/pprof/heap" "Bearer $TOKEN")" 404 "an unknown profile"

touch "$TMPD/go"
sleep 0.5
url="http://memtrace:$ETOKEN@127.0.0.1:$PORT/debug/pprof/allocs?pid=$pid&seconds=2"
# pprof waits 1.5 x the URL's seconds for the answer (3 s here); memtrace needs
# the seconds plus its session's start (attach, BPF: 0.5-3 s on a loaded machine)
go tool pprof -timeout 30 -raw "$url" >"$TMPD/raw.txt" 2>"$TMPD/pprof.err" ||
	{ cat "$TMPD/pprof.err" "$TMPD/serve.log" >&2; fail "go tool pprof could not fetch the profile"; }
grep -q "DONE" "$TMPD/w.out" && note "the workload finished inside the window (shares still hold)"
python3 - "$TMPD/raw.txt" <<'PY' || { head -40 "$TMPD/raw.txt" >&2; fail "the profile's shares or stacks are wrong"; }
import re, sys
# go tool pprof -raw: "Samples:" header with the sample types, then per sample
# "  v1 v2: loc loc ...", then "Locations": "  id: 0xaddr M=1 function file:line
# s=0(system name)", inlined callers on the lines below it
text = open(sys.argv[1]).read()
types = [t.replace("[dflt]", "") for t in re.search(r"Samples:\n(.*)\n", text).group(1).split()]
assert "alloc_space/bytes" in types and "alloc_objects/count" in types, types
space_idx = types.index("alloc_space/bytes")
locs = {}
for m in re.finditer(r"^\s+(\d+): 0x[0-9a-f]+ M=\d+ (\S+) \S*:\d+ s=\d+", text, re.M):
    locs[m.group(1)] = m.group(2).strip()
total, by_leaf, parents = 0, {}, {}
for m in re.finditer(r"^\s+(\d+(?:\s+\d+)*):((?: \d+)+)\s*$", text.split("Locations")[0], re.M):
    vals = m.group(1).split()
    stack = m.group(2).split()
    b = int(vals[space_idx])
    leaf = locs.get(stack[0], "?")
    total += b
    by_leaf[leaf] = by_leaf.get(leaf, 0) + b
    if len(stack) > 1:
        parents.setdefault(leaf, set()).add(locs.get(stack[1], "?"))
print(f"total {total} B in {len(by_leaf)} leaves")
want = {"AllocShares$Big": 0.50, "AllocShares$Mid": 0.30, "AllocShares$Small": 0.20}
ok = total > 0
for cls, share in want.items():
    got = by_leaf.get(cls, 0) / total if total else 0
    print(f"  {cls}: {got:.3f} (by construction {share:.2f}), called from {sorted(parents.get(cls, []))}")
    # a stack sample is a TLAB refill and weighs the whole TLAB: refills
    # alias with a periodic loop (README: AllocAlias' 60 % read 55.6 % by
    # refills; AllocShares shuffles its order against it); class shares from
    # the TLABs' contents (alloc's class table) have no stacks to go with them
    ok &= abs(got - share) <= 0.03
    site = "AllocShares." + cls.split("$")[1].lower()
    ok &= site in parents.get(cls, set())
sys.exit(0 if ok else 1)
PY
serve_stop; rc=$?
assert_eq "$rc" 0 "serve's exit status"
