/*
 * methodsym.h - a live JVM's Method* -> class, name, signature, source file
 * and bytecode index -> line number, read from outside through VMStructs.
 *
 * Everything is located with VMStructs (offsets, sizes, flag bits) except
 * the byte encoding of HotSpot's compressed streams, which VMStructs does not
 * describe: UNSIGNED5 (Pack200) with no excluded byte up to JDK 19, and with
 * the byte 0 excluded (every byte stored +1) since JDK 20 (JDK-8292758).
 * methodsym_layout() picks it from Abstract_VM_Version::_vm_major_version.
 * The stream decoders are pure functions over a buffer (unit-tested on both
 * encodings); nmethod.c uses them for the scopes of compiled code.
 *
 * Conventions: functions return 0 (or a count) or -errno and print nothing.
 */
#ifndef MEMTRACE_METHODSYM_H
#define MEMTRACE_METHODSYM_H

#include <stddef.h>
#include <stdint.h>

#include "jvm/klassname.h"

struct mt_vmstructs;

/* Longest piece of text methodsym_names() returns per field (with NUL). */
#define MT_METHODSYM_CLASS_MAX 512
#define MT_METHODSYM_NAME_MAX 256
#define MT_METHODSYM_SIG_MAX 512
#define MT_METHODSYM_FILE_MAX 256

/* Where a method's parts are, from VMStructs. */
struct mt_methodsym_layout {
	uint64_t method_const;   /* Method::_constMethod */
	uint64_t cm_constants;   /* ConstMethod::_constants */
	uint64_t cm_name_index, cm_sig_index, cm_code_size, cm_size_words;
	uint64_t cm_flags;       /* ConstMethod::_flags (17) or _flags._flags (21+) */
	unsigned cm_flags_size;  /* 2 or 4 bytes */
	uint32_t has_linenumbers;/* flag bit: the line number table follows the bytecodes */
	uint64_t cm_sizeof;      /* sizeof(ConstMethod): the bytecodes start there */
	uint64_t cp_holder, cp_sizeof, cp_length, cp_source_file; /* cp_length/source 0: unknown */
	int cp_has_length, cp_has_source;
	unsigned u5_excl;        /* compressed streams: 0 (JDK <= 19) or 1 (JDK >= 20) */
	int vm_major;            /* Abstract_VM_Version::_vm_major_version, 0 if unknown */
	struct mt_klass_layout kl;
};

/* What methodsym_names() reads. */
struct mt_methodsym {
	char klass[MT_METHODSYM_CLASS_MAX];  /* Java name: "pkg.Outer$Inner" */
	char name[MT_METHODSYM_NAME_MAX];    /* "run", "<init>" */
	char sig[MT_METHODSYM_SIG_MAX];      /* "(I)J"; a longer one cut, ending "..." */
	char file[MT_METHODSYM_FILE_MAX];    /* "DeepInline.java", "" if unknown */
};

/*
 * methodsym_layout - fill *l from @vs. Returns 0, or -ENOENT when a field
 * needed for names is missing (line numbers and source files are optional:
 * has_linenumbers 0, cp_has_source 0).
 */
int methodsym_layout(const struct mt_vmstructs *vs, struct mt_methodsym_layout *l);


/*
 * methodsym_line_lookup - HotSpot's line for @bci in a compressed line
 * number table (@len bytes at @tab, ended by a 0 byte): the pair whose bci
 * matches, else the one with the greatest bci below. Returns 0 and *line;
 * -ENOENT when no pair qualifies; -EBADMSG / -ERANGE for a malformed or
 * unterminated table. Pure.
 */
int methodsym_line_lookup(const uint8_t *tab, size_t len, unsigned excl, int bci, int *line);

/*
 * methodsym_names - class, name, signature and source file of Method*
 * @method. Returns 0 (file may be ""), -EFAULT for a NULL method or a NULL
 * pointer on the way, -EINVAL for an implausible one (index out of its pool,
 * bad Symbol), or -errno from reading the target.
 */
int methodsym_names(const struct mt_vmstructs *vs, const struct mt_methodsym_layout *l,
		    uint64_t method, struct mt_methodsym *out);

/*
 * methodsym_line - source line of @bci in Method* @method. Returns 0 and
 * *line; -ENOENT when the method has no line table or no line covers @bci;
 * -ERANGE for a bci outside the bytecodes; -EBADMSG; -errno from reading.
 * A bci of -1 (InvocationEntryBci: method entry) is looked up as 0.
 */
int methodsym_line(const struct mt_vmstructs *vs, const struct mt_methodsym_layout *l,
		   uint64_t method, int bci, int *line);

/*
 * methodsym_bci - bytecode index of bytecode pointer @bcp (an interpreted
 * frame's) in Method* @method. Returns 0 and *bci, -ERANGE when @bcp is not
 * inside the method's bytecodes, or -errno from reading.
 */
int methodsym_bci(const struct mt_vmstructs *vs, const struct mt_methodsym_layout *l,
		  uint64_t method, uint64_t bcp, int *bci);

#endif
