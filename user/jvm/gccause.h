/*
 * gccause.h - the names of HotSpot's GC causes (GCCause::Cause), per JVM.
 *
 * The cause of a collection travels as a number (the enum GCCause::Cause,
 * e.g. in GCMemoryManager::gc_end's argument), and the enum's numbering
 * differs between JDKs (JDK 17 has 39 values, JDK 25 has 34, in another
 * order). HotSpot names them in GCCause::to_string(), a switch that the
 * compiler turns into a jump table: memtrace reads that function's code
 * from the JVM's own libjvm.so and builds number -> name from it, so the
 * names are exactly the strings JFR (jdk.GarbageCollection's cause) and
 * GarbageCollectorMXBean's notifications print ("G1 Evacuation Pause",
 * "Allocation Failure", "System.gc()", ...), for any JDK whose
 * to_string has the shape below; any other shape is refused, never guessed.
 *
 * The shape (x86-64, GCC; both Debian's 17 and Temurin's 25):
 *	cmp $N-1, %edi ; ja DEFAULT
 *	lea TABLE(%rip), %reg ; mov %edi, %edi
 *	movslq (%reg,%rdi,4), %rax ; add %reg, %rax ; jmp *%rax
 * and every case, DEFAULT included: lea STRING(%rip), %rax ; ret.
 */
#ifndef MEMTRACE_GCCAUSE_H
#define MEMTRACE_GCCAUSE_H

#include <stddef.h>
#include <stdint.h>

struct mt_elf;

/* GCCause::to_string(GCCause::Cause), mangled. */
#define GCCAUSE_SYM_TO_STRING "_ZN7GCCause9to_stringENS_5CauseE"

#define GCCAUSE_MAX 96      /* enum values kept (JDK 17: 39) */
#define GCCAUSE_NAME_LEN 48 /* the longest today: "G1 Preventive Collection" */

struct gccause_table {
	int n;                                    /* causes 0..n-1 */
	char name[GCCAUSE_MAX][GCCAUSE_NAME_LEN];
	char unknown[GCCAUSE_NAME_LEN];           /* to_string's default ("unknown GCCause") */
};

/* Reads @n bytes at link-time address @vaddr of the library; 0 or -errno. */
typedef int (*gccause_read_fn)(void *ctx, uint64_t vaddr, void *buf, size_t n);

/*
 * gccause_decode - build @t from the code of GCCause::to_string at link-time
 * address @fn (@size bytes long), reading code, jump table and strings
 * through @rd; every case must lie inside the function. Pure: no
 * printing. Returns 0, -ENOTSUP when the code has another shape (nothing is
 * guessed), or the reader's -errno.
 */
int gccause_decode(gccause_read_fn rd, void *ctx, uint64_t fn, uint64_t size,
		   struct gccause_table *t);

/*
 * gccause_read - gccause_decode() on libjvm @e (its .symtab: a stripped
 * libjvm gives -ENOENT). Prints nothing; the caller says what is lost.
 */
int gccause_read(const struct mt_elf *e, struct gccause_table *t);

/* gccause_name - the name of cause @c, "cause N" (in @buf) beyond the table. */
const char *gccause_name(const struct gccause_table *t, uint32_t c, char *buf, size_t n);

#endif
