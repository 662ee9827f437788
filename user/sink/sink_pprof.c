// SPDX-License-Identifier: GPL-2.0
/*
 * sink_pprof.c - a profile as gzip'd profile.proto (github.com/google/pprof,
 * proto/profile.proto), with a small protobuf encoder of our own: the format
 * needs only varints and length-delimited fields.
 *
 * Layout: string_table[0] = "", then the sample type names, then three
 * strings per frame label (profile_label: a name and its kind): the name,
 * the name with async-profiler's kind suffix (the function's system_name:
 * "pkg.A.run_[j]" for C2 code, "_[1]" C1, "_[0]" interpreted, "_[i]"
 * inlined) and the source file. Function i+1 stands for label i. A location
 * is a frame with its line, and a compiled frame takes the frames inlined
 * into it (the PROFILE_INLINED frames that follow it towards the leaf) as
 * further lines, innermost first: pprof's own way of saying "inlined", which
 * `go tool pprof` shows as such. Samples list locations leaf first, as
 * profile.proto requires (our stacks are root first).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "sink/sinks.h"
#include "lib/util.h"

/* profile.proto field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2,
	MAPPING_ID = 1, MAPPING_FILENAME = 5, MAPPING_HAS_FUNCTIONS = 7,
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1, LINE_LINE = 2,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
};

/* Fixed entries of the string table. */
enum { STR_EMPTY, STR_ALLOC_SPACE, STR_BYTES, STR_ALLOC_OBJECTS, STR_COUNT, STR_COMMENT,
       STR_MAPPING, FRAME_STR0 };
static const char *const fixed_strings[FRAME_STR0] = {
	"", "alloc_space", "bytes", "alloc_objects", "count",
	"memtrace allocation profile (weights are sampled estimates)",
	"[java]",
};

#define WIRE_VARINT 0
#define WIRE_LEN 2

/* A growable byte buffer; the first allocation failure sticks in @err. */
struct pbuf {
	unsigned char *d;
	size_t n, cap;
	int err;
};

static void pb_put(struct pbuf *b, const void *data, size_t len)
{
	if (b->err || !len)
		return;
	if (b->n + len > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		unsigned char *d;

		while (cap < b->n + len)
			cap *= 2;
		d = realloc(b->d, cap);
		if (!d) {
			b->err = -ENOMEM;
			return;
		}
		b->d = d;
		b->cap = cap;
	}
	memcpy(b->d + b->n, data, len);
	b->n += len;
}

static void pb_varint(struct pbuf *b, uint64_t v)
{
	unsigned char tmp[10];
	size_t n = 0;

	do {
		tmp[n] = v & 0x7f;
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	pb_put(b, tmp, n);
}

static void pb_tag(struct pbuf *b, int field, int wire)
{
	pb_varint(b, (uint64_t)field << 3 | (uint64_t)wire);
}

/* A varint field (int64/uint64 alike: our values are never negative). */
static void pb_uint(struct pbuf *b, int field, uint64_t v)
{
	pb_tag(b, field, WIRE_VARINT);
	pb_varint(b, v);
}

static void pb_bytes(struct pbuf *b, int field, const void *data, size_t len)
{
	pb_tag(b, field, WIRE_LEN);
	pb_varint(b, len);
	pb_put(b, data, len);
}

/* pb_msg - append @sub as embedded message @field and empty @sub for reuse. */
static void pb_msg(struct pbuf *b, int field, struct pbuf *sub)
{
	if (sub->err && !b->err)
		b->err = sub->err;
	pb_bytes(b, field, sub->d, sub->n);
	sub->n = 0;
}

static void value_type(struct pbuf *b, int field, struct pbuf *tmp, int type, int unit)
{
	pb_uint(tmp, VALUETYPE_TYPE, (uint64_t)type);
	pb_uint(tmp, VALUETYPE_UNIT, (uint64_t)unit);
	pb_msg(b, field, tmp);
}

/*
 * Locations: runs of frame ids (a frame and the frames inlined into it),
 * interned in an open-addressing table of index + 1.
 */
struct locs {
	uint32_t *ids;          /* the runs, back to back */
	size_t nids, ids_cap;
	struct { size_t first; uint32_t n; } *loc;
	size_t nloc, loc_cap;
	uint32_t *slot;
	size_t slot_cap;
	int err;
};

static uint64_t run_hash(const uint32_t *ids, uint32_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (uint32_t i = 0; i < n; i++)
		h = (h ^ ids[i]) * 0x100000001b3ULL;
	return h ^ (h >> 31);
}

static int locs_grow(struct locs *l)
{
	size_t cap = l->slot_cap ? l->slot_cap * 2 : 1024;
	uint32_t *slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < l->nloc; i++) {
		size_t j = run_hash(l->ids + l->loc[i].first, l->loc[i].n) & (cap - 1);

		while (slot[j])
			j = (j + 1) & (cap - 1);
		slot[j] = (uint32_t)i + 1;
	}
	free(l->slot);
	l->slot = slot;
	l->slot_cap = cap;
	return 0;
}

/* The location id (from 1) of the run @ids[0..n-1]; 0 on ENOMEM (sticks in l->err). */
static uint32_t loc_id(struct locs *l, const uint32_t *ids, uint32_t n)
{
	size_t j;

	if (l->err)
		return 0;
	if ((l->nloc + 1) * 2 > l->slot_cap && (l->err = locs_grow(l)))
		return 0;
	for (j = run_hash(ids, n) & (l->slot_cap - 1); l->slot[j]; j = (j + 1) & (l->slot_cap - 1)) {
		uint32_t v = l->slot[j] - 1;

		if (l->loc[v].n == n && !memcmp(l->ids + l->loc[v].first, ids, n * sizeof(*ids)))
			return v + 1;
	}
	if (l->nids + n > l->ids_cap) {
		size_t cap = l->ids_cap ? l->ids_cap : 4096;
		uint32_t *a;

		while (cap < l->nids + n)
			cap *= 2;
		if (!(a = realloc(l->ids, cap * sizeof(*a)))) {
			l->err = -ENOMEM;
			return 0;
		}
		l->ids = a;
		l->ids_cap = cap;
	}
	if (l->nloc == l->loc_cap) {
		size_t cap = l->loc_cap ? l->loc_cap * 2 : 1024;
		__typeof__(l->loc) a = realloc(l->loc, cap * sizeof(*a));

		if (!a) {
			l->err = -ENOMEM;
			return 0;
		}
		l->loc = a;
		l->loc_cap = cap;
	}
	memcpy(l->ids + l->nids, ids, n * sizeof(*ids));
	l->loc[l->nloc].first = l->nids;
	l->loc[l->nloc].n = n;
	l->nids += n;
	l->slot[j] = (uint32_t)++l->nloc;
	return (uint32_t)l->nloc;
}

/* The sample's location ids, leaf first, into @packed. */
static void sample_locations(const struct profile *p, const struct profile_stack *s,
			     struct locs *l, struct pbuf *packed)
{
	int end = s->n;

	while (end > 0) {
		int b = end - 1; /* the run: b .. end-1, from the frame that holds the inlined ones */

		while (b > 0 && profile_frame(p, s->frames[b])->kind == PROFILE_INLINED)
			b--;
		pb_varint(packed, loc_id(l, s->frames + b, (uint32_t)(end - b)));
		end = b;
	}
}

/* encode - the whole Profile message into @out. */
static int encode(const struct profile *p, struct pbuf *out)
{
	struct pbuf m = { 0 }, packed = { 0 }, line = { 0 };
	struct locs l = { 0 };
	size_t nlabels = profile_nlabels(p);
	const struct profile_frame **first = calloc(nlabels ? nlabels : 1, sizeof(*first));
	uint64_t start_ns, duration_ns;
	int err;

	if (!first)
		return -ENOMEM;
	/* a label's name and file: its first frame's */
	for (uint32_t i = 0; i < profile_nnames(p); i++) {
		uint32_t lab = profile_label_id(p, i);

		if (!first[lab])
			first[lab] = profile_frame(p, i);
	}
	value_type(out, PROFILE_SAMPLE_TYPE, &m, STR_ALLOC_SPACE, STR_BYTES);
	value_type(out, PROFILE_SAMPLE_TYPE, &m, STR_ALLOC_OBJECTS, STR_COUNT);

	for (size_t i = 0; i < profile_nstacks(p); i++) {
		const struct profile_stack *s = profile_stack_at(p, i);

		sample_locations(p, s, &l, &packed);
		pb_msg(&m, SAMPLE_LOCATION_ID, &packed);
		pb_varint(&packed, s->bytes);
		pb_varint(&packed, s->count);
		pb_msg(&m, SAMPLE_VALUE, &packed);
		pb_msg(out, PROFILE_SAMPLE, &m);
	}

	/* One mapping that already carries function names: readers do not try
	 * to symbolize addresses (there are none). */
	pb_uint(&m, MAPPING_ID, 1);
	pb_uint(&m, MAPPING_FILENAME, STR_MAPPING);
	pb_uint(&m, MAPPING_HAS_FUNCTIONS, 1);
	pb_msg(out, PROFILE_MAPPING, &m);

	for (size_t i = 0; i < l.nloc; i++) {
		pb_uint(&m, LOCATION_ID, i + 1);
		pb_uint(&m, LOCATION_MAPPING_ID, 1);
		for (uint32_t k = l.loc[i].n; k-- > 0;) { /* innermost first */
			uint32_t id = l.ids[l.loc[i].first + k];
			const struct profile_frame *fr = profile_frame(p, id);

			pb_uint(&line, LINE_FUNCTION_ID, (uint64_t)profile_label_id(p, id) + 1);
			if (fr->line > 0)
				pb_uint(&line, LINE_LINE, (uint64_t)fr->line);
			pb_msg(&m, LOCATION_LINE, &line);
		}
		pb_msg(out, PROFILE_LOCATION, &m);
	}
	for (size_t i = 0; i < nlabels; i++) {
		pb_uint(&m, FUNCTION_ID, i + 1);
		pb_uint(&m, FUNCTION_NAME, FRAME_STR0 + 3 * i);
		pb_uint(&m, FUNCTION_SYSTEM_NAME, FRAME_STR0 + 3 * i + 1);
		pb_uint(&m, FUNCTION_FILENAME, FRAME_STR0 + 3 * i + 2);
		pb_msg(out, PROFILE_FUNCTION, &m);
	}

	for (int i = 0; i < FRAME_STR0; i++)
		pb_bytes(out, PROFILE_STRING_TABLE, fixed_strings[i], strlen(fixed_strings[i]));
	for (size_t i = 0; i < nlabels; i++) {
		const char *lab = profile_label(p, (uint32_t)i), *file = first[i]->file;

		pb_bytes(out, PROFILE_STRING_TABLE, first[i]->name, strlen(first[i]->name));
		pb_bytes(out, PROFILE_STRING_TABLE, lab, strlen(lab));
		pb_bytes(out, PROFILE_STRING_TABLE, file ? file : "", file ? strlen(file) : 0);
	}

	profile_get_window(p, &start_ns, &duration_ns);
	if (start_ns)
		pb_uint(out, PROFILE_TIME_NANOS, start_ns);
	if (duration_ns)
		pb_uint(out, PROFILE_DURATION_NANOS, duration_ns);
	value_type(out, PROFILE_PERIOD_TYPE, &m, STR_ALLOC_SPACE, STR_BYTES);
	pb_uint(out, PROFILE_PERIOD, 1);
	pb_uint(out, PROFILE_COMMENT, STR_COMMENT);
	pb_uint(out, PROFILE_DEFAULT_SAMPLE_TYPE, STR_ALLOC_SPACE);

	err = out->err ? out->err : l.err ? l.err : m.err ? m.err : packed.err ? packed.err : line.err;
	free(m.d);
	free(packed.d);
	free(line.d);
	free(l.ids);
	free(l.loc);
	free(l.slot);
	free(first);
	return err;
}

int sink_pprof_write(const struct profile *p, const char *path)
{
	struct pbuf out = { 0 };
	char *tmp = NULL;
	gzFile gz = NULL;
	size_t off = 0;
	int err;

	err = encode(p, &out);
	if (err)
		goto out;
	if (asprintf(&tmp, "%s.tmp", path) < 0) {
		tmp = NULL;
		err = -ENOMEM;
		goto out;
	}
	errno = 0;
	gz = gzopen(tmp, "wb");
	if (!gz) {
		err = errno ? -errno : -ENOMEM;
		goto out;
	}
	while (off < out.n) {
		unsigned chunk = out.n - off > (1u << 30) ? 1u << 30 : (unsigned)(out.n - off);
		int w = gzwrite(gz, out.d + off, chunk);

		if (w <= 0) {
			err = -EIO;
			goto out;
		}
		off += (size_t)w;
	}
	err = gzclose(gz) == Z_OK ? 0 : -EIO;
	gz = NULL;
	if (!err && rename(tmp, path))
		err = -errno;
out:
	if (gz)
		gzclose(gz);
	if (err && tmp)
		unlink(tmp);
	free(tmp);
	free(out.d);
	return err;
}
