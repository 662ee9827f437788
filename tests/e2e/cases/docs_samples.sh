#!/usr/bin/env bash
# docs_samples - every sample output in docs/*.md (a fenced block after a
# `<!-- sample: NAME -->` marker) still has the shape of what memtrace prints:
# scripts/doc-samples.py runs each sample's command on the test JVMs it names
# (DemoWorkload, JucLocks) and compares the outputs with the pages, numbers,
# addresses, paths and Java names masked. A page that drifts from the program
# fails here; `scripts/doc-samples.py --update` rewrites the samples.
# TIMEOUT: 240
. "$ROOT/tests/e2e/lib.sh"

python3 "$ROOT/scripts/doc-samples.py" --jdk "$JAVA_HOME" --memtrace "$MEMTRACE" --classes "$CLASSES" \
	--tmp "$TMPD" >"$TMPD/samples.out" 2>"$TMPD/samples.err"
rc=$?
cat "$TMPD/samples.out"
[ $rc -eq 0 ] || { cat "$TMPD/samples.err" >&2; fail "docs/ samples differ from memtrace's output (scripts/doc-samples.py --update rewrites them)"; }
note "$(tail -1 "$TMPD/samples.out")"
