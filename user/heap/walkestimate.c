// SPDX-License-Identifier: GPL-2.0
/* walkestimate.c - the pause of a heap walk, before it (see walkestimate.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "heap/walkestimate.h"
#include "jvm/perfdata.h"
#include "lib/util.h"

#define MAX_GENS 3
#define MAX_SPACES 4

int walkestimate_read(const struct mt_perfdata *pd, bool tagged, struct walkestimate *e)
{
	int64_t young_gcs = 0;
	char name[64];
	int found = 0;

	memset(e, 0, sizeof(*e));
	e->mean_bytes = WALKEST_MEAN_BYTES;
	e->ns_per_object = tagged ? WALKEST_NS_PER_OBJECT_TAGGED : WALKEST_NS_PER_OBJECT;
	if (!pd)
		return -ENOENT;
	perfdata_long(pd, "sun.gc.collector.0.invocations", &young_gcs);
	{
		static const char *const cls[] = { "java.cls.loadedClasses", "java.cls.sharedLoadedClasses" };
		static const char *const gone[] = { "java.cls.unloadedClasses",
						    "java.cls.sharedUnloadedClasses" };
		int64_t v, n = 0;

		for (int i = 0; i < 2; i++) {
			if (!perfdata_long(pd, cls[i], &v))
				n += v;
			if (!perfdata_long(pd, gone[i], &v))
				n -= v;
		}
		e->classes = n > 0 ? (uint64_t)n : 0;
	}
	for (int g = 0; g < MAX_GENS; g++) {
		int64_t spaces = 0, used;

		snprintf(name, sizeof(name), "sun.gc.generation.%d.spaces", g);
		if (perfdata_long(pd, name, &spaces))
			continue;
		for (int s = 0; s < spaces && s < MAX_SPACES; s++) {
			snprintf(name, sizeof(name), "sun.gc.generation.%d.space.%d.used", g, s);
			if (perfdata_long(pd, name, &used) || used < 0)
				continue;
			found++;
			/* eden and two survivors (G1, Parallel, Serial): once collected,
			 * the eden is the allocation space, garbage but for what the
			 * application made since its last GC */
			if (g == 0 && s == 0 && spaces >= 3 && young_gcs > 0) {
				e->eden_out = true;
				continue;
			}
			e->used += (uint64_t)used;
		}
	}
	if (!found)
		return -ENOENT;
	walkestimate_compute(e);
	return 0;
}

void walkestimate_compute(struct walkestimate *e)
{
	uint64_t floor = e->classes * WALKEST_OBJECTS_PER_CLASS;

	e->objects = e->mean_bytes > 0 ? (uint64_t)((double)e->used / e->mean_bytes) : 0;
	if (e->objects < floor)
		e->objects = floor;
	e->pause_ns = (uint64_t)((double)e->objects * e->ns_per_object);
}

void walkestimate_learn(struct walkestimate *e, uint64_t objects, uint64_t pause_ns)
{
	if (!objects || !pause_ns)
		return;
	if (e->used) /* the used heap as read before that walk, per object it visited */
		e->mean_bytes = (double)e->used / (double)objects;
	e->ns_per_object = (double)pause_ns / (double)objects;
	e->measured = true;
	walkestimate_compute(e);
}

const char *walkestimate_text(const struct walkestimate *e, char *buf, size_t n)
{
	bool floor = e->objects == e->classes * WALKEST_OBJECTS_PER_CLASS && e->classes;
	char p[32], u[32], c[64] = "";

	if (floor)
		snprintf(c, sizeof(c), " (at least %d a class: %llu classes)",
			 WALKEST_OBJECTS_PER_CLASS, (unsigned long long)e->classes);
	snprintf(buf, n, "about %s: %s of heap used%s / %.0f B an object = %.2f M objects%s x "
		 "%.0f ns%s", fmt_ns(e->pause_ns, p, sizeof(p)), fmt_bytes(e->used, u, sizeof(u)),
		 e->eden_out ? " (eden left out)" : "", e->mean_bytes, (double)e->objects / 1e6, c,
		 e->ns_per_object, e->measured ? " (as this JVM's last walk)" : " (measured on "
		 "other JVMs)");
	return buf;
}
