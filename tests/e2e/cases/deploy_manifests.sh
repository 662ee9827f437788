#!/usr/bin/env bash
# deploy_manifests - deploy/*.yaml offline: Debian's yamllint (syntax, keys
# once, indentation), then scripts/check-deploy.py (the Kubernetes fields they
# use, by type; selectors, ports, mounts; memtrace's capabilities equal
# docs/serve.md's table, its serve options exist). A broken copy must fail.
# JDKS: none
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"
command -v yamllint >/dev/null || skip "yamllint is not installed (apt-get install yamllint)"
YL='{extends: default, rules: {line-length: {max: 100}, document-start: disable, comments: {min-spaces-from-content: 1}}}'
yamllint -s -d "$YL" "$ROOT"/deploy/*.yaml >"$TMPD/yl.txt" 2>&1 || { cat "$TMPD/yl.txt" >&2; fail "yamllint"; }
/usr/bin/python3 "$ROOT/scripts/check-deploy.py" "$MEMTRACE" >"$TMPD/cd.txt" 2>&1 ||
	{ cat "$TMPD/cd.txt" >&2; fail "check-deploy"; }
note "$(tail -1 "$TMPD/cd.txt")"
# the checker catches what it claims to: a misspelled field, a capability
# more than the table's, a serve option that does not exist
sed -e 's/hostPID: true/hostPid: true/' -e 's/"KILL"\]/"KILL", "NET_ADMIN"]/' \
	-e 's/--allow-remote /--allow-remotely /' "$ROOT/deploy/daemonset.yaml" >"$TMPD/bad.yaml"
/usr/bin/python3 "$ROOT/scripts/check-deploy.py" "$MEMTRACE" "$TMPD/bad.yaml" >"$TMPD/bad.txt" 2>&1 &&
	fail "check-deploy passed a broken manifest"
for what in "hostPid: no such field" "NET_ADMIN" "--allow-remotely is not an option"; do
	grep -q -- "$what" "$TMPD/bad.txt" || { cat "$TMPD/bad.txt" >&2; fail "check-deploy missed: $what"; }
done
note "a broken copy fails on each of its three faults"
