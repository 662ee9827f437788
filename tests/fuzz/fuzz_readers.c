// SPDX-License-Identifier: GPL-2.0
/* fuzz_readers.c - libFuzzer entry for the heap readers, by the input's
 * magic: "JAVA PROFILE" goes to the HPROF importer (hprof_read_mem), the
 * snapshot magic to snapfile_read_mem (header, trailer, checksum, records),
 * anything else is parsed as a bare record stream (snaprec_add: what the
 * agent sends, past the checksum a file would need; an untagged walk's keys
 * resolved). What parses is built into a dsl_heap (heapview_build), checked,
 * given its graph indexes (referrers, dominator tree, paths from the roots:
 * their invariants checked) and a reachability program runs on it. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "heap/heapview.h"
#include "heap/hprof.h"
#include "heap/snapfile.h"
#include "heap/snaprec.h"
#include "heap/snapshot.h"
#include "heap/walkids.h"

static const char prog[] =
	"set_type all:\n roots <- threads\n membership <- THIS in Unassigned and "
	"REFERRER in ENTITY\n on_inclusion <- [ n <- n + 1  b <- b or THIS.field = 4242 ]\n"
	" n : int <- 0\n b : bool <- false\ninstances_for all have_names = \"all\"\n";

static int fuzz_run_heap(const struct mt_snapshot *s)
{
	static FILE *null_out;
	struct mt_heapview hv;
	struct dsl_program *p = NULL;
	struct dsl_diags *d = dsl_diags_new();
	char why[160];

	if (!null_out)
		null_out = fopen("/dev/null", "w");
	if (!d)
		return 0;
	if (!heapview_build(s, NULL, &hv, why, sizeof(why))) {
		if (dsl_heap_check(&hv.heap, d))
			__builtin_trap(); /* the builder made an inconsistent heap */
		if (!heapview_graph(&hv, HEAPVIEW_REFERRERS | HEAPVIEW_RETAINED | HEAPVIEW_PATHS,
				    why, sizeof(why))) {
			const struct dsl_heap *h = &hv.heap;
			struct dsl_pathstep st[8];

			for (uint32_t o = 0; o < h->nobjects; o++) {
				uint32_t id = hv.dom.idom[o];

				/* a dominator retains at least what it dominates */
				if (id < h->nobjects && h->retained[id] < h->retained[o])
					__builtin_trap();
				/* reached by a path exactly when it is in the tree */
				if ((dsl_root_path(h, o, st, 8) == 0) != (id == MT_DOM_UNREACHED))
					__builtin_trap();
			}
		}
		if (!dsl_compile(prog, sizeof(prog) - 1, "f.mq", NULL, &p, d)) {
			dsl_run(p, &hv.heap, null_out, d);
			dsl_program_free(p);
		}
		heapview_free(&hv);
	}
	dsl_diags_free(d);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mt_snapshot s;
	char why[160];

	if (hprof_is(data, size)) {
		if (!hprof_read_mem(data, size, &s, why, sizeof(why))) {
			fuzz_run_heap(&s);
			snapshot_free(&s);
		}
		return 0;
	}
	if (size >= 8 && !memcmp(data, MT_SNAP_MAGIC, 8)) {
		if (!snapfile_read_mem(data, size, &s, why, sizeof(why))) {
			fuzz_run_heap(&s);
			snapshot_free(&s);
		}
		return 0;
	}
	snapshot_init(&s);
	if (!snaprec_add(&s, data, size, false, why, sizeof(why)) &&
	    !walkids_resolve(&s, NULL, 0, why, sizeof(why)))
		fuzz_run_heap(&s);
	snapshot_free(&s);
	return 0;
}
