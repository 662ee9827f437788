// SPDX-License-Identifier: GPL-2.0
/*
 * dsl.h - the memory-analysis language (docs/design.md idea 4, issue 7).
 *
 * Stages, one file each, one section each below:
 *   arena.c   one arena per query: everything a compile or a run allocates
 *   diag.c    diagnostics recorded with line:col, rendered with a caret
 *   lexer.c   source -> tokens (ASCII and the Unicode aliases)
 *   parser.c  tokens -> flat AST (chibicc style), Lua-style precedence table
 *   types.c   the type pass: resolves names, checks types and the heap schema
 *   heap.c    the abstract heap the evaluator walks, and its schema
 *   eval.c    expressions on values
 *   walk.c    the execution semantics: instances, roots, the reference walk
 *   json.c    results as JSON
 *   program.c dsl_compile / dsl_run / dsl_program_needs
 *
 * Library code never prints, exits or longjmps: errors are recorded in a
 * struct dsl_diags and functions return 0 or -errno.
 */
#ifndef MEMTRACE_DSL_H
#define MEMTRACE_DSL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Limits: exceeding one is a diagnostic, never a crash. */
#define DSL_MAX_SOURCE    (1u << 20) /* bytes of program text */
#define DSL_MAX_NESTING   200        /* parser recursion (parens, lambdas, unary) */
#define DSL_MAX_AST_DEPTH 1000       /* depth of any expression tree */
#define DSL_MAX_DIAGS     32         /* diagnostics kept per compile/run */
#define DSL_MAX_ARENA     (1ull << 30) /* bytes one arena may hold */

/* ===================================================================== */
/* arena.c                                                               */
/* ===================================================================== */

struct dsl_arena;

/* A mark to roll an arena back to (dsl_arena_reset). */
struct dsl_arena_mark {
	void *chunk;
	size_t used;
	size_t total;
};

/* Returns a new empty arena, or NULL with errno = ENOMEM. */
struct dsl_arena *dsl_arena_new(void);
/* Frees every allocation of the arena. No operation if a is NULL. */
void dsl_arena_free(struct dsl_arena *a);
/* Zeroed, 16-byte aligned memory owned by the arena; NULL when out of memory
 * or when the arena would exceed DSL_MAX_ARENA. */
void *dsl_arena_alloc(struct dsl_arena *a, size_t size);
/* NUL-terminated copy of s[0..n) in the arena, or NULL. */
char *dsl_arena_strndup(struct dsl_arena *a, const char *s, size_t n);
/* Bytes currently held (for limits and tests). */
size_t dsl_arena_used(const struct dsl_arena *a);
/* Remember the current position / free everything allocated since. */
struct dsl_arena_mark dsl_arena_mark(const struct dsl_arena *a);
void dsl_arena_reset(struct dsl_arena *a, struct dsl_arena_mark m);

/* ===================================================================== */
/* diag.c                                                                */
/* ===================================================================== */

struct dsl_diag {
	int line;       /* 1-based */
	int col;        /* 1-based, in characters (UTF-8 code points) */
	size_t off;     /* byte offset of the line:col position in the source */
	char msg[256];
};

struct dsl_diags {
	char *filename; /* owned copy */
	char *src;      /* owned copy of the source, for rendering the line */
	size_t len;
	struct dsl_diag v[DSL_MAX_DIAGS];
	int n;          /* diagnostics kept (at most DSL_MAX_DIAGS) */
	int dropped;    /* diagnostics beyond the limit */
};

/* Returns an empty diagnostics list, or NULL with errno = ENOMEM. */
struct dsl_diags *dsl_diags_new(void);
/* No operation if d is NULL. */
void dsl_diags_free(struct dsl_diags *d);
/* Forget the diagnostics and keep copies of filename and src for rendering.
 * Returns 0 or -ENOMEM. */
int dsl_diags_set_source(struct dsl_diags *d, const char *filename,
			 const char *src, size_t len);
/* Record "msg" at byte offset off of the source (line:col are computed).
 * d may be NULL (the diagnostic is dropped). */
void dsl_diags_add(struct dsl_diags *d, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Write every diagnostic as
 *     file:line:col: error: msg
 *     <the source line>
 *     <spaces or tabs>^
 * Returns 0 or -EIO. */
int dsl_diags_render(const struct dsl_diags *d, FILE *f);
/* The same into a malloc'd string (caller frees), NULL on ENOMEM. */
char *dsl_diags_render_str(const struct dsl_diags *d);
/* Compute 1-based line and column (in characters) of byte offset off. */
void dsl_linecol(const char *src, size_t len, size_t off, int *line, int *col);

/* ===================================================================== */
/* lexer.c                                                               */
/* ===================================================================== */

enum dsl_tok_kind {
	DSL_TK_EOF,
	DSL_TK_IDENT,
	DSL_TK_INT,
	DSL_TK_FLOAT,
	DSL_TK_STR,
	/* punctuation (Unicode alias in the comment) */
	DSL_TK_ARROW,   /* <-  ← */
	DSL_TK_EQ,      /* = or == */
	DSL_TK_NE,      /* !=  ≠ */
	DSL_TK_LT,      /* < */
	DSL_TK_LE,      /* <=  ≤ */
	DSL_TK_GT,      /* > */
	DSL_TK_GE,      /* >=  ≥ */
	DSL_TK_PLUS,
	DSL_TK_MINUS,
	DSL_TK_STAR,
	DSL_TK_SLASH,
	DSL_TK_PERCENT,
	DSL_TK_LPAREN,
	DSL_TK_RPAREN,
	DSL_TK_LBRACK,
	DSL_TK_HASHBRACK, /* #[ */
	DSL_TK_RBRACK,
	DSL_TK_BAR,
	DSL_TK_COMMA,
	DSL_TK_DOT,
	DSL_TK_COLON,
	/* keywords */
	DSL_TK_SET_TYPE,
	DSL_TK_ROOTS,
	DSL_TK_MEMBERSHIP,
	DSL_TK_ON_INCLUSION,
	DSL_TK_INSTANCES_FOR,
	DSL_TK_HAVE_NAMES,
	DSL_TK_TABLE_OF,
	DSL_TK_STRUCT,
	DSL_TK_END,
	DSL_TK_RET,
	DSL_TK_IS,
	DSL_TK_IN,      /* in  ∈ */
	DSL_TK_AND,     /* and ∧ */
	DSL_TK_OR,      /* or  ∨ */
	DSL_TK_NOT,     /* not ¬ */
	DSL_TK_TRUE,
	DSL_TK_FALSE,
	DSL_TK_NULL,
	DSL_TK__COUNT
};

struct dsl_token {
	enum dsl_tok_kind kind;
	size_t off;      /* byte offset in the source */
	size_t len;      /* bytes in the source */
	int line, col;   /* 1-based; col counts characters */
	int64_t ival;    /* DSL_TK_INT */
	double fval;     /* DSL_TK_FLOAT */
	const char *str; /* identifier text or decoded string (arena, NUL-terminated) */
};

/* Tokenize src[0..len) into an arena array ending with DSL_TK_EOF.
 * Returns 0, -EINVAL (lexical error, recorded in d), -E2BIG (input larger
 * than DSL_MAX_SOURCE) or -ENOMEM. */
int dsl_lex(struct dsl_arena *a, const char *src, size_t len,
	    struct dsl_diags *d, struct dsl_token **out, size_t *ntok);
/* Printable spelling of a token kind ("'<-'", "identifier", ...). */
const char *dsl_tok_name(enum dsl_tok_kind k);

/* ===================================================================== */
/* parser.c                                                              */
/* ===================================================================== */

enum dsl_node_kind {
	/* literals and names */
	DSL_N_INT, DSL_N_FLOAT, DSL_N_STR, DSL_N_BOOL, DSL_N_NULL,
	DSL_N_IDENT,      /* name */
	DSL_N_LIST,       /* #[ args ] */
	DSL_N_STRUCTLIT,  /* struct name args end */
	DSL_N_LAMBDA,     /* [ params(args, DSL_N_DECL) | body ] */
	DSL_N_ASSIGN,     /* name <- rhs   (lambda body statement) */
	DSL_N_RET,        /* ret lhs / final expression */
	DSL_N_MEMBER,     /* lhs . name */
	DSL_N_CALL,       /* lhs . name ( args ) */
	/* operators */
	DSL_N_NEG, DSL_N_NOT,
	DSL_N_ADD, DSL_N_SUB, DSL_N_MUL, DSL_N_DIV, DSL_N_MOD,
	DSL_N_EQ, DSL_N_NE, DSL_N_LT, DSL_N_LE, DSL_N_GT, DSL_N_GE,
	DSL_N_AND, DSL_N_OR,
	DSL_N_IS,         /* lhs is name (class name, dotted) */
	DSL_N_IN,         /* lhs in rhs */
	/* declarations */
	DSL_N_TYPEREF,    /* name, bval = table_of */
	DSL_N_DECL,       /* name : lhs(typeref) [<- rhs] */
	DSL_N_TYPEDECL,   /* name : lhs(typeref table_of) | struct args(decls) end */
	DSL_N_PROP,       /* prop: roots/membership/on_inclusion <- rhs, or user: lhs(decl) */
	DSL_N_SETTYPE,    /* set_type name : body(props) */
	DSL_N_INSTANCES,  /* instances_for name have_names = rhs */
};

enum dsl_prop_kind { DSL_PROP_USER, DSL_PROP_ROOTS, DSL_PROP_MEMBERSHIP, DSL_PROP_ON_INCLUSION };

struct dsl_type;

struct dsl_node {
	enum dsl_node_kind kind;
	struct dsl_node *next;   /* sibling in a list (args, statements, decls) */
	struct dsl_node *lhs, *rhs;
	struct dsl_node *args;   /* call args, list elements, lambda params, struct fields */
	struct dsl_node *body;   /* lambda statements, set_type properties */
	const struct dsl_token *tok; /* where to point diagnostics */
	const char *name;
	int64_t ival;
	double fval;
	const char *sval;
	bool bval;
	enum dsl_prop_kind prop;
	int depth;               /* height of this expression tree */
	/* filled by the type pass */
	const struct dsl_type *ty;
	int res;                 /* how a DSL_N_IDENT / member / call resolved (types.c) */
	int slot;                /* index for res */
	int level;               /* lambda nesting level for parameters */
};

struct dsl_ast {
	struct dsl_node *types;     /* DSL_N_TYPEDECL list */
	struct dsl_node *sets;      /* DSL_N_SETTYPE list */
	struct dsl_node *instances; /* DSL_N_INSTANCES list */
};

/* Parse tokens (from dsl_lex) into ast, nodes in arena a.
 * Returns 0, -EINVAL (syntax error recorded in d) or -ENOMEM. */
int dsl_parse(struct dsl_arena *a, const struct dsl_token *toks, size_t ntok,
	      struct dsl_diags *d, struct dsl_ast *ast);

/* ===================================================================== */
/* heap.c: the abstract heap the evaluator walks                         */
/* ===================================================================== */

#define DSL_NOOBJ UINT32_MAX /* "no object" in an object-index field */

/* JVMTI reference kinds (lower-case names in the language) and heap-root kinds. */
enum dsl_ref_kind {
	DSL_REF_FIELD, DSL_REF_ARRAY_ELEMENT, DSL_REF_STATIC_FIELD, DSL_REF_CONSTANT_POOL,
	DSL_REF_CLASS, DSL_REF_CLASS_LOADER, DSL_REF_SIGNERS, DSL_REF_PROTECTION_DOMAIN,
	DSL_REF_INTERFACE, DSL_REF_SUPERCLASS,
	/* heap roots */
	DSL_ROOT_JNI_GLOBAL, DSL_ROOT_SYSTEM_CLASS, DSL_ROOT_MONITOR, DSL_ROOT_STACK_LOCAL,
	DSL_ROOT_JNI_LOCAL, DSL_ROOT_THREAD, DSL_ROOT_OTHER,
	DSL_REF__COUNT,
	DSL_REF_ROOT = DSL_REF__COUNT, /* the name `root`: matches every heap-root kind */
};
#define DSL_REF_IS_ROOT(k) ((k) >= DSL_ROOT_JNI_GLOBAL && (k) <= DSL_ROOT_OTHER)
/* "field", "jni_global", ..., "root"; NULL if out of range. */
const char *dsl_ref_kind_name(int k);

/* Declared kind of a Java field (what a value read from it is). */
enum dsl_field_kind {
	DSL_FK_INT,    /* byte short char int long */
	DSL_FK_FLOAT,  /* float double */
	DSL_FK_BOOL,
	DSL_FK_STRING, /* java.lang.String: read as a DSL string */
	DSL_FK_REF,    /* any other reference */
};

/* A field value of one object. */
enum dsl_hval_kind { DSL_HV_NULL, DSL_HV_INT, DSL_HV_FLOAT, DSL_HV_BOOL, DSL_HV_STR, DSL_HV_REF };
struct dsl_hval {
	enum dsl_hval_kind kind;
	union {
		int64_t i;
		double f;
		bool b;
		const char *s;  /* NUL-terminated, owned by the heap */
		uint32_t ref;   /* object index */
	} u;
};

struct dsl_hfield {
	const char *name;
	enum dsl_field_kind kind;
};

/* What a class is, as far as the heap's source says (dsl_hclass.kind). */
enum dsl_class_kind {
	DSL_CK_UNKNOWN,   /* the source does not say (an .hprof dump, an older agent) */
	DSL_CK_CLASS,     /* a class (or an array class) */
	DSL_CK_INTERFACE, /* an interface */
};

struct dsl_hclass {
	const char *name;        /* Java name, nested classes with '$' */
	uint32_t obj;            /* index of the java.lang.Class object, or DSL_NOOBJ */
	uint32_t super;          /* class index of the superclass, or DSL_NOOBJ */
	uint32_t loader;         /* loader index, or DSL_NOOBJ (bootstrap) */
	const struct dsl_hfield *fields; /* every instance field, inherited ones too */
	uint32_t nfields;
	/* direct superinterfaces (class indices), meaningful unless dsl_heap.no_ifaces */
	const uint32_t *ifaces;
	uint32_t nifaces;
	uint8_t kind;            /* enum dsl_class_kind */
};

/* A static field that holds a reference (dsl_heap.statics). */
struct dsl_hstatic {
	const char *name;
	uint32_t cls;            /* the class that declares it */
};

/* 32 bytes, no holes: a heap holds millions, and a frozen copy's object
 * record is as large, so a view is built over the records in place. Field
 * values and ages, which few programs read, are in dsl_heap.values/ages. */
struct dsl_hobject {
	uint64_t id;             /* the user-visible id (`it.id`) */
	uint64_t size;           /* shallow bytes */
	uint32_t cls;            /* class index */
	int32_t length;          /* array length (a Java array's is an int), -1 if not an array */
	uint32_t ref_first;      /* outgoing references: refs[ref_first .. +nrefs) */
	uint32_t nrefs;
};

struct dsl_href {
	uint32_t to;             /* object index */
	int32_t index;           /* FIELD: slot in the referrer's class's fields; STATIC_FIELD:
				  * index in dsl_heap.statics; ARRAY_ELEMENT: the element's
				  * index; -1: unknown or none */
	uint8_t kind;            /* enum dsl_ref_kind (not a root kind) */
};

struct dsl_hroot {
	uint32_t obj;            /* object index */
	uint8_t kind;            /* a DSL_ROOT_* kind */
	bool vthread;            /* a virtual thread's local: a parked one's (the copy's mark
				  * read its stack chunk) or a mounted one's (after an OTHER
				  * root to it, not the carrier's THREAD root before it) */
	uint64_t vtid;           /* that virtual thread's Thread.tid, 0 not known (a chunk
				  * whose thread the mark did not meet, an older agent) */
};

struct dsl_hloader {
	uint32_t obj;            /* index of the loader object, DSL_NOOBJ for bootstrap */
	uint64_t id;             /* `Classloader.id` */
};

struct dsl_hthread {
	uint32_t obj;            /* index of the java.lang.Thread object */
	const char *name;
};

/* A live heap (or snapshot): plain arrays the caller owns. */
struct dsl_heap {
	const struct dsl_hobject *objects; uint32_t nobjects;
	const struct dsl_hclass *classes;  uint32_t nclasses;
	const struct dsl_href *refs;       uint32_t nrefs;
	const struct dsl_hroot *roots;     uint32_t nroots;
	const struct dsl_hloader *loaders; uint32_t nloaders;
	const struct dsl_hthread *threads; uint32_t nthreads;
	const struct dsl_hstatic *statics; uint32_t nstatics; /* may be none */
	/* NULL: objects carry their age; else why the source has none (an
	 * .hprof dump): `age` is then a compile error, or null at run time
	 * where a Java field of that name could be meant */
	const char *no_age;
	/* values[o]: object o's field values, one per field of its class (NULL
	 * as a whole, or for o: all null); ages[o]: the GCs o survived (NULL:
	 * none read - a program that reads `age` gets them, unless no_age) */
	const struct dsl_hval *const *values;
	const uint32_t *ages;
	/* true: built consistent by construction (user/heap/heapview.c, whose
	 * every heap tests/fuzz/fuzz_readers.c checks), so dsl_run() does not
	 * pass over every object and reference with dsl_heap_check() again */
	bool consistent;
	/* NULL: every class says what it is and lists its superinterfaces; else
	 * why not (an .hprof dump records none): `x is C` with a C that may be
	 * an interface is then a compile error */
	const char *no_ifaces;
	/* Optional, filled on demand by the heap's builder (NULL: not built):
	 * retained[o]: bytes o dominates (DSL_NORETAINED: unreachable from the
	 * heap roots); referrers of o: referrer[referrer_first[o] ..
	 * referrer_first[o + 1]) object indices, ascending, one per reference;
	 * root_via[o]: how the shortest path from a heap root reaches o: the
	 * index of the last reference in refs, DSL_VIA_ROOT (o is a heap root)
	 * or DSL_VIA_NONE (unreachable). */
	const uint64_t *retained;
	const uint32_t *referrer_first, *referrer;
	const uint32_t *root_via;
	/* root_parent[o]: the object whose reference root_via[o] is (where
	 * root_via is a reference; built only for the leak search) */
	const uint32_t *root_parent;
	/* ref_runs[o] .. ref_runs[o + 1]: object o's references, the same as
	 * its ref_first and nrefs, where each object's run follows the one
	 * before (n + 1 entries; NULL: not made). A search that reads only
	 * runs reads 4 bytes an object instead of an object's 32 */
	const uint32_t *ref_runs;
	/* NULL: every CLASS reference is in refs. Else CLASS references are
	 * implied, none in refs (a view over a frozen copy's records that left
	 * them out: 12 bytes an object fewer): an object of class c refers to
	 * class_ref[c] (DSL_NOOBJ: none) as its first reference, numbered
	 * nrefs + the object's index where a reference's number is asked
	 * (root_via, a path's step: dsl_heap_ref(), dsl_ref_owner()); nimplied
	 * of them */
	const uint32_t *class_ref;
	uint32_t nimplied;
};

/* Object @o's implied CLASS reference's target, DSL_NOOBJ: none (or none
 * implied). */
static inline uint32_t dsl_heap_cref(const struct dsl_heap *h, uint32_t o)
{
	return h->class_ref ? h->class_ref[h->objects[o].cls] : DSL_NOOBJ;
}

/* Reference number @ri: one of refs, or (nrefs and over) an implied CLASS
 * reference's. */
static inline struct dsl_href dsl_heap_ref(const struct dsl_heap *h, uint32_t ri)
{
	if (ri < h->nrefs)
		return h->refs[ri];
	return (struct dsl_href){ .to = dsl_heap_cref(h, ri - h->nrefs), .index = -1,
				  .kind = DSL_REF_CLASS };
}
/* Object @o's field values (NULL: all null) and age. */
static inline const struct dsl_hval *dsl_heap_values(const struct dsl_heap *h, uint32_t o)
{
	return h->values ? h->values[o] : NULL;
}

static inline uint32_t dsl_heap_age(const struct dsl_heap *h, uint32_t o)
{
	return h->ages ? h->ages[o] : 0;
}

#define DSL_NORETAINED UINT64_MAX
#define DSL_VIA_ROOT   UINT32_MAX
#define DSL_VIA_NONE   (UINT32_MAX - 1)

/* Field-type bits a schema reports for a field name. */
#define DSL_FT_INT    (1u << DSL_FK_INT)
#define DSL_FT_FLOAT  (1u << DSL_FK_FLOAT)
#define DSL_FT_BOOL   (1u << DSL_FK_BOOL)
#define DSL_FT_STRING (1u << DSL_FK_STRING)
#define DSL_FT_REF    (1u << DSL_FK_REF)

/* What the type pass may ask of the heap before the walk. */
struct dsl_schema {
	/* true if some class of the heap matches name as `x is name` would */
	bool (*has_class)(void *ctx, const char *name);
	/* 1u << DSL_CK_* of every class matching name; may be NULL (unknown) */
	unsigned (*class_kinds)(void *ctx, const char *name);
	/* DSL_FT_* bits of every class's field called name; 0: no class has it */
	unsigned (*field_types)(void *ctx, const char *name);
	void *ctx;
	const char *no_age;  /* as dsl_heap.no_age: NULL if objects have an age */
	const char *no_ifaces; /* as dsl_heap.no_ifaces */
};

/* A schema answering from an in-memory heap (h must outlive the schema). */
void dsl_heap_schema(const struct dsl_heap *h, struct dsl_schema *out);
/* Does the Java class name cname match the DSL class name qname?
 * "Order" and "com.x.Order" match "com.x.Order"; "HashMap.Entry" matches
 * "java.util.HashMap$Entry". Superclasses are not considered here. */
bool dsl_class_name_matches(const char *cname, const char *qname);
/* Validate indices of h (objects, refs, classes, loaders). Returns 0 or
 * -EINVAL with a message in d. */
int dsl_heap_check(const struct dsl_heap *h, struct dsl_diags *d);

/* dsl_ref_owner - the object whose references include h->refs[ref] (each
 * object's references are one run, in object order), or whose implied CLASS
 * reference @ref numbers (h->nrefs + the object); DSL_NOOBJ: none. */
uint32_t dsl_ref_owner(const struct dsl_heap *h, uint32_t ref);
/* dsl_ref_text - what reference r of object from is, into buf:
 * "java.util.HashMap.table" (the referrer's class and the field),
 * "java.lang.Object[][3]" (an array element), "static LeakHolder.MAP" (a
 * static field, from a class object), else the kind ("class_loader").
 * Returns buf. */
const char *dsl_ref_text(const struct dsl_heap *h, uint32_t from, const struct dsl_href *r,
			 char *buf, size_t n);

/* dsl_obj_class_text - "class Foo" for the class object of Foo (searched:
 * linear in classes), else the name of o's class (buf may be unused). */
const char *dsl_obj_class_text(const struct dsl_heap *h, uint32_t o, char *buf, size_t n);

/* One step of a shortest path from a heap root (dsl_root_path). */
struct dsl_pathstep {
	uint32_t obj;    /* the object reached */
	uint32_t from;   /* its referrer; DSL_NOOBJ for the first step (the root) */
	uint32_t ref;    /* the reference's number (dsl_heap_ref()); the first step: of
			  * the root in h->roots */
};
/* dsl_root_path - the path to object o along h->root_via, root first, into
 * out (at most max steps). Returns how many steps the whole path has (more
 * than max: only the first max were written); 0 if no root reaches o or
 * the heap has no root_via. */
size_t dsl_root_path(const struct dsl_heap *h, uint32_t o, struct dsl_pathstep *out,
		     size_t max);
/* dsl_path_step_text - step s as text into buf: the first step "<root kind>
 * <class> (id N)", the others "<dsl_ref_text> -> <class> (id N)". Returns buf. */
const char *dsl_path_step_text(const struct dsl_heap *h, const struct dsl_pathstep *s,
			       char *buf, size_t n);

/* ===================================================================== */
/* types.c                                                               */
/* ===================================================================== */

enum dsl_type_kind {
	DSL_T_VOID, DSL_T_NULL, DSL_T_BOOL, DSL_T_INT, DSL_T_FLOAT, DSL_T_STRING,
	DSL_T_OBJECT, DSL_T_CLASS, DSL_T_LOADER, DSL_T_THREAD,
	DSL_T_LIST, DSL_T_STRUCT, DSL_T_INSTANCE, DSL_T_REFKIND, DSL_T_UNASSIGNED,
	DSL_T_LAMBDA,
	DSL_T_DYN, /* decided at run time (a field whose type differs between classes) */
};

struct dsl_type {
	enum dsl_type_kind kind;
	const struct dsl_type *elem;    /* LIST: element type; LAMBDA: result */
	const char *name;               /* STRUCT, INSTANCE: declared name */
	const struct dsl_node *fields;  /* STRUCT: DSL_N_DECL list */
	int nfields;
	int set;                        /* INSTANCE: set-type index */
};

/* Resolution of names (dsl_node.res) filled by the type pass. */
enum dsl_res {
	DSL_RES_NONE,
	DSL_RES_PARAM,     /* lambda parameter: level, slot */
	DSL_RES_PROP,      /* user property of the current instance: slot */
	DSL_RES_THIS, DSL_RES_REFERRER, DSL_RES_ENTITY, DSL_RES_UNASSIGNED, DSL_RES_REFKIND_VAR,
	DSL_RES_REFKIND,   /* a ref-kind constant: slot = enum dsl_ref_kind */
	DSL_RES_OBJECTS, DSL_RES_CLASSES, DSL_RES_LOADERS, DSL_RES_THREADS, DSL_RES_TGROUPS,
	/* members */
	DSL_RES_FIELD,     /* Java field only: slot = field-name id */
	DSL_RES_FIELD_OR_BUILTIN, /* Java field if the class has it, else builtin */
	DSL_RES_BUILTIN,   /* builtin member: slot = enum dsl_builtin */
	DSL_RES_STRUCT_FIELD, /* slot = field index */
	DSL_RES_ENTITY_NAME,
};

enum dsl_builtin {
	DSL_B_CLASS, DSL_B_SIZE, DSL_B_LENGTH, DSL_B_ID, DSL_B_AGE,
	DSL_B_NAME, DSL_B_CLASSLOADER, DSL_B_LIST_SIZE,
	DSL_B_FILTER, DSL_B_MAP, DSL_B_EXISTS, DSL_B_FOREACH,
	DSL_B_RETAINED, DSL_B_REFERRERS, DSL_B_ROOT_PATH,
};

/* One set type after the type pass. */
struct dsl_settype {
	const struct dsl_node *node;
	const char *name;
	const struct dsl_node *roots;       /* expression or NULL */
	const struct dsl_node *membership;  /* expression or NULL (false) */
	const struct dsl_node *on_inclusion;/* lambda or NULL */
	const struct dsl_node **props;      /* user DSL_N_DECL, in order */
	int nprops;
	const struct dsl_type *inst_type;
	const struct dsl_type *name_type;   /* ENTITY.name: string or int */
};

/* Everything the type pass learns; lives in the compile arena. */
struct dsl_typed {
	struct dsl_settype *sets;
	int nsets;
	const char **fields;  /* distinct field names read (field-name ids) */
	unsigned *field_bits; /* DSL_FT_* the schema reported for each */
	int nfields;
	const char **classes; /* distinct class names used with `is` */
	int nclasses;
	bool needs_refs;      /* some membership is not the constant false */
	bool uses_age;        /* the built-in `age` is read somewhere */
	bool uses_retained;   /* ... `retained` */
	bool uses_referrers;  /* ... `referrers` */
	bool uses_root_path;  /* ... `root_path` */
	int max_level;        /* deepest lambda nesting */
	int max_params;       /* most parameters of one lambda */
};

/* Type-check ast against schema (NULL: no heap checks). Returns 0,
 * -EINVAL (errors recorded in d) or -ENOMEM. */
int dsl_typecheck(struct dsl_arena *a, struct dsl_ast *ast,
		  const struct dsl_schema *schema, struct dsl_diags *d,
		  struct dsl_typed *out);
/* "int", "table_of Object", ... into buf. */
const char *dsl_type_str(const struct dsl_type *t, char *buf, size_t n);

/* ===================================================================== */
/* eval.c (expressions) and walk.c (the execution semantics)             */
/* ===================================================================== */

enum dsl_vkind {
	DSL_V_NULL, DSL_V_BOOL, DSL_V_INT, DSL_V_FLOAT, DSL_V_STR,
	DSL_V_OBJ, DSL_V_CLASS, DSL_V_LOADER, DSL_V_THREAD, /* u.idx into the heap's table */
	DSL_V_LIST, DSL_V_STRUCT, DSL_V_INST, DSL_V_REFKIND, DSL_V_UNASSIGNED,
};

/* Lists are arrays or a whole heap table (objects, classes, ...). */
enum dsl_list_kind { DSL_L_ARRAY, DSL_L_OBJECTS, DSL_L_CLASSES, DSL_L_LOADERS, DSL_L_THREADS };

struct dsl_value;

struct dsl_list {
	enum dsl_list_kind kind;
	size_t n;
	struct dsl_value *v;      /* DSL_L_ARRAY */
};

struct dsl_structval {
	const struct dsl_type *ty;
	struct dsl_value *v;      /* ty->nfields values */
};

struct dsl_value {
	enum dsl_vkind kind;
	uint32_t null_cls;        /* NULL read from a field the class lacks: class index + 1 */
	const char *null_field;   /* ... and the field's name */
	union {
		bool b;
		int64_t i;
		double f;
		const char *s;
		uint32_t idx;          /* OBJ, CLASS, LOADER, THREAD, INST; REFKIND kind */
		const struct dsl_list *l;
		const struct dsl_structval *st;
	} u;
};

/* One instance of a set type. */
struct dsl_inst {
	int set;                  /* set-type index */
	struct dsl_value name;    /* string or int */
	struct dsl_value *props;  /* the set type's user properties */
	struct dsl_value roots;
};

/* The state of one run (walk.c owns it; eval.c reads the context). */
struct dsl_eval {
	const struct dsl_typed *t;
	const struct dsl_heap *h;
	struct dsl_diags *d;
	struct dsl_arena *persist;   /* instances, properties, roots */
	struct dsl_arena *tmp;       /* values of one offer, reset after it */
	struct dsl_arena *cur;       /* where new lists and structs go */
	int32_t *fidx;               /* [class * t->nfields + field id]: slot, -1 absent */
	uint8_t *isv;                /* [class-name id * nclasses + class]: `is` holds */
	int32_t *owner;              /* per object: 1 + the claiming instance, 0 unclaimed */
	struct dsl_inst *insts;
	int ninst;
	/* context */
	int inst;                    /* ENTITY, -1 in have_names */
	uint32_t this_obj;           /* THIS (DSL_NOOBJ outside membership/on_inclusion) */
	uint32_t referrer;           /* REFERRER, DSL_NOOBJ for heap roots and roots */
	int refkind;                 /* ref_kind, -1 for an instance's own roots */
	struct dsl_value *frames[DSL_MAX_NESTING + 2]; /* lambda parameters per level */
	struct dsl_list *tgroups;    /* thread_groups, built on first use */
	/* objects that are a class, a loader or a thread (for the built-ins
	 * that take precedence over their Java fields), sorted by object;
	 * built on first use */
	struct dsl_objrole *roles;
	uint32_t nroles;
	bool roles_built;
};

/* An object that is also a Class, a Classloader or a Thread. */
struct dsl_objrole {
	uint32_t obj;
	uint32_t idx;                /* index in the heap's classes, loaders or threads */
	uint8_t kind;                /* DSL_V_CLASS, DSL_V_LOADER, DSL_V_THREAD */
};

/* Evaluate expression n in the context of ev into *out.
 * Returns 0, -EINVAL (run-time error recorded in ev->d) or -ENOMEM. */
int dsl_eval_expr(struct dsl_eval *ev, const struct dsl_node *n, struct dsl_value *out);
/* Run on_inclusion (a lambda without parameters) for the current instance. */
int dsl_eval_lambda(struct dsl_eval *ev, const struct dsl_node *lam,
		    const struct dsl_value *arg, struct dsl_value *out);
/* Element i of a list. */
struct dsl_value dsl_list_get(const struct dsl_eval *ev, const struct dsl_list *l, size_t i);
/* Object index of an object-like value, DSL_NOOBJ otherwise. */
uint32_t dsl_value_obj(const struct dsl_eval *ev, const struct dsl_value *v);
/* Copy lists and structs of v into ev->persist. */
int dsl_value_persist(struct dsl_eval *ev, struct dsl_value *v);
/* Run the program's sets on ev->h (walk.c). Returns 0 or -errno. */
int dsl_walk(struct dsl_eval *ev, const struct dsl_ast *ast);

/* ===================================================================== */
/* accum.c                                                               */
/* ===================================================================== */

#define DSL_ACCUM_MAX 16

/* An on_inclusion that only keeps running sums, as additions (accum.c). */
struct dsl_accum {
	int n;                   /* additions; 0: the evaluator runs the lambda */
	struct {
		int prop;        /* the int property added to */
		bool size;       /* add THIS.size, else k */
		int field;       /* size: the field id whose presence makes THIS.size
				  * a Java field (-1: none in the heap) */
		int64_t k;
	} op[DSL_ACCUM_MAX];
};

/* dsl_accum_compile - @lam (set type @st's on_inclusion) as additions into
 * *@a; a->n is 0 unless every statement is `P <- P + E` or `P <- E + P`, P
 * an int property of @st, E an integer literal or THIS.size. Pure. */
void dsl_accum_compile(const struct dsl_settype *st, const struct dsl_node *lam,
		       struct dsl_accum *a);
/* dsl_accum_run - @a for object @o into properties @props; false, nothing
 * changed, when the evaluator must run the lambda instead (a property not
 * an int now, an object whose class has a Java field `size`). */
bool dsl_accum_run(const struct dsl_eval *ev, const struct dsl_accum *a, uint32_t o,
		   struct dsl_value *props);
/* dsl_accum_field - the slot of the Java field that @a's addition @k reads as
 * THIS.size in objects of class @cls, or -1 when it reads the object's
 * shallow size there (k not a THIS.size, no such field in @cls). The one
 * place the rule "THIS.size is a Java field of this class" is decided. Pure. */
int32_t dsl_accum_field(const struct dsl_eval *ev, const struct dsl_accum *a, int k, uint32_t cls);

/* ===================================================================== */
/* reach.c                                                               */
/* ===================================================================== */

/* What dsl_reach_par() claims from and for. */
struct dsl_reach_in {
	const struct dsl_heap *h;
	int32_t *owner;              /* ev->owner: 1 + instance, 0 unclaimed */
	int32_t inst;                /* the instance that claims */
	const struct dsl_accum *a;   /* its on_inclusion's sums; NULL: none */
	const uint8_t *plain;        /* per class: a's additions are what on_inclusion
				      * does for its objects (0: THIS.size is a Java
				      * field there - listed in later, not summed) */
	const uint32_t *seeds;       /* objects claimed already (those @inst owns lead on) */
	size_t nseeds;
	uint32_t *stack;             /* room for every object; may hold the seeds */
};

/* What it claimed. */
struct dsl_reach_out {
	uint64_t add[DSL_ACCUM_MAX]; /* per addition of a: its sum over the objects of
				      * plain classes claimed (wrapping) */
	uint32_t *later;             /* claimed objects of classes not plain, ascending
				      * (malloc'd: the caller frees) */
	size_t nlater;
	uint64_t claimed;
	int threads;                 /* that walked */
};

/*
 * dsl_reach_par - claim for in->inst every object its seeds reach over
 * references (an object's implied CLASS one first) through objects nobody
 * owns, in two threads: what walk.c's drain_reach() claims when no other
 * instance can claim meanwhile (in->inst the only one with a membership,
 * reachability), in another order - the same objects - with a's additions
 * summed apart (the caller adds them; integer additions commute). Two
 * threads only on a heap of a million objects or more with two CPUs, or
 * with MEMTRACE_DSL_THREADS=2 (1: never). Returns 0; -EAGAIN or -ENOMEM
 * with nothing changed (the caller walks alone); -ECANCELED when it could
 * not go on after it changed @stack or owners (the caller undoes that).
 * @out is zeroed first.
 */
int dsl_reach_par(const struct dsl_reach_in *in, struct dsl_reach_out *out);

/* ===================================================================== */
/* json.c                                                                */
/* ===================================================================== */

/* Write ev's instances as {"Set": {"name": {"prop": value, ...}, ...}, ...}\n.
 * Objects are written as their id, classes and threads as their name,
 * loaders as their id. Returns 0 or -EIO. */
int dsl_json_results(const struct dsl_eval *ev, FILE *f);
/* One value as JSON. */
void dsl_json_value(const struct dsl_eval *ev, const struct dsl_value *v, FILE *f);

/* ===================================================================== */
/* program.c: the API memtrace uses                                      */
/* ===================================================================== */

struct dsl_program;

/* What a compiled program needs from the heap, so a snapshot can be projected. */
struct dsl_needs {
	bool refs;              /* the walk needs object->object references and roots */
	const char **classes;   /* class names used with `is` (superclasses needed too) */
	int nclasses;
	const char **fields;    /* Java field names read (values needed for these) */
	int nfields;
	bool strings;           /* some field is read as a java.lang.String value */
	bool age;               /* the built-in `age` is read */
	bool retained;          /* `retained`: the heap needs dsl_heap.retained */
	bool referrers;         /* `referrers`: dsl_heap.referrer_first/referrer */
	bool root_path;         /* `root_path`: dsl_heap.root_via */
};

/* Compile src[0..len) (filename is for messages). schema may be NULL (class
 * and field names are then checked only at run time). On success *out owns
 * a program to free with dsl_program_free. Diagnostics go to diags (which
 * also keeps a copy of the source for dsl_diags_render).
 * Returns 0, -EINVAL (lexical/syntax/type error), -E2BIG or -ENOMEM. */
int dsl_compile(const char *src, size_t len, const char *filename,
		const struct dsl_schema *schema, struct dsl_program **out,
		struct dsl_diags *diags);
/* No operation if p is NULL. */
void dsl_program_free(struct dsl_program *p);
/* Valid while p lives. */
const struct dsl_needs *dsl_program_needs(const struct dsl_program *p);
/* Run p on heap h and write one JSON document (and a newline) to json_out.
 * Returns 0, -EINVAL (run-time error, recorded in diags; nothing written)
 * or -ENOMEM. A program may be run several times. */
int dsl_run(struct dsl_program *p, const struct dsl_heap *h, FILE *json_out,
	    struct dsl_diags *diags);

#endif /* MEMTRACE_DSL_H */
