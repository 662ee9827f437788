#!/usr/bin/env bash
# Compile tests/java/*.java once (release 17, so both JDKs run them) into build/java.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
out="$ROOT/build/java"
javac="${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/javac"
mkdir -p "$out"
stamp="$out/.stamp"
if [ -f "$stamp" ] && [ -z "$(find "$ROOT/tests/java" -name '*.java' -newer "$stamp")" ]; then
	exit 0
fi
"$javac" --release 17 -d "$out" "$ROOT"/tests/java/*.java
touch "$stamp"
