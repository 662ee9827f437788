// SPDX-License-Identifier: GPL-2.0
/*
 * walkvisit.c - the heap walk's JVMTI callbacks (walkvisit.h): the VM thread
 * calls them inside the pause (or in the frozen copy, walkcopy.c); they only
 * append records to the walk's vectors (no JNI, no JVMTI, no socket) and
 * abort the walk after max_pause_ms if asked.
 *
 * Untagged walks tell objects apart by their addresses, which cannot change
 * during the pause. JVMTI does not give the callback an object's address;
 * HotSpot's CallbackWrapper keeps it on the VM thread's stack next to the
 * tag it passes: (oop, size, tag) for the referee, (oop, tag) for the
 * referrer - the same on JDK 17.0.15 and 25.0.3 (read from their libjvm's
 * machine code, and the source of 17u). At the pause's first callback the
 * named objects' addresses are read through their local references (a
 * HotSpot local reference points at a slot holding the address). The agent
 * never dereferences an object; addresses are only keys. It checks the
 * layout on every callback (the word before the tag must be the size JVMTI
 * passes, the oop aligned and non-null); a failed check counts in
 * hw.layout_bad and the driver walks again with tags (heapwalk.c).
 *
 * Tagged walks (KEEPIDS) give every object a tag in the session's env (id
 * << 1) and record objects and references by tag; "recorded in this walk"
 * is the session's bitmap indexed by id.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "freeze.h"
#include "heapmark.h"
#include "walkfields.h"
#include "walkmark.h"
#include "walkstate.h"
#include "walkvisit.h"

/* Was id recorded in this walk? Marks it recorded. Out of memory for the
 * bitmap counts as "recorded" (nothing is sent twice) and ends the walk. */
static bool test_and_mark(uint64_t id)
{
	size_t w = (size_t)(id >> 6);
	uint64_t m = 1ull << (id & 63);
	bool was;

	if (w >= hs.nwords) {
		size_t nw = hs.nwords ? hs.nwords : 1024;
		uint64_t *nb;

		while (nw <= w)
			nw *= 2;
		nb = realloc(hs.bits, nw * sizeof(*nb));
		if (!nb) {
			hs.bits_oom = true;
			return true;
		}
		memset(nb + hs.nwords, 0, (nw - hs.nwords) * sizeof(*nb));
		hs.bits = nb;
		hs.nwords = nw;
	}
	was = hs.bits[w] & m;
	hs.bits[w] |= m;
	return was;
}

static bool recorded(uint64_t id)
{
	size_t w = (size_t)(id >> 6);

	return w < hs.nwords && (hs.bits[w] & (1ull << (id & 63)));
}

/* The id of an object, recording it the first time the walk meets it. */
static uint64_t seen(jlong *tag_ptr, jlong class_tag, jlong size, jint length)
{
	uint64_t t = (uint64_t)*tag_ptr;
	struct mt_ap_hobj *o;

	if (!t) {
		t = walkstate_new_tag();
		*tag_ptr = (jlong)t;
	}
	if (test_and_mark(t >> 1))
		return t >> 1;
	o = walkvec_push(&hw.objs);
	if (o) {
		o->id = t >> 1;
		o->cls = (uint64_t)class_tag >> 1;
		o->size = (uint64_t)size;
		o->length = length;
		o->flags = 0;
		hw.done.bytes += (uint64_t)size;
	}
	return t >> 1;
}

static bool over_time(void)
{
	if (!(hw.flags & MT_AP_HEAP_MAXPAUSE))
		return false;
	if (hw.aborted)
		return true;
	if ((++hw.calls & 255) == 0 || hw.deadline_ns == hw.t0) {
		if (agent_mono_ns() >= hw.deadline_ns)
			hw.aborted = true;
	}
	return hw.aborted;
}

/* The start of every reference callback: false when the walk must stop (over
 * --max-pause, out of memory); the GC count is read once, inside the pause,
 * where no GC can finish until it ends. */
static bool walk_goes_on(void)
{
	if (over_time() || walkstate_oom()) {
		hw.aborted = true;
		return false;
	}
	if (!hw.gcs_read) {
		hw.gcs = atomic_load(&hs_gcs);
		hw.gcs_read = true;
	}
	return true;
}

/* Is this root one of the agent's own JNI local references (those that keep
 * the named classes, loaders and threads over an untagged walk's pause)?
 * Not a root of the application: left out of the roots sent. */
static bool own_local(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info)
{
	return kind == JVMTI_HEAP_REFERENCE_JNI_LOCAL && hw.own_tid >= 0 &&
	       info->jni_local.thread_id == hw.own_tid;
}

/* Is a root of @kind an unmounted virtual thread's local? JVMTI (JDK 21+)
 * reports those when the walk visits the thread object, after every other
 * root and with no THREAD root before them. */
static bool vthread_local(jvmtiHeapReferenceKind kind)
{
	return hw.objects_began && (kind == JVMTI_HEAP_REFERENCE_STACK_LOCAL ||
				    kind == JVMTI_HEAP_REFERENCE_JNI_LOCAL);
}

/* The thread a root is a local of, as JVMTI says (JDK 21+: a virtual
 * thread's own tid for its frames, mounted or not); 0 for other roots. */
static jlong local_tid(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info)
{
	if (!info)
		return 0;
	if (kind == JVMTI_HEAP_REFERENCE_STACK_LOCAL)
		return info->stack_local.thread_id;
	if (kind == JVMTI_HEAP_REFERENCE_JNI_LOCAL)
		return info->jni_local.thread_id;
	return 0;
}

/* Does a root of @kind need a tid marker before it (MT_AP_HROOT_TID: the
 * first local of another thread)? Keeps the thread named last. */
static bool tid_marker(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
		       jlong *tid)
{
	*tid = local_tid(kind, info);
	if (*tid == hw.last_tid)
		return false;
	hw.last_tid = *tid;
	return *tid != 0;
}

/* The index JVMTI gives a reference: field index, array slot, else -1. */
static int32_t ref_index(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info)
{
	if (kind == JVMTI_HEAP_REFERENCE_FIELD || kind == JVMTI_HEAP_REFERENCE_STATIC_FIELD)
		return info->field.index;
	if (kind == JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT)
		return info->array.index;
	return -1;
}

static jint JNICALL on_ref(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			   jlong class_tag, jlong referrer_class_tag, jlong size, jlong *tag_ptr,
			   jlong *referrer_tag_ptr, jint length, void *user_data)
{
	uint64_t to, from;
	int32_t index;

	if (!walk_goes_on())
		return JVMTI_VISIT_ABORT;
	to = seen(tag_ptr, class_tag, size, length);
	if (!referrer_tag_ptr) { /* a heap root */
		if ((hw.flags & MT_AP_HEAP_REFS) && !own_local(kind, info)) {
			struct mt_ap_hroot *r;
			jlong tid;

			if (tid_marker(kind, info, &tid)) {
				r = walkvec_push(&hw.roots);
				if (r)
					*r = (struct mt_ap_hroot){ .to = (uint64_t)tid,
								   .flags = MT_AP_HROOT_TID };
			}
			r = walkvec_push(&hw.roots);
			if (r) {
				r->to = to;
				r->kind = (uint32_t)kind;
				r->flags = vthread_local(kind) ? MT_AP_HROOT_VTHREAD : 0;
			}
		}
		return JVMTI_VISIT_OBJECTS;
	}
	hw.objects_began = true;
	index = ref_index(kind, info);
	if (!(hw.flags & MT_AP_HEAP_REFS) &&
	    !(kind == JVMTI_HEAP_REFERENCE_FIELD &&
	      walkfields_proj_type((uint64_t)referrer_class_tag >> 1, index)))
		return JVMTI_VISIT_OBJECTS;
	/* the referrer was met before (as a root or a referee); if not, record it now */
	from = referrer_tag_ptr == tag_ptr ? to : seen(referrer_tag_ptr, referrer_class_tag, 0, -1);
	{
		struct mt_ap_href *r = walkvec_push(&hw.refs);

		if (r) {
			r->from = from;
			r->to = to;
			r->index = index;
			r->kind = (uint32_t)kind;
		}
	}
	return JVMTI_VISIT_OBJECTS;
}

/*
 * The object of an untagged walk's callback: its id if it has a tag, else
 * MT_AP_HV_ADDR | its address, the word @slot words from tag_ptr in the
 * CallbackWrapper (see the top of the file); 0 if that word is not what it
 * must be, or !@size_ok.
 */
static uint64_t key_at(const jlong *tag_ptr, int slot, bool size_ok)
{
	uint64_t o;

	if (*tag_ptr)
		return (uint64_t)*tag_ptr >> 1;
	o = (uint64_t)tag_ptr[slot];
	if (!size_ok || !o || (o & 7) || (o & MT_AP_HV_ADDR)) {
		hw.layout_bad++;
		return 0;
	}
	if (hw.fz.in_child && hw.fz.zgc.on) /* ZGC: one address per object */
		o = zgc_root(&hw.fz.zgc.refs, o);
	return o | MT_AP_HV_ADDR;
}

/* The referee: (oop, size, tag); @size < 0: the callback passed no size to
 * check against (primitive fields). */
static uint64_t referee_key(const jlong *tag_ptr, jlong size)
{
	return key_at(tag_ptr, hw.oop_slot, size < 0 || tag_ptr[-1] == size);
}

/* The referrer likewise: (oop, tag) in TwoOopCallbackWrapper. */
static uint64_t referrer_key(const jlong *referrer_tag_ptr)
{
	return key_at(referrer_tag_ptr, -1, true);
}

/*
 * The addresses of the named objects (classes, loaders, threads), read from
 * their JNI local references at the pause's first callback: a HotSpot local
 * reference points at a slot holding the object's address (low tag bits 0).
 * Checked after the pause: every CLASS reference must lead to a named class.
 */
static void resolve_named(void)
{
	hw.resolved = true;
	for (size_t i = 0; i < hw.named.n; i++) {
		struct walk_named *nm = &((struct walk_named *)hw.named.p)[i];
		uintptr_t r = (uintptr_t)nm->ref;

		if (!r)
			continue; /* a sampled object: known by its tag */
		if (r & 3) {
			hw.layout_bad++;
			continue;
		}
		nm->addr = *(const volatile uint64_t *)r;
	}
}

/* ZGC, in the copy: the named objects' addresses (read through their JNI
 * references in the pause: JDK 17 colours them) as the mark's canonical ones. */
static void zgc_named(void)
{
	for (size_t i = 0; i < hw.named.n; i++) {
		struct walk_named *nm = &((struct walk_named *)hw.named.p)[i];

		nm->addr = zgc_root(&hw.fz.zgc.refs, nm->addr);
	}
}

/*
 * A frozen walk, at the walk's first callback (a root: the fork comes before
 * any object is visited): true when this process is the JVM and must leave
 * the pause now (the copy walks). A failed fork leaves the walk to the pause.
 */
static bool freeze_here(void)
{
	pid_t pid;

	if (!hw.freezing || hw.fz.forked)
		return false;
	pid = freeze_fork(&hw.fz);
	/* ZGC: the named objects as the copy's mark and memtrace's NAMED records
	 * know them (both processes: the JVM is still in the pause) */
	if (pid >= 0 && (hw.fz.req.flags & MT_AP_FREEZE_ZGC))
		zgc_named();
	if (pid > 0) {
		hw.fz_left = agent_mono_ns(); /* the pause ends right after this return */
		return true;
	}
	if (pid == 0) {
		hw.flags &= ~MT_AP_HEAP_MAXPAUSE; /* the copy pauses nothing */
		return false;
	}
	/* a collector that moves objects outside pauses: its walk in a pause is
	 * memtrace's to consent to, not a fallback */
	if (hw.fz.req.flags & (MT_AP_FREEZE_ZGC | MT_AP_FREEZE_FORWARDING)) {
		hw.freeze_refused = true;
		return true;
	}
	hw.freezing = false;
	return false;
}

/* In the copy, every callback: count it (the JVM's thread watches the count);
 * at the first one between objects (@object_ref), the roots are all in: on
 * JDK 17 clear ObjectMarker::_needs_reset so that the walk's end does not
 * unmark the whole heap (nothing is left to unmark in a copy about to die). */
static void copy_step(bool object_ref)
{
	hw.progress++;
	if (!object_ref || hw.reset_done)
		return;
	hw.reset_done = true;
	if (hw.fz.req.flags & MT_AP_FREEZE_TEST_FAIL)
		_exit(80);
	if (hw.fz.req.flags & MT_AP_FREEZE_TEST_HANG) {
		struct timespec t = { 3600, 0 };

		for (;;)
			nanosleep(&t, NULL);
	}
	if (hw.fz.req.reset_addr) {
		volatile uint8_t *r = (volatile uint8_t *)(uintptr_t)hw.fz.req.reset_addr;

		if (*r == 1)
			*r = 0;
	}
}

/* Is JVMTI index idx projected in some class? (the in-pause prefilter) */
static bool maybe_projected(jint idx)
{
	return (hw.flags & MT_AP_HEAP_ALLFIELDS) ||
	       (idx >= 0 && idx < hw.nprojidx && hw.projidx[idx]);
}

/* An untagged walk's reference callback: append one visit, nothing else. */
static jint JNICALL on_ref_untagged(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
				    jlong class_tag, jlong referrer_class_tag, jlong size,
				    jlong *tag_ptr, jlong *referrer_tag_ptr, jint length,
				    void *user_data)
{
	struct mt_ap_hvisit *v;
	uint64_t to, from = 0;
	int32_t index = -1;
	uint32_t flags = 0;

	if (!walk_goes_on())
		return JVMTI_VISIT_ABORT;
	if (!hw.resolved) /* inside the pause: nothing moves until it ends */
		resolve_named();
	if (freeze_here())
		return JVMTI_VISIT_ABORT; /* the JVM: out of the pause, the copy walks on */
	if (hw.fz.in_child)
		copy_step(referrer_tag_ptr != NULL);
	to = referee_key(tag_ptr, size);
	if (!to || (size & 7) || (size >> 35)) {
		hw.layout_bad += !!to;
		return JVMTI_VISIT_ABORT; /* heap_walk() does it again with tags */
	}
	if (walkmark_active()) { /* the copy keeps the roots and marks from them itself */
		jint r;

		if (referrer_tag_ptr)
			r = walkmark_run();
		else if (!(to & MT_AP_HV_ADDR))
			r = walkmark_broken("a root of the walk has a tag");
		else
			r = own_local(kind, info) ? 0 : walkmark_root(kind, to & ~MT_AP_HV_ADDR);
		if (!hw.comparing)
			return r;
		/* comparing: the visit is recorded as without the mark */
	}
	if (!referrer_tag_ptr) {
		jlong tid;

		if ((hw.flags & MT_AP_HEAP_REFS) && !own_local(kind, info)) {
			flags = MT_AP_HV_KEEP | (vthread_local(kind) ? MT_AP_HV_VTHREAD : 0);
			if (tid_marker(kind, info, &tid)) {
				v = walkvec_push(&hw.visits);
				if (!v)
					return JVMTI_VISIT_ABORT;
				*v = (struct mt_ap_hvisit){ .to = (uint64_t)tid, .index = -1,
							    .length = -1, .kind = MT_AP_HV_TID };
			}
		}
	} else {
		hw.objects_began = true;
		index = ref_index(kind, info);
		if (hw.flags & MT_AP_HEAP_REFS)
			flags = MT_AP_HV_KEEP;
		else if (kind == JVMTI_HEAP_REFERENCE_FIELD && maybe_projected(index))
			flags = MT_AP_HV_MAYBE;
		if (flags || kind == JVMTI_HEAP_REFERENCE_CLASS) { /* CLASS: the referrer's class */
			from = referrer_tag_ptr == tag_ptr ? to : referrer_key(referrer_tag_ptr);
			if (!from)
				return JVMTI_VISIT_ABORT;
		}
	}
	v = walkvec_push(&hw.visits);
	if (!v)
		return JVMTI_VISIT_ABORT;
	v->to = to;
	v->from = from;
	v->size8 = (uint32_t)(size >> 3);
	v->length = length;
	v->index = index;
	v->kind = (uint32_t)kind | flags;
	return JVMTI_VISIT_OBJECTS;
}

static jint JNICALL on_prim(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			    jlong object_class_tag, jlong *object_tag_ptr, jvalue value,
			    jvmtiPrimitiveType value_type, void *user_data)
{
	struct mt_ap_hprim *p;
	int want;

	if (hw.fz.in_child)
		copy_step(true);
	if (walkmark_active() && walkmark_run() == JVMTI_VISIT_ABORT)
		return JVMTI_VISIT_ABORT;
	if (kind != JVMTI_HEAP_REFERENCE_FIELD)
		return 0;
	if (hw.untagged) { /* the object's class is known after the pause: checked then */
		if (!maybe_projected(info->field.index))
			return 0;
	} else {
		want = walkfields_proj_type((uint64_t)object_class_tag >> 1, info->field.index);
		if (!want)
			return 0;
		if (want != (int)value_type) {
			hw.done.mismatches++;
			return 0;
		}
	}
	p = walkvec_push(&hw.prims);
	if (!p)
		return 0;
	if (hw.untagged) {
		p->obj = referee_key(object_tag_ptr, -1); /* checked after the pause */
		if (!p->obj) {
			hw.prims.n--;
			return JVMTI_VISIT_ABORT;
		}
	} else {
		p->obj = (uint64_t)*object_tag_ptr >> 1;
	}
	p->bits = 0;
	memcpy(&p->bits, &value, sizeof(value) < 8 ? sizeof(value) : 8);
	switch (value_type) { /* normalise to 64-bit integers / a double */
	case JVMTI_PRIMITIVE_TYPE_BOOLEAN: p->bits = value.z; break;
	case JVMTI_PRIMITIVE_TYPE_BYTE: p->bits = (uint64_t)(int64_t)value.b; break;
	case JVMTI_PRIMITIVE_TYPE_CHAR: p->bits = value.c; break;
	case JVMTI_PRIMITIVE_TYPE_SHORT: p->bits = (uint64_t)(int64_t)value.s; break;
	case JVMTI_PRIMITIVE_TYPE_INT: p->bits = (uint64_t)(int64_t)value.i; break;
	case JVMTI_PRIMITIVE_TYPE_LONG: p->bits = (uint64_t)value.j; break;
	case JVMTI_PRIMITIVE_TYPE_FLOAT: { double d = value.f; memcpy(&p->bits, &d, 8); break; }
	case JVMTI_PRIMITIVE_TYPE_DOUBLE: memcpy(&p->bits, &value.d, 8); break;
	}
	p->index = info->field.index;
	p->type = (uint32_t)value_type;
	return 0;
}

static jint JNICALL on_string(jlong class_tag, jlong size, jlong *tag_ptr, const jchar *value,
			      jint value_length, void *user_data)
{
	struct walk_str *s;
	size_t cap = (size_t)(value_length > 0 ? value_length : 0) * 3;
	bool cut = false;

	uint64_t obj;

	if (hw.fz.in_child)
		copy_step(true);
	if (walkmark_active() && walkmark_run() == JVMTI_VISIT_ABORT)
		return JVMTI_VISIT_ABORT;
	if (!(hw.flags & MT_AP_HEAP_STRINGS))
		return 0;
	if (hw.untagged) { /* FollowReferences visits each String once, after its referee callback */
		obj = referee_key(tag_ptr, size);
		if (!obj)
			return JVMTI_VISIT_ABORT;
	} else {
		if (!*tag_ptr || !recorded((uint64_t)*tag_ptr >> 1))
			return 0;
		obj = (uint64_t)*tag_ptr >> 1;
	}
	if (cap > MT_AP_HSTR_MAX)
		cap = MT_AP_HSTR_MAX;
	s = walkvec_push(&hw.strs);
	if (!s)
		return 0;
	s->obj = obj;
	s->utf8 = malloc(cap + 1);
	if (!s->utf8) {
		hw.strs.n--;
		hw.strs.oom = true;
		return 0;
	}
	s->len = (uint32_t)heapmark_utf8(value, (size_t)(value_length > 0 ? value_length : 0),
					 s->utf8, cap, &cut); /* jchar is uint16_t */
	s->utf8[s->len] = '\0';
	if (cut)
		hw.done.truncated++;
	return 0;
}

/* A no-op walk for the benchmark's baseline. */
static jint JNICALL on_ref_bare(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
				jlong class_tag, jlong referrer_class_tag, jlong size,
				jlong *tag_ptr, jlong *referrer_tag_ptr, jint length,
				void *user_data)
{
	return JVMTI_VISIT_OBJECTS;
}

void walkvisit_callbacks(jvmtiHeapCallbacks *cb, const struct mt_ap_heap_request *req)
{
	memset(cb, 0, sizeof(*cb));
	if (req->flags & MT_AP_HEAP_BARE) {
		cb->heap_reference_callback = on_ref_bare;
		return;
	}
	cb->heap_reference_callback = hw.untagged ? on_ref_untagged : on_ref;
	if (req->flags & (MT_AP_HEAP_ALLFIELDS) || req->nfields)
		cb->primitive_field_callback = on_prim;
	if (hw.flags & MT_AP_HEAP_STRINGS)
		cb->string_primitive_value_callback = on_string;
}
