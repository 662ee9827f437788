// SPDX-License-Identifier: GPL-2.0
/* cmd_check.c - `memtrace check FILE`: rules 1-5 on a recording. */
#include <getopt.h>
#include <string.h>

#include "monitor/check.h"
#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "monitor/recording_read.h"
#include "lib/util.h"

static const char *const rule_text[6] = {
	"",
	"creation reported before reclamation",
	"activity only between creation and reclamation",
	"no reported entity reclaimed silently",
	"no invocation reported without its parent",
	"synchronization events well formed per thread and lock",
};

static void on_violation(void *ctx, uint64_t line, int rule, const char *msg)
{
	const char *file = ctx;

	if (mt_opts.json) {
		printf("{\"event\":\"violation\",\"line\":%llu,\"rule\":%d,\"message\":",
		       (unsigned long long)line, rule);
		json_str(stdout, msg);
		printf("}\n");
	} else {
		printf("%s:%llu: rule %d (%s): %s\n", file, (unsigned long long)line, rule,
		       rule_text[rule], msg);
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace check [--json] FILE\n"
		   "  Verifies rules 1-5 of consistent partial monitoring on a recording;\n"
		   "  prints each violation as FILE:LINE: rule N: why. Exit 1 on any, or on a\n"
		   "  line that is not of the format. A recording cut short (its writer killed,\n"
		   "  a full disk, a truncated file) is checked up to the cut: a warning on\n"
		   "  stderr says where it was cut (JSON: \"complete\":false and \"cut\"), and\n"
		   "  the exit is 0 if what is there breaks no rule.\n");
}

int do_check(int argc, char **argv)
{
	struct recording_header h;
	struct recording_reader *r;
	struct mt_check *c;
	uint64_t line = 0, n = 0;
	const struct recording_cut *cut;
	const char *text;
	char why[256];
	struct mt_ev e;
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cmdopt o = { .usage = usage };
	int rc, i, opt;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "jh", longopts, NULL)) != -1) {
		rc = cmdopt_common(opt, optarg, &o);
		if (rc != MT_CMDOPT_MORE)
			return rc;
	}
	i = optind;
	rc = cmdopt_recording(argc, argv, i, "check", &r, &h);
	if (rc)
		return rc;
	c = check_new(on_violation, argv[i]);
	if (!c) {
		recording_close_read(r);
		return 1;
	}
	while ((rc = recording_next(r, &e, &text, &line)) > 0) {
		check_feed(c, line, &e);
		n++;
	}
	if (rc < 0)
		p_err("%s: %s", argv[i], recording_error(r));
	cut = recording_cut(r);
	if (rc == 0 && cut->kind != REC_CUT_NONE) {
		recording_cut_explain(r, why, sizeof(why));
		p_warn("%s was cut short: %s", argv[i], why);
	}
	if (mt_opts.json) {
		printf("{\"event\":\"check\",\"events\":%llu,\"violations\":%llu,\"rule1\":%llu,"
		       "\"rule2\":%llu,\"rule3\":%llu,\"rule4\":%llu,\"rule5\":%llu,\"complete\":%s",
		       (unsigned long long)n, (unsigned long long)check_count(c, 0),
		       (unsigned long long)check_count(c, 1), (unsigned long long)check_count(c, 2),
		       (unsigned long long)check_count(c, 3), (unsigned long long)check_count(c, 4),
		       (unsigned long long)check_count(c, 5),
		       rc == 0 && cut->kind == REC_CUT_NONE ? "true" : "false");
		if (rc == 0 && cut->kind != REC_CUT_NONE)
			printf(",\"cut\":{\"reason\":\"%s\",\"at_byte\":%llu,\"file_bytes\":%llu,"
			       "\"last_line\":%llu,\"blocks\":%llu}", recording_cut_name(cut->kind),
			       (unsigned long long)cut->at, (unsigned long long)cut->size,
			       (unsigned long long)cut->line, (unsigned long long)cut->members);
		printf("}\n");
	} else {
		printf("%s: %llu events, %llu violations%s%s%s\n", argv[i], (unsigned long long)n,
		       (unsigned long long)check_count(c, 0),
		       rc == 0 && cut->kind != REC_CUT_NONE ? " (cut short: " : "",
		       rc == 0 && cut->kind != REC_CUT_NONE ? recording_cut_name(cut->kind) : "",
		       rc == 0 && cut->kind != REC_CUT_NONE ? ")" : "");
	}
	rc = rc < 0 || check_count(c, 0) ? 1 : 0;
	check_free(c);
	recording_close_read(r);
	return rc;
}
