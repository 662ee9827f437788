// SPDX-License-Identifier: GPL-2.0
/*
 * stream.c - the socket thread's side of sampling: drains the rings that the
 * callbacks fill (sampler.c), replaces names by numbers and encodes EVENTS
 * frames (records of agent_proto.h).
 *
 * Why names are resolved here and not in the callback, nor in memtrace: the
 * callback only copies jmethodIDs and bytecode indexes (GetStackTrace is the
 * one unavoidable cost on the allocating thread); memtrace cannot turn a
 * jmethodID into a name from outside without walking Method* structures. So
 * this thread resolves each method once per session (name, class, line number
 * table, cached), sends it once as a METHOD record, and every sample then
 * carries (method id, line) pairs: the seed's "ID service" in the stream.
 * Tables are bounded; past the bound a name is sent as id 0 and counted.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "sampler.h"
#include "stream.h"

#define MAX_CLASSES  16384
#define MAX_METHODS  65536
#define FRAME_BYTES  (60 * 1024) /* EVENTS payload per frame */
#define FREES_PER_REC 1024

struct cls_ent {
	char *sig;
	uint32_t id;
};

struct meth_ent {
	jmethodID m;
	uint32_t id;
	jint nlines;
	jvmtiLineNumberEntry *lines; /* JVMTI-allocated, or NULL */
};

static struct cls_ent *classes;  /* open addressing, power-of-two capacity */
static size_t cls_cap, cls_n;
static struct meth_ent *methods;
static size_t meth_cap, meth_n;
static uint64_t names_dropped;

static char pay[FRAME_BYTES];
static size_t pay_len;
static int (*emit_fn)(unsigned type, const void *payload, size_t len);
static size_t emitted; /* payload bytes emitted in this drain */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static uint64_t hash_ptr(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

/* Send the payload collected so far as one EVENTS frame. */
static int flush(void)
{
	if (!pay_len)
		return 0;
	if (emit_fn(MT_AP_EVENTS, pay, pay_len))
		return -1;
	emitted += pay_len;
	pay_len = 0;
	return 0;
}

static int put(unsigned kind, uint32_t arg, const void *body, size_t blen)
{
	if (mt_ap_rec_put(pay, sizeof(pay), &pay_len, kind, arg, body, blen) >= 0)
		return 0;
	if (flush())
		return -1;
	return mt_ap_rec_put(pay, sizeof(pay), &pay_len, kind, arg, body, blen) >= 0 ? 0 : -1;
}

static int grow(void **tab, size_t *cap, size_t elem)
{
	size_t ncap = *cap ? *cap * 2 : 1024;
	void *n = calloc(ncap, elem);

	if (!n)
		return -1;
	*tab = n;
	*cap = ncap;
	return 0;
}

/* The class id of signature @sig, sending a CLASS record the first time. 0 if full. */
static uint32_t class_id(const char *sig)
{
	size_t i;

	if (cls_n * 2 >= cls_cap) {
		struct cls_ent *old = classes;
		size_t ocap = cls_cap;

		if (cls_n >= MAX_CLASSES || grow((void **)&classes, &cls_cap, sizeof(*classes))) {
			classes = old;
			cls_cap = ocap;
			if (cls_n >= MAX_CLASSES || !classes) {
				names_dropped++;
				return 0;
			}
		} else {
			for (size_t j = 0; j < ocap; j++) {
				if (!old[j].sig)
					continue;
				for (i = hash_str(old[j].sig) & (cls_cap - 1); classes[i].sig;
				     i = (i + 1) & (cls_cap - 1))
					;
				classes[i] = old[j];
			}
			free(old);
		}
	}
	for (i = hash_str(sig) & (cls_cap - 1); classes[i].sig; i = (i + 1) & (cls_cap - 1))
		if (!strcmp(classes[i].sig, sig))
			return classes[i].id;
	classes[i].sig = strdup(sig);
	if (!classes[i].sig) {
		names_dropped++;
		return 0;
	}
	classes[i].id = (uint32_t)++cls_n;
	if (put(MT_AP_REC_CLASS, classes[i].id, sig, strlen(sig) + 1))
		return 0;
	return classes[i].id;
}

/* Resolve @m (name, class, line table) and send its METHOD record. */
static int method_define(struct meth_ent *e)
{
	jvmtiEnv *jv = agent.jvmti;
	char *name = NULL, *csig = NULL, body[512];
	jclass k = NULL;
	int n, rc;

	if ((*jv)->GetMethodName(jv, e->m, &name, NULL, NULL) ||
	    (*jv)->GetMethodDeclaringClass(jv, e->m, &k) ||
	    (*jv)->GetClassSignature(jv, k, &csig, NULL)) {
		n = snprintf(body, sizeof(body), "L?;%c?", 0);
	} else {
		n = snprintf(body, sizeof(body), "%.300s%c%.190s", csig, 0, name);
	}
	if (k && agent.jni)
		(*agent.jni)->DeleteLocalRef(agent.jni, k);
	if (name)
		(*jv)->Deallocate(jv, (unsigned char *)name);
	if (csig)
		(*jv)->Deallocate(jv, (unsigned char *)csig);
	if ((*jv)->GetLineNumberTable(jv, e->m, &e->nlines, &e->lines)) {
		e->nlines = 0;
		e->lines = NULL;
	}
	rc = put(MT_AP_REC_METHOD, e->id, body, (size_t)n + 1);
	return rc;
}

static struct meth_ent *method_get(jmethodID m)
{
	size_t i;

	if (meth_n * 2 >= meth_cap) {
		struct meth_ent *old = methods;
		size_t ocap = meth_cap;

		if (meth_n >= MAX_METHODS || grow((void **)&methods, &meth_cap, sizeof(*methods))) {
			methods = old;
			meth_cap = ocap;
			if (meth_n >= MAX_METHODS || !methods) {
				names_dropped++;
				return NULL;
			}
		} else {
			for (size_t j = 0; j < ocap; j++) {
				if (!old[j].m)
					continue;
				for (i = hash_ptr(old[j].m) & (meth_cap - 1); methods[i].m;
				     i = (i + 1) & (meth_cap - 1))
					;
				methods[i] = old[j];
			}
			free(old);
		}
	}
	for (i = hash_ptr(m) & (meth_cap - 1); methods[i].m; i = (i + 1) & (meth_cap - 1))
		if (methods[i].m == m)
			return &methods[i];
	methods[i].m = m;
	methods[i].id = (uint32_t)++meth_n;
	if (method_define(&methods[i]))
		return NULL;
	return &methods[i];
}

static int32_t line_of(const struct meth_ent *e, jlocation bci)
{
	int32_t line = -1;
	jlocation best = -1;

	for (jint i = 0; i < e->nlines; i++)
		if (e->lines[i].start_location <= bci && e->lines[i].start_location > best) {
			best = e->lines[i].start_location;
			line = e->lines[i].line_number;
		}
	return line;
}

/* Encode one published sample (names first, then the ALLOC record). */
static int encode_alloc(const struct sample_slot *s)
{
	struct {
		struct mt_ap_alloc a;
		struct mt_ap_frame f[MT_AP_MAX_DEPTH];
	} b;
	uint32_t cid;

	cid = class_id(s->cls);
	b.a = (struct mt_ap_alloc){ .id = s->id, .size = s->size, .ts_ns = s->ts_ns,
				    .depth = s->depth };
	for (unsigned i = 0; i < s->depth; i++) {
		struct meth_ent *e = method_get(s->methods[i]);

		b.f[i].method = e ? e->id : 0;
		b.f[i].line = e ? line_of(e, s->bcis[i]) : -1;
	}
	return put(MT_AP_REC_ALLOC, cid, &b,
		   sizeof(b.a) + s->depth * sizeof(struct mt_ap_frame));
}

void stream_stats(struct mt_ap_sample_stats *st)
{
	st->sampled = atomic_load(&smp.st.sampled);
	st->dropped_allocs = atomic_load(&smp.st.dropped_allocs);
	st->dropped_frees = atomic_load(&smp.st.dropped_frees);
	st->dropped_gcs = atomic_load(&smp.st.dropped_gcs);
	st->frees = atomic_load(&smp.st.frees);
	st->gcs = atomic_load(&smp.st.gcs);
	st->tag_errors = atomic_load(&smp.st.tag_errors);
	st->names_dropped = names_dropped;
}

int stream_drain(int (*emit)(unsigned type, const void *payload, size_t len), bool stats)
{
	uint64_t ids[FREES_PER_REC];
	unsigned nf = 0, fcount, rec = 0;
	bool allocs_done;

	if (!smp.allocs)
		return 0;
	emit_fn = emit;
	emitted = 0;
	pay_len = 0;
	/* GC records: single consumer of the GC callback's ring */
	for (;;) {
		unsigned r = atomic_load_explicit(&smp.g_r, memory_order_relaxed);
		unsigned w = atomic_load_explicit(&smp.g_w, memory_order_acquire);

		if (r == w)
			break;
		if (put(MT_AP_REC_GC, 0, &smp.gcs[r % SAMPLER_GC_RING], sizeof(struct mt_ap_gc)))
			return -1;
		atomic_store_explicit(&smp.g_r, r + 1, memory_order_release);
		rec++;
	}
	/*
	 * Frees seen now belong to samples reserved before now: drain the
	 * allocs first and send these frees only if every slot reserved up to
	 * now was drained (a free never precedes its sample in the stream).
	 */
	pthread_mutex_lock(&smp.lock);
	fcount = smp.f_count;
	unsigned pending = smp.a_count;
	pthread_mutex_unlock(&smp.lock);
	while (pending && emitted < 256 * 1024) {
		struct sample_slot *s = &smp.allocs[smp.a_head];

		if (!atomic_load_explicit(&s->ready, memory_order_acquire))
			break;
		if (s->id && encode_alloc(s))
			return -1;
		rec++;
		pthread_mutex_lock(&smp.lock);
		smp.a_head = (smp.a_head + 1) % smp.a_cap;
		smp.a_count--;
		pthread_mutex_unlock(&smp.lock);
		pending--;
	}
	allocs_done = pending == 0;
	for (unsigned i = 0; allocs_done && i < fcount; i++) {
		pthread_mutex_lock(&smp.lock);
		ids[nf++] = smp.frees[smp.f_head];
		smp.f_head = (smp.f_head + 1) % smp.f_cap;
		smp.f_count--;
		pthread_mutex_unlock(&smp.lock);
		if (nf == FREES_PER_REC || i + 1 == fcount) {
			if (put(MT_AP_REC_FREE, nf, ids, nf * sizeof(ids[0])))
				return -1;
			nf = 0;
			rec++;
		}
	}
	if (stats) {
		struct mt_ap_sample_stats st;

		stream_stats(&st);
		if (put(MT_AP_REC_STATS, 0, &st, sizeof(st)))
			return -1;
	}
	if (flush())
		return -1;
	return (int)rec;
}

/* stream_empty - nothing is left in the rings. */
bool stream_empty(void)
{
	bool empty;

	if (!smp.allocs)
		return true;
	pthread_mutex_lock(&smp.lock);
	empty = !smp.a_count && !smp.f_count;
	pthread_mutex_unlock(&smp.lock);
	return empty && atomic_load(&smp.g_r) == atomic_load(&smp.g_w);
}

void stream_reset(void)
{
	for (size_t i = 0; i < cls_cap; i++)
		free(classes[i].sig);
	for (size_t i = 0; i < meth_cap; i++)
		if (methods[i].lines)
			(*agent.jvmti)->Deallocate(agent.jvmti, (unsigned char *)methods[i].lines);
	free(classes);
	free(methods);
	classes = NULL;
	methods = NULL;
	cls_cap = cls_n = meth_cap = meth_n = 0;
	names_dropped = 0;
	pay_len = 0;
}
