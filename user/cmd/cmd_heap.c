// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_heap.c - who holds the memory, on a live heap or a heap file:
 *   memtrace heap (-p PID | FILE) --retained [--top N] [--json]
 *   memtrace heap (-p PID | FILE) --paths CLASS [--top N] [--json]
 *   memtrace heap FILE --id ID [--json]
 * --retained: the dominator tree's largest retainers by object and by class
 * (analysis/dominators.h); --paths: the shortest reference chain from a GC
 * root to the CLASS instances that retain the most; --id: one object of a
 * file (ids are stable there; a live walk numbers objects anew each time):
 * its retained bytes, its path and its referrers.
 */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "heap/heapmem.h"
#include "heap/heapview.h"
#include "heap/recpool.h"
#include "heap/snapload.h"
#include "heap/snapshot.h"
#include "lib/util.h"
#include "sink/heapreport.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace heap (-p PID | FILE) --retained [--top N] [--json] [--max-pause MS]\n"
		   "       memtrace heap (-p PID | FILE) --paths CLASS [--top N] [--json] [--max-pause MS]\n"
		   "       memtrace heap FILE --id ID [--json]\n"
		   "  Who holds the memory of a live heap (a walk with references; the JVM pauses\n"
		   "  only for it), a `memtrace snapshot` file or a `jcmd PID GC.heap_dump` file.\n"
		   "  --retained     the largest retainers: the top of the dominator tree (bytes an\n"
		   "                 object keeps alive, Eclipse MAT's retained heap) and by class\n"
		   "  --paths CLASS  the shortest chain of references from a GC root to the N\n"
		   "                 instances of CLASS (name or simple name) that retain the most\n"
		   "  --id ID        one object of a file: retained bytes, path, referrers\n"
		   "  --top N        rows / instances shown (default 20 / 5)\n"
		   "  --max-pause MS a walk in a pause (--walk paused, no libjvm .symtab) or a ZGC\n"
		   "                 copy (its pause copies the used heap) is\n"
		   "                 estimated first and, over 100 ms, done only with this: a\n"
		   "                 pause of up to MS, the walk cut short there (partial)\n");
}

static int by_ret_desc(const void *a, const void *b, void *ret)
{
	const uint64_t *r = ret;
	uint64_t x = r[*(const uint32_t *)a], y = r[*(const uint32_t *)b];

	if (x != y)
		return x < y ? 1 : -1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static void print_head(const struct mt_heapview *hv, uint32_t o, bool json)
{
	const struct dsl_heap *h = &hv->heap;
	char b[512];

	if (json) {
		printf("\"id\":%llu,\"class\":", (unsigned long long)h->objects[o].id);
		json_str(stdout, dsl_obj_class_text(h, o, b, sizeof(b)));
		printf(",\"shallow\":%llu,\"retained\":", (unsigned long long)h->objects[o].size);
		if (h->retained[o] == DSL_NORETAINED)
			printf("null,");
		else
			printf("%llu,", (unsigned long long)h->retained[o]);
		return;
	}
	printf("%s (id %llu): shallow %llu, retained ", dsl_obj_class_text(h, o, b, sizeof(b)),
	       (unsigned long long)h->objects[o].id, (unsigned long long)h->objects[o].size);
	if (h->retained[o] == DSL_NORETAINED)
		printf("nothing (no GC root reaches it)\n");
	else
		printf("%llu bytes\n", (unsigned long long)h->retained[o]);
}

/* --paths CLASS: the instances retaining the most, with their paths. */
static int paths(const struct mt_heapview *hv, const char *cname, uint64_t top, bool json)
{
	const struct dsl_heap *h = &hv->heap;
	uint32_t *sel, n = 0;
	uint8_t *want = calloc(h->nclasses + 1, 1);
	bool any = false;

	sel = malloc(((size_t)h->nobjects + 1) * sizeof(*sel));
	if (!want || !sel) {
		free(want);
		free(sel);
		p_err("out of memory");
		return 1;
	}
	for (uint32_t c = 0; c < h->nclasses; c++)
		any |= want[c] = dsl_class_name_matches(h->classes[c].name, cname);
	if (!any) {
		p_err("no class of the heap is named '%s'", cname);
		free(want);
		free(sel);
		return 1;
	}
	for (uint32_t o = 0; o < h->nobjects; o++)
		if (want[h->objects[o].cls])
			sel[n++] = o;
	qsort_r(sel, n, sizeof(*sel), by_ret_desc, (void *)h->retained);
	if (!json)
		printf("%u instances of %s; the %llu retaining the most, each with its shortest "
		       "path from a GC root:\n", n, cname,
		       (unsigned long long)(top < n ? top : n));
	for (uint32_t i = 0; i < n && i < top; i++) {
		if (json) {
			printf("{\"event\":\"path\",\"rank\":%u,", i + 1);
			print_head(hv, sel[i], true);
			heapreport_path(stdout, hv, sel[i], true, "");
			printf("}\n");
		} else {
			printf("\n%u. ", i + 1);
			print_head(hv, sel[i], false);
			heapreport_path(stdout, hv, sel[i], false, "    ");
		}
	}
	free(want);
	free(sel);
	return 0;
}

/* --id ID: one object's retained bytes, path and referrers. */
static int one(const struct mt_heapview *hv, uint64_t id, bool json)
{
	const struct dsl_heap *h = &hv->heap;
	uint32_t o = DSL_NOOBJ, k = 0;
	char b[512];

	for (uint32_t i = 0; i < h->nobjects && o == DSL_NOOBJ; i++)
		if (h->objects[i].id == id)
			o = i;
	if (o == DSL_NOOBJ) {
		p_err("no object of the heap has id %llu", (unsigned long long)id);
		return 1;
	}
	if (json) {
		printf("{\"event\":\"object\",");
		print_head(hv, o, true);
		heapreport_path(stdout, hv, o, true, "");
		printf(",\"referrers\":[");
	} else {
		print_head(hv, o, false);
		printf("path from a GC root:\n");
		heapreport_path(stdout, hv, o, false, "    ");
		printf("referrers:\n");
	}
	for (uint32_t i = h->referrer_first[o]; i < h->referrer_first[o + 1]; i++) {
		uint32_t f = h->referrer[i];

		if (i > h->referrer_first[o] && h->referrer[i - 1] == f)
			continue;
		if (json) {
			printf("%s{\"id\":%llu,\"class\":", k ? "," : "",
			       (unsigned long long)h->objects[f].id);
			json_str(stdout, dsl_obj_class_text(h, f, b, sizeof(b)));
			printf("}");
		} else {
			printf("    %s (id %llu)\n", dsl_obj_class_text(h, f, b, sizeof(b)),
			       (unsigned long long)h->objects[f].id);
		}
		k++;
	}
	if (json)
		printf("]}\n");
	else if (!k)
		printf("    none\n");
	return 0;
}

int do_heap(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "retained", no_argument, NULL, 'r' },
		{ "paths", required_argument, NULL, 'P' },
		{ "id", required_argument, NULL, 'i' },
		{ "top", required_argument, NULL, 't' },
		{ "max-pause", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cmdopt o = { .usage = usage, .terse = true };
	struct mt_snapshot snap;
	struct mt_heapview hv = { 0 };
	struct heapreport_src src = { 0 };
	const char *input = NULL, *cname = NULL;
	bool retained = false, json = mt_opts.json, has_id = false;
	uint64_t id = 0;
	char why[PATH_MAX + 160];
	unsigned what = HEAPVIEW_RETAINED;
	int ch, err, rc = 1;

	snapshot_init(&snap);
	optind = 1;
	while ((ch = getopt_long(argc, argv, "p:t:jh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'r': retained = true; break;
		case 'P': cname = optarg; break;
		case 'i':
			if (parse_u64(optarg, &id)) {
				p_err("invalid --id '%s' (an object id)", optarg);
				return 2;
			}
			has_id = true;
			break;
		case 'j': json = true; break;
		default:
			err = cmdopt_common(ch, optarg, &o);
			if (err != MT_CMDOPT_MORE)
				return err;
		}
	}
	if (optind < argc)
		input = argv[optind++];
	if (optind < argc || !o.pid == !input || retained + !!cname + has_id != 1) {
		usage(stderr);
		return 2;
	}
	if (has_id && o.pid) {
		p_err("--id needs a heap file: a live walk numbers objects anew each time (save one "
		      "with `memtrace snapshot`, or use --paths CLASS, or a query's root_path)");
		return 2;
	}
	if (input && o.has_max_pause) {
		p_err("--max-pause needs a live JVM (-p PID)");
		return 2;
	}
	if (!o.top)
		o.top = retained ? 20 : 5;
	if (cname || has_id)
		what |= HEAPVIEW_PATHS;
	if (has_id)
		what |= HEAPVIEW_REFERRERS;
	/* the graph's and the report's arrays reuse the pages the records
	 * leave (5 M objects: 9.8 k page faults fewer in the report, wall
	 * 1.010 -> 0.943 s, median of 10 pairs) */
	heapmem_keep_freed();
	if (o.pid) {
		if (cmdopt_snapshot(&o, MT_AP_HEAP_REFS, HEAPMEM_RETAINED, &snap))
			goto out;
	} else {
		if (snapload_file(input, &snap, why, sizeof(why))) {
			p_err("%s", why);
			goto out;
		}
		snapshot_print_walk(&snap);
		util_phase("snapshot file read");
		if (!(snap.info.flags & MT_AP_HEAP_REFS)) {
			p_err("%s holds no references (a snapshot saved without them): nothing "
			      "to compute who holds what", input);
			goto out;
		}
	}
	{
		/* the dominators' search reads the view's runs (dsl_heap.ref_runs) */
		struct dsl_needs none = { .retained = (what & HEAPVIEW_RETAINED) != 0 };

		err = heapview_build_take(&snap, &none, &hv, why, sizeof(why)); /* records dropped */
		util_phase("heap view");
	}
	if (!err)
		err = heapview_graph(&hv, what, why, sizeof(why));
	util_phase("graph (referrers, dominators, paths)");
	if (err) {
		p_err("cannot build the heap: %s", why);
		goto out;
	}
	if (snap.info.partial)
		p_warn("the walk was cut short: objects it did not reach are missing, and what "
		       "the others retain is only what the walk saw");
	{
		char b1[32], b2[32], b3[32], b4[32], refs[96] = "";

		if (hv.referrers.first) /* --id: built for the object's referrers */
			snprintf(refs, sizeof(refs), "; referrers index %s, %s",
				 fmt_bytes(((uint64_t)hv.heap.nobjects + 1 + hv.heap.nrefs +
					    hv.heap.nimplied) * 4, b3,
					   sizeof(b3)), fmt_ns(hv.referrers_ns, b4, sizeof(b4)));
		p_info("dominator tree of %u objects, %u references in %s (holding at most %s)%s",
		       hv.heap.nobjects, hv.heap.nrefs + hv.heap.nimplied,
		       fmt_ns(hv.dom_ns, b1, sizeof(b1)),
		       fmt_bytes(hv.dom.peak_bytes, b2, sizeof(b2)), refs);
		if (getenv("MEMTRACE_PHASES"))
			fprintf(stderr, "  (the dominators: %u search%s of the graph; the first "
				"mended: %u objects added, %u moved, %u dropped)\n",
				hv.dom.searches, hv.dom.searches == 1 ? "" : "es",
				hv.dom.mend_added, hv.dom.mend_moved, hv.dom.mend_dropped);
	}
	src.source = snap.source;
	src.pid = snap.pid;
	src.pause_ms = (double)snap.info.pause_ns / 1e6;
	src.partial = snap.info.partial;
	src.json = json;
	if (retained)
		rc = heapreport_retained(&hv, &src, o.top) ? 1 : 0;
	else if (cname)
		rc = paths(&hv, cname, o.top, json);
	else
		rc = one(&hv, id, json);
	fflush(stdout);
	util_phase("report");
out:
	recpool_defer_frees(); /* the answer is out: a take's pool goes with the exit */
	heapview_free(&hv);
	snapshot_free(&snap);
	return rc;
}
