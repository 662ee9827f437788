// SPDX-License-Identifier: GPL-2.0
/* jstackname.c - names for the walker's raw Java stacks; see jstackname.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jstack/jframes.h"
#include "jstack/jstackname.h"
#include "jstack/jwalk.h"
#include "jstack/methodsym.h"
#include "jstack/nmethod.h"
#include "lib/hash.h"
#include "lib/idmap.h"

struct jstackname {
	const struct mt_vmstructs *vs;
	struct jframes_layout jl;
	struct jwalk_layout jw;
	struct mt_nmethod_layout nl;
	struct mt_methodsym_layout ml;
	bool inlining;          /* compiled frames expanded into their inlined methods */
	bool lines;             /* source files and line numbers can be read */
	uint32_t seen_gen;      /* highest class unload generation heard of */
	/* Method* -> name (or NULL: unnameable) and source file, kept until jstackname_free */
	struct { uint64_t method; char *name; char *file; } *mnames;
	size_t nmnames, mcap;
	struct idmap scopes;    /* pc -> struct scope_names: a compiled frame's names, innermost first */
	struct idmap lines_of;  /* (Method*, bci) or bcp -> line + 1 (1: unknown) */
	uint64_t unknown_frames;
	char stop_frames[MT_JSTOP_NSTOPS][48];
	uint32_t depth;         /* Java frames a stack keeps (jstackname_set_depth) */
	struct profile_frame *inner; /* a stack's frames, innermost first: depth + one frame's */
};

struct jstackname *jstackname_new(const struct mt_vmstructs *vs, const struct jwalk_layout *jw)
{
	struct jstackname *t = calloc(1, sizeof(*t));

	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	t->vs = vs;
	t->jw = *jw;
	t->depth = MT_JSTACK_DEFAULT_DEPTH;
	t->inner = calloc(MT_JSTACK_MAX_DEPTH + MT_NMETHOD_MAX_SCOPES, sizeof(*t->inner));
	if (!t->inner) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	if (jframes_layout(vs, &t->jl) || !t->jl.names_ok) {
		free(t->inner);
		free(t);
		errno = ENOENT;
		return NULL;
	}
	t->inlining = !nmethod_layout(vs, &t->nl);
	t->lines = !methodsym_layout(vs, &t->ml) && t->ml.has_linenumbers;
	return t;
}

void jstackname_free(struct jstackname *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->mcap; i++) {
		free(t->mnames[i].name);
		free(t->mnames[i].file);
	}
	free(t->mnames);
	idmap_free_vals(&t->scopes);
	idmap_free(&t->lines_of);
	free(t->inner);
	free(t);
}

bool jstackname_inlining(const struct jstackname *t)
{
	return t->inlining;
}

void jstackname_set_depth(struct jstackname *t, uint32_t depth)
{
	if (depth >= 1 && depth <= MT_JSTACK_MAX_DEPTH)
		t->depth = depth;
}

void jstackname_seen_gen(struct jstackname *t, uint32_t gen)
{
	if (gen > t->seen_gen)
		t->seen_gen = gen;
}

static int frame_names(struct jstackname *t, const struct mt_jframe *f, uint32_t gen,
		       bool stubs, struct profile_frame *out, int max);

void jstackname_warm(struct jstackname *t, const struct mt_jstack *stack, uint32_t gen)
{
	struct profile_frame names[MT_NMETHOD_MAX_SCOPES];
	uint32_t depth = stack->depth < MT_JSTACK_MAX_DEPTH ? stack->depth : MT_JSTACK_MAX_DEPTH;
	uint64_t unknown = t->unknown_frames;

	for (uint32_t d = 0; d < depth; d++)
		frame_names(t, &stack->f[d], gen, false, names, MT_NMETHOD_MAX_SCOPES);
	t->unknown_frames = unknown; /* counted when the stack is named for output */
}

uint64_t jstackname_unknown(const struct jstackname *t)
{
	return t->unknown_frames;
}

/* Open addressing on Method*; mcap is a power of two, at most half full. */
static size_t mslot(const struct jstackname *t, uint64_t method)
{
	return (size_t)(hash_fib64(method) >> 24) & (t->mcap - 1);
}

static int mgrow(struct jstackname *t)
{
	size_t cap = t->mcap ? 2 * t->mcap : 1024, old = t->mcap;
	__typeof__(t->mnames) nm = calloc(cap, sizeof(*nm)), prev = t->mnames;

	if (!nm)
		return -ENOMEM;
	t->mnames = nm;
	t->mcap = cap;
	for (size_t i = 0; i < old; i++) {
		size_t j;

		if (!prev[i].method)
			continue;
		for (j = mslot(t, prev[i].method); nm[j].method; j = (j + 1) & (cap - 1))
			;
		nm[j] = prev[i];
	}
	free(prev);
	return 0;
}

/* The slot of @key in the name table, or of the empty slot where it goes. */
static size_t mfind(const struct jstackname *t, uint64_t key)
{
	size_t i;

	for (i = mslot(t, key); t->mnames[i].method; i = (i + 1) & (t->mcap - 1))
		if (t->mnames[i].method == key)
			break;
	return i;
}

/* Keep @name (copied; NULL: unnameable) and @file (NULL: unknown) under @key:
 * a Method*, or the frame's b for a stub (bit 63 set). Returns the kept entry's
 * slot, or -1 when out of memory. */
static ssize_t mkeep(struct jstackname *t, uint64_t key, const char *name, const char *file)
{
	size_t i;

	if ((t->nmnames + 1) * 2 > t->mcap && mgrow(t))
		return -1;
	i = mfind(t, key);
	t->mnames[i].method = key;
	t->mnames[i].name = name ? strdup(name) : NULL;
	t->mnames[i].file = file && name ? strdup(file) : NULL;
	t->nmnames++;
	return (ssize_t)i;
}

/* The name table's slot of @method, read once and kept; -1 when it cannot be
 * kept (out of memory, or its class may be gone: an older unload generation). */
static ssize_t method_slot(struct jstackname *t, uint64_t method, uint32_t gen)
{
	struct mt_methodsym ms;
	char buf[768];
	size_t i;

	if (!method)
		return -1;
	if (t->mcap && t->mnames[i = mfind(t, method)].method)
		return (ssize_t)i;
	if (gen < t->seen_gen)
		return -1; /* its class may be gone, the memory reused: not kept */
	if (t->lines) {
		if (methodsym_names(t->vs, &t->ml, method, &ms))
			return mkeep(t, method, NULL, NULL);
		snprintf(buf, sizeof(buf), "%s.%s", ms.klass, ms.name);
		if (!jwalk_name_ok(buf))
			return mkeep(t, method, NULL, NULL);
		return mkeep(t, method, buf, ms.file[0] && jwalk_name_ok(ms.file) ? ms.file : NULL);
	}
	if (jframes_method_name(t->vs, &t->jl, method, buf, sizeof(buf)) || !jwalk_name_ok(buf))
		return mkeep(t, method, NULL, NULL);
	return mkeep(t, method, buf, NULL);
}

/* "pkg.Class.method" of @method, printable, or NULL; read once, kept. */
static const char *method_name(struct jstackname *t, uint64_t method, uint32_t gen)
{
	ssize_t i = method_slot(t, method, gen);

	return i < 0 ? NULL : t->mnames[i].name;
}

const char *jstackname_method(struct jstackname *t, uint64_t method, uint32_t gen)
{
	return method_name(t, method, gen);
}

/* Frame @out for @method (name and file), of @kind at @line. */
static void method_frame(struct jstackname *t, uint64_t method, uint32_t gen,
			 enum profile_kind kind, int32_t line, struct profile_frame *out)
{
	ssize_t i = method_slot(t, method, gen);

	out->name = i < 0 ? NULL : t->mnames[i].name;
	out->file = i < 0 ? NULL : t->mnames[i].file;
	out->line = out->name ? line : 0;
	out->kind = out->name ? (uint8_t)kind : PROFILE_OTHER;
}

/* The source line of @bci in @method (0: unknown), read once per (method, bci). */
static int32_t line_of(struct jstackname *t, uint64_t method, int bci)
{
	uint64_t key = method ^ ((uint64_t)(uint16_t)(bci + 1) << 48);
	void *v;
	int line = 0;

	if (!t->lines || !method)
		return 0;
	if ((v = idmap_get(&t->lines_of, key)))
		return (int32_t)((uintptr_t)v - 1);
	if (methodsym_line(t->vs, &t->ml, method, bci, &line) || line < 0)
		line = 0;
	idmap_put(&t->lines_of, key, (void *)(uintptr_t)(line + 1));
	return line;
}

/* The line of an interpreted frame: its bcp's bytecode index (bcp keys the
 * cache: bytecodes are in the method's ConstMethod, one address per bci). */
static int32_t interp_line(struct jstackname *t, uint64_t method, uint64_t bcp)
{
	void *v;
	int bci, line = 0;

	if (!t->lines || !method || !bcp)
		return 0;
	if ((v = idmap_get(&t->lines_of, bcp)))
		return (int32_t)((uintptr_t)v - 1);
	if (!methodsym_bci(t->vs, &t->ml, method, bcp, &bci))
		line = line_of(t, method, bci);
	idmap_put(&t->lines_of, bcp, (void *)(uintptr_t)(line + 1));
	return line;
}

static enum profile_kind kind_of(enum mt_frame_kind k)
{
	switch (k) {
	case MT_FRAME_INTERPRETED: return PROFILE_INTERPRETED;
	case MT_FRAME_C1: return PROFILE_C1;
	case MT_FRAME_C2: return PROFILE_C2;
	case MT_FRAME_NATIVE: return PROFILE_NATIVE;
	case MT_FRAME_INLINED: return PROFILE_INLINED;
	}
	return PROFILE_OTHER;
}

/* A compiled frame's Java frames, named, innermost first (kept by pc). */
struct scope_names {
	int n;                  /* -1: the frame could not be expanded */
	struct profile_frame f[MT_NMETHOD_MAX_SCOPES];
};

/*
 * The Java frames of compiled frame @f (pc f->a in the nmethod f->b), innermost
 * first, from the nmethod's debug info: the method that allocated, then the
 * methods it was inlined into, then the nmethod's own. A frame whose nmethod
 * was freed or replaced since the sample (other start or Method*) is unknown
 * (NULL) and counted, never named after the new code. Cached by pc: a pc's
 * scopes do not change while its nmethod lives, and a changed nmethod is caught
 * by the check against f->m first.
 */
/* The cache key of a compiled frame: its pc in that nmethod (blob, Method*),
 * so that code reused by another nmethod at the same pc is another key. */
static uint64_t frame_key(const struct mt_jframe *f)
{
	return f->a ^ hash_mix64(f->b) ^ hash_fib64(f->m);
}

static int compiled_names(struct jstackname *t, const struct mt_jframe *f, uint32_t gen,
			  struct profile_frame *out, int max)
{
	struct mt_nmethod_scope sc[MT_NMETHOD_MAX_SCOPES];
	struct scope_names *c = idmap_get(&t->scopes, frame_key(f));
	struct mt_nmethod nm;
	int n;

	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return 0;
		c->n = -1;
		if (!nmethod_find(t->vs, &t->nl, f->a, &nm) &&
		    nm.start == (f->b & ~MT_JFRAME_COMPILED) && nm.method == f->m) {
			n = nmethod_scopes(t->vs, &t->nl, &nm, f->a, 0, sc, MT_NMETHOD_MAX_SCOPES);
			if (n == -E2BIG)
				n = MT_NMETHOD_MAX_SCOPES;
			if (n == -ENOENT) { /* no PcDesc (a deoptimization handler): the nmethod's own */
				sc[0].method = nm.method;
				sc[0].bci = -1;
				sc[0].kind = nm.kind;
				n = 1;
			}
			for (int i = 0; i < n; i++)
				method_frame(t, sc[i].method, gen, kind_of(sc[i].kind),
					     line_of(t, sc[i].method, sc[i].bci), &c->f[i]);
			c->n = n > 0 ? n : -1;
		}
		if (idmap_put(&t->scopes, frame_key(f), c)) {
			free(c);
			return 0;
		}
	}
	if (c->n < 0) { /* counted as an unknown frame by the caller */
		memset(out, 0, sizeof(*out));
		return 1;
	}
	n = c->n < max ? c->n : max;
	memcpy(out, c->f, (size_t)n * sizeof(*out));
	return n;
}

/*
 * The frames of one raw frame, innermost first: an interpreted frame's method;
 * a compiled frame's inlined methods and its own (compiled_names); a stub's
 * name when @stubs. Returns how many were written (0: a stub left out), each
 * named, or with a NULL name for unknown.
 */
static int frame_names(struct jstackname *t, const struct mt_jframe *f, uint32_t gen,
		       bool stubs, struct profile_frame *out, int max)
{
	uint64_t method = 0;
	char stub[80];
	enum jwalk_kind k;

	if (max < 1)
		return 0;
	/* a compiled frame named while its nmethod lived (jstackname_warm) */
	if ((f->b & MT_JFRAME_COMPILED) && t->inlining && idmap_get(&t->scopes, frame_key(f)))
		return compiled_names(t, f, gen, out, max);
	k = jwalk_frame_method(t->vs, &t->jw, f, &method, stub, sizeof(stub));
	if (k == JWALK_STUB) {
		if (!stubs)
			return 0;
		/* kept with the methods under the blob's key (bit 63 set: no Method* has it) */
		ssize_t i;

		if (t->mcap && t->mnames[mfind(t, f->b)].method)
			i = (ssize_t)mfind(t, f->b);
		else
			i = mkeep(t, f->b, stub, NULL);
		memset(out, 0, sizeof(*out));
		out->name = i < 0 ? NULL : t->mnames[i].name;
		return 1;
	}
	if (k == JWALK_COMPILED && t->inlining)
		return compiled_names(t, f, gen, out, max);
	memset(out, 0, sizeof(*out));
	if (k == JWALK_INTERP)
		method_frame(t, method, gen, PROFILE_INTERPRETED, interp_line(t, method, f->b), out);
	else if (k == JWALK_COMPILED) /* no debug info to read: the nmethod's own method */
		method_frame(t, method, gen, PROFILE_C2, 0, out);
	return 1;
}

const char *jstackname_innermost(struct jstackname *t, const struct mt_jframe *f, uint32_t gen)
{
	struct profile_frame out[MT_NMETHOD_MAX_SCOPES];

	if (frame_names(t, f, gen, false, out, MT_NMETHOD_MAX_SCOPES) < 1)
		return NULL;
	return out[0].name;
}

/*
 * The Java frames of @stack, innermost first, into t->inner: at most t->depth
 * (the innermost ones). Returns their count; *@stop is the walk's stop, or
 * MT_JSTOP_DEPTH when frames were left out here: a stack the walker had
 * whole that expands (inlined methods) past the bound is cut like one the
 * walker cut, and says so.
 */
static int expand(struct jstackname *t, const struct mt_jstack *stack, uint32_t gen, bool stubs,
		  uint32_t *stop)
{
	uint32_t depth = stack->depth < MT_JSTACK_MAX_DEPTH ? stack->depth : MT_JSTACK_MAX_DEPTH;
	struct profile_frame more[MT_NMETHOD_MAX_SCOPES];
	uint32_t d;
	int n = 0;

	*stop = stack->stop;
	for (d = 0; d < depth && n < (int)t->depth; d++)
		n += frame_names(t, &stack->f[d], gen, stubs, t->inner + n, MT_NMETHOD_MAX_SCOPES);
	if (n > (int)t->depth) { /* the last frame's inlined methods went past the bound */
		n = (int)t->depth;
		*stop = MT_JSTOP_DEPTH;
	}
	for (; d < depth && *stop != MT_JSTOP_DEPTH; d++) /* frames left: named ones cut it */
		if (frame_names(t, &stack->f[d], gen, stubs, more, MT_NMETHOD_MAX_SCOPES) > 0)
			*stop = MT_JSTOP_DEPTH;
	return n;
}

int jstackname_frames_full(struct jstackname *t, const struct mt_jstack *stack, uint32_t gen,
			   struct profile_frame *names, int max, bool stubs)
{
	uint32_t stop;
	int n = expand(t, stack, gen, stubs, &stop), k = 0;

	if (max < 1)
		return 0;
	if (n + (stop != MT_JSTOP_END) > max) { /* no room for the outermost frames */
		n = max - 1;
		stop = MT_JSTOP_DEPTH;
	}
	if (stop != MT_JSTOP_END && stop < MT_JSTOP_NSTOPS) {
		char *s = t->stop_frames[stop];

		if (!s[0])
			snprintf(s, sizeof(t->stop_frames[0]), "[stack cut: %s]",
				 jwalk_stop_name(stop));
		names[k++] = (struct profile_frame){ .name = s };
	}
	for (int i = n - 1; i >= 0; i--) {
		names[k] = t->inner[i];
		if (!t->inner[i].name) {
			t->unknown_frames++;
			names[k] = (struct profile_frame){ .name = "[unknown]" };
		}
		k++;
	}
	return k;
}

int jstackname_cut(const char *name)
{
	static const char pre[] = "[stack cut: ";

	if (!name || strncmp(name, pre, sizeof(pre) - 1))
		return -1;
	for (uint32_t i = 1; i < MT_JSTOP_NSTOPS; i++) {
		const char *r = jwalk_stop_name(i);
		size_t len = strlen(r);

		if (!strncmp(name + sizeof(pre) - 1, r, len) && !strcmp(name + sizeof(pre) - 1 + len, "]"))
			return (int)i;
	}
	return -1;
}

int jstackname_frames(struct jstackname *t, const struct mt_jstack *stack, uint32_t gen,
		      const char **names, int max, bool stubs)
{
	struct profile_frame *f = calloc(max > 0 ? (size_t)max : 1, sizeof(*f));
	int n;

	if (!f)
		return 0;
	n = jstackname_frames_full(t, stack, gen, f, max, stubs);
	for (int i = 0; i < n; i++)
		names[i] = f[i].name;
	free(f);
	return n;
}

