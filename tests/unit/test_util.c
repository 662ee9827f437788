/* test_util.c - lib/util.c's JSON string escaper (json_str, json_str_put: the
 * one every writer uses) and its integer parsers (parse_u64, parse_u64_prefix, parse_bytes). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/util.h"

/* json_str(@s) as a string (caller frees). */
static char *json_of(const char *s)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	assert_non_null(f);
	json_str(f, s);
	fclose(f);
	return buf;
}

static void test_json_escapes(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "plain", "\"plain\"" },
		{ "", "\"\"" },
		{ "a\"b\\c", "\"a\\\"b\\\\c\"" },
		{ "l1\nl2\r\t", "\"l1\\nl2\\r\\t\"" },
		{ "\x01\x1f", "\"\\u0001\\u001f\"" },
		{ "caf\xc3\xa9", "\"caf\xc3\xa9\"" },   /* UTF-8 passes as it is */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *j = json_of(cases[i].in);
		char buf[64];
		size_t n = json_str_put(buf, sizeof(buf), cases[i].in);

		assert_string_equal(j, cases[i].out);
		/* both sinks write the same bytes */
		assert_int_equal(n, strlen(cases[i].out));
		assert_memory_equal(buf, cases[i].out, n);
		free(j);
	}
	{
		char *j = json_of(NULL);

		assert_string_equal(j, "\"\"");
		free(j);
	}
}

static void test_json_put_bounded(void **state)
{
	char buf[64], big[200];
	size_t n;

	assert_int_equal(json_str_put(buf, 7, "x"), 0); /* no room for anything */
	memset(big, '\x01', sizeof(big) - 1);            /* 6 bytes each escaped */
	big[sizeof(big) - 1] = '\0';
	for (size_t room = 8; room <= sizeof(buf); room++) {
		memset(buf, 0x55, sizeof(buf));
		n = json_str_put(buf, room, big);
		assert_true(n <= room && n >= 2);
		assert_int_equal(buf[0], '"');
		assert_int_equal(buf[n - 1], '"');
		assert_int_equal((n - 2) % 6, 0); /* whole escapes only */
	}
}

/* The virtio balloon's feature bits, as sysfs prints them (this VM's). */
static void test_balloon_reports(void **state)
{
	(void)state;
	assert_true(util_balloon_reports("0110010100000000000000000000000010000000\n"));
	assert_false(util_balloon_reports("0110000100000000000000000000000010000000\n"));
	assert_false(util_balloon_reports("01100"));
	assert_false(util_balloon_reports(""));
	assert_false(util_balloon_reports(NULL));
}

/* Huge pages unless a balloon reports free pages and small faults are
 * cheap: stop 38's VM (0.4-0.5 us a fault) and a PVM guest's (~10 us). */
static void test_hugepages_pay(void **state)
{
	(void)state;
	assert_true(util_hugepages_pay(false, 0.0));
	assert_true(util_hugepages_pay(false, 0.4));
	assert_false(util_hugepages_pay(true, 0.4));
	assert_false(util_hugepages_pay(true, 0.0)); /* not measured */
	assert_false(util_hugepages_pay(true, UTIL_SLOW_FAULT_US - 0.1));
	assert_true(util_hugepages_pay(true, UTIL_SLOW_FAULT_US));
	assert_true(util_hugepages_pay(true, 10.4));
}

/* MEMTRACE_HUGEPAGES decides over the machine, once per process. */
static void test_hugepages_env(void **state)
{
	const char *why = NULL;

	(void)state;
	setenv("MEMTRACE_HUGEPAGES", "0", 1);
	assert_false(util_hugepages_wanted(&why));
	assert_non_null(strstr(why, "MEMTRACE_HUGEPAGES"));
	setenv("MEMTRACE_HUGEPAGES", "1", 1); /* decided already */
	assert_false(util_hugepages_wanted(NULL));
	unsetenv("MEMTRACE_HUGEPAGES");
}

static void test_parse_u64(void **state)
{
	const char *rest;
	uint64_t v = 7;

	assert_int_equal(parse_u64("42", &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(parse_u64("18446744073709551615", &v), 0);
	assert_int_equal(v, UINT64_MAX);
	v = 7;
	assert_int_equal(parse_u64("18446744073709551616", &v), -EINVAL);
	assert_int_equal(parse_u64("-1", &v), -EINVAL);
	assert_int_equal(parse_u64("", &v), -EINVAL);
	assert_int_equal(parse_u64(NULL, &v), -EINVAL);
	assert_int_equal(parse_u64("12k", &v), -EINVAL);
	assert_int_equal(parse_u64("k", &v), -EINVAL);
	assert_int_equal(v, 7); /* untouched on failure */
	assert_int_equal(parse_u64_prefix("64kib", &v, &rest), 0);
	assert_int_equal(v, 64);
	assert_string_equal(rest, "kib");
	assert_int_equal(parse_u64_prefix("9", &v, &rest), 0);
	assert_string_equal(rest, "");
	assert_int_equal(parse_u64_prefix("m", &v, &rest), -EINVAL);
	assert_int_equal(parse_u64_prefix("-3m", &v, &rest), -EINVAL);
}

static void test_parse_bytes(void **state)
{
	uint64_t v = 7;

	assert_int_equal(parse_bytes("512", &v), 0);
	assert_int_equal(v, 512);
	assert_int_equal(parse_bytes("64k", &v), 0);
	assert_int_equal(v, 64 << 10);
	assert_int_equal(parse_bytes("300M", &v), 0);
	assert_int_equal(v, 300ull << 20);
	assert_int_equal(parse_bytes("2GiB", &v), 0);
	assert_int_equal(v, 2ull << 30);
	assert_int_equal(parse_bytes("3gb", &v), 0);
	assert_int_equal(v, 3ull << 30);
	assert_int_equal(parse_bytes("1T", &v), 0);
	assert_int_equal(v, 1ull << 40);
	v = 7;
	assert_int_equal(parse_bytes("", &v), -EINVAL);
	assert_int_equal(parse_bytes("M", &v), -EINVAL);
	assert_int_equal(parse_bytes("-1M", &v), -EINVAL);
	assert_int_equal(parse_bytes("5x", &v), -EINVAL);
	assert_int_equal(parse_bytes("5 M", &v), -EINVAL);
	assert_int_equal(parse_bytes("5mbb", &v), -EINVAL);
	assert_int_equal(parse_bytes("5kix", &v), -EINVAL);
	assert_int_equal(parse_bytes("4194305T", &v), -EINVAL); /* over 2^62 */
	assert_int_equal(v, 7); /* untouched on failure */
	assert_int_equal(parse_bytes("4194304T", &v), 0);
	assert_int_equal(v, 1ull << 62);
}

/* util_populate: the pages wholly inside the range resident at once (the
 * kernel's own account, mincore), the ones it only touches left alone,
 * contents kept. */
static void test_populate(void **state)
{
	size_t page = 4096, n = 16;
	unsigned char vec[16];
	char *p = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)state;
	assert_true(p != MAP_FAILED);
	p[3 * page] = 42; /* touched before: kept */
	assert_int_equal(mincore(p, n * page, vec), 0);
	assert_int_equal(vec[5] & 1, 0);
	assert_int_equal(util_populate(p + 100, 10 * page), 0); /* pages 1..9 wholly inside */
	assert_int_equal(mincore(p, n * page, vec), 0);
	assert_int_equal(vec[0] & 1, 0);
	for (size_t i = 1; i <= 9; i++)
		assert_int_equal(vec[i] & 1, 1);
	assert_int_equal(vec[10] & 1, 0);
	assert_int_equal(p[3 * page], 42);
	assert_int_equal(p[5 * page], 0);
	assert_int_equal(util_populate(NULL, 10 * page), 0); /* nothing */
	assert_int_equal(util_populate(p + 1, 100), 0);      /* no whole page: nothing */
	munmap(p, n * page);
}

/* util_prefault_read: every page the range touches mapped at once (rounded
 * outward, unlike util_populate: a read's range), nothing beyond it, contents
 * unchanged (anonymous pages: the zero page, present to mincore). */
static void test_prefault_read(void **state)
{
	size_t page = 4096, n = 8;
	unsigned char vec[8];
	char *p = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)state;
	assert_true(p != MAP_FAILED);
	util_prefault_read(p + 100, 2 * page); /* touches pages 0, 1 and 2 */
	assert_int_equal(mincore(p, n * page, vec), 0);
	for (size_t i = 0; i <= 2; i++)
		assert_int_equal(vec[i] & 1, 1);
	for (size_t i = 3; i < n; i++)
		assert_int_equal(vec[i] & 1, 0);
	assert_int_equal(p[page], 0);
	util_prefault_read(NULL, page); /* nothing, no crash */
	util_prefault_read(p + 5 * page, 0);
	assert_int_equal(mincore(p, n * page, vec), 0);
	assert_int_equal(vec[5] & 1, 0);
	munmap(p, n * page);
}

/* util_huge_calloc() in a process that wants huge pages: 0 when it holds. */
static int huge_calloc_child(void)
{
	size_t n = (3u << 20) + 5; /* 3 MiB and a bit: rounded up to 4 */
	unsigned char *p;

	setenv("MEMTRACE_HUGEPAGES", "1", 1);
	if (!util_hugepages_wanted(NULL))
		return 1;
	p = util_huge_calloc(n, 1);
	if (!p || ((uintptr_t)p & ((2u << 20) - 1)))
		return 2; /* on a 2 MiB boundary */
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 3;
	memset(p, 0xab, n);
	free(p);
	p = util_huge_calloc(n, 1); /* the block malloc kept, dirty: zeroed */
	for (size_t i = 0; p && i < n; i++)
		if (p[i])
			return 4;
	free(p);
	p = util_huge_calloc(100, 8); /* small: calloc()'s */
	for (size_t i = 0; p && i < 800; i++)
		if (p[i])
			return 5;
	free(p);
	return util_huge_calloc(SIZE_MAX / 4, 8) ? 6 : 0; /* overflow: NULL */
}

/* A zeroed array for random writes: 2 MiB-aligned in 2 MiB pages where they
 * are wanted, zeroed even from memory malloc kept; calloc() below 1 MiB. */
static void test_huge_calloc(void **state)
{
	int st = -1;
	pid_t pid;
	char *p;

	(void)state;
	pid = fork(); /* the huge-page decision is once per process */
	assert_true(pid >= 0);
	if (!pid)
		_exit(huge_calloc_child());
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	p = util_huge_calloc(0, 8); /* room for one */
	assert_non_null(p);
	assert_int_equal(p[0], 0);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* first: it forks a process that decides on huge pages */
		cmocka_unit_test(test_huge_calloc),
		cmocka_unit_test(test_json_escapes),
		cmocka_unit_test(test_json_put_bounded),
		cmocka_unit_test(test_parse_u64),
		cmocka_unit_test(test_parse_bytes),
		cmocka_unit_test(test_balloon_reports),
		cmocka_unit_test(test_hugepages_pay),
		cmocka_unit_test(test_hugepages_env),
		cmocka_unit_test(test_populate),
		cmocka_unit_test(test_prefault_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
