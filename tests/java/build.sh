#!/usr/bin/env bash
# Compile tests/java/*.java once (release 17, so both JDKs run them) into build/java.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
out="$ROOT/build/java"
javac="${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/javac"
mkdir -p "$out"
stamp="$out/.stamp"
if [ -f "$stamp" ] && [ -z "$(find "$ROOT/tests/java" -name '*.java' -newer "$stamp")" ] && [ -d "$ROOT/build/java-dyn" ]; then
	exit 0
fi
"$javac" --release 17 -d "$out" "$ROOT"/tests/java/*.java
# classes loaded by their own class loaders (ClassUnload): kept off the class path
mkdir -p "$ROOT/build/java-dyn"
"$javac" --release 17 -d "$ROOT/build/java-dyn" "$ROOT"/tests/java/dyn/*.java
touch "$stamp"
