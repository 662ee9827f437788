// SPDX-License-Identifier: GPL-2.0
/* test_recording - the recording file's framing (recording.h): members
 * written a block at a time, read back whole; a file cut at every byte reads
 * every complete event before the cut (oracle: the lines zlib itself decodes
 * from the same bytes) and says where it was cut; a corrupt block, bytes
 * after the last block and a write error (RLIMIT_FSIZE: EFBIG mid-block) end
 * the read at the last good block; a recording from before the framing (one
 * gzip stream, also one over the reader's verify size) still reads. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "monitor/recording.h"
#include "monitor/recording_read.h"
#include "lib/util.h"

#define NMEMBERS 6
#define PER_MEMBER 40

static char path[64], cutpath[80];

static int setup(void **state)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/test_recording.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	snprintf(cutpath, sizeof(cutpath), "%s.cut", path);
	return 0;
}

static int teardown(void **state)
{
	unlink(path);
	unlink(cutpath);
	return 0;
}

/* Event i of the test stream: a thread's creation, then activity on it. */
static void event_of(uint64_t i, struct mt_ev *e)
{
	memset(e, 0, sizeof(*e));
	e->ts = 1000 + i * 7;
	if (i == 0) {
		e->kind = MT_EV_THREAD_CREATE;
		e->thread = e->id = 42;
		return;
	}
	e->kind = i % 2 ? MT_EV_INV_ENTER : MT_EV_INV_LEAVE;
	e->thread = 42;
	e->v[0] = MT_INV_GC;
	e->v[1] = i * 2654435761u % 1000003; /* a little entropy: blocks of some size */
}

static void write_stream(uint64_t *offs, uint64_t *nev, bool trailer)
{
	struct recording_header h = { .pid = 7, .nspid = 7, .start_mono_ns = 1000 };
	struct recording_trailer t = { .present = true, .ts = 99999, .duration_s = 1.5,
				       .attached_ns = 4321 };
	struct recording_writer *w;
	uint64_t i = 0;

	snprintf(h.jdk, sizeof(h.jdk), "17.0.9");
	w = recording_create(path, &h);
	assert_non_null(w);
	assert_int_equal(recording_members(w), 1); /* the header's */
	offs[0] = recording_written(w);
	for (int m = 0; m < NMEMBERS; m++) {
		for (int k = 0; k < PER_MEMBER; k++, i++) {
			struct mt_ev e;

			event_of(i, &e);
			assert_int_equal(recording_write(w, &e, NULL), 0);
		}
		assert_int_equal(recording_tick(w, mono_ns()), 0); /* too young: stays open */
		assert_int_equal(recording_members(w), (uint64_t)m + 1);
		assert_int_equal(recording_tick(w, mono_ns() + REC_MEMBER_NS), 0);
		assert_int_equal(recording_members(w), (uint64_t)m + 2);
		offs[m + 1] = recording_written(w);
		assert_true(offs[m + 1] > offs[m]);
	}
	*nev = i;
	assert_int_equal(recording_close(w, trailer ? &t : NULL), 0);
}

static uint64_t last_attached; /* read_all()'s trailer's attached_ns */

/* Read @p to the end: events into @ev (checked against event_of), the cut. */
static uint64_t read_all(const char *p, struct recording_cut *cut, bool *trailer)
{
	struct recording_header h;
	struct recording_reader *r = recording_open(p, &h);
	uint64_t n = 0, line;
	const char *text;
	struct mt_ev e;
	int rc;

	assert_non_null(r);
	assert_int_equal(h.pid, 7);
	assert_string_equal(h.jdk, "17.0.9");
	while ((rc = recording_next(r, &e, &text, &line)) > 0) {
		struct mt_ev want;

		event_of(n, &want);
		assert_int_equal(e.kind, want.kind);
		assert_int_equal(e.ts, want.ts);
		assert_int_equal(e.v[1], want.v[1]);
		assert_int_equal(line, n + 2);
		n++;
	}
	assert_int_equal(rc, 0);
	*cut = *recording_cut(r);
	if (trailer)
		*trailer = recording_trailer(r)->present;
	last_attached = recording_trailer(r)->attached_ns;
	assert_int_equal(cut->line, n + 1 + (trailer && *trailer));
	recording_close_read(r);
	return n;
}

static void *slurp(const char *p, size_t *n)
{
	FILE *f = fopen(p, "rb");
	struct stat st;
	void *buf;

	assert_non_null(f);
	assert_int_equal(fstat(fileno(f), &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	*n = (size_t)st.st_size;
	return buf;
}

static void spill(const char *p, const void *buf, size_t n)
{
	FILE *f = fopen(p, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, n, f), n);
	fclose(f);
}

/* The oracle: complete lines zlib decodes from @buf's first @n bytes, member
 * after member, the partial one included (what a truncation leaves). */
static uint64_t zlib_lines(const unsigned char *buf, size_t n)
{
	static char out[1 << 16];
	uint64_t lines = 0;
	size_t pos = 0;

	while (pos < n) {
		z_stream z = { 0 };
		int zr;

		assert_int_equal(inflateInit2(&z, 31), Z_OK);
		z.next_in = (Bytef *)buf + pos;
		z.avail_in = (uInt)(n - pos);
		do {
			z.next_out = (Bytef *)out;
			z.avail_out = sizeof(out);
			zr = inflate(&z, Z_NO_FLUSH);
			for (size_t k = 0; k < sizeof(out) - z.avail_out; k++)
				lines += out[k] == '\n';
		} while (zr == Z_OK && z.avail_in);
		pos = n - z.avail_in;
		inflateEnd(&z);
		if (zr != Z_STREAM_END)
			break;
	}
	return lines;
}

static void test_blocks_roundtrip(void **state)
{
	uint64_t offs[NMEMBERS + 1], nev, got;
	struct recording_cut cut;
	bool trailer;

	write_stream(offs, &nev, true);
	got = read_all(path, &cut, &trailer);
	assert_int_equal(got, nev);
	assert_true(trailer);
	assert_int_equal(last_attached, 4321); /* when the probes were attached */
	assert_int_equal(cut.kind, REC_CUT_NONE);
	/* header + NMEMBERS + the trailer's */
	assert_int_equal(cut.members, NMEMBERS + 2);
}

/* Cut after every byte: the events read are exactly the complete lines zlib
 * decodes from those bytes (minus the header), a prefix of the stream; the
 * cut is where the torn block began, or a block boundary. */
static void test_cut_every_byte(void **state)
{
	uint64_t offs[NMEMBERS + 1], nev, prev = 0;
	unsigned char *buf;
	size_t size;

	write_stream(offs, &nev, true);
	buf = slurp(path, &size);
	for (size_t n = 0; n <= size; n++) {
		struct recording_header h;
		struct recording_reader *r;
		struct recording_cut cut;
		uint64_t got, lines = zlib_lines(buf, n);
		bool trailer;

		spill(cutpath, buf, n);
		if (n < offs[0]) {
			/* inside the header's block: no recording, unless its line
			 * decodes whole (a cut in the block's last bytes) */
			errno = 0;
			r = recording_open(cutpath, &h);
			if (!r) {
				assert_int_equal(lines, 0);
				assert_int_equal(errno, n == 0 ? EINVAL : ENODATA);
				continue;
			}
			recording_close_read(r);
			assert_int_equal(lines, 1);
		}
		got = read_all(cutpath, &cut, &trailer);
		assert_true(got >= prev); /* more bytes never read less */
		prev = got;
		assert_int_equal(got, lines - 1 - (trailer ? 1 : 0));
		if (n == size) {
			assert_int_equal(cut.kind, REC_CUT_NONE);
			assert_int_equal(got, nev);
			continue;
		}
		assert_true(!trailer || n > offs[NMEMBERS]); /* the trailer's block decoded */
		for (int m = 0; m <= NMEMBERS; m++) {
			if (n == offs[m]) {
				assert_int_equal(cut.kind, REC_CUT_NO_TRAILER);
				assert_int_equal(cut.at, n);
				assert_int_equal(got, (uint64_t)m * PER_MEMBER);
			} else if (m < NMEMBERS && n > offs[m] && n < offs[m + 1]) {
				assert_int_equal(cut.kind, REC_CUT_TORN);
				assert_int_equal(cut.at, offs[m]);
				assert_int_equal(cut.size, n);
				assert_true(got >= (uint64_t)m * PER_MEMBER &&
					    got <= (uint64_t)(m + 1) * PER_MEMBER);
			}
		}
		if (n > offs[NMEMBERS])
			assert_int_equal(cut.kind, REC_CUT_TORN); /* inside the trailer's */
	}
	free(buf);
}

/* A byte flipped inside block 3 (its deflate data, then its CRC): nothing of
 * it nor after it is read, blocks 1-2 are. */
static void test_corrupt_block(void **state)
{
	uint64_t offs[NMEMBERS + 1], nev;
	size_t size, at[2];
	unsigned char *buf;

	write_stream(offs, &nev, true);
	buf = slurp(path, &size);
	at[0] = (size_t)(offs[2] + offs[3]) / 2;
	at[1] = (size_t)offs[3] - 6; /* in the CRC-32 */
	for (int k = 0; k < 2; k++) {
		struct recording_cut cut;
		bool trailer;

		buf[at[k]] ^= 0x5a;
		spill(cutpath, buf, size);
		buf[at[k]] ^= 0x5a;
		assert_int_equal(read_all(cutpath, &cut, &trailer), 2 * PER_MEMBER);
		assert_int_equal(cut.kind, REC_CUT_CORRUPT);
		assert_int_equal(cut.at, offs[2]);
		assert_false(trailer);
	}
	free(buf);
}

/* Zeros after the last block (a host crash that grew the file but never
 * wrote it): everything is read, the cut is at the zeros. */
static void test_trailing_zeros(void **state)
{
	uint64_t offs[NMEMBERS + 1], nev;
	struct recording_cut cut;
	unsigned char *buf;
	size_t size;
	bool trailer;

	write_stream(offs, &nev, false);
	buf = slurp(path, &size);
	buf = realloc(buf, size + 8192);
	assert_non_null(buf);
	memset(buf + size, 0, 8192);
	spill(cutpath, buf, size + 8192);
	assert_int_equal(read_all(cutpath, &cut, &trailer), nev);
	assert_int_equal(cut.kind, REC_CUT_GARBAGE);
	assert_int_equal(cut.at, size);
	assert_int_equal(cut.size, size + 8192);
	/* zeros in place of the last block: the blocks before it */
	spill(cutpath, buf, (size_t)offs[NMEMBERS - 1]);
	memset(buf, 0, (size_t)(offs[NMEMBERS] - offs[NMEMBERS - 1]));
	{
		FILE *f = fopen(cutpath, "ab");

		assert_non_null(f);
		fwrite(buf, 1, (size_t)(offs[NMEMBERS] - offs[NMEMBERS - 1]), f);
		fclose(f);
	}
	assert_int_equal(read_all(cutpath, &cut, &trailer), (NMEMBERS - 1) * PER_MEMBER);
	assert_int_equal(cut.kind, REC_CUT_GARBAGE);
	assert_int_equal(cut.at, offs[NMEMBERS - 1]);
	free(buf);
}

/* A host crash inside the last block: the file holds the block's first
 * bytes, then zeros (4 KiB). Inflating on into the zeros makes up lines (the
 * all-zero bit string is a valid deflate code that copies earlier text): the
 * reader takes the zeros for the end of the data, so what it reads is what
 * zlib decodes from the bytes before them - a prefix of the stream, checked
 * event by event in read_all(). Every cut point of the block. */
static void test_torn_then_zeros(void **state)
{
	uint64_t offs[NMEMBERS + 1], nev;
	unsigned char *buf, *z;
	size_t size;

	write_stream(offs, &nev, false);
	buf = slurp(path, &size);
	z = calloc(1, (size_t)offs[NMEMBERS] + 4096);
	assert_non_null(z);
	for (size_t n = (size_t)offs[NMEMBERS - 1] + 1; n < offs[NMEMBERS]; n++) {
		struct recording_cut cut;
		size_t real = n, whole;
		bool trailer;

		memcpy(z, buf, n);
		spill(cutpath, z, n + 4096);
		for (whole = n; whole < offs[NMEMBERS] && !buf[whole]; whole++)
			;
		if (whole == offs[NMEMBERS]) {
			/* all it lacks are zeros (its length's high bytes): whole */
			assert_int_equal(read_all(cutpath, &cut, &trailer), nev);
			assert_int_equal(cut.kind, REC_CUT_GARBAGE);
			assert_int_equal(cut.at, offs[NMEMBERS]);
			continue;
		}
		while (!buf[real - 1])
			real--; /* a written zero at the end counts as the zeros */
		assert_int_equal(read_all(cutpath, &cut, &trailer), zlib_lines(buf, real) - 1);
		assert_false(trailer);
		assert_int_equal(cut.size, n + 4096);
		assert_int_equal(cut.kind, REC_CUT_TORN);
		assert_int_equal(cut.at, offs[NMEMBERS - 1]);
	}
	free(z);
	free(buf);
}

/* A write error in the middle of a block (the file size limit: EFBIG, as
 * ENOSPC would be): the file is cut back to its last block, the trailer
 * with the error still fits, and every event of the whole blocks reads. */
static void test_write_error(void **state)
{
	struct recording_header h = { .pid = 7, .nspid = 7 };
	struct recording_trailer t = { .present = true, .ts = 5 };
	struct rlimit old, lim;
	struct recording_writer *w;
	struct recording_cut cut;
	uint64_t i = 0, good = 0, limit;
	bool trailer;
	struct stat st;
	int err = 0;

	snprintf(h.jdk, sizeof(h.jdk), "17.0.9");
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	w = recording_create(path, &h);
	assert_non_null(w);
	/* two blocks, then room for 3000 bytes more */
	for (int m = 0; m < 2; m++) {
		for (int k = 0; k < PER_MEMBER; k++, i++) {
			struct mt_ev e;

			event_of(i, &e);
			assert_int_equal(recording_write(w, &e, NULL), 0);
		}
		assert_int_equal(recording_tick(w, mono_ns() + REC_MEMBER_NS), 0);
	}
	good = recording_written(w);
	limit = good + 3000;
	lim = old;
	lim.rlim_cur = limit;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	/* a block of 2000 events does not fit */
	for (int k = 0; k < 2000 && !err; k++, i++) {
		struct mt_ev e;

		event_of(i, &e);
		err = recording_write(w, &e, NULL);
	}
	if (!err)
		err = recording_tick(w, mono_ns() + REC_MEMBER_NS);
	assert_int_equal(err, -EFBIG);
	assert_int_equal(recording_written(w), good);
	{
		struct mt_ev e;

		event_of(i, &e);
		assert_int_equal(recording_write(w, &e, NULL), -EFBIG); /* stays failed */
	}
	assert_int_equal(recording_close(w, &t), -EFBIG);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true((uint64_t)st.st_size > good && (uint64_t)st.st_size <= limit);
	assert_int_equal(read_all(path, &cut, &trailer), 2 * PER_MEMBER);
	assert_true(trailer);
	assert_int_equal(cut.kind, REC_CUT_WRITER_ERROR);
	{
		struct recording_header h2;
		struct recording_reader *r = recording_open(path, &h2);
		const char *text;
		struct mt_ev e;
		uint64_t line;
		char why[256];

		while (recording_next(r, &e, &text, &line) > 0)
			;
		assert_string_equal(recording_trailer(r)->error, strerror(EFBIG));
		recording_cut_explain(r, why, sizeof(why));
		assert_non_null(strstr(why, strerror(EFBIG)));
		recording_close_read(r);
	}
}

/* Write @n events as one gzip stream, the way recordings were written
 * before the framing (gzopen, one member). */
static void write_old(const char *p, uint64_t n, bool trailer)
{
	gzFile gz = gzopen(p, "wb1");

	assert_non_null(gz);
	gzprintf(gz, "{\"memtrace_recording\":1,\"pid\":7,\"nspid\":7,\"start_mono_ns\":1000,"
		 "\"mono_to_real_ns\":0,\"jdk\":\"17.0.9\",\"libjvm\":\"\",\"filter\":\"\"}\n");
	for (uint64_t i = 0; i < n; i++) {
		struct mt_ev e;

		event_of(i, &e);
		if (i == 0)
			gzprintf(gz, "{\"k\":\"thread_create\",\"t\":%llu,\"th\":42,\"id\":42}\n",
				 (unsigned long long)e.ts);
		else
			gzprintf(gz, "{\"k\":\"%s\",\"t\":%llu,\"th\":42,\"v\":[1,%llu,0,0]}\n",
				 i % 2 ? "enter" : "leave", (unsigned long long)e.ts,
				 (unsigned long long)e.v[1]);
	}
	if (trailer)
		gzprintf(gz, "{\"k\":\"end\",\"t\":5,\"lost\":0,\"duration_s\":1.0,"
			 "\"jvm_exited\":false,\"events_in\":1,\"events_out\":1,\"dropped\":0}\n");
	assert_int_equal(gzclose(gz), Z_OK);
}

static void test_old_recording(void **state)
{
	struct recording_cut cut;
	bool trailer;

	write_old(path, 5000, true);
	assert_int_equal(read_all(path, &cut, &trailer), 5000);
	assert_true(trailer);
	assert_int_equal(cut.kind, REC_CUT_NONE);
}

/* One gzip stream larger than REC_VERIFY_BYTES: read as it decodes; cut in
 * its middle, it reads up to the cut. */
static void test_old_large_stream(void **state)
{
	uint64_t n = 460000; /* ~ 40 bytes a line: > 16 MiB of JSON */
	struct recording_cut cut;
	unsigned char *buf;
	size_t size;
	bool trailer;
	uint64_t got;

	write_old(path, n, true);
	assert_int_equal(read_all(path, &cut, &trailer), n);
	assert_int_equal(cut.kind, REC_CUT_NONE);
	buf = slurp(path, &size);
	spill(cutpath, buf, size * 3 / 4);
	got = read_all(cutpath, &cut, &trailer);
	assert_int_equal(got, zlib_lines(buf, size * 3 / 4) - 1);
	assert_true(got > n / 2);
	assert_int_equal(cut.kind, REC_CUT_TORN);
	assert_int_equal(cut.at, 0);
	free(buf);
}

static int sides_seen;

static void on_side(void *ctx, const struct recording_side *sd)
{
	assert_non_null(sd->s); /* "" when the line has none (found by fuzz_recording) */
	assert_string_equal(sd->s, "");
	sides_seen++;
}

/* An object-sampling line without its "s" (a method without a name). */
static void test_side_without_name(void **state)
{
	struct recording_header h;
	struct recording_reader *r;
	const char *text;
	struct mt_ev e;
	uint64_t line;
	gzFile gz = gzopen(path, "wb");

	assert_non_null(gz);
	gzprintf(gz, "{\"memtrace_recording\":1,\"pid\":7}\n{\"k\":\"method\",\"id\":3}\n"
		 "{\"k\":\"sitevol\",\"v\":[1,2]}\n");
	gzclose(gz);
	r = recording_open(path, &h);
	assert_non_null(r);
	recording_on_side(r, on_side, NULL);
	sides_seen = 0;
	assert_int_equal(recording_next(r, &e, &text, &line), 0);
	assert_int_equal(sides_seen, 2);
	recording_close_read(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_blocks_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cut_every_byte, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_block, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trailing_zeros, setup, teardown),
		cmocka_unit_test_setup_teardown(test_torn_then_zeros, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_recording, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_large_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_side_without_name, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
