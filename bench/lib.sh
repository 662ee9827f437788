# bench/lib.sh - sourced by the benchmarks that run Debian's H2 database server
# (libh2-java) under a JDBC load: alloc_h2.sh, locks_h2.sh, top_h2.sh.
# The caller sets ROOT (the repository) and runs with `set -eu`.
# Settings, from the environment: H2JAR (default /usr/share/java/h2.jar),
# CLIENTS (JDBC connections, 8), SECS (seconds of load, 10), JDKS (the JDKs
# to run, both of this machine's by default).
H2JAR=${H2JAR:-/usr/share/java/h2.jar}
CLIENTS=${CLIENTS:-8}
SECS=${SECS:-10}
JDKS=${JDKS:-"/usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64"}

# h2_require NAME: exit 1, saying how to install it, when H2's jar is missing.
h2_require() {
	[ -r "$H2JAR" ] || { echo "$1: $H2JAR is missing: apt-get install libh2-java (scripts/install-deps.sh)" >&2; exit 1; }
}

# h2_start DIR JDK PORT [JVM OPTION...]: start H2's TCP server on JDK
# (loopback only, -Xmx256m and the options given; its database in DIR/db, its
# output in DIR/server.out) and wait until it listens; then start the load,
# tests/java/H2Load with CLIENTS connections for SECS seconds once DIR/go
# exists (output in DIR/client.out), and wait until it is READY.
# Sets H2_SERVER and H2_CLIENT to their pids (jobs of the caller's shell).
h2_start() {
	local d=$1 jdk=$2 port=$3
	shift 3
	mkdir -p "$d/db"
	"$jdk/bin/java" -Dh2.bindAddress=127.0.0.1 -Xmx256m "$@" \
		-cp "$H2JAR" org.h2.tools.Server -tcp -tcpPort "$port" -ifNotExists -baseDir "$d/db" \
		>"$d/server.out" 2>&1 &
	H2_SERVER=$!
	for _ in $(seq 100); do grep -q "TCP server running" "$d/server.out" && break; sleep 0.1; done
	grep -q "TCP server running" "$d/server.out" || { cat "$d/server.out"; exit 1; }
	"$jdk/bin/java" -cp "$ROOT/build/java:$H2JAR" H2Load "jdbc:h2:tcp://127.0.0.1:$port/bench" \
		"$CLIENTS" "$SECS" "$d/go" >"$d/client.out" 2>&1 &
	H2_CLIENT=$!
	for _ in $(seq 300); do grep -q READY "$d/client.out" && break; sleep 0.1; done
}
