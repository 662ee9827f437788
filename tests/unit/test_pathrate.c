/* test_pathrate.c - allocation paths over a live view's intervals. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/pathrate.h"

static const struct pathrate_path *find(const struct pathrate *pr, const char *frames,
					const char *cls)
{
	for (size_t i = 0; i < pr->ncur; i++)
		if (!strcmp(pr->cur[i].frames, frames) && !strcmp(pr->cur[i].class_name, cls))
			return &pr->cur[i];
	return NULL;
}

/* Rows of one path (the same frame names and class from several kernel
 * stacks, a name from another string) are summed; the interval is the
 * growth since the last round; the order is by interval bytes. */
static void test_rounds(void **state)
{
	struct pathrate pr;
	char other_a[] = "A";          /* equal name, another pointer */
	char other_path[] = "m;n;o";   /* equal frames, another pointer */
	const struct pathrate_path *p;

	pathrate_init(&pr);
	pathrate_begin(&pr);
	assert_int_equal(pathrate_add(&pr, "m;n;o", "A", 100, 1), 0);
	assert_int_equal(pathrate_add(&pr, other_path, other_a, 50, 2), 0);
	assert_int_equal(pathrate_add(&pr, "m;x", "A", 10, 1), 0);
	assert_int_equal(pathrate_add(&pr, NULL, "B", 30, 1), 0);
	assert_int_equal(pathrate_end(&pr), 0);
	assert_int_equal(pr.ncur, 3);
	p = find(&pr, "m;n;o", "A");
	assert_non_null(p);
	assert_int_equal(p->total, 150);
	assert_int_equal(p->interval, 150);
	assert_int_equal(p->samples, 3);
	assert_ptr_equal(&pr.cur[0], p);
	assert_ptr_not_equal(p->frames, other_path); /* the table's copy */
	assert_non_null(find(&pr, "", "B"));
	assert_int_equal(pr.interval_bytes, 190);
	assert_int_equal(pr.total_bytes, 190);

	/* round 2: m;x grows most; a new path; ("", B) went down (an estimate
	 * corrected to now): no negative interval */
	pathrate_begin(&pr);
	assert_int_equal(pathrate_add(&pr, "m;n;o", "A", 160, 4), 0);
	assert_int_equal(pathrate_add(&pr, "m;x", "A", 510, 9), 0);
	assert_int_equal(pathrate_add(&pr, "", "B", 25, 1), 0);
	assert_int_equal(pathrate_add(&pr, "m;x", "C", 40, 1), 0);
	assert_int_equal(pathrate_end(&pr), 0);
	assert_int_equal(pr.ncur, 4);
	assert_string_equal(pr.cur[0].frames, "m;x");
	assert_string_equal(pr.cur[0].class_name, "A");
	assert_int_equal(pr.cur[0].interval, 500);
	assert_string_equal(pr.cur[1].class_name, "C");
	assert_int_equal(pr.cur[1].interval, 40);
	assert_int_equal(find(&pr, "m;n;o", "A")->interval, 10);
	assert_int_equal(find(&pr, "", "B")->interval, 0);
	assert_int_equal(pr.interval_bytes, 550);
	assert_int_equal(pr.total_bytes, 735);
	assert_int_equal(pr.nstrs, 3); /* each frame string kept once */

	/* round 3: nothing new; a path gone from the snapshot is gone */
	pathrate_begin(&pr);
	assert_int_equal(pathrate_add(&pr, "m;x", "A", 510, 9), 0);
	assert_int_equal(pathrate_end(&pr), 0);
	assert_int_equal(pr.ncur, 1);
	assert_int_equal(pr.cur[0].interval, 0);
	assert_int_equal(pr.interval_bytes, 0);
	pathrate_fini(&pr);
	pathrate_fini(&pr); /* twice is fine */
}

/* An empty round, and many paths (the arrays and the string table grow);
 * with nothing new in an interval the order is by total. */
static void test_empty_and_many(void **state)
{
	struct pathrate pr;
	char buf[32];

	pathrate_init(&pr);
	pathrate_begin(&pr);
	assert_int_equal(pathrate_end(&pr), 0);
	assert_int_equal(pr.ncur, 0);
	for (int round = 0; round < 2; round++) {
		pathrate_begin(&pr);
		for (int i = 1; i <= 1000; i++) {
			snprintf(buf, sizeof(buf), "f%d;g", i);
			assert_int_equal(pathrate_add(&pr, buf, "X", (uint64_t)i, 1), 0);
		}
		assert_int_equal(pathrate_end(&pr), 0);
	}
	assert_int_equal(pr.ncur, 1000);
	assert_int_equal(pr.nstrs, 1000);
	assert_string_equal(pr.cur[0].frames, "f1000;g");
	assert_int_equal(pr.cur[0].interval, 0);
	assert_string_equal(pr.cur[999].frames, "f1;g");
	assert_int_equal(pr.total_bytes, 500500);
	pathrate_fini(&pr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rounds),
		cmocka_unit_test(test_empty_and_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
