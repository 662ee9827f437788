// SPDX-License-Identifier: GPL-2.0
/* waitgraph.c - cycles of a wait-for graph with one edge per thread; see waitgraph.h. */
#include <errno.h>
#include <stdlib.h>

#include "analysis/waitgraph.h"
#include "lib/idmap.h"

int waitgraph_cycles(const struct waitgraph_node *nodes, size_t n, uint32_t *cycle)
{
	struct idmap index = { 0 };
	size_t *next = NULL;
	uint32_t *mark = NULL; /* 0 unvisited, else the walk that reached it first */
	int ncycles = 0, err = 0;

	for (size_t i = 0; i < n; i++)
		cycle[i] = 0;
	next = malloc((n ? n : 1) * sizeof(*next));
	mark = calloc(n ? n : 1, sizeof(*mark));
	if (!next || !mark) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* tid -> index (first entry wins), then each thread's successor index */
	for (size_t i = 0; i < n; i++)
		if (!idmap_get(&index, nodes[i].tid) &&
		    idmap_put(&index, nodes[i].tid, (void *)(uintptr_t)(i + 1))) {
			err = -ENOMEM;
			goto cleanup;
		}
	for (size_t i = 0; i < n; i++) {
		uintptr_t j = nodes[i].waits_for ? (uintptr_t)idmap_get(&index, nodes[i].waits_for) : 0;

		next[i] = j ? j - 1 : SIZE_MAX;
	}
	/* follow each walk until it leaves the graph or meets a marked thread;
	 * meeting this walk's own mark closes a new cycle */
	for (size_t s = 0; s < n; s++) {
		size_t v = s;

		if (mark[s])
			continue;
		while (v != SIZE_MAX && !mark[v]) {
			mark[v] = (uint32_t)(s + 1);
			v = next[v];
		}
		if (v == SIZE_MAX || mark[v] != s + 1 || cycle[v])
			continue;
		ncycles++;
		for (size_t u = v; !cycle[u]; u = next[u])
			cycle[u] = (uint32_t)ncycles;
	}
cleanup:
	idmap_free(&index);
	free(next);
	free(mark);
	return err ? err : ncycles;
}
