// SPDX-License-Identifier: GPL-2.0
/* unsigned5.c - HotSpot's UNSIGNED5 numbers; see unsigned5.h. */
#include <errno.h>

#include "jvm/unsigned5.h"

#define U5_LG_H 6
#define U5_MAX_BYTES 5

int unsigned5_read(const uint8_t *buf, size_t len, size_t *pos, unsigned excl, uint32_t *val)
{
	const unsigned lo = 256 - (1u << U5_LG_H) - excl; /* L: 192, or 191 without 0 */
	size_t p = *pos;
	uint32_t sum = 0;

	for (unsigned i = 0; i < U5_MAX_BYTES; i++) {
		unsigned b;

		if (p >= len)
			return -ERANGE;
		if (buf[p] < excl)
			return -EBADMSG;
		b = buf[p++] - excl;
		sum += (uint32_t)b << (U5_LG_H * i);
		if (b < lo || i == U5_MAX_BYTES - 1)
			break;
	}
	*pos = p;
	*val = sum;
	return 0;
}

int32_t unsigned5_signed(uint32_t v)
{
	return (int32_t)(v >> 1) ^ -(int32_t)(v & 1);
}
