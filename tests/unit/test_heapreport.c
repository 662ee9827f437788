// SPDX-License-Identifier: GPL-2.0
/* test_heapreport - who holds the memory, as printed (user/sink/heapreport.c):
 * a path from a root in text and JSON (root kind, static field, field, array
 * index), "no path", and the retainers report (the tree's top with its
 * accumulation chain, classes not counted twice, the totals) on a heap
 * built by hand whose dominator tree is known. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "heap/heapview.h"
#include "sink/heapreport.h"

/*
 * class Holder (object 0, a class object, a system_class root) -static CACHE->
 * 1 Map -table-> 2 Node[] -[3]-> 3 Node -value-> 4 byte[] (4000 bytes);
 * 5 byte[] (100 bytes) is unreachable.
 */
static const struct dsl_hfield f_map[] = { { "table", DSL_FK_REF } };
static const struct dsl_hfield f_node[] = { { "value", DSL_FK_REF } };
static struct dsl_hclass cls[] = {
	{ .name = "java.lang.Class", .obj = DSL_NOOBJ, .super = DSL_NOOBJ, .loader = DSL_NOOBJ },
	{ .name = "p.Holder", .obj = 0, .super = DSL_NOOBJ, .loader = DSL_NOOBJ },
	{ .name = "p.Map", .obj = DSL_NOOBJ, .super = DSL_NOOBJ, .loader = DSL_NOOBJ,
	  .fields = f_map, .nfields = 1 },
	{ .name = "p.Node[]", .obj = DSL_NOOBJ, .super = DSL_NOOBJ, .loader = DSL_NOOBJ },
	{ .name = "p.Node", .obj = DSL_NOOBJ, .super = DSL_NOOBJ, .loader = DSL_NOOBJ,
	  .fields = f_node, .nfields = 1 },
	{ .name = "byte[]", .obj = DSL_NOOBJ, .super = DSL_NOOBJ, .loader = DSL_NOOBJ },
};
static const struct dsl_hstatic statics[] = { { "CACHE", 1 } };
static struct dsl_href refs[] = {
	{ .to = 1, .index = 0, .kind = DSL_REF_STATIC_FIELD },
	{ .to = 2, .index = 0, .kind = DSL_REF_FIELD },
	{ .to = 3, .index = 3, .kind = DSL_REF_ARRAY_ELEMENT },
	{ .to = 4, .index = 0, .kind = DSL_REF_FIELD },
};
static struct dsl_hobject objs[] = {
	{ .id = 10, .cls = 0, .size = 120, .length = -1, .ref_first = 0, .nrefs = 1 },
	{ .id = 11, .cls = 2, .size = 16, .length = -1, .ref_first = 1, .nrefs = 1 },
	{ .id = 12, .cls = 3, .size = 32, .length = 4, .ref_first = 2, .nrefs = 1 },
	{ .id = 13, .cls = 4, .size = 16, .length = -1, .ref_first = 3, .nrefs = 1 },
	{ .id = 14, .cls = 5, .size = 4000, .length = 3984, .ref_first = 4, .nrefs = 0 },
	{ .id = 15, .cls = 5, .size = 100, .length = 84, .ref_first = 4, .nrefs = 0 },
};
static const struct dsl_hroot roots[] = { { .obj = 0, .kind = DSL_ROOT_SYSTEM_CLASS } };

static void setup(struct mt_heapview *hv)
{
	char why[128];

	memset(hv, 0, sizeof(*hv));
	hv->heap = (struct dsl_heap){ .objects = objs, .nobjects = 6, .classes = cls, .nclasses = 6,
				      .refs = refs, .nrefs = 4, .roots = roots, .nroots = 1,
				      .statics = statics, .nstatics = 1 };
	assert_int_equal(heapview_graph(hv, HEAPVIEW_RETAINED | HEAPVIEW_PATHS, why, sizeof(why)),
			 0);
}

static char *capture_path(const struct mt_heapview *hv, uint32_t o, bool json)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	heapreport_path(f, hv, o, json, "  ");
	fclose(f);
	return buf;
}

static void test_path(void **state)
{
	struct mt_heapview hv;
	char *t;

	setup(&hv);
	t = capture_path(&hv, 4, false);
	assert_string_equal(t, "  system_class class p.Holder (id 10)\n"
			       "  static p.Holder.CACHE -> p.Map (id 11)\n"
			       "  p.Map.table -> p.Node[] (id 12)\n"
			       "  p.Node[][3] -> p.Node (id 13)\n"
			       "  p.Node.value -> byte[] (id 14)\n");
	free(t);
	t = capture_path(&hv, 4, true);
	assert_string_equal(t, "\"path\":[{\"id\":10,\"class\":\"class p.Holder\",\"root\":\"system_class\"},"
			       "{\"id\":11,\"class\":\"p.Map\",\"ref\":\"static_field\",\"via\":"
			       "\"static p.Holder.CACHE\",\"field\":\"CACHE\"},"
			       "{\"id\":12,\"class\":\"p.Node[]\",\"ref\":\"field\",\"via\":\"p.Map.table\","
			       "\"field\":\"table\"},"
			       "{\"id\":13,\"class\":\"p.Node\",\"ref\":\"array_element\",\"via\":"
			       "\"p.Node[][3]\",\"index\":3},"
			       "{\"id\":14,\"class\":\"byte[]\",\"ref\":\"field\",\"via\":\"p.Node.value\","
			       "\"field\":\"value\"}]");
	free(t);
	t = capture_path(&hv, 5, false);
	assert_string_equal(t, "  no path: no GC root reaches it\n");
	free(t);
	t = capture_path(&hv, 5, true);
	assert_string_equal(t, "\"path\":null");
	free(t);
	heapview_free(&hv);
}

static void test_retained(void **state)
{
	struct mt_heapview hv;
	struct heapreport_src src = { .source = "snapshot", .json = true };
	char path[] = "/tmp/test_heapreport.XXXXXX", line[4096];
	int fd = mkstemp(path), saved = dup(1), nlines = 0;
	FILE *f;

	setup(&hv);
	assert_int_equal(hv.heap.retained[0], 120 + 16 + 32 + 16 + 4000);
	fflush(stdout);
	dup2(fd, 1);
	assert_int_equal(heapreport_retained(&hv, &src, 10), 0);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	f = fopen(path, "r");
	while (fgets(line, sizeof(line), f)) {
		if (nlines == 0) /* the only top: the class object, its chain down to the byte[] */
			assert_string_equal(line, "{\"event\":\"retainer\",\"rank\":1,\"object\":{\"id\":10,"
				"\"class\":\"class p.Holder\",\"shallow\":120,\"retained\":4184},\"chain\":["
				"{\"id\":11,\"class\":\"p.Map\",\"shallow\":16,\"retained\":4064},"
				"{\"id\":12,\"class\":\"p.Node[]\",\"shallow\":32,\"retained\":4048},"
				"{\"id\":13,\"class\":\"p.Node\",\"shallow\":16,\"retained\":4016},"
				"{\"id\":14,\"class\":\"byte[]\",\"shallow\":4000,\"retained\":4000}]}\n");
		if (strstr(line, "\"class\":\"byte[]\",\"retained\""))
			assert_non_null(strstr(line, "\"retained\":4000,\"instances\":2,"
						     "\"top_instances\":1,\"shallow\":4100"));
		if (strstr(line, "retained_total"))
			assert_non_null(strstr(line, "\"objects\":6,\"references\":4,\"roots\":1,"
						     "\"reachable\":5,\"reachable_bytes\":4184,"
						     "\"unreachable\":1,\"unreachable_bytes\":100"));
		nlines++;
	}
	assert_int_equal(nlines, 1 + 5 + 1); /* a retainer, 5 classes that retain, the total */
	fclose(f);
	unlink(path);
	close(fd);
	heapview_free(&hv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path),
		cmocka_unit_test(test_retained),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
