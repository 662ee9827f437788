# tests/e2e/jdkcopy.sh - sourced. jdk_copy SRC DST MODE: a JDK at DST made of
# symlinks to SRC, except bin/java (copied, so java.home is DST) and
# lib/server/libjvm.so, copied and altered by MODE:
#   nousdt   - without .note.stapsdt (a JDK built without DTrace probes)
#   nosymtab - without .symtab (a stripped libjvm)
jdk_copy() {
	local src=$1 dst=$2 mode=$3
	rm -rf "$dst"
	cp -rs "$src" "$dst" || return 1
	rm -f "$dst/bin/java" "$dst/lib/server/libjvm.so"
	cp "$src/bin/java" "$dst/bin/java"
	case $mode in
	nousdt) objcopy --remove-section .note.stapsdt "$src/lib/server/libjvm.so" "$dst/lib/server/libjvm.so" ;;
	nosymtab) strip --strip-all -o "$dst/lib/server/libjvm.so" "$src/lib/server/libjvm.so" ;;
	*) return 1 ;;
	esac
}
