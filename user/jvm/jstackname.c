// SPDX-License-Identifier: GPL-2.0
/* jstackname.c - names for the walker's raw Java stacks; see jstackname.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/jframes.h"
#include "jvm/jstackname.h"
#include "jvm/jwalk.h"
#include "jvm/nmethod.h"
#include "lib/hash.h"
#include "lib/idmap.h"

struct jstackname {
	const struct mt_vmstructs *vs;
	struct jframes_layout jl;
	struct jwalk_layout jw;
	struct mt_nmethod_layout nl;
	bool inlining;          /* compiled frames expanded into their inlined methods */
	uint32_t seen_gen;      /* highest class unload generation heard of */
	/* Method* -> name (or NULL: unnameable), kept until jstackname_free */
	struct { uint64_t method; char *name; } *mnames;
	size_t nmnames, mcap;
	struct idmap scopes;    /* pc -> struct scope_names: a compiled frame's names, innermost first */
	uint64_t unknown_frames;
	char stop_frames[MT_JSTOP_NSTOPS][48];
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
	if (jframes_layout(vs, &t->jl) || !t->jl.names_ok) {
		free(t);
		errno = ENOENT;
		return NULL;
	}
	t->inlining = !nmethod_layout(vs, &t->nl);
	return t;
}

void jstackname_free(struct jstackname *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->mcap; i++)
		free(t->mnames[i].name);
	free(t->mnames);
	idmap_free_vals(&t->scopes);
	free(t);
}

bool jstackname_inlining(const struct jstackname *t)
{
	return t->inlining;
}

void jstackname_seen_gen(struct jstackname *t, uint32_t gen)
{
	if (gen > t->seen_gen)
		t->seen_gen = gen;
}

static int frame_names(struct jstackname *t, const struct mt_jframe *f, uint32_t gen,
		       bool stubs, const char **out, int max);

void jstackname_warm(struct jstackname *t, const struct mt_jstack *stack, uint32_t gen)
{
	const char *names[MT_JSTACK_MAX_DEPTH];
	uint32_t depth = stack->depth < MT_JSTACK_MAX_DEPTH ? stack->depth : MT_JSTACK_MAX_DEPTH;
	uint64_t unknown = t->unknown_frames;

	for (uint32_t d = 0; d < depth; d++)
		frame_names(t, &stack->f[d], gen, false, names, MT_JSTACK_MAX_DEPTH);
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

/* Keep @name (copied; NULL: unnameable) under @key: a Method*, or the frame's b
 * for a stub (bit 63 set). Returns the kept copy. */
static const char *mkeep(struct jstackname *t, uint64_t key, const char *name)
{
	size_t i;

	if ((t->nmnames + 1) * 2 > t->mcap && mgrow(t))
		return NULL;
	i = mfind(t, key);
	t->mnames[i].method = key;
	t->mnames[i].name = name ? strdup(name) : NULL;
	t->nmnames++;
	return t->mnames[i].name;
}

/* "pkg.Class.method" of @method, printable, or NULL; read once, kept. */
static const char *method_name(struct jstackname *t, uint64_t method, uint32_t gen)
{
	char buf[768];
	size_t i;

	if (!method)
		return NULL;
	if (t->mcap && t->mnames[i = mfind(t, method)].method)
		return t->mnames[i].name;
	if (gen < t->seen_gen)
		return NULL; /* its class may be gone, the memory reused: not kept */
	if (jframes_method_name(t->vs, &t->jl, method, buf, sizeof(buf)) || !jwalk_name_ok(buf))
		return mkeep(t, method, NULL);
	return mkeep(t, method, buf);
}

const char *jstackname_method(struct jstackname *t, uint64_t method, uint32_t gen)
{
	return method_name(t, method, gen);
}

/* A compiled frame's Java frames, named, innermost first (kept by pc). */
struct scope_names {
	int n;                  /* -1: the frame could not be expanded */
	const char *name[MT_NMETHOD_MAX_SCOPES];
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
			  const char **out, int max)
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
				n = 1;
			}
			for (int i = 0; i < n; i++)
				c->name[i] = method_name(t, sc[i].method, gen);
			c->n = n > 0 ? n : -1;
		}
		if (idmap_put(&t->scopes, frame_key(f), c)) {
			free(c);
			return 0;
		}
	}
	if (c->n < 0) { /* counted as an unknown frame by the caller */
		out[0] = NULL;
		return 1;
	}
	n = c->n < max ? c->n : max;
	memcpy(out, c->name, (size_t)n * sizeof(*out));
	return n;
}

/*
 * The names of one raw frame, innermost first: an interpreted frame's method;
 * a compiled frame's inlined methods and its own (compiled_names); a stub's
 * name when @stubs. Returns how many were written (0: a stub left out), each
 * a name or NULL for unknown.
 */
static int frame_names(struct jstackname *t, const struct mt_jframe *f, uint32_t gen,
		       bool stubs, const char **out, int max)
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
		size_t i;

		if (t->mcap && t->mnames[i = mfind(t, f->b)].method)
			out[0] = t->mnames[i].name;
		else
			out[0] = mkeep(t, f->b, stub);
		return 1;
	}
	if (k == JWALK_COMPILED && t->inlining)
		return compiled_names(t, f, gen, out, max);
	out[0] = k == JWALK_UNKNOWN ? NULL : method_name(t, method, gen);
	return 1;
}

int jstackname_frames(struct jstackname *t, const struct mt_jstack *stack, uint32_t gen,
		      const char **names, int max, bool stubs)
{
	const char *inner[MT_JSTACK_MAX_DEPTH];
	uint32_t depth = stack->depth < MT_JSTACK_MAX_DEPTH ? stack->depth : MT_JSTACK_MAX_DEPTH;
	int n = 0, k = 0;

	for (uint32_t d = 0; d < depth && n < MT_JSTACK_MAX_DEPTH; d++)
		n += frame_names(t, &stack->f[d], gen, stubs, inner + n, MT_JSTACK_MAX_DEPTH - n);
	if (stack->stop != MT_JSTOP_END && k < max && stack->stop < MT_JSTOP_NSTOPS) {
		char *s = t->stop_frames[stack->stop];

		if (!s[0])
			snprintf(s, sizeof(t->stop_frames[0]), "[stack cut: %s]",
				 jwalk_stop_name(stack->stop));
		names[k++] = s;
	}
	for (int i = n - 1; i >= 0 && k < max; i--) {
		if (!inner[i])
			t->unknown_frames++;
		names[k++] = inner[i] ? inner[i] : "[unknown]";
	}
	return k;
}

