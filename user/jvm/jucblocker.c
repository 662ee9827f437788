// SPDX-License-Identifier: GPL-2.0
/* jucblocker.c - what a java.util.concurrent blocker is; see jucblocker.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/jucblocker.h"
#include "jvm/klassname.h"
#include "jvm/vmstructs.h"

#define JUC "java/util/concurrent/locks/"

/* The classes a blocker's superclass chain is matched against. */
enum {
	C_AOS,        /* AbstractOwnableSynchronizer: exclusiveOwnerThread */
	C_RL,         /* ReentrantLock$Sync */
	C_RRWL,       /* ReentrantReadWriteLock$Sync: AbstractQueuedSynchronizer.state */
	C_COND,       /* AbstractQueuedSynchronizer$ConditionObject: this$0 */
	C_LCOND,      /* AbstractQueuedLongSynchronizer$ConditionObject: this$0 */
	C_LONG,       /* AbstractQueuedLongSynchronizer: a long state (JDK 22+'s read-write lock) */
	C_N,
};

static const char *const class_names[C_N] = {
	[C_AOS] = JUC "AbstractOwnableSynchronizer",
	[C_RL] = JUC "ReentrantLock$Sync",
	[C_RRWL] = JUC "ReentrantReadWriteLock$Sync",
	[C_COND] = JUC "AbstractQueuedSynchronizer$ConditionObject",
	[C_LCOND] = JUC "AbstractQueuedLongSynchronizer$ConditionObject",
	[C_LONG] = JUC "AbstractQueuedLongSynchronizer",
};

/* Depth of the superclass chains walked (java.lang.Object is a few up). */
#define MAX_DEPTH 32

struct jucblocker {
	const struct mt_vmstructs *vs;
	const struct jobject_layout *ol;
	struct mt_klass_layout kl;
	bool kl_ok;
	uint32_t f_eetop;
	/* field offsets, found at the first blocker of each class (0: not yet) */
	uint32_t f_owner, f_state, f_lstate, f_cond_outer, f_lcond_outer;
};

struct jucblocker *jucblocker_new(const struct mt_vmstructs *vs, const struct jobject_layout *ol,
				  uint32_t f_eetop)
{
	struct jucblocker *b = calloc(1, sizeof(*b));

	if (!b) {
		errno = ENOMEM;
		return NULL;
	}
	b->vs = vs;
	b->ol = ol;
	b->f_eetop = f_eetop;
	b->kl_ok = !klassname_layout(vs, &b->kl);
	return b;
}

void jucblocker_free(struct jucblocker *b)
{
	free(b);
}

/* The classes of class_names that @k is or extends: a bit per class. */
static unsigned classes_of(struct jucblocker *b, uint64_t k)
{
	unsigned found = 0;
	char name[256];

	for (int depth = 0; b->kl_ok && k && depth < MAX_DEPTH; depth++) {
		if (klassname_read(b->vs, &b->kl, k, false, name, sizeof(name)) >= 0)
			for (int c = 0; c < C_N; c++)
				if (!strcmp(name, class_names[c]))
					found |= 1u << c;
		if (vmstructs_read_ptr(b->vs, k + b->ol->jf.klass_super, &k))
			break;
	}
	return found;
}

/* The offset of field @name of @k (or a superclass) into *@off, looked up
 * once. 0 or -errno. */
static int field(struct jucblocker *b, uint64_t k, const char *name, uint32_t *off)
{
	if (*off)
		return 0;
	return javafield_offset(b->vs, &b->ol->jf, k, name, off);
}

int jucblocker_read(struct jucblocker *b, uint64_t obj, uint64_t klass,
		    struct jucblocker_info *out)
{
	unsigned c = classes_of(b, klass);
	uint64_t owner = 0, lstate = 0;
	int32_t state = 0;
	int err;

	memset(out, 0, sizeof(*out));
	if (c & (1u << C_COND | 1u << C_LCOND)) {
		uint32_t *off = c & 1u << C_COND ? &b->f_cond_outer : &b->f_lcond_outer;

		out->kind = JUCB_CONDITION;
		if ((err = field(b, klass, "this$0", off)))
			return err;
		return jobject_ref(b->vs, b->ol, obj, *off, &out->cond_lock);
	}
	if (!(c & 1u << C_AOS))
		return 0;
	out->kind = c & (1u << C_RL | 1u << C_RRWL) ? JUCB_LOCK : JUCB_OWNABLE;
	if ((err = field(b, klass, "exclusiveOwnerThread", &b->f_owner)) ||
	    (err = jobject_ref(b->vs, b->ol, obj, b->f_owner, &owner)))
		return err;
	if (owner &&
	    (err = vmstructs_read(b->vs, owner + b->f_eetop, &out->owner_jt, sizeof(out->owner_jt))))
		return err;
	if (!(c & 1u << C_RRWL))
		return 0;
	/* ReentrantReadWriteLock.Sync: read holds in the state's upper half - of
	 * an int up to JDK 21 (16 bits), of a long since (32 bits) */
	if (c & 1u << C_LONG) {
		if ((err = field(b, klass, "state", &b->f_lstate)) ||
		    (err = vmstructs_read(b->vs, obj + b->f_lstate, &lstate, sizeof(lstate))))
			return err;
		out->readers = (uint32_t)(lstate >> 32);
		return 0;
	}
	if ((err = field(b, klass, "state", &b->f_state)) ||
	    (err = vmstructs_read(b->vs, obj + b->f_state, &state, sizeof(state))))
		return err;
	out->readers = (uint32_t)state >> 16;
	return 0;
}
