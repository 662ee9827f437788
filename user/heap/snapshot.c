// SPDX-License-Identifier: GPL-2.0
/* snapshot.c - the in-memory heap snapshot (see snapshot.h): its arrays,
 * strings and ages; nothing here reads or writes a format. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/dsl.h"
#include "heap/recpool.h"
#include "heap/snapshot.h"
#include "lib/util.h"

void snapshot_init(struct mt_snapshot *s)
{
	memset(s, 0, sizeof(*s));
}

void snapshot_free(struct mt_snapshot *s)
{
	if (!s->recs_pooled) { /* else in own_pool's mapping */
		free(s->objs);
		free(s->refs);
	}
	recpool_free(s->own_pool);
	free(s->roots);
	free(s->prims);
	for (size_t i = 0; i < s->nclasses; i++) {
		free(s->classes[i].fields);
		free(s->classes[i].ifaces);
		free(s->classes[i].statics);
	}
	free(s->classes);
	free(s->threads);
	free(s->strings);
	free(s->sampled);
	free(s->visits);
	free(s->named);
	free(s->raw);
	free(s->histo);
	free(s->klass_ids);
	free(s->addrs);
	free(s->live_objs);
	free(s->live_refs);
	dsl_arena_free(s->names);
	ageranges_free(&s->ages);
	memset(s, 0, sizeof(*s));
}

void snapshot_drop_records(struct mt_snapshot *s)
{
	if (!s->recs_pooled) { /* else the pool's (own_pool, or a view took it) */
		free(s->objs);
		free(s->refs);
	}
	s->recs_pooled = false;
	free(s->prims);
	free(s->addrs);
	s->objs = NULL;
	s->refs = NULL;
	s->refpos = NULL; /* always in the pool */
	s->nrefpos = 0;
	s->prims = NULL;
	s->addrs = NULL;
	s->nobjs = s->cap_objs = s->nrefs = s->cap_refs = s->nprims = s->cap_prims = 0;
}

uint64_t snapshot_age(const struct mt_snapshot *s, uint64_t id)
{
	return s->has_ages ? ageranges_age(&s->ages, id) : 0;
}

int snapshot_grow(void *pp, size_t *cap, size_t n, size_t k, size_t esz)
{
	void **p = pp;
	size_t nc;
	void *np;

	if (n + k <= *cap)
		return 0;
	nc = *cap ? *cap : 1024;
	while (nc < n + k) {
		if (nc > SIZE_MAX / 2 / esz)
			return -ENOMEM;
		nc *= 2;
	}
	np = realloc(*p, nc * esz);
	if (!np)
		return -ENOMEM;
	if (nc * esz >= (8u << 20)) /* a heap's arrays: huge pages, far fewer faults */
		util_hugepages(np, nc * esz);
	*p = np;
	*cap = nc;
	return 0;
}

const char *snapshot_strdup(struct mt_snapshot *s, const char *p, size_t n)
{
	if (!s->names) {
		s->names = dsl_arena_new();
		if (!s->names)
			return NULL;
	}
	return dsl_arena_strndup(s->names, p, n);
}

/* Print the pause and what the walk saw, once, on stderr. */
const char *snapshot_pause_name(enum snapshot_pause p)
{
	return p == SNAP_PAUSE_COUNTERS ? "jvm_safepoints" :
	       p == SNAP_PAUSE_RECORD ? "jvm_safepoint_record" :
	       p == SNAP_PAUSE_AGENT_MANY ? "agent_others_followed" : "agent";
}

const char *snapshot_pause_phrase(enum snapshot_pause p)
{
	return p == SNAP_PAUSE_COUNTERS ? "the JVM's safepoint time" :
	       p == SNAP_PAUSE_RECORD ? "the JVM's safepoint record" :
	       p == SNAP_PAUSE_AGENT_MANY ? "timed by the agent: other safepoints followed and "
					    "the JVM's own figure for this one was not to be had" :
					   "timed by the agent";
}

void snapshot_print_walk(const struct mt_snapshot *s)
{
	char b[32];

	if (s->has_freeze && !s->frozen && s->freeze.status)
		p_warn("JVM %d: the frozen heap walk failed (%s): walked in a pause instead",
		       s->pid, s->freeze.why);
	if (!strcmp(s->source, "live") && s->frozen) {
		char w[32], k[32], u[160], ub[32], uc[32], us[32];

		char g[64] = "";

		/* ZGC: its heap is shared memory, the copy copied what is used */
		if (s->freeze.heap_copy_bytes && s->freeze.heap_skip_bytes)
			snprintf(u, sizeof(u), "the used heap (%s; %s more of primitive arrays' "
				 "elements left out) copied in %s",
				 fmt_bytes(s->freeze.heap_copy_bytes, ub, sizeof(ub)),
				 fmt_bytes(s->freeze.heap_skip_bytes, us, sizeof(us)),
				 fmt_ns(s->freeze.heap_copy_ns, uc, sizeof(uc)));
		else if (s->freeze.heap_copy_bytes)
			snprintf(u, sizeof(u), "the used heap (%s) copied in %s",
				 fmt_bytes(s->freeze.heap_copy_bytes, ub, sizeof(ub)),
				 fmt_ns(s->freeze.heap_copy_ns, uc, sizeof(uc)));
		else
			snprintf(u, sizeof(u), "%s of unused heap not shared",
				 fmt_bytes(s->freeze.unshared_bytes, ub, sizeof(ub)));
		if (s->freeze.gc_wait_ns)
			snprintf(g, sizeof(g), ", %s %s for a GC", s->freeze.gc_waited ? "after" :
				 "no GC in", fmt_ns(s->freeze.gc_wait_ns, k, sizeof(k)));
		if (s->has_mark && !s->mark.status) {
			char m[32], e[32], f[80] = "";

			/* a collector that moves objects concurrently (Shenandoah): what
			 * the copy held of a cycle in flight */
			if (s->mark.forwarded)
				snprintf(f, sizeof(f), ", %u of them to objects the collector "
					 "had moved", s->mark.forwarded);
			p_info("heap walk paused JVM %d for %s (%s; frozen: fork %s%s, %s; the copy marked %llu live objects (%s) and followed "
			       "%llu references%s in %s%s, its records took %s%s)", s->pid,
			       fmt_ns(s->info.pause_ns, b, sizeof(b)),
			       snapshot_pause_phrase(s->pause_from),
			       fmt_ns(s->freeze.fork_ns, w, sizeof(w)), g,
			       u, (unsigned long long)s->mark.marked,
			       fmt_bytes(s->mark.bytes, m, sizeof(m)),
			       (unsigned long long)s->mark.edges, f,
			       fmt_ns(s->mark.mark_ns, k, sizeof(k)),
			       s->mark.mark_threads == 2 ? " in two threads" : "",
			       fmt_ns(s->mark.emit_ns, e, sizeof(e)),
			       s->mark.emit_threads == 2 ? " in two threads" : "");
			return;
		}
		p_info("heap walk paused JVM %d for %s (%s; frozen: fork %s%s, %s; the copy walked %llu objects, %llu references, %u classes in "
		       "%s%s)", s->pid, fmt_ns(s->info.pause_ns, b, sizeof(b)),
		       snapshot_pause_phrase(s->pause_from),
		       fmt_ns(s->freeze.fork_ns, w, sizeof(w)), g,
		       u, (unsigned long long)s->info.objects, (unsigned long long)s->info.refs,
		       s->info.nclasses, fmt_ns(s->freeze.walk_ns, k, sizeof(k)),
		       s->info.partial ? "; PARTIAL" : "");
	} else if (!strcmp(s->source, "live")) {
		p_info("heap walk paused JVM %d for %s (%s; %llu objects, %llu references, "
		       "%u classes%s)", s->pid, fmt_ns(s->info.pause_ns, b, sizeof(b)),
		       snapshot_pause_phrase(s->pause_from),
		       (unsigned long long)s->info.objects, (unsigned long long)s->info.refs,
		       s->info.nclasses, s->info.partial ? "; PARTIAL" : "");
	}
	if (s->info.partial)
		p_warn("the heap walk was cut short (--max-pause or out of memory): the result "
		       "covers only part of the heap");
	if (s->info.mismatches)
		p_warn("%llu field values had an unexpected type and were left out",
		       (unsigned long long)s->info.mismatches);
}

void snapshot_json_walk(const struct mt_snapshot *s, FILE *f)
{
	if (strcmp(s->source, "live"))
		return;
	if (s->frozen)
		fprintf(f, ",\"walk_mode\":\"frozen\",\"copy_walk_ms\":%.3f,"
			"\"objects_read_while_written\":%zu,\"heap_copy_bytes\":%llu,"
			"\"heap_skip_bytes\":%llu,\"heap_copy_ms\":%.3f,\"forwarded_refs\":%u",
			(double)s->freeze.walk_ns / 1e6, s->live_read_objs,
			(unsigned long long)s->freeze.heap_copy_bytes,
			(unsigned long long)s->freeze.heap_skip_bytes,
			(double)s->freeze.heap_copy_ns / 1e6, s->has_mark ? s->mark.forwarded : 0);
	else
		fputs(",\"walk_mode\":\"paused\"", f);
}

const char *snapshot_java_name(const char *sig, char *buf, size_t n)
{
	static const char prim[] = "ZBCSIJFD";
	static const char *const pname[] = { "boolean", "byte", "char", "short", "int", "long",
					     "float", "double" };
	int dims = 0;
	size_t o;
	const char *p = sig, *q;

	while (*p == '[')
		dims++, p++;
	if (*p == 'L' && (q = strchr(p, ';'))) {
		snprintf(buf, n, "%.*s", (int)(q - p - 1), p + 1);
	} else if (dims && p[0] && strchr(prim, p[0]) && !p[1]) {
		snprintf(buf, n, "%s", pname[strchr(prim, p[0]) - prim]);
	} else {
		snprintf(buf, n, "%s", sig);
		dims = 0;
	}
	for (char *c = buf; *c; c++)
		if (*c == '/' || *c == '+')
			*c = '.';
	/* a hidden class's suffix as the JVM prints it: Foo$$Lambda/0x7f00 */
	{
		char *dot = strrchr(buf, '.');

		if (dot && dot[1] == '0' && dot[2] == 'x' && dot[3] &&
		    strspn(dot + 3, "0123456789abcdefABCDEF") == strlen(dot + 3))
			*dot = '/';
	}
	o = strlen(buf);
	for (int i = 0; i < dims && o + 2 < n; i++, o += 2)
		memcpy(buf + o, "[]", 3);
	return buf;
}
