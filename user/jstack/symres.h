/*
 * symres.h - name the frames of a user stack of a JVM: native frames from the
 * ELF symbols of the mapped file (C++ names demangled to Class::method), JIT
 * frames from the JVM's perf map (`jcmd PID Compiler.perfmap`, read through
 * /proc/PID/root), frames in the interpreter as "[interpreted]". What stays
 * unresolved is counted, never guessed.
 */
#ifndef MEMTRACE_SYMRES_H
#define MEMTRACE_SYMRES_H

#include <stddef.h>
#include <stdint.h>

#include "jvm/proc.h"

struct symres;

/* symres_new - snapshot @p's executable mappings and perf map (if present).
 * NULL with errno set on failure. */
struct symres *symres_new(const struct mt_proc *p);
/* symres_free - NULL is a no-op. */
void symres_free(struct symres *s);
/* symres_name - the frame name of @ip; returns a pointer owned by @s. */
const char *symres_name(struct symres *s, uint64_t ip);
/* Frames resolved and not, over every symres_name() call. */
void symres_stats(const struct symres *s, uint64_t *resolved, uint64_t *unresolved);
/* symres_has_perfmap - a perf map was found and read. */
int symres_has_perfmap(const struct symres *s);

/* symres_demangle - "_ZN11AllocTracer27send_...EP5Klass..." -> "AllocTracer::send_..."
 * (nested names only, no parameters); other names are copied. Pure. */
void symres_demangle(const char *mangled, char *out, size_t len);
/* symres_java_name - "void java.util.HashMap.resize(int)" -> "java.util.HashMap.resize". Pure. */
void symres_java_name(const char *perfmap_name, char *out, size_t len);

#endif
