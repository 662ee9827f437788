/* test_fastexit.c - lib/fastexit.c: a process holding much memory leaves
 * its freeing to a helper that shares that memory, holds none of its files,
 * ends only after it, and is reaped by the reaper; one holding little
 * starts none. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/fastexit.h"

#define HELD (96u << 20)

static void test_little_memory_no_helper(void **state)
{
	(void)state;
	assert_int_equal(fastexit_helper(UINT64_MAX), 0);
}

/* The helper's VmRSS in KiB and its name, from /proc; -1 when gone. */
static long helper_rss_kb(pid_t pid, char *name, size_t n)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	name[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Name:\t", 6)) {
			snprintf(name, n, "%s", line + 6);
			name[strcspn(name, "\n")] = '\0';
		}
		if (!strncmp(line, "VmRSS:", 6))
			kb = strtol(line + 6, NULL, 10);
		if (!strncmp(line, "State:\tZ", 8))
			kb = -1;
	}
	fclose(f);
	return kb;
}

static void test_helper_frees_after_exit(void **state)
{
	int fds[2], go[2], status;
	pid_t child, helper = 0, w;
	char name[256] = "";
	long kb = -1;

	(void)state;
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0); /* its reaper: us */
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(pipe(go), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		char *volatile p = malloc(HELD); /* volatile: not optimised away */
		pid_t h;
		char c;

		close(fds[0]);
		close(go[1]);
		if (!p)
			_exit(2);
		memset(p, 1, HELD);
		h = fastexit_helper(64u << 20);
		if (write(fds[1], &h, sizeof(h)) != sizeof(h))
			_exit(3);
		/* the test looks at the helper meanwhile, then says go */
		if (read(go[0], &c, 1) != 1)
			_exit(5);
		_exit(p[HELD - 1] == 1 ? 7 : 4);
	}
	close(fds[1]);
	close(go[0]);
	assert_int_equal(read(fds[0], &helper, sizeof(helper)), sizeof(helper));
	assert_true(helper > 0);
	/* alive while the child is, sharing its memory; named once it has run
	 * (a busy machine may not run it at once: up to 5 s) */
	for (int i = 0; i < 500 && strcmp(name, "memtrace-exit"); i++) {
		kb = helper_rss_kb(helper, name, sizeof(name));
		if (strcmp(name, "memtrace-exit"))
			usleep(10 * 1000);
	}
	assert_true(kb >= (long)(HELD >> 10));
	assert_string_equal(name, "memtrace-exit");
	assert_int_equal(write(go[1], "g", 1), 1);
	close(go[1]);
	/* the pipe's end comes with the child's: the helper kept no copy */
	assert_int_equal(read(fds[0], &w, sizeof(w)), 0);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 7);
	/* then it ends, reparented to us */
	assert_int_equal(waitpid(helper, &status, 0), helper);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(fds[0]);
	prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_little_memory_no_helper),
		cmocka_unit_test(test_helper_frees_after_exit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
