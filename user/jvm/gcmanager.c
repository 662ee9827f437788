// SPDX-License-Identifier: GPL-2.0
/* gcmanager.c - a GCMemoryManager's name from its address; see gcmanager.h. */
#include <errno.h>
#include <string.h>

#include "jvm/gcmanager.h"
#include "jvm/proc.h"

#define SCAN_BYTES 256

/* The string at @addr into @out if it is printable, NUL-terminated and
 * 2..@len-1 bytes long (one read up to the page's end: a name never spans
 * a page in practice, and a miss only costs this candidate). */
static int read_printable(int pid, uint64_t addr, char *out, size_t len)
{
	size_t n = len, room = 4096 - (addr & 4095);

	if (n > room)
		n = room;
	if (n < 3 || proc_read_mem(pid, addr, out, n))
		return -ENOENT;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)out[i];

		if (!c)
			return i >= 2 ? 0 : -ENOENT;
		if (c < 0x20 || c > 0x7e)
			return -ENOENT;
	}
	return -ENOENT;
}

int gcmanager_name(int pid, uint64_t obj, uint64_t skip, char *out, size_t len)
{
	uint64_t w[SCAN_BYTES / 8];
	int err;

	out[0] = '\0';
	if (!obj || len < 3)
		return -ENOENT;
	err = proc_read_mem(pid, obj, w, sizeof(w));
	if (err)
		return err;
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		/* user-space pointers only; the vtable's and the pools' point at
		 * addresses (non-printable bytes), small integers fail here */
		if (w[i] < 4096 || w[i] >> 47 || w[i] == skip || w[i] == obj)
			continue;
		if (!read_printable(pid, w[i], out, len))
			return 0;
	}
	out[0] = '\0';
	return -ENOENT;
}
