/* test_agent_request.c - the agent's request parsing (user/agent/request.c):
 * what its socket thread, inside the JVM, accepts from the bytes it received. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/request.h"

/* The socket thread's receive buffer: a header and the largest HEAP_REQUEST. */
#define CAP (MT_AP_HDR_SIZE + MT_AP_HEAP_REQ_MAX)

struct frame {
	size_t n;
	unsigned char b[MT_AP_HDR_SIZE + 1024];
};

/* A frame as memtrace sends it: header (@len payload bytes claimed) + @payload. */
static struct frame mk(unsigned type, uint32_t seq, const void *payload, size_t len)
{
	struct frame f;
	struct mt_ap_hdr h = {
		.magic = MT_AP_MAGIC, .version = MT_AP_VERSION,
		.type = (uint16_t)type, .len = (uint32_t)len, .seq = seq,
	};

	assert_true(len <= sizeof(f.b) - MT_AP_HDR_SIZE);
	memset(&f, 0, sizeof(f));
	memcpy(f.b, &h, sizeof(h));
	if (len)
		memcpy(f.b + MT_AP_HDR_SIZE, payload, len);
	f.n = MT_AP_HDR_SIZE + len;
	return f;
}

/* The header of @f, edited. */
static struct mt_ap_hdr *hdr_of(struct frame *f)
{
	return (struct mt_ap_hdr *)f->b;
}

/*
 * request_next() on the first @n bytes of @bytes, copied into a heap block of
 * exactly @n bytes (ASan catches a read past what was received); @cap is the
 * receive buffer's size. The payload and names pointers are rebased onto
 * @bytes so that the caller can compare them after the copy is freed.
 */
static long next(const void *bytes, size_t n, size_t cap, bool hello_done, struct request *req,
		 char *why, size_t why_n)
{
	unsigned char *copy = malloc(n ? n : 1);
	long r;

	assert_non_null(copy);
	memcpy(copy, bytes, n);
	why[0] = '\0';
	r = request_next(copy, n, cap, hello_done, req, why, why_n);
	if (req->payload)
		req->payload = (const char *)bytes + ((const unsigned char *)req->payload - copy);
	if (req->names)
		req->names = (const char *)bytes + ((const unsigned char *)req->names - copy);
	if (r > 0 && req->hdr.type == MT_AP_HEAP_REQUEST && req->samples)
		req->samples = (const char *)bytes + ((const unsigned char *)req->samples - copy);
	free(copy);
	return r;
}

/* The outcome for a whole frame: the return value, *req and the reason. */
static long run(struct frame *f, bool hello_done, struct request *req, char *why)
{
	return next(f->b, f->n, CAP, hello_done, req, why, REQUEST_WHY);
}

static void expect_error(struct frame *f, bool hello_done, long err, uint32_t seq,
			 const char *msg)
{
	struct request req;
	char why[REQUEST_WHY];

	assert_int_equal(run(f, hello_done, &req, why), err);
	assert_int_equal(req.hdr.seq, seq);
	assert_string_equal(why, msg);
}

static struct frame heap_frame(uint32_t flags, uint32_t nfields, const void *names, size_t len)
{
	unsigned char p[256];
	struct mt_ap_heap_request hr = { .flags = flags, .max_pause_ms = 7, .nfields = nfields };

	memcpy(p, &hr, sizeof(hr));
	memcpy(p + sizeof(hr), names, len);
	return mk(MT_AP_HEAP_REQUEST, 9, p, sizeof(hr) + len);
}

static void test_good_hello(void **state)
{
	struct mt_ap_hello in = { .min_version = 1, .max_version = 3, .client_pid = 4242 };
	struct frame f = mk(MT_AP_HELLO, 1, &in, sizeof(in));
	struct request req;
	char why[REQUEST_WHY];

	assert_int_equal(run(&f, false, &req, why), MT_AP_HDR_SIZE + sizeof(in));
	assert_int_equal(req.hdr.type, MT_AP_HELLO);
	assert_int_equal(req.hdr.seq, 1);
	assert_int_equal(req.hdr.len, sizeof(in));
	assert_ptr_equal(req.payload, f.b + MT_AP_HDR_SIZE);
	assert_int_equal(req.hello.min_version, 1);
	assert_int_equal(req.hello.max_version, 3);
	assert_int_equal(req.hello.client_pid, 4242);
	assert_string_equal(why, "");
	/* a second HELLO in the session is a request like the first */
	assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE + sizeof(in));
}

static void test_good_requests_after_hello(void **state)
{
	struct mt_ap_ping ping = { .cookie = 0x1122334455667788ull };
	struct mt_ap_sample_start ss = { .rec_version = MT_AP_REC_VERSION, .max_depth = 32,
					 .interval = 1 };
	struct frame f;
	struct request req;
	char why[REQUEST_WHY];

	f = mk(MT_AP_PING, 2, &ping, sizeof(ping));
	assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE + 8);
	assert_int_equal(req.hdr.type, MT_AP_PING);
	assert_true(req.ping.cookie == 0x1122334455667788ull);

	f = mk(MT_AP_DETACH, 3, NULL, 0);
	assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE);
	assert_int_equal(req.hdr.type, MT_AP_DETACH);
	assert_int_equal(req.hdr.seq, 3);

	f = mk(MT_AP_SAMPLE_STOP, 4, NULL, 0);
	assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE);
	assert_int_equal(req.hdr.type, MT_AP_SAMPLE_STOP);

	f = mk(MT_AP_SAMPLE_START, 5, &ss, sizeof(ss));
	assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE + sizeof(ss));
	assert_int_equal(req.sample.rec_version, MT_AP_REC_VERSION);
	assert_int_equal(req.sample.max_depth, 32);
	assert_int_equal(req.sample.interval, 1);

	ss.max_depth = 1;
	ss.interval = UINT32_MAX;
	f = mk(MT_AP_SAMPLE_START, 6, &ss, sizeof(ss));
	assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE + sizeof(ss));
	assert_int_equal(req.sample.max_depth, 1);
	assert_true(req.sample.interval == UINT32_MAX);
}

/* A HEAP_REQUEST with MT_AP_HEAP_FREEZE: the request, @fz, the names. */
static struct frame freeze_frame(const struct mt_ap_heap_freeze *fz, uint32_t nfields,
				 const void *names, size_t len)
{
	unsigned char p[512];
	struct mt_ap_heap_request hr = { .flags = MT_AP_HEAP_FREEZE, .nfields = nfields };

	memcpy(p, &hr, sizeof(hr));
	memcpy(p + sizeof(hr), fz, sizeof(*fz));
	memcpy(p + sizeof(hr) + sizeof(*fz), names, len);
	return mk(MT_AP_HEAP_REQUEST, 9, p, sizeof(hr) + sizeof(*fz) + len);
}

static void test_good_heap_request(void **state)
{
	static const char names[] = "next\0value"; /* two names, both NUL-terminated */
	uint32_t all = MT_AP_HEAP_FLAGS & ~MT_AP_HEAP_FREEZE; /* FREEZE brings its struct */
	struct frame f = heap_frame(all, 2, names, sizeof(names));
	struct request req;
	char why[REQUEST_WHY];

	assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE + 16 + sizeof(names));
	assert_int_equal(req.hdr.type, MT_AP_HEAP_REQUEST);
	assert_int_equal(req.hdr.seq, 9);
	assert_int_equal(req.heap.flags, all);
	assert_int_equal(req.heap.max_pause_ms, 7);
	assert_int_equal(req.heap.nfields, 2);
	assert_ptr_equal(req.names, f.b + MT_AP_HDR_SIZE + 16);
	assert_int_equal(req.names_len, sizeof(names));
	assert_string_equal(req.names, "next");
	assert_string_equal(req.names + 5, "value");

	/* no names; bytes after the last name are the caller's to ignore */
	f = heap_frame(0, 0, "xyz", 3);
	assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE + 16 + 3);
	assert_int_equal(req.heap.nfields, 0);
	assert_int_equal(req.names_len, 3);

	f = heap_frame(MT_AP_HEAP_REFS, 0, "", 0);
	assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE + 16);
	assert_int_equal(req.names_len, 0);
}

/* MT_AP_HEAP_FREEZE: its struct between the request and the names, checked. */
static void test_freeze_request(void **state)
{
	static const char names[] = "next";
	struct mt_ap_heap_freeze fz = { .state_addr = 0x7f0000001000, .heap_lo = 0x80000000,
					.heap_hi = 0x100000000, .stall_ms = 30000, .max_ms = 600000,
					.gc_wait_ms = 2000, .space_kind = MT_AP_FREEZE_SPACES_G1 };
	struct frame f = freeze_frame(&fz, 1, names, sizeof(names));
	struct request req;
	char why[REQUEST_WHY];

	assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE + 16 + sizeof(fz) + sizeof(names));
	assert_int_equal(req.heap.flags, MT_AP_HEAP_FREEZE);
	assert_true(req.freeze.state_addr == fz.state_addr);
	assert_true(req.freeze.heap_hi == fz.heap_hi);
	assert_int_equal(req.freeze.gc_wait_ms, 2000);
	assert_int_equal(req.freeze.space_kind, MT_AP_FREEZE_SPACES_G1);
	assert_ptr_equal(req.names, f.b + MT_AP_HDR_SIZE + 16 + sizeof(fz));
	assert_string_equal(req.names, "next");
	/* with MT_AP_HEAP_SAMPLES too: request, struct, names, sample ids */
	{
		unsigned char p[512];
		struct mt_ap_heap_request hr = { .flags = MT_AP_HEAP_FREEZE | MT_AP_HEAP_SAMPLES,
						 .nfields = 1, .nsamples = 1 };
		uint64_t id = 41, got = 0;
		size_t len = sizeof(hr) + sizeof(fz) + sizeof(names) + 8;

		memcpy(p, &hr, sizeof(hr));
		memcpy(p + sizeof(hr), &fz, sizeof(fz));
		memcpy(p + sizeof(hr) + sizeof(fz), names, sizeof(names));
		memcpy(p + sizeof(hr) + sizeof(fz) + sizeof(names), &id, 8);
		f = mk(MT_AP_HEAP_REQUEST, 9, p, len);
		assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE + len);
		assert_true(req.freeze.heap_hi == fz.heap_hi);
		assert_string_equal(req.names, "next");
		assert_int_equal(req.heap.nsamples, 1);
		memcpy(&got, req.samples, 8);
		assert_int_equal(got, 41);
	}
	/* with MARK: the layout follows the freeze struct; its size must be ours */
	{
		unsigned char p[1024];
		struct mt_ap_heap_request hr = { .flags = MT_AP_HEAP_FREEZE | MT_AP_HEAP_COUNTS,
						 .nfields = 1 };
		struct mt_ap_heap_freeze fm = fz;
		struct mt_ap_heap_layout lay = { .size = sizeof(lay), .m_klass = 16,
						 .class_klass = 0x7000 };
		size_t len = sizeof(hr) + sizeof(fm) + sizeof(lay) + sizeof(names);

		fm.flags = MT_AP_FREEZE_MARK | MT_AP_FREEZE_DIRECT;
		memcpy(p, &hr, sizeof(hr));
		memcpy(p + sizeof(hr), &fm, sizeof(fm));
		memcpy(p + sizeof(hr) + sizeof(fm), &lay, sizeof(lay));
		memcpy(p + sizeof(hr) + sizeof(fm) + sizeof(lay), names, sizeof(names));
		f = mk(MT_AP_HEAP_REQUEST, 10, p, len);
		assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE + len);
		assert_int_equal(req.layout.m_klass, 16);
		assert_true(req.layout.class_klass == 0x7000);
		assert_string_equal(req.names, "next");
		lay.size--; /* a layout of another size: refused */
		memcpy(p + sizeof(hr) + sizeof(fm), &lay, sizeof(lay));
		f = mk(MT_AP_HEAP_REQUEST, 11, p, len);
		assert_int_equal(run(&f, true, &req, why), -EPROTO);
		f = mk(MT_AP_HEAP_REQUEST, 12, p, sizeof(hr) + sizeof(fm) + 8); /* cut short */
		assert_int_equal(run(&f, true, &req, why), -EPROTO);
	}
	/* ZGC: its struct follows the layout; its heap range is read in the
	 * pause (0, 0 accepted); without MARK, of another size or variant:
	 * refused */
	{
		unsigned char p[1024];
		struct mt_ap_heap_request hr = { .flags = MT_AP_HEAP_FREEZE, .nfields = 1 };
		struct mt_ap_heap_freeze fm = fz;
		struct mt_ap_heap_layout lay = { .size = sizeof(lay), .m_klass = 16 };
		struct mt_ap_heap_zgc z = { .size = sizeof(z), .variant = MT_AP_ZGC_GEN,
					    .page_table = 0x1234, .fw_entries = 184 };
		size_t at = sizeof(hr) + sizeof(fm) + sizeof(lay);
		size_t len = at + sizeof(z) + sizeof(names);

		fm.flags = MT_AP_FREEZE_MARK | MT_AP_FREEZE_DIRECT | MT_AP_FREEZE_ZGC;
		fm.heap_lo = fm.heap_hi = 0;
		memcpy(p, &hr, sizeof(hr));
		memcpy(p + sizeof(hr), &fm, sizeof(fm));
		memcpy(p + sizeof(hr) + sizeof(fm), &lay, sizeof(lay));
		memcpy(p + at, &z, sizeof(z));
		memcpy(p + at + sizeof(z), names, sizeof(names));
		f = mk(MT_AP_HEAP_REQUEST, 13, p, len);
		assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE + len);
		assert_true(req.zgc.page_table == 0x1234);
		assert_int_equal(req.zgc.fw_entries, 184);
		assert_string_equal(req.names, "next");
		z.variant = 3;
		memcpy(p + at, &z, sizeof(z));
		f = mk(MT_AP_HEAP_REQUEST, 14, p, len);
		assert_int_equal(run(&f, true, &req, why), -EPROTO);
		z.variant = MT_AP_ZGC_X;
		z.size++;
		memcpy(p + at, &z, sizeof(z));
		f = mk(MT_AP_HEAP_REQUEST, 15, p, len);
		assert_int_equal(run(&f, true, &req, why), -EPROTO);
		z.size--;
		memcpy(p + at, &z, sizeof(z));
		f = mk(MT_AP_HEAP_REQUEST, 16, p, at + 8); /* cut short */
		assert_int_equal(run(&f, true, &req, why), -EPROTO);
		/* the bound on the copy: read with its flag, 0 without (an older
		 * memtrace's reserved field), refused when 0 with it */
		z.max_copy_mib = 320;
		memcpy(p + at, &z, sizeof(z));
		f = mk(MT_AP_HEAP_REQUEST, 18, p, len);
		assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE + len);
		assert_int_equal(req.zgc.max_copy_mib, 0);
		fm.flags |= MT_AP_FREEZE_ZGC_BOUND;
		memcpy(p + sizeof(hr), &fm, sizeof(fm));
		f = mk(MT_AP_HEAP_REQUEST, 19, p, len);
		assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE + len);
		assert_int_equal(req.zgc.max_copy_mib, 320);
		assert_int_equal(req.zgc.aim_copy_mib, 320); /* none: the bound */
		z.aim_copy_mib = 100;
		memcpy(p + at, &z, sizeof(z));
		f = mk(MT_AP_HEAP_REQUEST, 22, p, len);
		assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE + len);
		assert_int_equal(req.zgc.aim_copy_mib, 100);
		z.aim_copy_mib = 400; /* past the bound: the bound */
		memcpy(p + at, &z, sizeof(z));
		f = mk(MT_AP_HEAP_REQUEST, 23, p, len);
		assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE + len);
		assert_int_equal(req.zgc.aim_copy_mib, 320);
		z.aim_copy_mib = 0;
		z.max_copy_mib = 0;
		memcpy(p + at, &z, sizeof(z));
		f = mk(MT_AP_HEAP_REQUEST, 20, p, len);
		assert_int_equal(run(&f, true, &req, why), -EPROTO);
		/* the bound without ZGC: refused */
		fm.flags = MT_AP_FREEZE_MARK | MT_AP_FREEZE_DIRECT | MT_AP_FREEZE_ZGC_BOUND;
		fm.heap_lo = 0x1000;
		fm.heap_hi = 0x2000;
		memcpy(p + sizeof(hr), &fm, sizeof(fm));
		f = mk(MT_AP_HEAP_REQUEST, 21, p, at + sizeof(names));
		assert_int_equal(run(&f, true, &req, why), -EPROTO);
		fm.heap_lo = fm.heap_hi = 0;
		fm.flags = MT_AP_FREEZE_DIRECT | MT_AP_FREEZE_ZGC; /* no mark: nothing decodes */
		memcpy(p + sizeof(hr), &fm, sizeof(fm));
		f = mk(MT_AP_HEAP_REQUEST, 17, p, len);
		assert_int_equal(run(&f, true, &req, why), -EPROTO);
	}
	/* without FREEZE the same bytes are names: no struct is read */
	f = heap_frame(0, 0, &fz, sizeof(fz));
	assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE + 16 + sizeof(fz));
	assert_true(req.freeze.state_addr == 0);
	/* the struct cut short */
	f = heap_frame(MT_AP_HEAP_FREEZE, 0, &fz, sizeof(fz) - 1);
	expect_error(&f, true, -EPROTO, 9, "malformed heap request");
	/* unknown freeze flags, no state address, an empty heap range */
	fz.flags = MT_AP_FREEZE_FLAGS + 1;
	f = freeze_frame(&fz, 0, "", 0);
	expect_error(&f, true, -EPROTO, 9, "malformed heap request");
	fz.flags = MT_AP_FREEZE_TEST_HANG;
	f = freeze_frame(&fz, 0, "", 0);
	assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE + 16 + sizeof(fz));
	/* small pages for the copy's records: a flag this agent knows (one of
	 * stop 37 refused it as above, and memtrace asks again without it) */
	fz.flags = MT_AP_FREEZE_DIRECT | MT_AP_FREEZE_SMALLPAGES;
	f = freeze_frame(&fz, 0, "", 0);
	assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE + 16 + sizeof(fz));
	assert_true(req.freeze.flags & MT_AP_FREEZE_SMALLPAGES);
	/* references by position: only with the records in place (an agent
	 * before stop 50 refuses the flag, and memtrace asks again without) */
	fz.flags = MT_AP_FREEZE_DIRECT | MT_AP_FREEZE_REFPOS;
	f = freeze_frame(&fz, 0, "", 0);
	expect_error(&f, true, -EPROTO, 9, "malformed heap request");
	fz.flags = MT_AP_FREEZE_DIRECT | MT_AP_FREEZE_LIVE | MT_AP_FREEZE_POOL |
		   MT_AP_FREEZE_INPLACE | MT_AP_FREEZE_REFPOS;
	f = freeze_frame(&fz, 0, "", 0);
	assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE + 16 + sizeof(fz));
	assert_true(req.freeze.flags & MT_AP_FREEZE_REFPOS);
	/* ... which an agent of stop 46-49 did not know (request_freeze_known():
	 * the e2e case agent_older makes the agent answer as one) */
	request_freeze_known(0xffff);
	f = freeze_frame(&fz, 0, "", 0);
	expect_error(&f, true, -EPROTO, 9, "malformed heap request");
	request_freeze_known(MT_AP_FREEZE_FLAGS);
	f = freeze_frame(&fz, 0, "", 0);
	assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE + 16 + sizeof(fz));
	fz.flags = MT_AP_FREEZE_TEST_HANG;
	fz.state_addr = 0;
	f = freeze_frame(&fz, 0, "", 0);
	expect_error(&f, true, -EPROTO, 9, "malformed heap request");
	fz.state_addr = 1;
	fz.heap_hi = fz.heap_lo;
	f = freeze_frame(&fz, 0, "", 0);
	expect_error(&f, true, -EPROTO, 9, "malformed heap request");
}

/* Frames back to back: one at a time, each from where the last ended. */
static void test_frames_in_a_row(void **state)
{
	struct mt_ap_hello in = { .min_version = 1, .max_version = 1 };
	struct mt_ap_ping ping = { .cookie = 5 };
	struct frame a = mk(MT_AP_HELLO, 1, &in, sizeof(in)), b = mk(MT_AP_PING, 2, &ping, 8);
	unsigned char both[2 * sizeof(a.b)];
	struct request req;
	char why[REQUEST_WHY];
	long n;

	memcpy(both, a.b, a.n);
	memcpy(both + a.n, b.b, b.n);
	n = next(both, a.n + b.n, CAP, false, &req, why, sizeof(why));
	assert_int_equal(n, a.n);
	assert_int_equal(req.hdr.type, MT_AP_HELLO);
	n = next(both + n, b.n, CAP, true, &req, why, sizeof(why));
	assert_int_equal(n, b.n);
	assert_int_equal(req.hdr.type, MT_AP_PING);
	assert_true(req.ping.cookie == 5);
}

/* Every proper prefix of a valid frame asks for more, and reads nothing past it. */
static void test_truncated(void **state)
{
	static const char names[] = "a\0bb\0ccc";
	struct mt_ap_hello in = { .min_version = 1, .max_version = 1 };
	struct frame frames[] = {
		mk(MT_AP_HELLO, 77, &in, sizeof(in)),
		heap_frame(0, 3, names, sizeof(names)),
		mk(MT_AP_DETACH, 1, NULL, 0),
	};
	struct frame big = mk(MT_AP_HEAP_REQUEST, 3, NULL, 0);
	struct request req;
	char why[REQUEST_WHY];

	for (size_t k = 0; k < sizeof(frames) / sizeof(frames[0]); k++) {
		for (size_t n = 0; n < frames[k].n; n++) {
			assert_int_equal(next(frames[k].b, n, CAP, true, &req, why, sizeof(why)), 0);
			assert_string_equal(why, "");
			if (n < MT_AP_HDR_SIZE)
				assert_int_equal(req.hdr.seq, 0);
		}
	}
	/* a heap request as large as the buffer allows, its header alone */
	hdr_of(&big)->len = MT_AP_HEAP_REQ_MAX;
	assert_int_equal(next(big.b, MT_AP_HDR_SIZE, CAP, true, &req, why, sizeof(why)), 0);
}

static void test_oversized(void **state)
{
	struct frame f = mk(MT_AP_HEAP_REQUEST, 11, NULL, 0);
	size_t len = MT_AP_HEAP_REQ_MAX + 1;
	struct mt_ap_hdr h = { .magic = MT_AP_MAGIC, .version = MT_AP_VERSION,
			       .type = MT_AP_HEAP_REQUEST, .len = (uint32_t)len, .seq = 13 };
	unsigned char *big;
	struct request req;
	char why[REQUEST_WHY];

	/* past the protocol's limit: refused on the header alone, for any type */
	hdr_of(&f)->len = MT_AP_MAX_PAYLOAD + 1;
	expect_error(&f, true, -EMSGSIZE, 11, "frame too large");
	hdr_of(&f)->len = UINT32_MAX;
	expect_error(&f, false, -EMSGSIZE, 11, "frame too large");
	hdr_of(&f)->type = 999;
	expect_error(&f, true, -EMSGSIZE, 11, "frame too large");

	/* within the protocol's limit but not the receive buffer's */
	f = mk(MT_AP_HEAP_REQUEST, 12, NULL, 0);
	hdr_of(&f)->len = MT_AP_HEAP_REQ_MAX + 1;
	expect_error(&f, true, -EMSGSIZE, 12, "frame too large");
	hdr_of(&f)->len = MT_AP_MAX_PAYLOAD;
	expect_error(&f, true, -EMSGSIZE, 12, "frame too large");
	/* ... also before HELLO: the size is checked before the session's rules */
	expect_error(&f, false, -EMSGSIZE, 12, "frame too large");

	/* a whole heap request over MT_AP_HEAP_REQ_MAX (a larger buffer received it) */
	big = calloc(1, MT_AP_HDR_SIZE + len);
	assert_non_null(big);
	memcpy(big, &h, sizeof(h));
	assert_int_equal(next(big, MT_AP_HDR_SIZE + len, 2 * CAP, true, &req, why, sizeof(why)),
			 -EPROTO);
	assert_int_equal(req.hdr.seq, 13);
	assert_string_equal(why, "malformed heap request");
	/* exactly MT_AP_HEAP_REQ_MAX is a request */
	h.len = MT_AP_HEAP_REQ_MAX;
	memcpy(big, &h, sizeof(h));
	assert_int_equal(next(big, MT_AP_HDR_SIZE + h.len, CAP, true, &req, why, sizeof(why)),
			 MT_AP_HDR_SIZE + MT_AP_HEAP_REQ_MAX);
	assert_int_equal(req.names_len, MT_AP_HEAP_REQ_MAX - 16);
	free(big);
}

static void test_wrong_version(void **state)
{
	struct mt_ap_hello in = { .min_version = 1, .max_version = 1 };
	struct mt_ap_sample_start ss = { .rec_version = MT_AP_REC_VERSION + 1, .max_depth = 8,
					 .interval = 1024 };
	struct frame f = mk(MT_AP_HELLO, 21, &in, sizeof(in));

	/* the frame's header */
	hdr_of(&f)->version = MT_AP_VERSION + 1;
	expect_error(&f, false, -EPROTONOSUPPORT, 21, "unsupported protocol version");
	hdr_of(&f)->version = 0;
	expect_error(&f, true, -EPROTONOSUPPORT, 21, "unsupported protocol version");

	/* HELLO's range leaves out this agent's version, above or below */
	in.min_version = MT_AP_VERSION + 1;
	in.max_version = MT_AP_VERSION + 5;
	f = mk(MT_AP_HELLO, 22, &in, sizeof(in));
	expect_error(&f, false, -EPROTONOSUPPORT, 22, "this agent speaks protocol version 1");
	in.min_version = 0;
	in.max_version = MT_AP_VERSION - 1;
	f = mk(MT_AP_HELLO, 23, &in, sizeof(in));
	expect_error(&f, false, -EPROTONOSUPPORT, 23, "this agent speaks protocol version 1");
	in.min_version = 2;
	in.max_version = 1; /* an empty range */
	f = mk(MT_AP_HELLO, 24, &in, sizeof(in));
	expect_error(&f, false, -EPROTONOSUPPORT, 24, "this agent speaks protocol version 1");

	/* sample records of another version */
	f = mk(MT_AP_SAMPLE_START, 25, &ss, sizeof(ss));
	expect_error(&f, true, -EPROTONOSUPPORT, 25,
		     "this agent encodes sample records version 1");
	ss.rec_version = 0;
	f = mk(MT_AP_SAMPLE_START, 26, &ss, sizeof(ss));
	expect_error(&f, true, -EPROTONOSUPPORT, 26,
		     "this agent encodes sample records version 1");
	/* the version is checked before the parameters */
	ss.interval = 0;
	f = mk(MT_AP_SAMPLE_START, 27, &ss, sizeof(ss));
	expect_error(&f, true, -EPROTONOSUPPORT, 27,
		     "this agent encodes sample records version 1");
}

static void test_bad_sample_parameters(void **state)
{
	const struct { uint16_t depth; uint32_t interval; } bad[] = {
		{ 8, 0 }, { 0, 1024 }, { MT_AP_MAX_DEPTH + 1, 1024 }, { UINT16_MAX, 1024 }, { 0, 0 },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct mt_ap_sample_start ss = { .rec_version = MT_AP_REC_VERSION,
						 .max_depth = bad[i].depth,
						 .interval = bad[i].interval };
		struct frame f = mk(MT_AP_SAMPLE_START, 30 + i, &ss, sizeof(ss));

		expect_error(&f, true, -EINVAL, 30 + i, "interval must be > 0 and depth 1..32");
	}
}

static void test_malformed_heap_request(void **state)
{
	struct frame f;

	/* shorter than its struct */
	f = mk(MT_AP_HEAP_REQUEST, 40, "12345678", 8);
	expect_error(&f, true, -EPROTO, 40, "malformed heap request");
	f = mk(MT_AP_HEAP_REQUEST, 41, NULL, 0);
	expect_error(&f, true, -EPROTO, 41, "malformed heap request");
	/* fewer names than nfields */
	f = heap_frame(0, 3, "a\0b", 4);
	expect_error(&f, true, -EPROTO, 9, "malformed heap request");
	/* a name running to the end without its NUL */
	f = heap_frame(0, 1, "abc", 3);
	expect_error(&f, true, -EPROTO, 9, "malformed heap request");
	f = heap_frame(0, 2, "a\0bc", 4);
	expect_error(&f, true, -EPROTO, 9, "malformed heap request");
	/* nfields far beyond the payload: refused, not a long loop */
	f = heap_frame(0, UINT32_MAX, "a\0b\0", 4);
	expect_error(&f, true, -EPROTO, 9, "malformed heap request");
	/* a flag this agent does not know */
	f = heap_frame(MT_AP_HEAP_FLAGS + 1, 0, "", 0);
	expect_error(&f, true, -EPROTO, 9, "malformed heap request");
	f = heap_frame(1u << 31, 0, "", 0);
	expect_error(&f, true, -EPROTO, 9, "malformed heap request");
}

/* MT_AP_HEAP_SAMPLES: the sample ids after the names, bounded and inside. */
static void test_heap_request_samples(void **state)
{
	unsigned char p[256];
	struct mt_ap_heap_request hr = { .flags = MT_AP_HEAP_SAMPLES | MT_AP_HEAP_REFS,
					 .nfields = 1, .nsamples = 2 };
	uint64_t ids[2] = { 41, 43 }, got;
	struct request req;
	struct frame f;
	char why[REQUEST_WHY];

	memcpy(p, &hr, sizeof(hr));
	memcpy(p + sizeof(hr), "k", 2);
	memcpy(p + sizeof(hr) + 2, ids, sizeof(ids)); /* unaligned, after the names */
	f = mk(MT_AP_HEAP_REQUEST, 9, p, sizeof(hr) + 2 + sizeof(ids));
	assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE + sizeof(hr) + 2 + sizeof(ids));
	assert_int_equal(req.heap.nsamples, 2);
	assert_int_equal(req.names_len, 2);
	assert_ptr_equal(req.samples, f.b + MT_AP_HDR_SIZE + sizeof(hr) + 2);
	memcpy(&got, (const char *)req.samples + 8, 8);
	assert_int_equal(got, 43);
	/* fewer bytes than the ids announced */
	f = mk(MT_AP_HEAP_REQUEST, 9, p, sizeof(hr) + 2 + 12);
	expect_error(&f, true, -EPROTO, 9, "malformed heap request");
	/* more ids than a request may carry */
	hr.nsamples = MT_AP_HEAP_MAX_SAMPLES + 1;
	memcpy(p, &hr, sizeof(hr));
	f = mk(MT_AP_HEAP_REQUEST, 9, p, sizeof(hr) + 2 + sizeof(ids));
	expect_error(&f, true, -EPROTO, 9, "malformed heap request");
	/* without the flag the count is ignored (an older memtrace's reserved field) */
	hr.flags = MT_AP_HEAP_REFS;
	memcpy(p, &hr, sizeof(hr));
	f = mk(MT_AP_HEAP_REQUEST, 9, p, sizeof(hr) + 2);
	assert_int_equal(run(&f, true, &req, why), MT_AP_HDR_SIZE + sizeof(hr) + 2);
	assert_int_equal(req.heap.nsamples, 0);
	assert_null(req.samples);
}

/* The session's rules: HELLO first; a client sends requests, not replies. */
static void test_session_rules(void **state)
{
	static const unsigned replies[] = { MT_AP_PONG, MT_AP_DETACH_ACK, MT_AP_ERROR,
					    MT_AP_SAMPLE_STARTED, MT_AP_SAMPLE_STOPPED,
					    MT_AP_EVENTS, MT_AP_HEAP_DATA, MT_AP_HEAP_DONE };
	unsigned char reply[sizeof(struct mt_ap_hello_reply)] = { 0 };
	struct mt_ap_ping ping = { 0 };
	struct frame f;

	f = mk(MT_AP_PING, 50, &ping, sizeof(ping));
	expect_error(&f, false, -EPROTO, 50, "the first frame must be HELLO");
	f = mk(MT_AP_DETACH, 51, NULL, 0);
	expect_error(&f, false, -EPROTO, 51, "the first frame must be HELLO");
	f = heap_frame(0, 0, "", 0);
	expect_error(&f, false, -EPROTO, 9, "the first frame must be HELLO");

	f = mk(MT_AP_HELLO_REPLY, 52, reply, sizeof(reply));
	expect_error(&f, false, -EPROTO, 52, "the first frame must be HELLO");
	expect_error(&f, true, -EPROTO, 52, "unexpected frame type");
	for (size_t i = 0; i < sizeof(replies) / sizeof(replies[0]); i++) {
		long len = mt_ap_payload_size(replies[i]);

		if (len == MT_AP_VARLEN)
			len = 8;
		assert_true(len >= 0 && (size_t)len <= sizeof(reply));
		f = mk(replies[i], 60 + i, reply, (size_t)len);
		expect_error(&f, true, -EPROTO, 60 + i, "unexpected frame type");
	}
}

static void test_garbage(void **state)
{
	struct mt_ap_hello in = { .min_version = 1, .max_version = 1 };
	struct frame f = mk(MT_AP_HELLO, 70, &in, sizeof(in));

	/* bad magic: refused before anything else in the header */
	hdr_of(&f)->magic = 0x50544148; /* "HTTP" */
	hdr_of(&f)->version = 99;
	hdr_of(&f)->len = UINT32_MAX;
	expect_error(&f, true, -EBADMSG, 70, "bad magic");
	memcpy(f.b, "GET / HTTP/1.1\r\n", 16);
	f.n = 16;
	expect_error(&f, false, -EBADMSG, 0x0a0d312e, "bad magic");

	/* unknown types */
	f = mk(0, 71, NULL, 0);
	expect_error(&f, true, -ENOMSG, 71, "unknown frame type");
	f = mk(MT_AP_TYPE_MAX + 1, 72, NULL, 0);
	expect_error(&f, true, -ENOMSG, 72, "unknown frame type");
	f = mk(UINT16_MAX, 73, "x", 1);
	expect_error(&f, false, -ENOMSG, 73, "unknown frame type");

	/* a payload of the wrong size for its type */
	f = mk(MT_AP_HELLO, 74, &in, sizeof(in) - 1);
	expect_error(&f, false, -EPROTO, 74, "payload size does not match type");
	f = mk(MT_AP_PING, 75, "123456789", 9);
	expect_error(&f, true, -EPROTO, 75, "payload size does not match type");
	f = mk(MT_AP_DETACH, 76, "x", 1);
	expect_error(&f, true, -EPROTO, 76, "payload size does not match type");
	f = mk(MT_AP_SAMPLE_STOP, 77, "12345678", 8);
	expect_error(&f, true, -EPROTO, 77, "payload size does not match type");
}

/* Random bytes: a known outcome, never a read past what was received. */
static void test_random_bytes(void **state)
{
	static const long ok[] = { 0, -EBADMSG, -EPROTONOSUPPORT, -EMSGSIZE, -ENOMSG, -EPROTO,
				   -EINVAL };
	unsigned char buf[64];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	struct request req;
	char why[REQUEST_WHY];

	for (int round = 0; round < 20000; round++) {
		size_t n = round % sizeof(buf);
		long r;
		bool known = false;

		for (size_t i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			buf[i] = (unsigned char)x;
		}
		/* half the rounds carry a valid magic and version, to get past them */
		if (round & 1 && n >= 8) {
			uint32_t m = MT_AP_MAGIC;
			uint16_t v = MT_AP_VERSION;

			memcpy(buf, &m, 4);
			memcpy(buf + 4, &v, 2);
			buf[7] = 0; /* types below 256 */
		}
		r = next(buf, n, CAP, round & 2, &req, why, sizeof(why));
		for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
			known |= r == ok[i];
		assert_true(known || (r >= MT_AP_HDR_SIZE && (size_t)r <= n));
		assert_true((r < 0) == (why[0] != '\0'));
	}
}

/* The reason is cut to the caller's buffer, NUL-terminated. */
static void test_short_why(void **state)
{
	struct frame f = mk(MT_AP_PING, 80, "12345678", 8);
	struct request req;
	char why[8];

	assert_int_equal(next(f.b, f.n, CAP, false, &req, why, sizeof(why)), -EPROTO);
	assert_string_equal(why, "the fir");
	hdr_of(&f)->magic = 0;
	assert_int_equal(next(f.b, f.n, CAP, false, &req, why, sizeof(why)), -EBADMSG);
	assert_string_equal(why, "bad mag");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_hello),
		cmocka_unit_test(test_good_requests_after_hello),
		cmocka_unit_test(test_good_heap_request),
		cmocka_unit_test(test_freeze_request),
		cmocka_unit_test(test_heap_request_samples),
		cmocka_unit_test(test_frames_in_a_row),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_oversized),
		cmocka_unit_test(test_wrong_version),
		cmocka_unit_test(test_bad_sample_parameters),
		cmocka_unit_test(test_malformed_heap_request),
		cmocka_unit_test(test_session_rules),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_random_bytes),
		cmocka_unit_test(test_short_why),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
