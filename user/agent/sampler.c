// SPDX-License-Identifier: GPL-2.0
/*
 * sampler.c - the agent's allocation sampling: JVMTI callbacks and the
 * bounded rings they fill for the socket thread (stream.c drains them).
 *
 * One sampling session owns its own JVMTI environment: created on START,
 * disposed on STOP, so the tags it set (and its tag map) vanish with it
 * without a heap walk, and the next session's ObjectFree events cannot
 * mention ids of an earlier one.
 *
 * Callbacks never block on the socket and never wait for memtrace:
 *   SampledObjectAlloc (Java thread): reserve a slot in the alloc ring
 *     (mutex, a few instructions), then outside the lock take the stack, the
 *     class signature (from a per-session cache, see class_sig), an id and
 *     the tag, and publish the slot; a full ring counts a drop and the
 *     object is not tagged. No malloc on this path once a class is cached.
 *   ObjectFree (restricted: no JNI): push the tag into the free ring (mutex).
 *   GarbageCollectionFinish (restricted: no JVMTI but raw monitors): atomics
 *     only — a single-producer ring of GC records — then an eventfd write
 *     wakes the socket thread.
 * Every callback holds `inflight` while it touches session state, and checks
 * `active` after taking it; sampler_stop() clears `active`, then waits for
 * `inflight` to reach 0 before freeing the rings and disposing the env.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "sampler.h"

struct sampler smp = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ids only grow, across sessions: allocation order is id order */
static _Atomic uint64_t next_id = 1;

/* Enter a callback: 1 if the session is active (then leave with cb_leave). */
static int cb_enter(void)
{
	atomic_fetch_add(&smp.inflight, 1);
	if (atomic_load(&smp.active))
		return 1;
	atomic_fetch_sub(&smp.inflight, 1);
	return 0;
}

static void cb_leave(void)
{
	atomic_fetch_sub(&smp.inflight, 1);
}

/*
 * Build with -DMT_SAMPLER_PROFILE to time the callback's steps (quartiles
 * logged on the JVM's stderr when sampling stops; bench, not production), and
 * add -DMT_SAMPLER_NOCACHE for the A/B without the class signature cache.
 */
#ifdef MT_SAMPLER_PROFILE
/* per step: a histogram of 32 ns buckets (wall time: a preempted call lands
 * in the tail, so the median is the figure to read on a busy machine) */
enum { P_STACK, P_SIG_HIT, P_SIG_MISS, P_TAG, P_ALL, P_N };
#define P_BUCKETS 2048
static _Atomic uint32_t prof_h[P_N][P_BUCKETS];
#define PROF_T(v) uint64_t v = agent_mono_ns()
#define PROF_ADD(k, t0) prof_add(k, agent_mono_ns() - (t0))
static void prof_add(int k, uint64_t ns)
{
	uint64_t b = ns / 32;

	atomic_fetch_add_explicit(&prof_h[k][b < P_BUCKETS ? b : P_BUCKETS - 1], 1,
				  memory_order_relaxed);
}
static void prof_report(void)
{
	static const char *const what[P_N] = { "GetStackTrace", "class sig (cached)",
						"class sig (lookup)", "SetTag", "callback" };

	for (int k = 0; k < P_N; k++) {
		uint64_t n = 0, c = 0, q[3] = { 0 };

		for (int b = 0; b < P_BUCKETS; b++)
			n += prof_h[k][b];
		for (int b = 0, j = 0; b < P_BUCKETS && j < 3; b++) {
			c += atomic_exchange(&prof_h[k][b], 0);
			while (j < 3 && c * 4 >= n * (uint64_t)(j + 1))
				q[j++] = (uint64_t)b * 32 + 16;
		}
		agent_log("profile: %-20s %8llu calls  p25 %5llu  median %5llu  p75 %5llu ns", what[k],
			  (unsigned long long)n, (unsigned long long)q[0], (unsigned long long)q[1],
			  (unsigned long long)q[2]);
	}
}
#else
#define PROF_T(v) do { } while (0)
#define PROF_ADD(k, t0) do { } while (0)
static void prof_report(void) { }
#endif

/*
 * Class signatures, cached per session. GetClassSignature builds a string
 * and mallocs a copy on every call, and a class tag would cost a tag-map
 * lookup (measured: as slow as the signature). Instead the cache is keyed
 * by the class mirror's identity hash (JVMTI GetObjectHashCode: stable across
 * GCs, no lock) and an entry is trusted only if its weak global reference
 * IsSameObject as the sampled class, so equal hashes never mix classes up
 * and the cache pins no class (an unloaded class's weak ref reads as null).
 * Open addressing, slots claimed by CAS (0 free, 1 being written, 2 ready)
 * and never changed until release() frees the table (callbacks are out).
 * A class that finds no slot within CLASS_PROBES is looked up every time.
 */
#define SAMPLER_CLASS_CACHE 4096 /* slots, a power of two */
#define CLASS_PROBES 8

struct class_sig {
	_Atomic int state;
	jint hash;
	jweak ref;
	unsigned len;                    /* strlen(sig) */
	char sig[sizeof(((struct sample_slot *)0)->cls)];
};

static struct class_sig *csig;

/* The class signature of @klass into @out (truncated like the slot). 0 or -1. */
static int class_sig(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass, char *out, size_t n)
{
	struct class_sig *c, *free_slot = NULL;
	jint hash = 0;
	char *sig = NULL;
	size_t len;
	int expect = 0;

	PROF_T(t0);
#ifdef MT_SAMPLER_NOCACHE /* A/B: the lookup on every sample, as before */
	hash = 0;
#else
	if ((*jvmti)->GetObjectHashCode(jvmti, klass, &hash))
		hash = 0;
#endif
	for (unsigned k = 0; hash && k < CLASS_PROBES; k++) {
		c = &csig[((unsigned)hash + k) & (SAMPLER_CLASS_CACHE - 1)];
		int st = atomic_load_explicit(&c->state, memory_order_acquire);

		if (st == 0) {
			free_slot = c;
			break;
		}
		if (st == 2 && c->hash == hash && (*jni)->IsSameObject(jni, c->ref, klass)) {
			memcpy(out, c->sig, c->len + 1);
			PROF_ADD(P_SIG_HIT, t0);
			return 0;
		}
	}
	if ((*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL))
		return -1;
	len = strlen(sig);
	if (len >= n)
		len = n - 1;
	memcpy(out, sig, len);
	out[len] = '\0';
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	/* two threads may cache one class twice: both entries are right */
	if (free_slot && atomic_compare_exchange_strong(&free_slot->state, &expect, 1)) {
		free_slot->ref = (*jni)->NewWeakGlobalRef(jni, klass);
		free_slot->hash = hash;
		memcpy(free_slot->sig, out, len + 1);
		free_slot->len = (unsigned)len;
		/* without a ref the slot stays claimed and unused (1) */
		if (free_slot->ref)
			atomic_store_explicit(&free_slot->state, 2, memory_order_release);
	}
	PROF_ADD(P_SIG_MISS, t0);
	return 0;
}

/*
 * Cost per sample, in order: GetStackTrace, the cached class signature,
 * SetTag, one clock read. The mutex covers only the slot reservation (a few
 * instructions); no malloc, no formatting.
 */
static void JNICALL on_sampled_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
				     jobject object, jclass klass, jlong size)
{
	jvmtiFrameInfo frames[MT_AP_MAX_DEPTH];
	struct sample_slot *s;
	jint depth = 0;
	unsigned idx;

	if (!cb_enter())
		return;
	PROF_T(t_all);
	/* reserve first: a sample we cannot keep is not tagged (no orphan frees) */
	pthread_mutex_lock(&smp.lock);
	if (smp.a_count == smp.a_cap) {
		pthread_mutex_unlock(&smp.lock);
		atomic_fetch_add(&smp.st.dropped_allocs, 1);
		cb_leave();
		return;
	}
	idx = smp.a_head + smp.a_count;
	if (idx >= smp.a_cap)
		idx -= smp.a_cap;
	smp.a_count++;
	s = &smp.allocs[idx];
	/* under the lock: the drainer must not see the slot's previous `ready` */
	atomic_store_explicit(&s->ready, 0, memory_order_relaxed);
	pthread_mutex_unlock(&smp.lock);

	s->id = 0; /* 0: skip this slot (a JVMTI call failed) */
	PROF_T(t_stack);
	if ((*jvmti)->GetStackTrace(jvmti, NULL, 0, smp.max_depth, frames, &depth)) {
		atomic_fetch_add_explicit(&smp.st.tag_errors, 1, memory_order_relaxed);
		goto publish;
	}
	PROF_ADD(P_STACK, t_stack);
	if (class_sig(jvmti, jni, klass, s->cls, sizeof(s->cls))) {
		atomic_fetch_add_explicit(&smp.st.tag_errors, 1, memory_order_relaxed);
		goto publish;
	}
	s->id = atomic_fetch_add(&next_id, 1);
	PROF_T(t_tag);
	if ((*jvmti)->SetTag(jvmti, object, (jlong)s->id)) {
		atomic_fetch_add_explicit(&smp.st.tag_errors, 1, memory_order_relaxed);
		s->id = 0;
		goto publish;
	}
	s->size = (uint64_t)size;
	s->ts_ns = agent_mono_ns();
	s->depth = (unsigned)depth;
	for (jint i = 0; i < depth; i++) {
		s->methods[i] = frames[i].method;
		s->bcis[i] = frames[i].location;
	}
	PROF_ADD(P_TAG, t_tag);
	atomic_fetch_add_explicit(&smp.st.sampled, 1, memory_order_relaxed);
publish:
	atomic_store_explicit(&s->ready, 1, memory_order_release);
	PROF_ADD(P_ALL, t_all);
	cb_leave();
}

static void JNICALL on_object_free(jvmtiEnv *jvmti, jlong tag)
{
	if (!cb_enter())
		return;
	pthread_mutex_lock(&smp.lock);
	if (smp.f_count == smp.f_cap) {
		atomic_fetch_add(&smp.st.dropped_frees, 1);
	} else {
		smp.frees[(smp.f_head + smp.f_count) % smp.f_cap] = (uint64_t)tag;
		smp.f_count++;
		atomic_fetch_add(&smp.st.frees, 1);
	}
	pthread_mutex_unlock(&smp.lock);
	cb_leave();
}

/* Restricted context: atomics and one write(2) only. GCs finish one at a time. */
static void JNICALL on_gc_finish(jvmtiEnv *jvmti)
{
	unsigned w, r;

	if (!cb_enter())
		return;
	w = atomic_load_explicit(&smp.g_w, memory_order_relaxed);
	r = atomic_load_explicit(&smp.g_r, memory_order_acquire);
	smp.gc_no++;
	if (w - r >= SAMPLER_GC_RING) {
		atomic_fetch_add(&smp.st.dropped_gcs, 1);
	} else {
		struct mt_ap_gc *g = &smp.gcs[w % SAMPLER_GC_RING];

		g->gc_no = smp.gc_no;
		g->next_id = atomic_load(&next_id);
		g->end_ns = agent_mono_ns();
		g->reserved = 0;
		atomic_store_explicit(&smp.g_w, w + 1, memory_order_release);
		atomic_fetch_add(&smp.st.gcs, 1);
	}
	agent_wake();
	cb_leave();
}

/* Release what sampler_start built. Callbacks are out (inflight 0). */
static void release(void)
{
	free(smp.allocs);
	free(smp.frees);
	smp.allocs = NULL;
	smp.frees = NULL;
	smp.a_cap = smp.a_head = smp.a_count = 0;
	smp.f_cap = smp.f_head = smp.f_count = 0;
	if (csig && agent.jni)
		for (size_t i = 0; i < SAMPLER_CLASS_CACHE; i++)
			if (atomic_load(&csig[i].state) == 2)
				(*agent.jni)->DeleteWeakGlobalRef(agent.jni, csig[i].ref);
	free(csig);
	csig = NULL;
	if (smp.env)
		(*smp.env)->DisposeEnvironment(smp.env);
	smp.env = NULL;
}

int sampler_start(const struct mt_ap_sample_start *req, struct mt_ap_sample_started *out,
		  char *why, size_t n)
{
	jvmtiCapabilities caps = {
		.can_generate_sampled_object_alloc_events = 1,
		.can_generate_object_free_events = 1,
		.can_generate_garbage_collection_events = 1,
		.can_tag_objects = 1,
	};
	jvmtiEventCallbacks cb = {
		.SampledObjectAlloc = on_sampled_alloc,
		.ObjectFree = on_object_free,
		.GarbageCollectionFinish = on_gc_finish,
	};
	static const jvmtiEvent events[] = {
		JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, JVMTI_EVENT_OBJECT_FREE,
		JVMTI_EVENT_SAMPLED_OBJECT_ALLOC,
	};
	jvmtiError e;

	jvmtiCapabilities lines = { .can_get_line_numbers = 1 };

	if (smp.env) {
		snprintf(why, n, "sampling is already on in this session");
		return -EALREADY;
	}
	/* the socket thread resolves line numbers with the agent's main env */
	(*agent.jvmti)->AddCapabilities(agent.jvmti, &lines);
	if ((*agent.vm)->GetEnv(agent.vm, (void **)&smp.env, JVMTI_VERSION_11) != JNI_OK) {
		smp.env = NULL;
		snprintf(why, n, "no JVMTI 11 environment (JDK 11+ needed for allocation sampling)");
		return -ENOTSUP;
	}
	e = (*smp.env)->AddCapabilities(smp.env, &caps);
	if (e) {
		snprintf(why, n, "JVMTI refused the sampling capabilities (error %d)", (int)e);
		goto fail;
	}
	smp.a_cap = SAMPLER_ALLOC_RING;
	smp.f_cap = SAMPLER_FREE_RING;
	smp.allocs = calloc(smp.a_cap, sizeof(*smp.allocs));
	smp.frees = calloc(smp.f_cap, sizeof(*smp.frees));
	csig = calloc(SAMPLER_CLASS_CACHE, sizeof(*csig));
	if (!smp.allocs || !smp.frees || !csig) {
		snprintf(why, n, "out of memory for the sample rings");
		e = JVMTI_ERROR_OUT_OF_MEMORY;
		goto fail;
	}
	memset(&smp.st, 0, sizeof(smp.st));
	smp.gc_no = 0;
	atomic_store(&smp.g_r, 0);
	atomic_store(&smp.g_w, 0);
	smp.max_depth = req->max_depth;
	smp.interval = req->interval;
	e = (*smp.env)->SetEventCallbacks(smp.env, &cb, sizeof(cb));
	if (!e)
		e = (*smp.env)->SetHeapSamplingInterval(smp.env, (jint)req->interval);
	if (e) {
		snprintf(why, n, "JVMTI SetEventCallbacks/SetHeapSamplingInterval failed (error %d)",
			 (int)e);
		goto fail;
	}
	out->rec_version = MT_AP_REC_VERSION;
	out->max_depth = req->max_depth;
	out->interval = req->interval;
	out->first_id = atomic_load(&next_id);
	out->start_ns = agent_mono_ns();
	atomic_store(&smp.active, 1);
	for (size_t i = 0; i < MT_ARRAY_SIZE(events); i++) {
		e = (*smp.env)->SetEventNotificationMode(smp.env, JVMTI_ENABLE, events[i], NULL);
		if (e) {
			snprintf(why, n, "JVMTI cannot enable event %d (error %d)", (int)events[i],
				 (int)e);
			sampler_release();
			return -EIO;
		}
	}
	return 0;
fail:
	release();
	return -EIO;
}

void sampler_quiesce(void)
{
	if (!smp.env || !atomic_load(&smp.active))
		return;
	/* sampling off first, then the other events; HotSpot's default interval back */
	(*smp.env)->SetEventNotificationMode(smp.env, JVMTI_DISABLE,
					     JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
	(*smp.env)->SetEventNotificationMode(smp.env, JVMTI_DISABLE, JVMTI_EVENT_OBJECT_FREE, NULL);
	(*smp.env)->SetEventNotificationMode(smp.env, JVMTI_DISABLE,
					     JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL);
	(*smp.env)->SetHeapSamplingInterval(smp.env, (jint)MT_AP_DEFAULT_INTERVAL);
	atomic_store(&smp.active, 0);
	prof_report();
	/* callbacks already inside finish their (short, non-blocking) work */
	for (int i = 0; i < 2000 && atomic_load(&smp.inflight); i++)
		usleep(1000);
	if (atomic_load(&smp.inflight)) {
		/* never free what a callback may still touch: leak it instead */
		agent_log("a sampling callback is still running after 2 s; its rings are kept");
		smp.allocs = NULL;
		smp.frees = NULL;
		csig = NULL;
		smp.a_count = smp.f_count = 0;
	}
}

void sampler_release(void)
{
	sampler_quiesce();
	release();
}

bool sampler_active(void)
{
	return smp.env != NULL;
}
