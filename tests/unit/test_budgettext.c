// SPDX-License-Identifier: GPL-2.0
/*
 * test_budgettext.c - what alloc says its windows cost: a measured share as
 * a percentage, and a measure below zero (the thread's pace varied more than
 * the windows slowed it: seen -0.72 % on a JDBC server) never as a negative
 * cost.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sink/budgettext.h"

static char *clause(double loss)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	budgettext_loss(f, loss);
	fclose(f);
	return buf;
}

static void test_measured(void **state)
{
	char *s = clause(0.0042);

	(void)state;
	assert_string_equal(s, "; the windows cost the busiest thread 0.42% of its time, as "
			       "measured from its own allocation counter");
	free(s);
}

static void test_below_zero_is_not_a_cost(void **state)
{
	const double noise[] = { -0.0072, -0.25, 0, 0.00001 };

	(void)state;
	for (size_t i = 0; i < sizeof(noise) / sizeof(noise[0]); i++) {
		char *s = clause(noise[i]);

		assert_null(strchr(s, '-'));
		assert_null(strchr(s, '%'));
		assert_non_null(strstr(s, "too little for its own allocation counter to measure"));
		free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_measured),
		cmocka_unit_test(test_below_zero_is_not_a_cost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
