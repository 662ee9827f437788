// SPDX-License-Identifier: GPL-2.0
/* profile.c - weighted stack samples: interned frame names, merged stacks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/profile.h"
#include "lib/util.h"

/* Open-addressing tables hold index + 1 (0 = empty); capacity is a power of
 * two kept at most half full. */
struct table {
	uint32_t *slot;
	size_t cap;
};

/* An interned frame: the caller's frame with its strings copied, and its label. */
struct pframe {
	struct profile_frame f;
	uint32_t label;
};

struct profile {
	struct pframe *frames;
	size_t nframes, frames_cap;
	struct table frame_tab;

	char **labels;          /* name + kind suffix */
	size_t nlabels, labels_cap;
	struct table label_tab;

	struct profile_stack *stacks;
	size_t nstacks, stacks_cap;
	struct table stack_tab;

	uint64_t total_bytes, total_count;
	uint64_t start_ns, duration_ns;
};

static const char *const kind_suffix[PROFILE_NKINDS] = {
	[PROFILE_INTERPRETED] = "_[0]", [PROFILE_C1] = "_[1]", [PROFILE_C2] = "_[j]",
	[PROFILE_INLINED] = "_[i]",
};
static const char *const kind_name[PROFILE_NKINDS] = {
	"other", "interpreted", "c1", "c2", "inlined", "native",
};

const char *profile_kind_suffix(enum profile_kind k)
{
	return (unsigned)k < PROFILE_NKINDS && kind_suffix[k] ? kind_suffix[k] : "";
}

const char *profile_kind_name(enum profile_kind k)
{
	return (unsigned)k < PROFILE_NKINDS ? kind_name[k] : "other";
}

/* FNV-1a over bytes. */
static uint64_t hash_bytes(const void *data, size_t len, uint64_t h)
{
	const unsigned char *b = data;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

#define FNV_SEED 0xcbf29ce484222325ULL

static uint64_t hash_str(const char *s, uint64_t h)
{
	return hash_bytes(s ? s : "", s ? strlen(s) + 1 : 0, h);
}

static uint64_t hash_frame(const struct profile_frame *f)
{
	uint64_t h = hash_str(f->name, FNV_SEED);

	h = hash_str(f->file, h);
	h = hash_bytes(&f->line, sizeof(f->line), h);
	return hash_bytes(&f->kind, sizeof(f->kind), h);
}

static uint64_t hash_label(const char *name, uint8_t kind)
{
	return hash_bytes(&kind, 1, hash_str(name, FNV_SEED));
}

static uint64_t hash_stack(const uint32_t *ids, int n)
{
	return hash_bytes(ids, (size_t)n * sizeof(*ids), FNV_SEED);
}

struct profile *profile_new(void)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		errno = ENOMEM;
	return p;
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nframes; i++) {
		free((void *)p->frames[i].f.name);
		free((void *)p->frames[i].f.file);
	}
	for (size_t i = 0; i < p->nlabels; i++)
		free(p->labels[i]);
	for (size_t i = 0; i < p->nstacks; i++)
		free((void *)p->stacks[i].frames);
	free(p->frames);
	free(p->labels);
	free(p->stacks);
	free(p->frame_tab.slot);
	free(p->label_tab.slot);
	free(p->stack_tab.slot);
	free(p);
}

/* Grow @t to hold @want entries at most half full, re-inserting with @rehash. */
static int table_reserve(struct table *t, size_t want, const struct profile *p,
			 uint64_t (*rehash)(const struct profile *, uint32_t))
{
	size_t cap = t->cap ? t->cap : 64;
	uint32_t *slot;

	while (cap < want * 2)
		cap *= 2;
	if (cap == t->cap)
		return 0;
	slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		uint32_t v = t->slot[i];
		size_t j;

		if (!v)
			continue;
		j = rehash(p, v - 1) & (cap - 1);
		while (slot[j])
			j = (j + 1) & (cap - 1);
		slot[j] = v;
	}
	free(t->slot);
	t->slot = slot;
	t->cap = cap;
	return 0;
}

static uint64_t rehash_frame(const struct profile *p, uint32_t i)
{
	return hash_frame(&p->frames[i].f);
}

static uint64_t rehash_label(const struct profile *p, uint32_t i)
{
	return hash_label(p->frames[i].f.name, p->frames[i].f.kind);
}

static uint64_t rehash_stack(const struct profile *p, uint32_t i)
{
	return hash_stack(p->stacks[i].frames, p->stacks[i].n);
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Room for one more element in an array of @size-byte elements. */
static int grow(void **arr, size_t n, size_t *cap, size_t size)
{
	void *a;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 256;
	a = realloc(*arr, c * size);
	if (!a)
		return -ENOMEM;
	*arr = a;
	*cap = c;
	return 0;
}

/* The label of (name, kind): its id, made if new. The label table's slots
 * hold a frame index + 1 (the first frame of that label). 0 or -ENOMEM. */
static int label_of(struct profile *p, const char *name, uint8_t kind, uint32_t frame,
		    uint32_t *label)
{
	uint64_t h = hash_label(name, kind);
	size_t j;
	char *s;

	if (table_reserve(&p->label_tab, p->nlabels + 1, p, rehash_label))
		return -ENOMEM;
	for (j = h & (p->label_tab.cap - 1); p->label_tab.slot[j];
	     j = (j + 1) & (p->label_tab.cap - 1)) {
		const struct pframe *o = &p->frames[p->label_tab.slot[j] - 1];

		if (o->f.kind == kind && !strcmp(o->f.name, name)) {
			*label = o->label;
			return 0;
		}
	}
	if (grow((void **)&p->labels, p->nlabels, &p->labels_cap, sizeof(*p->labels)))
		return -ENOMEM;
	if (asprintf(&s, "%s%s", name, profile_kind_suffix(kind)) < 0)
		return -ENOMEM;
	p->labels[p->nlabels] = s;
	p->label_tab.slot[j] = frame + 1;
	*label = (uint32_t)p->nlabels++;
	return 0;
}

/* intern - the id of frame @f, adding it if new. Returns 0 or -ENOMEM. */
static int intern(struct profile *p, const struct profile_frame *f, uint32_t *id)
{
	struct profile_frame k = *f;
	struct pframe *n;
	uint64_t h;
	size_t j;
	int err;

	if (!k.name)
		k.name = "[unknown]";
	h = hash_frame(&k);
	if (table_reserve(&p->frame_tab, p->nframes + 1, p, rehash_frame))
		return -ENOMEM;
	for (j = h & (p->frame_tab.cap - 1); p->frame_tab.slot[j];
	     j = (j + 1) & (p->frame_tab.cap - 1)) {
		const struct profile_frame *o = &p->frames[p->frame_tab.slot[j] - 1].f;

		if (o->line == k.line && o->kind == k.kind && !strcmp(o->name, k.name) &&
		    same_str(o->file, k.file)) {
			*id = p->frame_tab.slot[j] - 1;
			return 0;
		}
	}
	if (grow((void **)&p->frames, p->nframes, &p->frames_cap, sizeof(*p->frames)))
		return -ENOMEM;
	n = &p->frames[p->nframes];
	memset(n, 0, sizeof(*n));
	n->f.line = k.line;
	n->f.kind = k.kind;
	n->f.name = strdup(k.name);
	n->f.file = k.file ? strdup(k.file) : NULL;
	if (!n->f.name || (k.file && !n->f.file))
		goto nomem;
	/* the label table reads this frame's name: it must be in place first */
	err = label_of(p, n->f.name, n->f.kind, (uint32_t)p->nframes, &n->label);
	if (err)
		goto nomem;
	p->frame_tab.slot[j] = (uint32_t)p->nframes + 1;
	*id = (uint32_t)p->nframes++;
	return 0;
nomem:
	free((void *)n->f.name);
	free((void *)n->f.file);
	return -ENOMEM;
}

int profile_add_frames(struct profile *p, const struct profile_frame *frames, int n,
		       uint64_t bytes, uint64_t count)
{
	uint32_t *ids;
	uint64_t h;
	size_t j;
	int err;

	if (n < 1 || n > MT_PROFILE_MAX_DEPTH)
		return -EINVAL;
	for (int i = 0; i < n; i++)
		if (frames[i].kind >= PROFILE_NKINDS)
			return -EINVAL;
	ids = malloc((size_t)n * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		err = intern(p, &frames[i], &ids[i]);
		if (err)
			goto err;
	}
	err = -ENOMEM;
	if (table_reserve(&p->stack_tab, p->nstacks + 1, p, rehash_stack))
		goto err;
	h = hash_stack(ids, n);
	for (j = h & (p->stack_tab.cap - 1); p->stack_tab.slot[j];
	     j = (j + 1) & (p->stack_tab.cap - 1)) {
		struct profile_stack *s = &p->stacks[p->stack_tab.slot[j] - 1];

		if (s->n == n && !memcmp(s->frames, ids, (size_t)n * sizeof(*ids))) {
			s->bytes += bytes;
			s->count += count;
			free(ids);
			goto added;
		}
	}
	if (grow((void **)&p->stacks, p->nstacks, &p->stacks_cap, sizeof(*p->stacks)))
		goto err;
	p->stacks[p->nstacks] = (struct profile_stack){ ids, n, bytes, count };
	p->stack_tab.slot[j] = (uint32_t)p->nstacks + 1;
	p->nstacks++;
added:
	p->total_bytes += bytes;
	p->total_count += count;
	return 0;
err:
	free(ids);
	return err;
}

int profile_add(struct profile *p, const char *const *frames, int n, uint64_t bytes,
		uint64_t count)
{
	struct profile_frame *f;
	int err;

	if (n < 1 || n > MT_PROFILE_MAX_DEPTH)
		return -EINVAL;
	f = calloc((size_t)n, sizeof(*f));
	if (!f)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		f[i].name = frames[i];
	err = profile_add_frames(p, f, n, bytes, count);
	free(f);
	return err;
}

/* A Java method frame (pkg.Class.method), as opposed to VM code and stubs. */
static bool is_java(const char *f)
{
	return f[0] != '[' && strchr(f, '.') && !strstr(f, "::");
}

/* A sample with the walker's Java stack: that stack, the VM frames below it,
 * the class. */
static int add_walked(struct profile *p, const struct profile_alloc *a)
{
	struct profile_frame *frames;
	int k = 0, m = 0, err;

	if (a->java_depth < 0 || a->depth < 0 ||
	    a->java_depth + a->depth + 1 > MT_PROFILE_MAX_DEPTH)
		return -EINVAL;
	frames = calloc((size_t)(a->java_depth + a->depth + 1), sizeof(*frames));
	if (!frames)
		return -ENOMEM;
	memcpy(frames, a->java, (size_t)a->java_depth * sizeof(*frames));
	k = a->java_depth;
	/* m: the VM's allocation path, leaf first, up to the first Java frame */
	while (a->frames && m < a->depth && !is_java(a->frames[m]) && a->frames[m][0] != '[')
		m++;
	for (int d = m - 1; d >= 0; d--)
		frames[k++].name = a->frames[d];
	frames[k++].name = a->class_name;
	err = profile_add_frames(p, frames, k, a->bytes, a->count);
	free(frames);
	return err;
}

int profile_add_alloc(struct profile *p, const struct profile_alloc *a)
{
	const char *leaf = a->java_leaf, **f, **frames;
	int depth = a->depth, k = 0, m = 0, err;

	if (a->java)
		return add_walked(p, a);
	if (!a->frames) {
		const char *two[] = { leaf ? leaf : "[no stack]", a->class_name };

		return profile_add(p, two, 2, a->bytes, a->count);
	}
	if (depth < 0 || depth > MT_PROFILE_MAX_DEPTH - 3)
		return -EINVAL;
	/* f: the walk's names, leaf first; frames: the stack, root first, at most
	 * depth + 3 names (marker, Java frame, class) */
	f = malloc((size_t)(2 * depth + 3) * sizeof(*f));
	if (!f)
		return -ENOMEM;
	frames = f + depth;
	memcpy(f, a->frames, (size_t)depth * sizeof(*f));
	/* the interpreter's innermost frame is the allocating method */
	for (int d = 0; leaf && a->interpreted && d < depth; d++)
		if (!strcmp(f[d], "[interpreted Java]")) {
			f[d] = leaf;
			break;
		}
	/* m: the first frame (from the leaf) above the VM's allocation path */
	while (m < depth && !is_java(f[m]) && f[m][0] != '[')
		m++;
	if (leaf && (m == depth || strcmp(f[m], leaf))) {
		bool lost = true; /* is everything above m unresolved? */

		for (int d = m; d < depth; d++)
			lost &= f[d][0] == '[' && strcmp(f[d], "[interpreted Java]");
		if (lost)
			frames[k++] = "[callers: run with -XX:+PreserveFramePointer]";
		else
			for (int d = depth - 1; d >= m; d--)
				frames[k++] = f[d];
		frames[k++] = leaf;
		for (int d = m - 1; d >= 0; d--)
			frames[k++] = f[d];
	} else {
		for (int d = depth - 1; d >= 0; d--)
			frames[k++] = f[d];
	}
	frames[k++] = a->class_name;
	err = profile_add(p, frames, k, a->bytes, a->count);
	free(f);
	return err;
}

void profile_set_window(struct profile *p, uint64_t start_epoch_ns, uint64_t duration_ns)
{
	p->start_ns = start_epoch_ns;
	p->duration_ns = duration_ns;
}

void profile_get_window(const struct profile *p, uint64_t *start_epoch_ns, uint64_t *duration_ns)
{
	*start_epoch_ns = p->start_ns;
	*duration_ns = p->duration_ns;
}

size_t profile_nstacks(const struct profile *p)
{
	return p->nstacks;
}

/* qsort_r: stack numbers by their stacks' bytes, descending, then ascending. */
static int by_bytes_desc(const void *a, const void *b, void *ctx)
{
	const struct profile *p = ctx;
	size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
	uint64_t wa = p->stacks[ia].bytes, wb = p->stacks[ib].bytes;

	if (wa != wb)
		return wa < wb ? 1 : -1;
	return ia < ib ? -1 : ia > ib;
}

size_t *profile_order_by_bytes(const struct profile *p)
{
	size_t *order = malloc((p->nstacks ? p->nstacks : 1) * sizeof(*order));

	if (!order)
		return NULL;
	for (size_t i = 0; i < p->nstacks; i++)
		order[i] = i;
	qsort_r(order, p->nstacks, sizeof(*order), by_bytes_desc, (void *)p);
	return order;
}

const struct profile_stack *profile_stack_at(const struct profile *p, size_t i)
{
	return i < p->nstacks ? &p->stacks[i] : NULL;
}

size_t profile_nnames(const struct profile *p)
{
	return p->nframes;
}

const char *profile_name(const struct profile *p, uint32_t id)
{
	return id < p->nframes ? p->frames[id].f.name : NULL;
}

const struct profile_frame *profile_frame(const struct profile *p, uint32_t id)
{
	return id < p->nframes ? &p->frames[id].f : NULL;
}

uint32_t profile_label_id(const struct profile *p, uint32_t id)
{
	return id < p->nframes ? p->frames[id].label : UINT32_MAX;
}

size_t profile_nlabels(const struct profile *p)
{
	return p->nlabels;
}

const char *profile_label(const struct profile *p, uint32_t label)
{
	return label < p->nlabels ? p->labels[label] : NULL;
}

uint64_t profile_total_bytes(const struct profile *p)
{
	return p->total_bytes;
}

uint64_t profile_total_count(const struct profile *p)
{
	return p->total_count;
}
