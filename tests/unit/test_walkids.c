// SPDX-License-Identifier: GPL-2.0
/* test_walkids - an untagged walk's keys become ids (user/heap/walkids.c): first-met
 * order from NAMED's next_id, classes from CLASS references, projected FIELD
 * references and values, and the layout checks that send memtrace back to a
 * tagged walk. The visits are what the agent records for this heap:
 *   java.lang.Class (id 10, mirror at 0x1000), Node (id 11, mirror at 0x1010;
 *   fields next idx 0 'L', val idx 1 'I'), a thread object (id 12, at 0x2000);
 *   roots: the thread (THREAD), Node n1 at 0x3000 (JNI_GLOBAL);
 *   n1 -> Node class (CLASS), n1.next = n2 at 0x3020, n2 -> Node class,
 *   n2.next = n1, n1 -> n1's class again is not reported twice. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "heap/snapshot.h"
#include "heap/walkids.h"

#define A(x) (MT_AP_HV_ADDR | (x))
enum { CLASS = 1, FIELD = 8, JNI_GLOBAL = 21, THREAD = 26 };

static void fill(struct mt_snapshot *s, uint32_t field_flag)
{
	static const struct mt_ap_hnamed named[] = {
		{ 0x1000, 10 }, { 0x1010, 11 }, { 0x2000, 12 },
	};
	struct mt_ap_hvisit v[] = {
		{ A(0x2000), 0, 4, -1, -1, THREAD | MT_AP_HV_KEEP },
		{ A(0x3000), 0, 3, -1, -1, JNI_GLOBAL | MT_AP_HV_KEEP },
		{ A(0x1010), A(0x3000), 60, -1, -1, CLASS },       /* n1's class */
		{ A(0x3020), A(0x3000), 3, -1, 0, FIELD | field_flag }, /* n1.next */
		{ A(0x1010), A(0x3020), 60, -1, -1, CLASS },       /* n2's class */
		{ A(0x3000), A(0x3020), 3, -1, 0, FIELD | field_flag }, /* n2.next */
	};
	struct mt_snap_field *nf = calloc(2, sizeof(*nf));

	snapshot_init(s);
	assert_non_null(nf);
	nf[0] = (struct mt_snap_field){ .index = 0, .type = 'L', .name = "next" };
	nf[1] = (struct mt_snap_field){ .index = 1, .type = 'I', .name = "val" };
	s->classes = calloc(2, sizeof(*s->classes));
	assert_non_null(s->classes);
	s->classes[0] = (struct mt_snap_class){ .id = 10, .sig = "Ljava/lang/Class;" };
	s->classes[1] = (struct mt_snap_class){ .id = 11, .sig = "LNode;", .fields = nf, .nfields = 2 };
	s->nclasses = s->cap_classes = 2;
	s->named = malloc(sizeof(named));
	s->visits = malloc(sizeof(v));
	s->prims = calloc(2, sizeof(*s->prims));
	assert_non_null(s->named);
	assert_non_null(s->visits);
	assert_non_null(s->prims);
	memcpy(s->named, named, sizeof(named));
	memcpy(s->visits, v, sizeof(v));
	s->nnamed = s->cap_named = 3;
	s->nvisits = s->cap_visits = sizeof(v) / sizeof(v[0]);
	s->named_next = 13;
	/* n1.val = 5 (int), and a value whose type disagrees with the field */
	s->prims[0] = (struct mt_ap_hprim){ .obj = A(0x3000), .bits = 5, .index = 1, .type = 'I' };
	s->prims[1] = (struct mt_ap_hprim){ .obj = A(0x3020), .bits = 6, .index = 1, .type = 'J' };
	s->nprims = s->cap_prims = 2;
}

static void test_resolve_all(void **state)
{
	struct mt_snapshot s;
	char why[128] = "";

	fill(&s, MT_AP_HV_KEEP);
	s.visits[1].kind |= MT_AP_HV_VTHREAD; /* as an unmounted virtual thread's local */
	assert_int_equal(walkids_resolve(&s, NULL, 0, why, sizeof(why)), 0);
	/* objects in first-met order: thread (named 12), n1 = 13, Node class (11), n2 = 14 */
	assert_int_equal(s.nobjs, 4);
	assert_int_equal(s.objs[0].id, 12);
	assert_int_equal(s.objs[1].id, 13);
	assert_int_equal(s.objs[1].cls, 11);
	assert_int_equal(s.objs[1].size, 24);
	assert_int_equal(s.objs[2].id, 11);
	assert_int_equal(s.objs[2].cls, 10); /* a class object is a java.lang.Class */
	assert_int_equal(s.objs[2].size, 480);
	assert_int_equal(s.objs[3].id, 14);
	assert_int_equal(s.objs[3].cls, 11);
	assert_int_equal(s.objs[0].cls, 0); /* never visited: no CLASS reference */
	assert_int_equal(s.info.bytes, 32 + 24 + 480 + 24);
	/* roots and references with ids */
	assert_int_equal(s.nroots, 2);
	assert_int_equal(s.roots[0].to, 12);
	assert_int_equal(s.roots[0].kind, THREAD);
	assert_int_equal(s.roots[1].to, 13);
	assert_int_equal(s.roots[1].kind, JNI_GLOBAL);
	assert_int_equal(s.roots[0].flags, 0);
	assert_int_equal(s.roots[1].flags, MT_AP_HROOT_VTHREAD);
	assert_int_equal(s.nrefs, 2);
	assert_int_equal(s.refs[0].from, 13);
	assert_int_equal(s.refs[0].to, 14);
	assert_int_equal(s.refs[0].index, 0);
	assert_int_equal(s.refs[1].from, 14);
	assert_int_equal(s.refs[1].to, 13);
	/* values: no field named (no ALLFIELDS): none kept */
	assert_int_equal(s.nprims, 0);
	assert_int_equal(s.info.objects, 4);
	assert_int_equal(s.info.refs, 2);
	assert_null(s.visits);
	snapshot_free(&s);
}

/* A tid marker (MT_AP_HV_TID, before a thread's locals) is no object: the
 * ids and objects are as without it, and it becomes a marker root with its
 * tid, in its place among the roots. */
static void test_tid_marker(void **state)
{
	struct mt_snapshot s;
	char why[128] = "";
	struct mt_ap_hvisit *v;

	(void)state;
	fill(&s, MT_AP_HV_KEEP);
	v = realloc(s.visits, (s.nvisits + 1) * sizeof(*v));
	assert_non_null(v);
	memmove(v + 2, v + 1, (s.nvisits - 1) * sizeof(*v));
	v[1] = (struct mt_ap_hvisit){ .to = 21, .index = -1, .length = -1, .kind = MT_AP_HV_TID };
	s.visits = v;
	s.nvisits = s.cap_visits = s.nvisits + 1;
	assert_int_equal(walkids_resolve(&s, NULL, 0, why, sizeof(why)), 0);
	assert_int_equal(s.nobjs, 4);
	assert_int_equal(s.objs[1].id, 13);
	assert_int_equal(s.objs[3].id, 14);
	assert_int_equal(s.nroots, 3);
	assert_int_equal(s.roots[0].to, 12);
	assert_int_equal(s.roots[1].to, 21);
	assert_int_equal(s.roots[1].kind, 0);
	assert_int_equal(s.roots[1].flags, MT_AP_HROOT_TID);
	assert_int_equal(s.roots[2].to, 13);
	assert_int_equal(s.roots[2].kind, JNI_GLOBAL);
	assert_int_equal(s.nrefs, 2);
	snapshot_free(&s);
}

/* A program that needs `next` and `val` but no references: MAYBE references
 * of the projected field are kept, values get owners, a wrong type counts. */
static void test_projection(void **state)
{
	const char *const fields[] = { "next", "val" };
	struct mt_snapshot s;
	char why[128] = "";

	fill(&s, MT_AP_HV_MAYBE);
	assert_int_equal(walkids_resolve(&s, fields, 2, why, sizeof(why)), 0);
	assert_int_equal(s.nrefs, 2);
	assert_int_equal(s.nprims, 1);
	assert_int_equal(s.prims[0].obj, 13);
	assert_int_equal(s.prims[0].bits, 5);
	assert_int_equal(s.info.mismatches, 1);
	snapshot_free(&s);

	fill(&s, MT_AP_HV_MAYBE); /* only `val`: the references are dropped */
	assert_int_equal(walkids_resolve(&s, fields + 1, 1, why, sizeof(why)), 0);
	assert_int_equal(s.nrefs, 0);
	assert_int_equal(s.nprims, 1);
	snapshot_free(&s);

	fill(&s, MT_AP_HV_MAYBE); /* ALLFIELDS: everything */
	s.info.flags = MT_AP_HEAP_ALLFIELDS;
	assert_int_equal(walkids_resolve(&s, NULL, 0, why, sizeof(why)), 0);
	assert_int_equal(s.nrefs, 2);
	assert_int_equal(s.nprims, 1);
	snapshot_free(&s);
}

/* What the agent's view of HotSpot's frames being wrong looks like. */
static void test_layout_errors(void **state)
{
	struct mt_snapshot s;
	char why[128] = "";

	fill(&s, MT_AP_HV_KEEP);
	s.visits[3].from = A(0x5000); /* a referrer never met */
	assert_int_equal(walkids_resolve(&s, NULL, 0, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "referrer"));
	snapshot_free(&s);

	fill(&s, MT_AP_HV_KEEP);
	s.visits[2].to = A(0x3020); /* a CLASS reference to an object that is no class */
	assert_int_equal(walkids_resolve(&s, NULL, 0, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "CLASS"));
	snapshot_free(&s);

	fill(&s, MT_AP_HV_KEEP);
	s.named[1].addr = 0x1000; /* two classes at one address */
	assert_int_equal(walkids_resolve(&s, NULL, 0, why, sizeof(why)), -EPROTO);
	snapshot_free(&s);

	fill(&s, MT_AP_HV_KEEP);
	s.prims[0].obj = A(0x7000); /* a value of no object of the walk */
	s.info.flags = MT_AP_HEAP_ALLFIELDS;
	assert_int_equal(walkids_resolve(&s, NULL, 0, why, sizeof(why)), -EPROTO);
	snapshot_free(&s);
}

/* Nothing untagged: nothing done. */
static void test_nothing(void **state)
{
	struct mt_snapshot s;
	char why[16];

	snapshot_init(&s);
	assert_int_equal(walkids_resolve(&s, NULL, 0, why, sizeof(why)), 0);
	assert_int_equal(s.nobjs, 0);
	snapshot_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve_all),
		cmocka_unit_test(test_tid_marker),
		cmocka_unit_test(test_projection),
		cmocka_unit_test(test_layout_errors),
		cmocka_unit_test(test_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
