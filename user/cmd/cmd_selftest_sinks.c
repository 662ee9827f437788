// SPDX-License-Identifier: GPL-2.0
/* cmd_selftest_sinks.c - `memtrace selftest-sinks OUTDIR`: write a synthetic
 * allocation profile with known totals through every profile sink, so tests
 * can check the files with the real readers (go tool pprof, a browser). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmds.h"
#include "sink/sinks.h"
#include "lib/util.h"

/* The profile: 100,000,000 bytes in 1,000 samples, four distinct leaves. */
static const struct {
	const char *frames[6];
	uint64_t bytes, count;
} rows[] = {
	{ { "java.lang.Thread.run", "com.example.App.main", "com.example.App.handle",
	    "java.lang.StringBuilder.toString", "byte[]" }, 30000000, 300 },
	{ { "java.lang.Thread.run", "com.example.App.main", "com.example.App.handle",
	    "java.lang.StringBuilder.toString", "byte[]" }, 20000000, 200 },
	{ { "java.lang.Thread.run", "com.example.App.main", "com.example.Cache.put",
	    "java.util.HashMap.resize", "java.util.HashMap$Node[]" }, 30000000, 300 },
	{ { "java.lang.Thread.run", "com.example.App.main", "com.example.App.parse",
	    "long[]" }, 15000000, 150 },
	{ { "java.lang.Thread.run", "com.example.App.main", "com.example.Evil.<init>",
	    "<script>alert('x&y')</script>\"q\"", "com.example.\xc3\x9cn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9$\xce\xbb" },
	  5000000, 50 },
};

int do_selftest_sinks(int argc, char **argv)
{
	struct profile *p;
	char path[4096];
	FILE *f;
	int err = 0;

	if (argc != 2 || argv[1][0] == '-') {
		fprintf(argc == 2 ? stdout : stderr,
			"usage: memtrace selftest-sinks OUTDIR\n"
			"  Writes alloc.collapsed, alloc.html and alloc.pb.gz for a synthetic\n"
			"  profile of 100,000,000 bytes in 1,000 samples (for tests).\n");
		return argc == 2 ? 0 : 2;
	}
	p = profile_new();
	if (!p) {
		p_err("out of memory");
		return 1;
	}
	for (size_t i = 0; i < MT_ARRAY_SIZE(rows) && !err; i++) {
		int n = 0;

		while (n < 6 && rows[i].frames[n])
			n++;
		err = profile_add(p, rows[i].frames, n, rows[i].bytes, rows[i].count);
	}
	if (err) {
		p_err("building the profile failed: %s", strerror(-err));
		profile_free(p);
		return 1;
	}
	profile_set_window(p, real_ns() - 10000000000ULL, 10000000000ULL);

	snprintf(path, sizeof(path), "%s/alloc.collapsed", argv[1]);
	f = fopen(path, "w");
	if (!f || (err = sink_collapsed_write(p, f)))
		goto fail;
	fclose(f);
	snprintf(path, sizeof(path), "%s/alloc.html", argv[1]);
	f = fopen(path, "w");
	if (!f || (err = sink_flamegraph_write(p, f, "memtrace selftest <profile> & \"sinks\"")))
		goto fail;
	fclose(f);
	snprintf(path, sizeof(path), "%s/alloc.pb.gz", argv[1]);
	f = NULL;
	if ((err = sink_pprof_write(p, path)))
		goto fail;
	profile_free(p);
	return 0;
fail:
	if (!err)
		err = -errno;
	p_err("cannot write %s: %s", path, strerror(-err));
	if (f)
		fclose(f);
	profile_free(p);
	return 1;
}
