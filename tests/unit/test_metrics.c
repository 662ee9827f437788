/* test_metrics.c - the metrics registry and its OpenMetrics / JSON text. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "serve/metrics.h"

static char *om(struct metrics *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_int_equal(metrics_write_openmetrics(m, f), 0);
	fclose(f);
	return buf;
}

static char *js(struct metrics *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_int_equal(metrics_write_json(m, f), 0);
	fclose(f);
	return buf;
}

static void test_counter_gauge_text(void **state)
{
	struct metrics *m = metrics_new();
	char *t;

	assert_int_equal(metrics_register(m, "mt_gc_collections", METRIC_COUNTER, NULL,
					  "Collections.\nSecond line \\"), 0);
	assert_int_equal(metrics_register(m, "mt_pool_used_bytes", METRIC_GAUGE, "bytes", "Used."), 0);
	assert_int_equal(metrics_counter_add(m, "mt_gc_collections",
					     (const char *[]){ "pid", "7", "collector", "G1 \"Young\"\n\\", NULL }, 2), 0);
	assert_int_equal(metrics_counter_add(m, "mt_gc_collections",
					     (const char *[]){ "collector", "G1 \"Young\"\n\\", "pid", "7", NULL }, 1), 0);
	assert_int_equal(metrics_gauge_set(m, "mt_pool_used_bytes",
					   (const char *[]){ "pid", "7", "container_id", "", NULL }, 1.5), 0);
	t = om(m);
	assert_string_equal(t,
		"# TYPE mt_gc_collections counter\n"
		"# HELP mt_gc_collections Collections.\\nSecond line \\\\\n"
		"mt_gc_collections_total{collector=\"G1 \\\"Young\\\"\\n\\\\\",pid=\"7\"} 3\n"
		"# TYPE mt_pool_used_bytes gauge\n"
		"# UNIT mt_pool_used_bytes bytes\n"
		"# HELP mt_pool_used_bytes Used.\n"
		"mt_pool_used_bytes{pid=\"7\"} 1.5\n"
		"# EOF\n");
	free(t);
	metrics_free(m);
	metrics_free(NULL);
}

static void test_histogram(void **state)
{
	struct metrics *m = metrics_new();
	const double b[] = { 0.001, 0.01, 0.1 };
	const char *l[] = { "pid", "1", NULL };
	char *t;

	assert_int_equal(metrics_register_histogram(m, "mt_pause_seconds", "seconds", "Pauses.", b, 3), 0);
	assert_int_equal(metrics_histogram_observe(m, "mt_pause_seconds", l, 0.0005), 0);
	assert_int_equal(metrics_histogram_observe(m, "mt_pause_seconds", l, 0.001), 0);
	assert_int_equal(metrics_histogram_observe(m, "mt_pause_seconds", l, 0.05), 0);
	assert_int_equal(metrics_histogram_observe(m, "mt_pause_seconds", l, 3), 0);
	t = om(m);
	assert_non_null(strstr(t, "mt_pause_seconds_bucket{pid=\"1\",le=\"0.001\"} 2\n"
				  "mt_pause_seconds_bucket{pid=\"1\",le=\"0.01\"} 2\n"
				  "mt_pause_seconds_bucket{pid=\"1\",le=\"0.1\"} 3\n"
				  "mt_pause_seconds_bucket{pid=\"1\",le=\"+Inf\"} 4\n"
				  "mt_pause_seconds_count{pid=\"1\"} 4\n"
				  "mt_pause_seconds_sum{pid=\"1\"} 3.0514999999999999\n"));
	free(t);
	t = js(m);
	assert_non_null(strstr(t, "\"count\":4,"));
	assert_non_null(strstr(t, "{\"le\":\"+Inf\",\"count\":4}"));
	free(t);
	metrics_free(m);
}

static void test_rejects(void **state)
{
	struct metrics *m = metrics_new();

	assert_int_equal(metrics_register(m, "bad name", METRIC_GAUGE, NULL, ""), -EINVAL);
	assert_int_equal(metrics_register(m, "x_total", METRIC_COUNTER, NULL, ""), -EINVAL);
	assert_int_equal(metrics_register(m, "x_seconds", METRIC_GAUGE, "bytes", ""), -EINVAL);
	assert_int_equal(metrics_register(m, "x", METRIC_COUNTER, NULL, ""), 0);
	assert_int_equal(metrics_register(m, "x", METRIC_COUNTER, NULL, ""), 0);
	assert_int_equal(metrics_register(m, "x", METRIC_GAUGE, NULL, ""), -EEXIST);
	assert_int_equal(metrics_gauge_set(m, "x", NULL, 1), -EINVAL);
	assert_int_equal(metrics_gauge_set(m, "nope", NULL, 1), -ENOENT);
	assert_int_equal(metrics_counter_add(m, "x", NULL, -1), -EINVAL);
	assert_int_equal(metrics_counter_add(m, "x", (const char *[]){ "le", "1", NULL }, 1), -EINVAL);
	assert_int_equal(metrics_counter_add(m, "x", (const char *[]){ "a", "1", "a", "2", NULL }, 1), -EINVAL);
	assert_int_equal(metrics_counter_set(m, "x", NULL, 5), 0);
	assert_int_equal(metrics_counter_set(m, "x", NULL, 4), -EINVAL);
	metrics_free(m);
}

static void test_remove_series(void **state)
{
	struct metrics *m = metrics_new();
	char *t;

	metrics_register(m, "a", METRIC_GAUGE, NULL, "");
	metrics_register(m, "b", METRIC_COUNTER, NULL, "");
	metrics_gauge_set(m, "a", (const char *[]){ "pid", "1", NULL }, 1);
	metrics_gauge_set(m, "a", (const char *[]){ "pid", "2", NULL }, 2);
	metrics_counter_add(m, "b", (const char *[]){ "pid", "1", "x", "y", NULL }, 1);
	assert_int_equal(metrics_series_count(m), 3);
	assert_int_equal(metrics_remove_series(m, "pid", "1"), 2);
	assert_int_equal(metrics_series_count(m), 1);
	t = om(m);
	assert_string_equal(t, "# TYPE a gauge\na{pid=\"2\"} 2\n# TYPE b counter\n# EOF\n");
	free(t);
	t = js(m);
	assert_string_equal(t, "{\"metrics\":[{\"name\":\"a\",\"type\":\"gauge\",\"unit\":\"\",\"help\":\"\","
			       "\"series\":[{\"labels\":{\"pid\":\"2\"},\"value\":2}]},"
			       "{\"name\":\"b\",\"type\":\"counter\",\"unit\":\"\",\"help\":\"\",\"series\":[]}]}\n");
	free(t);
	metrics_free(m);
}

static void test_remove_family_series(void **state)
{
	struct metrics *m = metrics_new();

	metrics_register(m, "a", METRIC_GAUGE, NULL, "");
	metrics_register(m, "b", METRIC_COUNTER, NULL, "");
	metrics_gauge_set(m, "a", (const char *[]){ "pid", "1", NULL }, 1);
	metrics_counter_add(m, "b", (const char *[]){ "pid", "1", "class", "X", NULL }, 1);
	metrics_counter_add(m, "b", (const char *[]){ "pid", "1", "class", "Y", NULL }, 1);
	metrics_counter_add(m, "b", (const char *[]){ "pid", "2", "class", "X", NULL }, 1);
	assert_int_equal(metrics_remove_family_series(m, "b", "pid", "1"), 2);
	assert_int_equal(metrics_remove_family_series(m, "nope", "pid", "1"), 0);
	assert_int_equal(metrics_series_count(m), 2); /* a{pid=1} and b{pid=2} stay */
	/* a series removed and created again starts from zero */
	metrics_counter_add(m, "b", (const char *[]){ "pid", "1", "class", "X", NULL }, 3);
	assert_int_equal(metrics_counter_set(m, "b", (const char *[]){ "pid", "1", "class", "X", NULL }, 3), 0);
	metrics_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counter_gauge_text),
		cmocka_unit_test(test_histogram),
		cmocka_unit_test(test_rejects),
		cmocka_unit_test(test_remove_series),
		cmocka_unit_test(test_remove_family_series),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
