// SPDX-License-Identifier: GPL-2.0
/* fuzz_agent_request.c - libFuzzer entry for the agent's request parser
 * (user/agent/request.c), which runs inside the production JVM on the bytes
 * memtrace (or anyone allowed on its socket) sends. The input's first byte
 * picks the receive buffer's size; the rest is the byte stream as the
 * socket thread receives it, cut into frames as the server does: a frame
 * consumed, an incomplete one waited for (here: the end), an error ends the
 * session. Seeds: the requests of real sessions (capture-seeds.sh). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../user/agent/request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t caps[] = { MT_AP_HDR_SIZE + 1, 64, 4096, MT_AP_HDR_SIZE + MT_AP_MAX_PAYLOAD };
	bool hello = false;
	size_t cap, off = 0;
	uint8_t *buf;

	if (!size)
		return 0;
	cap = caps[data[0] % 4];
	data++;
	size--;
	/* the server receives into a buffer of cap bytes: copy to get its bounds checked */
	buf = malloc(cap);
	if (!buf)
		return 0;
	while (off < size) {
		size_t n = size - off < cap ? size - off : cap;
		struct request req;
		char why[REQUEST_WHY];
		long r;

		memcpy(buf, data + off, n);
		r = request_next(buf, n, cap, hello, &req, why, sizeof(why));
		if (r <= 0)
			break;
		if ((size_t)r > n || req.hdr.len > n - MT_AP_HDR_SIZE)
			__builtin_trap(); /* a frame said to be larger than what was received */
		if (req.hdr.type == MT_AP_HEAP_REQUEST && req.names_len &&
		    (req.names < (const char *)buf || req.names + req.names_len > (const char *)buf + n))
			__builtin_trap();
		if (req.hdr.type == MT_AP_HELLO)
			hello = true;
		off += (size_t)r;
	}
	free(buf);
	return 0;
}
