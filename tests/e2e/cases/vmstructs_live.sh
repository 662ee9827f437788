#!/usr/bin/env bash
# vmstructs_live - VMStructs, JVM flags and class names read from live JVMs
# through `memtrace vmstructs` (the hidden debugging command).
# TIMEOUT: 120
. "$(dirname "$0")/../lib.sh"

# vmq OUT ARGS...: run memtrace vmstructs, JSON lines into $TMPD/OUT.json.
vmq() {
	local out=$1; shift
	"$MEMTRACE" vmstructs "$@" >"$TMPD/$out.json" 2>"$TMPD/$out.err" ||
		{ cat "$TMPD/$out.err" >&2; fail "memtrace vmstructs $* failed"; }
}
# flag FILE NAME KEY: one key of the {"flag":NAME} record.
flag() { json_get "$TMPD/$1.json" "[r.get('$3') for r in recs if r.get('flag') == '$2'][0]"; }
klass() { json_get "$TMPD/$1.json" "[r.get('name') for r in recs if r.get('klass_check') == '$2' and r.get('internal') in (None, '${3:-}')][0]"; }

jvm_start plain -Xmx256m Idle
plain=$JVM_PID
jvm_start alloc -Xmx256m -XX:+DTraceAllocProbes Idle
alloc=$JVM_PID

# Flags through the JVMFlag table (works without .symtab).
vmq plain -p "$plain" --flag DTraceAllocProbes --flag DTraceMonitorProbes \
	--flag ExtendedDTraceProbes --flag MaxHeapSize --flag NoSuchFlagAtAll
assert_eq "$(flag plain DTraceAllocProbes value)" False "DTraceAllocProbes on a plain JVM"
assert_eq "$(flag plain DTraceAllocProbes via)" vmstructs "flag lookup path"
assert_eq "$(flag plain DTraceAllocProbes type)" bool "DTraceAllocProbes type"
assert_eq "$(flag plain DTraceMonitorProbes value)" False "DTraceMonitorProbes on a plain JVM"
assert_eq "$(flag plain MaxHeapSize value)" 268435456 "MaxHeapSize vs -Xmx256m"
assert_eq "$(flag plain MaxHeapSize type)" size_t "MaxHeapSize type"
assert_eq "$(flag plain NoSuchFlagAtAll present)" False "an unknown flag"
# ExtendedDTraceProbes exists in JDK 17 and is gone in 25 (checked on both).
if [ "$JDK" = 17 ]; then want=True; else want=False; fi
assert_eq "$(flag plain ExtendedDTraceProbes present)" $want "ExtendedDTraceProbes presence on JDK $JDK"

# The JVM's own account of MaxHeapSize agrees.
jtool jcmd "$plain" VM.flags >"$TMPD/jcmd.out" 2>&1 || { cat "$TMPD/jcmd.out" >&2; fail "jcmd VM.flags"; }
jcmd_mhs=$(grep -o -- '-XX:MaxHeapSize=[0-9]*' "$TMPD/jcmd.out" | cut -d= -f2)
assert_eq "$(flag plain MaxHeapSize value)" "$jcmd_mhs" "MaxHeapSize vs jcmd VM.flags"

vmq alloc -p "$alloc" --flag DTraceAllocProbes --flag DTraceMonitorProbes
assert_eq "$(flag alloc DTraceAllocProbes value)" True "DTraceAllocProbes with -XX:+DTraceAllocProbes"
assert_eq "$(flag alloc DTraceMonitorProbes value)" False "DTraceMonitorProbes untouched"

# The .symtab fallback finds the same flag at the same address.
if readelf -S "$(readlink -f "$JAVA_HOME/lib/server/libjvm.so")" | grep -q '\.symtab'; then
	vmq symtab -p "$alloc" --symtab-only --flag DTraceAllocProbes --flag MaxHeapSize
	assert_eq "$(flag symtab DTraceAllocProbes via)" symtab "fallback path"
	assert_eq "$(flag symtab DTraceAllocProbes value)" True "DTraceAllocProbes via .symtab"
	assert_eq "$(flag symtab DTraceAllocProbes addr)" "$(flag alloc DTraceAllocProbes addr)" "flag address, table vs .symtab"
	assert_eq "$(flag symtab MaxHeapSize raw)" 268435456 "MaxHeapSize via .symtab"
else
	note "libjvm has no .symtab: fallback not exercised"
fi

# Fields and types.
vmq fields -p "$plain" --field Klass::_name --field Symbol::_length --field JVMFlag::flags \
	--field Klass::_no_such_field --type Symbol --type NoSuchType
assert_eq "$(json_get "$TMPD/fields.json" "[r['offset'] for r in recs if r.get('field') == 'Klass::_name'][0]")" 24 "Klass::_name offset"
assert_eq "$(json_get "$TMPD/fields.json" "[r['static'] for r in recs if r.get('field') == 'JVMFlag::flags'][0]")" True "JVMFlag::flags is static"
assert_eq "$(json_get "$TMPD/fields.json" "[r['present'] for r in recs if r.get('field') == 'Klass::_no_such_field'][0]")" False "absent field"
assert_eq "$(json_get "$TMPD/fields.json" "[r['present'] for r in recs if r.get('type') == 'NoSuchType'][0]")" False "absent type"

# Class names of real Klass* values.
vmq klass -p "$plain" --klass-test
assert_eq "$(klass klass vmClasses::Object)" java.lang.Object "vmClasses Object_klass"
assert_eq "$(klass klass vmClasses::String)" java.lang.String "vmClasses String_klass"
assert_eq "$(klass klass Object._array_klasses)" "java.lang.Object[]" "Object's array class"
assert_eq "$(klass klass walk '[I')" "int[]" "int[] found in the class loader graph"
assert_eq "$(klass klass walk '[[J')" "long[][]" "long[][] (allocated by Idle)"
assert_eq "$(klass klass walk Idle)" Idle "the main class"
assert_eq "$(json_get "$TMPD/klass.json" "[r['klass_walk']['error'] for r in recs if 'klass_walk' in r][0]")" 0 "class walk error"
n=$(json_get "$TMPD/klass.json" "[r['klass_walk']['klasses'] for r in recs if 'klass_walk' in r][0]")
[ "$n" -gt 300 ] || fail "only $n classes walked"
note "jdk $JDK: $n classes walked"

# A JDK whose libjvm has no .symtab (.dynsym, where the gHotSpotVM* tables
# are exported, stays): flags and names must still work.
. "$ROOT/tests/e2e/jdkcopy.sh"
sj="$TMPD/stripped-jdk"
home=$(readlink -f "$JAVA_HOME")
jdk_copy "$home" "$sj" nosymtab || fail "can't make a JDK copy without .symtab"
# jdk_copy's objcopy keeps .symtab with binutils 2.40 here: strip for sure.
strip --strip-all -o "$sj/lib/server/libjvm.so" "$home/lib/server/libjvm.so" || fail "strip libjvm"
readelf -S "$sj/lib/server/libjvm.so" | grep -q '\.symtab' && fail "strip left a .symtab"
JAVA="$sj/bin/java" jvm_start stripped -Xmx256m -XX:+DTraceAllocProbes Idle
grep -q "$sj/lib/server/libjvm.so" "/proc/$JVM_PID/maps" || fail "the stripped JVM does not use the stripped libjvm"
vmq stripped -p "$JVM_PID" --flag DTraceAllocProbes --flag MaxHeapSize --klass-test
assert_eq "$(flag stripped DTraceAllocProbes value)" True "DTraceAllocProbes, stripped libjvm"
assert_eq "$(flag stripped MaxHeapSize value)" 268435456 "MaxHeapSize, stripped libjvm"
assert_eq "$(klass stripped vmClasses::Object)" java.lang.Object "Object_klass, stripped libjvm"
assert_eq "$(klass stripped walk '[I')" "int[]" "int[], stripped libjvm"
vmq stripped_sym -p "$JVM_PID" --symtab-only --flag DTraceAllocProbes
assert_eq "$(flag stripped_sym DTraceAllocProbes present)" False "no .symtab, no fallback"
exit 0
