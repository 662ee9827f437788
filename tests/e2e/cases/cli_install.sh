#!/usr/bin/env bash
# cli_install - GNU command-line habits and `make install`:
# `make install DESTDIR=... PREFIX=/usr` puts memtrace, its agent, the man
# page and the bash completion in place; the installed binary finds its agent
# in ../lib/memtrace (attach from a directory without ./build, and fails
# saying where it looked once the agent is gone); the man page renders
# without warnings and documents every command of the table; the completion
# completes commands, options, choices and the pids of running JVMs;
# options after arguments (`report FILE --json`), `--` ending them,
# durations with units (record --duration 800ms), a stray argument refused.
# JDKS: none
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"

dest="$TMPD/dest"
make -C "$ROOT" --no-print-directory install DESTDIR="$dest" PREFIX=/usr >"$TMPD/install.log" 2>&1 ||
	{ cat "$TMPD/install.log"; fail "make install failed"; }
M="$dest/usr/bin/memtrace"
for f in usr/bin/memtrace usr/lib/memtrace/libmemtrace-agent.so usr/share/man/man1/memtrace.1 \
	usr/share/bash-completion/completions/memtrace; do
	[ -f "$dest/$f" ] || fail "make install did not install /$f"
done
[ -x "$M" ] || fail "the installed memtrace is not executable"
"$M" --version | grep -q '^memtrace ' || fail "the installed memtrace does not run"

# The man page: renders cleanly, one section per command of the table.
groff -man -Tutf8 -ww "$dest/usr/share/man/man1/memtrace.1" >"$TMPD/man.txt" 2>"$TMPD/man.err" ||
	fail "groff could not render the man page"
[ -s "$TMPD/man.err" ] && { cat "$TMPD/man.err"; fail "the man page has roff warnings"; }
sed -n 's/^\.SS //p' "$dest/usr/share/man/man1/memtrace.1" | sed 's/\\-/-/g' >"$TMPD/man.cmds"
"$M" --commands | cut -f1 | cmp -s - "$TMPD/man.cmds" || { cat "$TMPD/man.cmds"; fail "the man page's commands are not the table's"; }
grep -q "memtrace gc -p PID" "$TMPD/man.txt" || fail "the man page lacks gc's usage"

# A JVM for what follows.
jvm_start w -Xmx64m Idle
pid=$JVM_PID

# The completion, as bash runs it (memtrace on PATH for the pid list).
comp() { # WORDS...: the completions of the last word
	PATH="$dest/usr/bin:$PATH" bash -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _memtrace
		printf "%s\n" "${COMPREPLY[@]}"' _ "$dest/usr/share/bash-completion/completions/memtrace" "$@"
}
comp memtrace g | grep -qx gc || fail "completion: 'memtrace g' does not offer gc"
comp memtrace report --j | grep -qx -- --json || fail "completion: report --j"
comp memtrace serve --names "" | sort | tr '\n' ' ' | grep -qx 'micrometer otel ' || fail "completion: serve --names"
comp memtrace alloc --by s | grep -qx stack || fail "completion: alloc --by s"
comp memtrace gc -p "" | grep -qx "$pid" || { comp memtrace gc -p ""; fail "completion: gc -p does not offer JVM $pid"; }
comp memtrace -p "" | grep -qx "$pid" || fail "completion: memtrace -p does not offer JVM $pid"
mkdir -p "$TMPD/cdir" && touch "$TMPD/cdir/rec.gz"
comp memtrace check "$TMPD/cdir/r" | grep -qx "$TMPD/cdir/rec.gz" || fail "completion: check FILE"

# The installed binary finds its agent in ../lib/memtrace (no ./build here).
cd "$TMPD"
"$M" attach -p "$pid" --json >"$TMPD/attach.json" 2>"$TMPD/attach.err" ||
	{ cat "$TMPD/attach.err"; fail "the installed memtrace could not attach (agent not found?)"; }
mv "$dest/usr/lib/memtrace/libmemtrace-agent.so" "$TMPD/agent.so"
"$M" attach -p "$pid" --load >"$TMPD/out" 2>"$TMPD/err" && fail "attach --load worked without its agent"
grep -q "in ../lib/memtrace/ from it" "$TMPD/err" || { cat "$TMPD/err"; fail "attach did not say where it looked"; }
mv "$TMPD/agent.so" "$dest/usr/lib/memtrace/libmemtrace-agent.so"
"$M" detach -p "$pid" >/dev/null 2>&1

# GNU order, `--`, durations with units.
"$M" record -p "$pid" -o "$TMPD/r.rec.gz" --duration 800ms 2>"$TMPD/rec.err" || { cat "$TMPD/rec.err"; fail "record --duration 800ms"; }
grep -q "in 0\.[89] s\|in 1\.[0-9] s" "$TMPD/rec.err" || { cat "$TMPD/rec.err"; fail "record did not stop after 800ms"; }
"$M" report "$TMPD/r.rec.gz" --json >"$TMPD/rep1.json" || fail "report FILE --json"
head -1 "$TMPD/rep1.json" | grep -q '^{"event":"start"' || fail "report FILE --json did not print JSON"
"$M" report --json -- "$TMPD/r.rec.gz" >"$TMPD/rep2.json" || fail "report --json -- FILE"
cmp -s "$TMPD/rep1.json" "$TMPD/rep2.json" || fail "report: the two orders differ"
"$M" check "$TMPD/r.rec.gz" --json | grep -q '"violations":0' || fail "check FILE --json"
"$M" gc -p "$pid" extra >/dev/null 2>"$TMPD/err"; rc=$?
assert_eq "$rc" 2 "gc with a stray argument"
grep -q "gc takes no argument (got 'extra')" "$TMPD/err" || { cat "$TMPD/err"; fail "gc's stray-argument message"; }
"$M" gc -p "$pid" --duration 1y >/dev/null 2>"$TMPD/err"; rc=$?
assert_eq "$rc" 2 "gc --duration 1y"
grep -q "500ms, 5s, 2m" "$TMPD/err" || { cat "$TMPD/err"; fail "the duration message does not show the units"; }
"$M" gc --json --duration 300ms -p "$pid" | tail -1 | grep -q '"event":"summary"' || fail "gc with options in any order"

make -C "$ROOT" --no-print-directory uninstall DESTDIR="$dest" PREFIX=/usr >/dev/null 2>&1 || fail "make uninstall"
[ -e "$M" ] && fail "make uninstall left the binary"
exit 0
