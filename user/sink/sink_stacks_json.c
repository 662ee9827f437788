// SPDX-License-Identifier: GPL-2.0
/* sink_stacks_json.c - a profile's heaviest stacks as a JSON array, each frame
 * with its kind, source file and line. */
#include <errno.h>
#include <stdlib.h>

#include "sink/sinks.h"
#include "lib/util.h"

int sink_stacks_json(const struct profile *p, FILE *f, size_t top)
{
	size_t n = profile_nstacks(p), *order = profile_order_by_bytes(p);

	if (!order)
		return -ENOMEM;
	fputc('[', f);
	for (size_t i = 0; i < n && i < top; i++) {
		const struct profile_stack *s = profile_stack_at(p, order[i]);

		fprintf(f, "%s{\"bytes\":%llu,\"samples\":%llu,\"leaf\":", i ? "," : "",
			(unsigned long long)s->bytes, (unsigned long long)s->count);
		json_str(f, profile_name(p, s->frames[s->n - 1]));
		fputs(",\"frames\":[", f);
		for (int k = 0; k < s->n - 1; k++) {
			const struct profile_frame *fr = profile_frame(p, s->frames[k]);

			fprintf(f, "%s{\"name\":", k ? "," : "");
			json_str(f, fr->name);
			fprintf(f, ",\"kind\":\"%s\"", profile_kind_name(fr->kind));
			if (fr->file) {
				fputs(",\"file\":", f);
				json_str(f, fr->file);
			}
			if (fr->line > 0)
				fprintf(f, ",\"line\":%d", fr->line);
			fputc('}', f);
		}
		fputs("]}", f);
	}
	fputc(']', f);
	free(order);
	return ferror(f) ? -EIO : 0;
}
