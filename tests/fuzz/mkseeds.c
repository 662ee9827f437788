// SPDX-License-Identifier: GPL-2.0
/* mkseeds.c - write the fixture heap (tests/unit/snap_fixture.h) as seed
 * inputs for the snapshot and hprof fuzzers: mkseeds SNAPDIR HPROFDIR. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/snapfile.h"
#include "heap/snaprec.h"
#include "heap/snapshot.h"
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
	if (snaprec_add(&s, recs, n, true, why, sizeof(why)))
		return 1;
	snprintf(path, sizeof(path), "%s/fixture.snap", argv[1]);
	if (snapfile_write(&s, path, why, sizeof(why)) || put(argv[1], "fixture.records", recs, n) ||
	    put(argv[2], "fixture.hprof", h, hn))
		return 1;
	snapshot_free(&s);
	/* the same classes from an untagged walk: the Order class (id 2) named at
	 * 0x1000, a root Order at 0x3000 with its CLASS reference and a field
	 * reference to a second Order (user/heap/walkids.c resolves them) */
	{
		static char urecs[8192 + 1024];
		char nb[8 + 16];
		struct mt_ap_hnamed_hdr nh = { .next_id = 100 };
		struct mt_ap_hnamed nm = { .addr = 0x1000, .id = 2 };
		struct mt_ap_hvisit v[] = {
			{ MT_AP_HV_ADDR | 0x3000, 0, 3, -1, -1, 21 | MT_AP_HV_KEEP },
			{ MT_AP_HV_ADDR | 0x1000, MT_AP_HV_ADDR | 0x3000, 60, -1, -1, 1 },
			{ MT_AP_HV_ADDR | 0x3020, MT_AP_HV_ADDR | 0x3000, 3, -1, 2, 8 | MT_AP_HV_KEEP },
		};
		size_t un = fx_records(urecs, sizeof(urecs));

		memcpy(nb, &nh, 8);
		memcpy(nb + 8, &nm, 16);
		if (mt_ap_rec_put(urecs, sizeof(urecs), &un, MT_AP_HREC_NAMED, 1, nb, sizeof(nb)) < 0 ||
		    mt_ap_rec_put(urecs, sizeof(urecs), &un, MT_AP_HREC_VISITS, 3, v, sizeof(v)) < 0)
			return 1;
		snapshot_init(&s);
		if (snaprec_add(&s, urecs, un, true, why, sizeof(why)))
			return 1;
		snprintf(path, sizeof(path), "%s/untagged.snap", argv[1]);
		if (snapfile_write(&s, path, why, sizeof(why)) || put(argv[1], "untagged.records", urecs, un))
			return 1;
		snapshot_free(&s);
	}
	free(h);
	return 0;
}
