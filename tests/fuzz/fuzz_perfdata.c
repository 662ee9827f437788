// SPDX-License-Identifier: GPL-2.0
/* fuzz_perfdata.c - libFuzzer entry for the hsperfdata reader
 * (user/jvm/perfdata.c) and a hostile JVM behind it. The input is
 *   u16 n, u8 how, then the file's first n bytes (as memtrace opens it),
 *   then the bytes the JVM writes over it afterwards,
 * so the counters are read once from the file as opened, then again after
 * the JVM (which owns the file) rewrote it in place - and, when @how's low
 * bit is set, cut it to the rewritten length. Seeds: real hsperfdata
 * files of JDK 17 and 25. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "jvm/perfdata.h"

static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	snprintf(path, sizeof(path), "/dev/shm/fuzz_perfdata.%d", getpid());
	return 0;
}

static void query(const struct mt_perfdata *pd)
{
	struct mt_safepoints sp;
	struct mt_sp_window w;
	uint64_t ns;
	int64_t v;

	perfdata_long(pd, "sun.os.hrt.frequency", &v);
	perfdata_long(pd, "sun.gc.collector.0.invocations", &v);
	perfdata_safepoints(pd, &sp);
	perfdata_window_begin(pd, &w);
	perfdata_window_end(pd, &w, &ns);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mt_perfdata *pd;
	size_t n, rest;
	char why[160];
	uint8_t how;
	int fd;

	if (size < 3)
		return 0;
	n = (size_t)data[0] | (size_t)data[1] << 8;
	how = data[2];
	data += 3;
	size -= 3;
	if (n > size)
		n = size;
	rest = size - n;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return 0;
	if (write(fd, data, n) != (ssize_t)n) {
		close(fd);
		return 0;
	}
	pd = perfdata_open_file(path, why, sizeof(why));
	if (pd) {
		query(pd);
		if (rest) {
			/* the JVM rewrites (and maybe cuts) its file under memtrace */
			if (pwrite(fd, data + n, rest, 0) == (ssize_t)rest && (how & 1) &&
			    ftruncate(fd, (off_t)rest))
				;
			query(pd);
		}
		perfdata_free(pd);
	}
	close(fd);
	unlink(path);
	return 0;
}
