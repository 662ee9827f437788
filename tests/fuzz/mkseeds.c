// SPDX-License-Identifier: GPL-2.0
/* mkseeds.c - write the fixture heap (tests/unit/snap_fixture.h) as seed
 * inputs for the snapshot and hprof fuzzers: mkseeds SNAPDIR HPROFDIR. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"
#include "snap_fixture.h"

static int put(const char *dir, const char *name, const void *p, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n)
		return 1;
	return fclose(f) != 0;
}

int main(int argc, char **argv)
{
	static char recs[8192];
	struct mt_snapshot s;
	char path[4096], why[128];
	size_t n = fx_records(recs, sizeof(recs)), hn;
	unsigned char *h = fx_hprof(&hn);

	if (argc != 3)
		return 2;
	snapshot_init(&s);
	if (snapshot_add_records(&s, recs, n, true, why, sizeof(why)))
		return 1;
	snprintf(path, sizeof(path), "%s/fixture.snap", argv[1]);
	if (snapshot_write(&s, path) || put(argv[1], "fixture.records", recs, n) ||
	    put(argv[2], "fixture.hprof", h, hn))
		return 1;
	snapshot_free(&s);
	free(h);
	return 0;
}
