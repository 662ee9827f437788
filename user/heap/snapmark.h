/* snapmark.h - a snapshot from the frozen copy's own mark of the heap
 * (MT_AP_FREEZE_MARK; the marker is user/agent/heapmark.c): its records read
 * out of the copy in bulk, with the ids the marker gave (an object's rank in
 * address order, or a named object's own), and the class objects it met
 * that the agent had not named - hidden classes, array classes - named from
 * their Klass, as the JVM spells them. */
#ifndef MEMTRACE_SNAPMARK_H
#define MEMTRACE_SNAPMARK_H

#include <stddef.h>

#include "heap/snapshot.h"

struct mt_proc;
struct mt_vmstructs;

/*
 * snapmark_read - read the records s->mark names out of JVM @p's frozen copy
 * (s->freeze.child_pid) into @s's arrays, and give every class the records
 * use a class record (named through @vs, the JVM's tables; by address when
 * NULL). Returns 0, or -errno with the reason in @why (nothing
 * printed).
 */
int snapmark_read(const struct mt_proc *p, const struct mt_vmstructs *vs, struct mt_snapshot *s,
		  char *why, size_t n);

/*
 * snapmark_pull - while the copy writes its records (s->has_live): read
 * those written since the last pull into s->live_objs and live_refs, kept
 * only when the copy did not move its arrays meanwhile; the first time the
 * copy has sized its arrays (its mark done, no record written yet), their
 * sizes into s->live_sized_objs and live_sized_refs. Returns 0, or
 * -errno (then the caller stops pulling: s->has_live false, what was kept
 * stays).
 */
int snapmark_pull(struct mt_snapshot *s);
/*
 * snapmark_live_done - DONE: no more pulls. When the copy's own mark went
 * through (s->mark ok, no COPY record) and @s holds no object or reference
 * yet, what was pulled becomes s->objs and s->refs, and snapmark_read()
 * reads the rest (s->live_pulls stays non-zero); otherwise it is freed and
 * live_pulls zeroed (the records come another way, or all of them later).
 */
void snapmark_live_done(struct mt_snapshot *s);

/*
 * snapmark_sized_refs - pure: the references (CLASS ones apart, as the
 * memory bounds count them, heap/heapmem.h) the copy sized its array for,
 * from its struct mt_ap_hlive @a: by position (asked by @s, and the copy
 * mapped the pool) the array has room for a CLASS reference an object too.
 */
uint64_t snapmark_sized_refs(const struct mt_snapshot *s, const struct mt_ap_hlive *a);

/*
 * snapmark_refs_by_id - references by position (MT_AP_REFS_POS: @n records
 * @in, read out of the copy rather than used where they lie) into s->refs
 * (grown; the caller keeps @in) as references by id: s->objs' flags count
 * each object's, its id the referrer's, each target's id its object's; the
 * flags then cleared, but MT_AP_HOBJ_CLASSREF where MT_AP_HOBJ_POS_CLASS
 * said an object's CLASS reference is implied (MT_AP_REFS_POS_NOCLASS).
 * Returns 0, -ENOMEM, or -EPROTO (counts or positions that do not fit the
 * objects).
 */
int snapmark_refs_by_id(struct mt_snapshot *s, const struct mt_ap_hrefpos *in, size_t n);

/* snapmark_readv - read @len bytes at @addr of process @pid into @buf, in
 * large pieces (process_vm_readv). Returns 0 or -errno. */
int snapmark_readv(int pid, void *buf, size_t len, uint64_t addr);

#endif
