/* test_stopflag.c - lib/stopflag.c: SIGINT and SIGTERM raise the one stop
 * flag once caught, and the handlers it replaced come back on restore. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <cmocka.h>

#include "lib/stopflag.h"

static volatile sig_atomic_t theirs;

static void their_handler(int sig)
{
	theirs = sig;
}

static void test_catch_raise_restore(void **state)
{
	struct stopflag_saved old;
	struct sigaction sa, now;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = their_handler;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	assert_false(stopflag_raised());
	stopflag_catch(&old);
	sigaction(SIGINT, NULL, &now);
	assert_true(now.sa_flags & SA_RESTART); /* as signal(2) installs it */
	raise(SIGTERM);
	assert_true(stopflag_raised());
	assert_int_equal(theirs, 0);
	stopflag_restore(&old);
	raise(SIGINT);
	assert_int_equal(theirs, SIGINT); /* theirs again */
	assert_true(stopflag_raised());   /* the flag stays */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_catch_raise_restore),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
