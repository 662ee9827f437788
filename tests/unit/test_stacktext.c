/* test_stacktext.c - Java stacks as one line of text (recordings): round
 * trips with kinds, lines and files; separators in names; the length cut;
 * malformed text refused. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "jstack/stacktext.h"

static void test_roundtrip(void **state)
{
	struct profile_frame f[] = {
		{ "java.lang.Thread.run", "Thread.java", 840, PROFILE_INTERPRETED },
		{ "pkg.A.run", "A.java", 10, PROFILE_C2 },
		{ "pkg.A.inl", NULL, 0, PROFILE_INLINED },
		{ "pkg.B.c1", "B.java", 7, PROFILE_C1 },
		{ "[stub]", NULL, 0, PROFILE_OTHER },
		{ "pkg.N.nat", NULL, 0, PROFILE_NATIVE },
	}, g[8];
	char buf[1024];
	int len = stacktext_encode(f, 6, buf, sizeof(buf));

	assert_true(len > 0 && (size_t)len == strlen(buf));
	assert_string_equal(buf, "java.lang.Thread.run\t0\t840\tThread.java;pkg.A.run\tj\t10\tA.java;"
				 "pkg.A.inl\ti\t0\t;pkg.B.c1\t1\t7\tB.java;[stub]\to\t0\t;pkg.N.nat\tn\t0\t");
	assert_int_equal(stacktext_decode(buf, g, 8), 6);
	for (int i = 0; i < 6; i++) {
		assert_string_equal(g[i].name, f[i].name);
		assert_int_equal(g[i].line, f[i].line);
		assert_int_equal(g[i].kind, f[i].kind);
		if (f[i].file)
			assert_string_equal(g[i].file, f[i].file);
		else
			assert_null(g[i].file);
	}
	/* at most @max frames */
	len = stacktext_encode(f, 6, buf, sizeof(buf));
	assert_int_equal(stacktext_decode(buf, g, 2), 2);
	buf[0] = '\0';
	assert_int_equal(stacktext_decode(buf, g, 8), 0);
}

static void test_separators_replaced(void **state)
{
	struct profile_frame f[] = { { "a;b\tc\nd", "x;y", 3, PROFILE_C2 } }, g[2];
	char buf[256];

	assert_true(stacktext_encode(f, 1, buf, sizeof(buf)) > 0);
	assert_int_equal(stacktext_decode(buf, g, 2), 1);
	assert_string_equal(g[0].name, "a:b?c?d");
	assert_string_equal(g[0].file, "x:y");
}

/* Too long: frames go from the root, a marker says so, the leaf stays.
 * NCUT frames of ~60 characters: twice STACKTEXT_MAX. */
#define NCUT 1000
static void test_cut(void **state)
{
	struct profile_frame f[NCUT], g[NCUT];
	char *buf = malloc(STACKTEXT_MAX), name[64];
	int n;

	for (int i = 0; i < NCUT; i++) {
		snprintf(name, sizeof(name), "pkg.very.long.package.name.Klass%03d.method", i);
		f[i] = (struct profile_frame){ strdup(name), "Klass.java", i + 1, PROFILE_C2 };
	}
	assert_true(stacktext_encode(f, NCUT, buf, STACKTEXT_MAX) < STACKTEXT_MAX);
	n = stacktext_decode(buf, g, NCUT);
	assert_true(n > 100 && n < NCUT);
	assert_string_equal(g[0].name, "[stack cut: text length]");
	assert_string_equal(g[n - 1].name, f[NCUT - 1].name);
	assert_int_equal(g[n - 1].line, NCUT);
	assert_int_equal(stacktext_encode(f, 1, buf, 8), -EINVAL);
	for (int i = 0; i < NCUT; i++)
		free((void *)f[i].name);
	free(buf);
}

static void test_malformed(void **state)
{
	static const char *const bad[] = {
		"name", "name\tj\t1", "name\tx\t1\t", "name\tj\t-1\t", "name\tj\t1x\t",
		"\tj\t1\t", "a\tj\t1\t;b", "name\tjj\t1\t",
	};
	struct profile_frame g[4];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *t = strdup(bad[i]);

		if (stacktext_decode(t, g, 4) != -EBADMSG)
			fail_msg("accepted \"%s\"", bad[i]);
		free(t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_separators_replaced),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
