// SPDX-License-Identifier: GPL-2.0
/* heapreport.c - retainers and paths from GC roots (see heapreport.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sink/heapreport.h"
#include "lib/util.h"

#define CHAIN_MAX   12   /* steps shown below a top retainer */
#define CHAIN_SHARE 0.8  /* a child is on the chain if it holds this much of its parent */

/* qsort_r: indices by the bytes of @bytes they index, descending. */
static int by_retained(const void *a, const void *b, void *bytes)
{
	const uint64_t *r = bytes;
	uint64_t x = r[*(const uint32_t *)a], y = r[*(const uint32_t *)b];

	if (x != y)
		return x < y ? 1 : -1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The largest child of @o in the tree, DSL_NOOBJ if none. */
static uint32_t largest_kid(const struct mt_heapview *hv, const struct mt_domkids *k, uint32_t o)
{
	uint32_t best = DSL_NOOBJ;

	for (uint32_t i = k->first[o]; i < k->first[o + 1]; i++)
		if (best == DSL_NOOBJ || hv->dom.retained[k->kid[i]] > hv->dom.retained[best])
			best = k->kid[i];
	return best;
}

static void print_object(const struct mt_heapview *hv, uint32_t o, uint64_t total, bool json)
{
	const struct dsl_heap *h = &hv->heap;
	char b[512];

	if (json) {
		printf("{\"id\":%llu,\"class\":", (unsigned long long)h->objects[o].id);
		json_str(stdout, dsl_obj_class_text(h, o, b, sizeof(b)));
		printf(",\"shallow\":%llu,\"retained\":%llu}",
		       (unsigned long long)h->objects[o].size,
		       (unsigned long long)hv->dom.retained[o]);
		return;
	}
	printf("%14llu %10llu %6.2f  %s (id %llu)\n", (unsigned long long)hv->dom.retained[o],
	       (unsigned long long)h->objects[o].size,
	       total ? 100.0 * (double)hv->dom.retained[o] / (double)total : 0.0,
	       dsl_obj_class_text(h, o, b, sizeof(b)), (unsigned long long)h->objects[o].id);
}

int heapreport_retained(const struct mt_heapview *hv, const struct heapreport_src *src,
			uint64_t top)
{
	const struct dsl_heap *h = &hv->heap;
	const struct mt_domtree *d = &hv->dom;
	struct mt_domkids k;
	uint64_t *cbytes = NULL, *ccount = NULL, *cshallow = NULL, *cinst = NULL;
	uint32_t *order = NULL, ntop, *corder = NULL, nparts = 1;
	bool json = src->json;
	char b1[32], b2[32];
	int err = -ENOMEM;

	if (dominators_children(d, &k))
		goto out;
	cbytes = calloc(h->nclasses + 1, sizeof(*cbytes));
	ccount = calloc(h->nclasses + 1, sizeof(*ccount));
	cshallow = calloc(h->nclasses + 1, sizeof(*cshallow));
	cinst = calloc(h->nclasses + 1, sizeof(*cinst));
	corder = malloc((h->nclasses + 1) * sizeof(*corder));
	if (!cbytes || !ccount || !cshallow || !cinst || !corder ||
	    dominators_by_class(h, d, &k, cbytes, ccount, &nparts))
		goto out;
	if (getenv("MEMTRACE_PHASES"))
		fprintf(stderr, "  (retained by class: %u part%s of the dominator tree, %s)\n",
			nparts, nparts == 1 ? "" : "s", nparts == 1 ? "one walker" : "two walkers");
	/* the tree's top: the objects only the virtual root dominates */
	ntop = k.first[d->n + 1] - k.first[d->n];
	order = malloc(((size_t)ntop + 1) * sizeof(*order));
	if (!order)
		goto out;
	memcpy(order, &k.kid[k.first[d->n]], (size_t)ntop * sizeof(*order));
	qsort_r(order, ntop, sizeof(*order), by_retained, d->retained);
	if (!json)
		printf("largest retainers (the top of the dominator tree, as Eclipse MAT shows it;"
		       " below each, the\nobject holding most of it while one does):\n"
		       "%6s %14s %10s %6s  %s\n", "#", "retained", "shallow", "%", "object");
	for (uint32_t i = 0; i < ntop && i < top; i++) {
		uint32_t o = order[i], depth = 0;

		if (json) {
			printf("{\"event\":\"retainer\",\"rank\":%u,\"object\":", i + 1);
			print_object(hv, o, d->reached_bytes, true);
			printf(",\"chain\":[");
		} else {
			printf("%6u ", i + 1);
			print_object(hv, o, d->reached_bytes, false);
		}
		for (uint32_t p = o, c; depth < CHAIN_MAX; p = c, depth++) {
			c = largest_kid(hv, &k, p);
			if (c == DSL_NOOBJ ||
			    (double)d->retained[c] < CHAIN_SHARE * (double)d->retained[p])
				break;
			if (json) {
				printf("%s", depth ? "," : "");
				print_object(hv, c, d->reached_bytes, true);
			} else {
				printf("%6s %*s└ ", "", (int)(2 * depth), "");
				print_object(hv, c, d->reached_bytes, false);
			}
		}
		if (json)
			printf("]}\n");
	}
	/* by class: instances not below another instance of their class; the
	 * totals as the view counted them (else a pass over every object) */
	if (hv->cls_count && hv->cls_bytes) {
		memcpy(cshallow, hv->cls_bytes, h->nclasses * sizeof(*cshallow));
		memcpy(cinst, hv->cls_count, h->nclasses * sizeof(*cinst));
	} else {
		for (uint32_t o = 0; o < h->nobjects; o++) {
			cshallow[h->objects[o].cls] += h->objects[o].size;
			cinst[h->objects[o].cls]++;
		}
	}
	for (uint32_t c = 0; c < h->nclasses; c++)
		corder[c] = c;
	qsort_r(corder, h->nclasses, sizeof(*corder), by_retained, cbytes);
	if (!json)
		printf("\nretained by class (each class's instances, not counting one another;"
		       " a lower bound\nof what freeing them all would free):\n"
		       "%6s %14s %12s %14s  %s\n", "#", "retained", "instances", "shallow", "class");
	for (uint32_t i = 0; i < h->nclasses && i < top && cbytes[corder[i]]; i++) {
		uint32_t c = corder[i];

		if (json) {
			printf("{\"event\":\"retained_class\",\"rank\":%u,\"class\":", i + 1);
			json_str(stdout, h->classes[c].name);
			printf(",\"retained\":%llu,\"instances\":%llu,\"top_instances\":%llu,"
			       "\"shallow\":%llu}\n", (unsigned long long)cbytes[c],
			       (unsigned long long)cinst[c], (unsigned long long)ccount[c],
			       (unsigned long long)cshallow[c]);
		} else {
			printf("%6u %14llu %12llu %14llu  %s\n", i + 1, (unsigned long long)cbytes[c],
			       (unsigned long long)cinst[c], (unsigned long long)cshallow[c],
			       h->classes[c].name);
		}
	}
	if (json) {
		printf("{\"event\":\"retained_total\",\"source\":\"%s\",\"pid\":%d,\"objects\":%u,"
		       "\"references\":%u,\"roots\":%u,\"reachable\":%u,\"reachable_bytes\":%llu,"
		       "\"unreachable\":%u,\"unreachable_bytes\":%llu,\"dominators_ms\":%.3f,"
		       "\"dominators_peak_bytes\":%llu,"
		       "\"referrers_ms\":%.3f,\"referrers_bytes\":%llu,\"pause_ms\":%.3f,"
		       "\"partial\":%s}\n", src->source, src->pid, h->nobjects,
		       h->nrefs + h->nimplied, h->nroots,
		       d->reached, (unsigned long long)d->reached_bytes, h->nobjects - d->reached,
		       (unsigned long long)d->unreached_bytes, (double)hv->dom_ns / 1e6,
		       (unsigned long long)d->peak_bytes,
		       (double)hv->referrers_ns / 1e6,
		       (unsigned long long)(hv->referrers.first ? ((uint64_t)h->nobjects + 1 +
								   h->nrefs + h->nimplied) * 4 : 0),
		       src->pause_ms, src->partial ? "true" : "false");
	} else {
		printf("\n%u objects, %s reachable from %u roots", d->reached,
		       fmt_bytes(d->reached_bytes, b1, sizeof(b1)), h->nroots);
		if (h->nobjects > d->reached)
			printf("; %u objects (%s) reachable from no root", h->nobjects - d->reached,
			       fmt_bytes(d->unreached_bytes, b2, sizeof(b2)));
		printf("\n");
	}
	err = 0;
out:
	if (err)
		p_err("out of memory for the dominator tree's report");
	dominators_children_free(&k);
	free(cbytes);
	free(ccount);
	free(cshallow);
	free(cinst);
	free(corder);
	free(order);
	return err;
}

void heapreport_path(FILE *f, const struct mt_heapview *hv, uint32_t o, bool json,
		     const char *indent)
{
	const struct dsl_heap *h = &hv->heap;
	struct dsl_pathstep st[256];
	size_t n = dsl_root_path(h, o, st, 256), shown = n < 256 ? n : 256;
	char b[1024];

	if (json) {
		fprintf(f, "\"path\":");
		if (!n) {
			fprintf(f, "null");
			return;
		}
		fprintf(f, "[");
		for (size_t i = 0; i < shown; i++) {
			const struct dsl_pathstep *s = &st[i];

			fprintf(f, "%s{\"id\":%llu,\"class\":", i ? "," : "",
				(unsigned long long)h->objects[s->obj].id);
			json_str(f, dsl_obj_class_text(h, s->obj, b, sizeof(b)));
			if (s->from == DSL_NOOBJ) {
				fprintf(f, ",\"root\":\"%s\"}", s->ref < h->nroots ?
					dsl_ref_kind_name(h->roots[s->ref].kind) : "root");
				continue;
			}
			{
				const struct dsl_href rr = dsl_heap_ref(h, s->ref), *r = &rr;

				fprintf(f, ",\"ref\":\"%s\",\"via\":", dsl_ref_kind_name(r->kind));
				json_str(f, dsl_ref_text(h, s->from, r, b, sizeof(b)));
				if (r->kind == DSL_REF_ARRAY_ELEMENT && r->index >= 0)
					fprintf(f, ",\"index\":%d", r->index);
				else if (r->kind == DSL_REF_FIELD && r->index >= 0 &&
					 (uint32_t)r->index < h->classes[h->objects[s->from].cls].nfields)
					fprintf(f, ",\"field\":"),
					json_str(f, h->classes[h->objects[s->from].cls].fields[r->index].name);
				else if (r->kind == DSL_REF_STATIC_FIELD && r->index >= 0 &&
					 (uint32_t)r->index < h->nstatics)
					fprintf(f, ",\"field\":"), json_str(f, h->statics[r->index].name);
				fprintf(f, "}");
			}
		}
		fprintf(f, "]%s", n > shown ? ",\"path_cut\":true" : "");
		return;
	}
	if (!n) {
		fprintf(f, "%sno path: no GC root reaches it\n", indent);
		return;
	}
	for (size_t i = 0; i < shown; i++)
		fprintf(f, "%s%s\n", indent, dsl_path_step_text(h, &st[i], b, sizeof(b)));
	if (n > shown)
		fprintf(f, "%s... (%zu more steps)\n", indent, n - shown);
}
