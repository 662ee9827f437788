// SPDX-License-Identifier: GPL-2.0
/* walkstate.c - what a heap walk and its session hold (walkstate.h). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "walkstate.h"

struct walk_session hs;
struct walk_state hw;
_Atomic uint64_t hs_gcs;

void walkstate_vectors_init(void)
{
	walkvec_init(&hw.visits, sizeof(struct mt_ap_hvisit));
	walkvec_init(&hw.given, sizeof(uint64_t));
	walkvec_init(&hw.named, sizeof(struct walk_named));
	walkvec_init(&hw.sampled, sizeof(struct mt_ap_hsampled));
	walkvec_init(&hw.stags, sizeof(uint64_t));
	walkvec_init(&hw.objs, sizeof(struct mt_ap_hobj));
	walkvec_init(&hw.refs, sizeof(struct mt_ap_href));
	walkvec_init(&hw.roots, sizeof(struct mt_ap_hroot));
	walkvec_init(&hw.prims, sizeof(struct mt_ap_hprim));
	walkvec_init(&hw.strs, sizeof(struct walk_str));
	walkvec_init(&hw.mroots, sizeof(struct mt_ap_hroot));
}

/* The class table's names, fields and interfaces. */
static void free_classes(void)
{
	for (uint32_t i = 0; i < hw.ncls; i++) {
		struct walk_class *c = &hw.cls[i];

		for (uint32_t j = 0; j < c->nfields; j++)
			free(c->fields[j].name);
		for (uint32_t j = 0; j < c->nstatics; j++)
			free(c->statics[j].name);
		free(c->fields);
		free(c->statics);
		free(c->ifaces);
		free(c->proj);
		if (c->sig)
			free(c->sig);
	}
	free(hw.cls);
	free(hw.clskeys);
	free(hw.clsvals);
}

void walkstate_free(void)
{
	free_classes();
	for (uint32_t i = 0; i < hw.nthreads; i++)
		free(hw.threads[i].name);
	free(hw.threads);
	for (size_t i = 0; i < hw.strs.n; i++)
		free(((struct walk_str *)hw.strs.p)[i].utf8);
	walkvec_free(&hw.objs);
	walkvec_free(&hw.refs);
	walkvec_free(&hw.roots);
	walkvec_free(&hw.prims);
	walkvec_free(&hw.strs);
	walkvec_free(&hw.visits);
	walkvec_free(&hw.given);
	walkvec_free(&hw.named);
	walkvec_free(&hw.sampled);
	walkvec_free(&hw.stags);
	walkvec_free(&hw.mroots);
	heapmark_free(&hw.mres);
	free(hw.projidx);
	free(hw.fz.runs);
	memset(&hw, 0, sizeof(hw));
}
