/* snap_fixture.h - small synthetic heaps as the agent's records and as an
 * HPROF dump, shared by tests/unit/test_snaprec.c, test_snapfile.c,
 * test_snapload.c, test_heapview.c, test_hprof.c and the fuzzers' seed
 * writer (tests/fuzz/mkseeds.c).
 *
 * The heap: classes Object (id 1), Order (id 2: int field, String name,
 * Order next), String (id 3), Thread (id 4: String name). Objects: Order 10
 * (field 4242, name -> 12 "order-7", next -> 11), Order 11 (field 7, name ->
 * 13 "order-8"), Strings 12 and 13, Thread 14 (name -> 15 "main"), String 15;
 * roots: 10 (stack local), 14 (thread).
 */
#ifndef SNAP_FIXTURE_H
#define SNAP_FIXTURE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/agent_proto.h"

static inline void fx_class(char *buf, size_t cap, size_t *off, uint64_t id, uint64_t super,
			    const char *sig, int n, const char *const *names, const char *types)
{
	char body[1024];
	struct mt_ap_hclass h = { .id = id, .super = super, .nfields = (uint32_t)n };
	size_t b = sizeof(h);

	memcpy(body, &h, sizeof(h));
	memcpy(body + b, sig, strlen(sig) + 1);
	b += strlen(sig) + 1;
	for (int i = 0; i < n; i++) {
		int32_t idx = i;

		memcpy(body + b, &idx, 4);
		body[b + 4] = types[i];
		memcpy(body + b + 5, names[i], strlen(names[i]) + 1);
		b += 5 + strlen(names[i]) + 1;
	}
	mt_ap_rec_put(buf, cap, off, MT_AP_HREC_CLASS, (uint32_t)n, body, b);
}

static inline void fx_string(char *buf, size_t cap, size_t *off, uint64_t obj, const char *s)
{
	char body[256];

	memcpy(body, &obj, 8);
	memcpy(body + 8, s, strlen(s) + 1);
	mt_ap_rec_put(buf, cap, off, MT_AP_HREC_STRING, (uint32_t)strlen(s), body, 8 + strlen(s) + 1);
}

/* The fixture heap as agent records into buf; returns the bytes. */
static inline size_t fx_records(char *buf, size_t cap)
{
	static const char *const order_f[] = { "field", "name", "next" };
	static const char *const thread_f[] = { "name" };
	const struct mt_ap_hobj objs[] = {
		{ 1, 5, 112, -1, 0 }, { 2, 5, 112, -1, 0 }, { 3, 5, 112, -1, 0 },
		{ 4, 5, 112, -1, 0 }, { 10, 2, 24, -1, 0 }, { 11, 2, 24, -1, 0 },
		{ 12, 3, 24, -1, 0 }, { 13, 3, 24, -1, 0 }, { 14, 4, 104, -1, 0 },
		{ 15, 3, 24, -1, 0 },
	};
	const struct mt_ap_href refs[] = {
		{ 10, 12, 1, 2 }, { 10, 11, 2, 2 }, { 11, 13, 1, 2 }, { 14, 15, 0, 2 },
		{ 10, 2, -1, 1 }, { 11, 2, -1, 1 },
	};
	const struct mt_ap_hroot roots[] = { { 10, 24, 0 }, { 14, 26, 0 } };
	const struct mt_ap_hprim prims[] = { { 10, 4242, 0, 'I' }, { 11, 7, 0, 'I' } };
	char tb[64];
	uint64_t tid = 14;
	size_t off = 0;

	fx_class(buf, cap, &off, 1, 0, "Ljava/lang/Object;", 0, NULL, "");
	fx_class(buf, cap, &off, 2, 1, "Lspec/jbb/Order;", 3, order_f, "ITL");
	fx_class(buf, cap, &off, 3, 1, "Ljava/lang/String;", 0, NULL, "");
	fx_class(buf, cap, &off, 4, 1, "Ljava/lang/Thread;", 1, thread_f, "T");
	memcpy(tb, &tid, 8);
	memcpy(tb + 8, "main", 5);
	mt_ap_rec_put(buf, cap, &off, MT_AP_HREC_THREAD, 0, tb, 13);
	mt_ap_rec_put(buf, cap, &off, MT_AP_HREC_OBJS, 10, objs, sizeof(objs));
	mt_ap_rec_put(buf, cap, &off, MT_AP_HREC_REFS, 6, refs, sizeof(refs));
	mt_ap_rec_put(buf, cap, &off, MT_AP_HREC_ROOTS, 2, roots, sizeof(roots));
	mt_ap_rec_put(buf, cap, &off, MT_AP_HREC_PRIMS, 2, prims, sizeof(prims));
	fx_string(buf, cap, &off, 12, "order-7");
	fx_string(buf, cap, &off, 13, "order-8");
	fx_string(buf, cap, &off, 15, "main");
	return off;
}

/* ---- HPROF ---- */

struct fx_buf {
	unsigned char *p;
	size_t n, cap;
};

static inline void fx_put(struct fx_buf *b, uint64_t v, unsigned k)
{
	if (b->n + k > b->cap) {
		b->cap = (b->cap + k) * 2;
		b->p = realloc(b->p, b->cap);
	}
	for (unsigned i = 0; i < k; i++)
		b->p[b->n + i] = (unsigned char)(v >> (8 * (k - 1 - i)));
	b->n += k;
}

static inline void fx_bytes(struct fx_buf *b, const void *s, size_t k)
{
	if (b->n + k > b->cap) {
		b->cap = (b->cap + k) * 2;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, s, k);
	b->n += k;
}

static inline void fx_utf8(struct fx_buf *b, uint64_t id, const char *s)
{
	fx_put(b, 0x01, 1);
	fx_put(b, 0, 4);
	fx_put(b, 8 + strlen(s), 4);
	fx_put(b, id, 8);
	fx_bytes(b, s, strlen(s));
}

static inline void fx_load(struct fx_buf *b, uint64_t cls, uint64_t name)
{
	fx_put(b, 0x02, 1);
	fx_put(b, 0, 4);
	fx_put(b, 24, 4);
	fx_put(b, 1, 4);
	fx_put(b, cls, 8);
	fx_put(b, 0, 4);
	fx_put(b, name, 8);
}

/* CLASS DUMP with n instance fields (name ids, types). */
static inline void fx_cdump(struct fx_buf *h, uint64_t id, uint64_t super, int n,
			    const uint64_t *names, const unsigned char *types)
{
	fx_put(h, 0x20, 1);
	fx_put(h, id, 8);
	fx_put(h, 0, 4);
	fx_put(h, super, 8);
	for (int i = 0; i < 5; i++) /* loader, signers, protection domain, 2 reserved */
		fx_put(h, 0, 8);
	fx_put(h, 16, 4);
	fx_put(h, 0, 2); /* constant pool */
	fx_put(h, 0, 2); /* statics */
	fx_put(h, (uint64_t)n, 2);
	for (int i = 0; i < n; i++) {
		fx_put(h, names[i], 8);
		fx_put(h, types[i], 1);
	}
}

/* The fixture heap as an HPROF dump (identifier size 8); caller frees. */
static inline unsigned char *fx_hprof(size_t *len)
{
	struct fx_buf b = { 0 }, h = { 0 };
	/* name ids */
	enum { N_OBJ = 100, N_ORDER, N_STR, N_THREAD, N_CLASS, N_BARR, N_FIELD, N_NAME, N_NEXT,
	       N_VALUE, N_CODER };
	const uint64_t of[] = { N_FIELD, N_NAME, N_NEXT }, sf[] = { N_VALUE, N_CODER },
		       tf[] = { N_NAME };
	const unsigned char ot[] = { 10, 2, 2 }, st[] = { 2, 8 }, tt[] = { 2 };
	const struct { uint64_t id, arr; const char *s; } strs[] = {
		{ 0x2000, 0x3000, "order-7" }, { 0x2001, 0x3001, "order-8" }, { 0x2002, 0x3002, "main" },
	};

	fx_bytes(&b, "JAVA PROFILE 1.0.2", 19);
	fx_put(&b, 8, 4);
	fx_put(&b, 0, 8);
	fx_utf8(&b, N_OBJ, "java/lang/Object");
	fx_utf8(&b, N_ORDER, "spec/jbb/Order");
	fx_utf8(&b, N_STR, "java/lang/String");
	fx_utf8(&b, N_THREAD, "java/lang/Thread");
	fx_utf8(&b, N_CLASS, "java/lang/Class");
	fx_utf8(&b, N_BARR, "[B");
	fx_utf8(&b, N_FIELD, "field");
	fx_utf8(&b, N_NAME, "name");
	fx_utf8(&b, N_NEXT, "next");
	fx_utf8(&b, N_VALUE, "value");
	fx_utf8(&b, N_CODER, "coder");
	fx_load(&b, 0x100, N_OBJ);
	fx_load(&b, 0x101, N_ORDER);
	fx_load(&b, 0x102, N_STR);
	fx_load(&b, 0x103, N_THREAD);
	fx_load(&b, 0x104, N_CLASS);
	fx_load(&b, 0x105, N_BARR);
	/* the heap dump segment */
	fx_cdump(&h, 0x100, 0, 0, NULL, NULL);
	fx_cdump(&h, 0x101, 0x100, 3, of, ot);
	fx_cdump(&h, 0x102, 0x100, 2, sf, st);
	fx_cdump(&h, 0x103, 0x100, 1, tf, tt);
	fx_cdump(&h, 0x104, 0x100, 0, NULL, NULL);
	fx_cdump(&h, 0x105, 0x100, 0, NULL, NULL);
	/* Order 0x1000 (4242, "order-7", next 0x1001), Order 0x1001 (7, "order-8", null) */
	for (int i = 0; i < 2; i++) {
		fx_put(&h, 0x21, 1);
		fx_put(&h, 0x1000 + (uint64_t)i, 8);
		fx_put(&h, 0, 4);
		fx_put(&h, 0x101, 8);
		fx_put(&h, 4 + 8 + 8, 4);
		fx_put(&h, i ? 7 : 4242, 4);
		fx_put(&h, 0x2000 + (uint64_t)i, 8);
		fx_put(&h, i ? 0 : 0x1001, 8);
	}
	/* Thread 0x1002 named "main" */
	fx_put(&h, 0x21, 1);
	fx_put(&h, 0x1002, 8);
	fx_put(&h, 0, 4);
	fx_put(&h, 0x103, 8);
	fx_put(&h, 8, 4);
	fx_put(&h, 0x2002, 8);
	for (int i = 0; i < 3; i++) {
		fx_put(&h, 0x21, 1); /* String */
		fx_put(&h, strs[i].id, 8);
		fx_put(&h, 0, 4);
		fx_put(&h, 0x102, 8);
		fx_put(&h, 9, 4);
		fx_put(&h, strs[i].arr, 8);
		fx_put(&h, 0, 1); /* LATIN1 */
		fx_put(&h, 0x23, 1); /* its byte[] */
		fx_put(&h, strs[i].arr, 8);
		fx_put(&h, 0, 4);
		fx_put(&h, strlen(strs[i].s), 4);
		fx_put(&h, 8, 1);
		fx_bytes(&h, strs[i].s, strlen(strs[i].s));
	}
	fx_put(&h, 0x03, 1); /* ROOT JAVA FRAME: Order 0x1000 */
	fx_put(&h, 0x1000, 8);
	fx_put(&h, 0, 4);
	fx_put(&h, 0, 4);
	fx_put(&h, 0x08, 1); /* ROOT THREAD OBJECT */
	fx_put(&h, 0x1002, 8);
	fx_put(&h, 1, 4);
	fx_put(&h, 0, 4);
	fx_put(&b, 0x1c, 1);
	fx_put(&b, 0, 4);
	fx_put(&b, h.n, 4);
	fx_bytes(&b, h.p, h.n);
	fx_put(&b, 0x2c, 1); /* HEAP DUMP END */
	fx_put(&b, 0, 4);
	fx_put(&b, 0, 4);
	free(h.p);
	*len = b.n;
	return b.p;
}

#endif
