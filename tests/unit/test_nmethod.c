// SPDX-License-Identifier: GPL-2.0
/*
 * test_nmethod.c - nmethod lookup and scope decoding over a synthetic JVM:
 * VMStructs shaped like JDK 17's and JDK 25's, a code heap with its segment
 * map, nmethods with PcDescs, scopes data (both stream encodings) and
 * metadata, and Methods that methodsym names.
 *
 * `test_nmethod --live PID [FILTER]` instead dumps, as JSON lines, every
 * nmethod of a live JVM and, for those whose name contains FILTER, the
 * frames of every PcDesc and the line of every bci of their methods
 * (tests/e2e/cases/nmethod_live.sh compares them with jcmd Compiler.codelist
 * and javap).
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jstack/methodsym.h"
#include "jstack/nmethod.h"
#include "jvm/proc.h"
#include "jvm/vmstructs.h"
#include "lib/util.h"

#include "fake_target.h"
#include "fake_jvm.h"

/* ---------------------------------------------------------------- live */

struct live {
	const struct mt_vmstructs *vs;
	struct mt_nmethod_layout l;
	struct mt_methodsym_layout ml;
	uint64_t *blobs;
	size_t n, cap;
	uint64_t seen[64];  /* Methods whose line tables were dumped */
	size_t nseen;
};

static int collect(void *arg, uint64_t blob)
{
	struct live *lv = arg;

	if (lv->n == lv->cap) {
		size_t cap = lv->cap ? lv->cap * 2 : 1024;
		uint64_t *b = realloc(lv->blobs, cap * sizeof(*b));

		if (!b)
			return -ENOMEM;
		lv->blobs = b;
		lv->cap = cap;
	}
	lv->blobs[lv->n++] = blob;
	return 0;
}

static void method_text(struct live *lv, uint64_t method, bool sig, char *out, size_t len)
{
	struct mt_methodsym ms;

	if (methodsym_names(lv->vs, &lv->ml, method, &ms))
		snprintf(out, len, "?");
	else
		snprintf(out, len, "%s.%s%s", ms.klass, ms.name, sig ? ms.sig : "");
}

/* The line of every bci of @method, once per method. */
static void live_lines(struct live *lv, uint64_t method, const char *name)
{
	int line;

	for (size_t i = 0; i < lv->nseen; i++)
		if (lv->seen[i] == method)
			return;
	if (lv->nseen == MT_ARRAY_SIZE(lv->seen))
		return;
	lv->seen[lv->nseen++] = method;
	printf("{\"lines\":1,\"m\":");
	json_str(stdout, name);
	printf(",\"table\":[");
	for (int bci = 0; methodsym_line(lv->vs, &lv->ml, method, bci, &line) != -ERANGE; bci++)
		printf("%s%d", bci ? "," : "", line);
	printf("]}\n");
}

static void live_scopes(struct live *lv, const struct mt_nmethod *nm)
{
	struct mt_nmethod_scope sc[MT_NMETHOD_MAX_SCOPES];
	size_t npcs = nmethod_npcs(&lv->l, nm);
	char name[1024];

	for (size_t i = 0; i < npcs; i++) {
		struct mt_nmethod found;
		uint64_t pc;
		int n;

		if (nmethod_pc_at(lv->vs, &lv->l, nm, i, &pc))
			continue;
		if (nmethod_find(lv->vs, &lv->l, pc, &found) || found.start != nm->start)
			printf("{\"error\":\"find\",\"id\":%d,\"pc\":%" PRIu64 "}\n", nm->compile_id, pc);
		n = nmethod_scopes(lv->vs, &lv->l, nm, pc, 0, sc, MT_NMETHOD_MAX_SCOPES);
		if (n < 0) {
			printf("{\"error\":\"scopes\",\"id\":%d,\"off\":%" PRIu64 ",\"err\":%d}\n",
			       nm->compile_id, pc - nm->code_begin, n);
			continue;
		}
		printf("{\"pcs\":1,\"id\":%d,\"off\":%" PRIu64 ",\"scopes\":[", nm->compile_id,
		       pc - nm->code_begin);
		for (int k = 0; k < n; k++) {
			int line = -1;

			method_text(lv, sc[k].method, false, name, sizeof(name));
			methodsym_line(lv->vs, &lv->ml, sc[k].method, sc[k].bci, &line);
			printf("%s{\"m\":", k ? "," : "");
			json_str(stdout, name);
			printf(",\"bci\":%d,\"line\":%d,\"kind\":\"%s\"}", sc[k].bci, line,
			       nmethod_kind_name(sc[k].kind));
		}
		printf("]}\n");
		for (int k = 0; k < n; k++) {
			method_text(lv, sc[k].method, false, name, sizeof(name));
			live_lines(lv, sc[k].method, name);
		}
	}
}

static int live(int pid, const char *filter)
{
	struct live lv = { 0 };
	struct mt_vmstructs *vs = NULL;
	struct mt_proc p;
	size_t nms = 0;
	int err;

	if ((err = proc_open(pid, &p)) || (err = vmstructs_open(&p, &vs))) {
		fprintf(stderr, "can't read pid %d: %s\n", pid, strerror(-err));
		return 1;
	}
	lv.vs = vs;
	if ((err = nmethod_layout(vs, &lv.l)) || (err = methodsym_layout(vs, &lv.ml)) ||
	    (err = nmethod_walk(vs, &lv.l, collect, &lv, 1000000))) {
		fprintf(stderr, "layout/walk: %s\n", strerror(-err));
		goto out;
	}
	printf("{\"layout\":1,\"style\":%d,\"heaps\":%u,\"u5_excl\":%u,\"vm_major\":%d}\n",
	       lv.l.style, lv.l.nheaps, lv.l.u5_excl, lv.ml.vm_major);
	for (size_t i = 0; i < lv.n; i++) {
		struct mt_nmethod nm, mid;
		char name[1024];

		err = nmethod_read(vs, &lv.l, lv.blobs[i], &nm);
		if (err == -ENOEXEC)
			continue;
		if (err) {
			printf("{\"error\":\"read\",\"blob\":%" PRIu64 ",\"err\":%d}\n", lv.blobs[i], err);
			continue;
		}
		nms++;
		method_text(&lv, nm.method, true, name, sizeof(name));
		/* a pc in the middle of the code finds the same nmethod */
		err = nmethod_find(vs, &lv.l, nm.code_begin + (nm.code_end - nm.code_begin) / 2, &mid);
		printf("{\"nm\":1,\"id\":%d,\"level\":%d,\"state\":%d,\"kind\":\"%s\",\"entry_bci\":%d,"
		       "\"start\":%" PRIu64 ",\"find\":%d,\"npcs\":%zu,\"name\":",
		       nm.compile_id, nm.comp_level, nm.state, nmethod_kind_name(nm.kind), nm.entry_bci,
		       nm.start, err ? err : mid.start == nm.start, nmethod_npcs(&lv.l, &nm));
		json_str(stdout, name);
		printf("}\n");
		if (filter && strstr(name, filter))
			live_scopes(&lv, &nm);
	}
	printf("{\"done\":1,\"blobs\":%zu,\"nmethods\":%zu}\n", lv.n, nms);
	err = 0;
out:
	free(lv.blobs);
	vmstructs_free(vs);
	return err ? 1 : 0;
}

/* ---------------------------------------------------------------- fake JVM */

/*
 * One code heap of NSEG segments of SEG bytes, the way HotSpot lays it out:
 *   segments 0-3   a stub ("StubRoutines (1)")
 *   segments 4-5   a free block
 *   segments 6-21  the nmethod: compile id 42, C2, of DeepInline.run with
 *                  DeepInline$Inner.a and .alloc inlined
 *   segments 22-   never used (segment map 0xff, headers zero)
 * Its segment map hops back 1, 2, 3, 1, 2, 3... segments at a time.
 */
#define LOG2_SEG 7
#define SEG (1u << LOG2_SEG)
#define NSEG 32
#define NM_SEG 6
#define NM_NSEG 16
#define CODE_OFF 512   /* code: blob + 512 .. blob + 1280 */
#define CODE_END 1280
#define FILLER 251     /* scopes data bytes before the first scope */

enum { PC_RUN = 20, PC_CHAIN = 100, PC_NODEBUG = 150, PC_FWD = 200, PC_BADIDX = 210 };

struct fx {
	struct fj *j;
	uint64_t low, heap, stub, blob, code;
	uint64_t m_run, m_a, m_alloc;
	uint64_t scopes;               /* where the scopes data is */
	uint32_t o_run, o_a, o_alloc;  /* decode offsets of the three scopes */
};

static const int RUN_LINES[][2] = { { 0, 34 }, { 11, 36 }, { 20, 35 } };
static const int A_LINES[][2] = { { 0, 12 } };
static const int ALLOC_LINES[][2] = { { 0, 29 }, { 300, 31 } };

/* A HeapBlock header: length in segments, used flag. */
static void put_block(struct fx *x, unsigned seg, unsigned nseg, int used)
{
	uint64_t hb = x->low + (uint64_t)seg * SEG;

	if (x->j->jdk == 17) {
		put64(x->j->f, hb, nseg);
		*(uint8_t *)fake_at(x->j->f, hb + 8) = (uint8_t)used;
	} else {
		put32(x->j->f, hb, nseg);
		*(uint8_t *)fake_at(x->j->f, hb + 4) = (uint8_t)used;
	}
}

/* One scope: sender, method index, bci (+1), then three more offsets
 * (locals, expressions, monitors: 0) as DebugInformationRecorder writes. */
static size_t put_scope(uint8_t *b, uint32_t sender, uint32_t midx, int32_t bci, unsigned excl)
{
	size_t n = 0;

	n += fj_u5(b + n, sender, excl);
	n += fj_u5(b + n, midx, excl);
	n += fj_u5(b + n, (uint32_t)(bci + 1), excl);
	for (int i = 0; i < 3; i++)
		n += fj_u5(b + n, 0, excl);
	return n;
}

static void put_pcdesc(struct fj *j, uint64_t at, int32_t pc, int32_t scope)
{
	put32(j->f, at, (uint32_t)pc);
	put32(j->f, at + 4, (uint32_t)scope);
	put32(j->f, at + 8, 0);
	put32(j->f, at + 12, 0);
}

static struct fx *fx_new(int jdk)
{
	struct fx *x = calloc(1, sizeof(*x));
	struct fj *j;
	uint8_t sc[512];
	size_t sn = 0;
	uint32_t o_fwd, o_bad;
	int32_t pcs[7][2];
	uint64_t meta[4], arr, data, segmap, mem_off, seg_off, log2_off, pcs_at, size;
	bool j17 = jdk == 17;

	assert_non_null(x);
	j = x->j = fj_new(jdk);
	x->m_run = fj_method(j, "DeepInline", "run", "(I)J", "DeepInline.java", 30, RUN_LINES, 3, NULL);
	x->m_a = fj_method(j, "DeepInline$Inner", "a", "(I)I", "DeepInline.java", 8, A_LINES, 1, NULL);
	x->m_alloc = fj_method(j, "DeepInline$Inner", "alloc", "(I)[B", "DeepInline.java", 310,
			       ALLOC_LINES, 2, NULL);

	/* the heap, its segment map and CodeCache::_heaps */
	x->low = fake_alloc(j->f, NSEG * SEG);
	segmap = fake_alloc(j->f, NSEG);
	x->heap = fake_alloc(j->f, 344);
	mem_off = j17 ? 8 : 0;
	seg_off = j17 ? 120 : 112;
	log2_off = j17 ? 256 : 248;
	put64(j->f, x->heap + mem_off + 0, x->low);
	put64(j->f, x->heap + mem_off + 8, x->low + 2 * NSEG * SEG); /* reserved */
	put64(j->f, x->heap + mem_off + 16, x->low);
	put64(j->f, x->heap + mem_off + 24, x->low + NSEG * SEG);    /* committed */
	put64(j->f, x->heap + seg_off + 16, segmap);
	put32(j->f, x->heap + log2_off, LOG2_SEG);
	arr = fake_alloc(j->f, 16);
	data = fake_alloc(j->f, 8);
	put32(j->f, arr, 1);
	put64(j->f, arr + 8, data);
	put64(j->f, data, x->heap);
	put64(j->f, j->heaps_var, arr);
	memset(fake_at(j->f, segmap), 0xff, NSEG);
	for (unsigned k = 0; k < 4; k++)
		((uint8_t *)fake_at(j->f, segmap))[k] = (uint8_t)k;
	for (unsigned k = 0; k < 2; k++)
		((uint8_t *)fake_at(j->f, segmap))[4 + k] = (uint8_t)k;
	for (unsigned k = 0; k < NM_NSEG; k++)
		((uint8_t *)fake_at(j->f, segmap))[NM_SEG + k] = (uint8_t)(k ? (k - 1) % 3 + 1 : 0);

	/* the stub and the free block */
	put_block(x, 0, 4, 1);
	put_block(x, 4, 2, 0);
	x->stub = x->low + j->hb_sizeof;
	put64(j->f, x->stub + (j17 ? 96 : 8), fake_str(j->f, "StubRoutines (1)"));
	if (!j17)
		*(uint8_t *)fake_at(j->f, x->stub + 56) = 2; /* CodeBlobKind::Buffer */

	/* the scopes data: filler, then run <- a <- alloc, then two broken ones */
	for (sn = 0; sn < FILLER; sn++)
		sc[sn] = (uint8_t)j->excl; /* a 0 */
	x->o_run = (uint32_t)sn;
	sn += put_scope(sc + sn, 0, 1, 11, j->excl);
	x->o_a = (uint32_t)sn;
	sn += put_scope(sc + sn, x->o_run, 3, 3, j->excl);
	x->o_alloc = (uint32_t)sn;
	sn += put_scope(sc + sn, x->o_a, 4, 300, j->excl);
	o_fwd = (uint32_t)sn; /* a sender after itself */
	sn += put_scope(sc + sn, o_fwd + 3, 1, 0, j->excl);
	o_bad = (uint32_t)sn; /* a method index past the metadata */
	sn += put_scope(sc + sn, 0, 9, 0, j->excl);
	assert_true(sn <= sizeof(sc));
	/* metadata: 1 run, 2 a Klass (anything), 3 a, 4 alloc */
	meta[0] = x->m_run;
	meta[1] = 0x1000;
	meta[2] = x->m_a;
	meta[3] = x->m_alloc;
	/* PcDescs, with HotSpot's two sentinels */
	int32_t pcs_init[7][2] = { { -1, 0 }, { PC_RUN, (int32_t)x->o_run },
				   { PC_CHAIN, (int32_t)x->o_alloc }, { PC_NODEBUG, 0 },
				   { PC_FWD, (int32_t)o_fwd }, { PC_BADIDX, (int32_t)o_bad },
				   { INT32_MAX, 0 } };
	memcpy(pcs, pcs_init, sizeof(pcs));

	/* the nmethod */
	put_block(x, NM_SEG, NM_NSEG, 1);
	x->blob = x->low + NM_SEG * SEG + j->hb_sizeof;
	x->code = x->blob + CODE_OFF;
	size = NM_NSEG * SEG - j->hb_sizeof;
	if (j17) {
		uint64_t b = x->blob, scopes_off = CODE_END + sizeof(meta);
		uint64_t pcs_off = (scopes_off + sn + 7) & ~7ULL;

		put64(j->f, b + 96, fake_str(j->f, "nmethod"));
		put32(j->f, b + 12, (uint32_t)size);
		put64(j->f, b + 32, b + CODE_OFF);
		put64(j->f, b + 40, b + CODE_END);
		put64(j->f, b + 112, x->m_run);
		put64(j->f, b + 120, b + scopes_off);
		put32(j->f, b + 192, (uint32_t)-1);
		put32(j->f, b + 260, CODE_END);
		put32(j->f, b + 268, (uint32_t)pcs_off);
		put32(j->f, b + 272, (uint32_t)(pcs_off + sizeof(pcs) / 8 * 16));
		put32(j->f, b + 304, 42);
		put32(j->f, b + 308, 4);
		memcpy(fake_at(j->f, b + CODE_END), meta, sizeof(meta));
		x->scopes = b + scopes_off;
		pcs_at = b + pcs_off;
		assert_true(pcs_off + 7 * 16 <= size);
	} else {
		uint64_t b = x->blob, imm = fake_alloc(j->f, 8 + 7 * 16 + sn);
		uint64_t mut = fake_alloc(j->f, 16 + sizeof(meta));

		put64(j->f, b + 8, fake_str(j->f, "nmethod"));
		put64(j->f, b + 16, mut);
		put32(j->f, b + 24, (uint32_t)size);
		put32(j->f, b + 28, 16);
		put32(j->f, b + 36, CODE_OFF);
		put32(j->f, b + 40, CODE_END);
		put32(j->f, b + 48, 16 + sizeof(meta));
		*(uint8_t *)fake_at(j->f, b + 56) = 1; /* CodeBlobKind::Nmethod */
		put64(j->f, b + 80, x->m_run);
		put64(j->f, b + 96, imm);
		put32(j->f, b + 156, (uint32_t)-1);
		put32(j->f, b + 160, (uint32_t)(8 + 7 * 16 + sn));
		put32(j->f, b + 196, 8);
		put32(j->f, b + 200, 8 + 7 * 16);
		put32(j->f, b + 212, 42);
		*(uint8_t *)fake_at(j->f, b + 216) = 4;
		memcpy(fake_at(j->f, mut + 16), meta, sizeof(meta));
		x->scopes = imm + 8 + 7 * 16;
		pcs_at = imm + 8;
	}
	memcpy(fake_at(j->f, x->scopes), sc, sn);
	for (int i = 0; i < 7; i++)
		put_pcdesc(j, pcs_at + (uint64_t)i * 16, pcs[i][0], pcs[i][1]);
	return x;
}

static void fx_free(struct fx *x)
{
	if (!x)
		return;
	fj_free(x->j);
	free(x);
}

static struct mt_nmethod_layout layout_of(struct fx *x)
{
	struct mt_nmethod_layout l;

	assert_int_equal(nmethod_layout(x->j->vs, &l), 0);
	return l;
}

static void check_layout(int jdk)
{
	struct fx *x = fx_new(jdk);
	struct mt_nmethod_layout l = layout_of(x);
	const uint8_t *s = fake_at(x->j->f, x->scopes + x->o_a);

	assert_int_equal(l.style, jdk == 17 ? 1 : 2);
	assert_int_equal(l.nheaps, 1);
	assert_int_equal(l.heaps[0].low, x->low);
	assert_int_equal(l.heaps[0].log2_seg, LOG2_SEG);
	assert_int_equal(l.u5_excl, jdk == 17 ? 0 : 1);
	assert_int_equal(l.has_kind, jdk == 25);
	/* the a scope's sender (offset 251) takes two bytes in either encoding */
	if (jdk == 17) {
		assert_int_equal(s[0], 251);
		assert_int_equal(s[1], 0);
	} else {
		assert_int_equal(s[0], 252);
		assert_int_equal(s[1], 1);
	}
	fx_free(x);
}

static void test_layout_jdk17(void **state)
{
	(void)state;
	check_layout(17);
}

static void test_layout_jdk25(void **state)
{
	(void)state;
	check_layout(25);
}

static void check_find(int jdk)
{
	struct fx *x = fx_new(jdk);
	struct mt_nmethod_layout l = layout_of(x);
	const struct mt_vmstructs *vs = x->j->vs;
	struct mt_nmethod nm;

	assert_int_equal(nmethod_find(vs, &l, x->code + PC_CHAIN, &nm), 0);
	assert_int_equal(nm.start, x->blob);
	assert_int_equal(nm.code_begin, x->code);
	assert_int_equal(nm.code_end, x->blob + CODE_END);
	assert_int_equal(nm.method, x->m_run);
	assert_int_equal(nm.compile_id, 42);
	assert_int_equal(nm.entry_bci, -1);
	assert_int_equal(nm.comp_level, 4);
	assert_int_equal(nm.kind, MT_FRAME_C2);
	assert_string_equal(nm.blob_name, "nmethod");
	assert_int_equal(nmethod_npcs(&l, &nm), 7);
	/* every pc of the code, whatever segment and hop chain it falls in */
	for (uint64_t pc = x->code; pc < x->blob + CODE_END; pc += 8) {
		struct mt_nmethod o;

		assert_int_equal(nmethod_find(vs, &l, pc, &o), 0);
		assert_int_equal(o.start, x->blob);
	}
	/* not an nmethod, nothing, or not code */
	assert_int_equal(nmethod_find(vs, &l, x->stub + 40, &nm), -ENOEXEC);
	assert_int_equal(nm.start, x->stub);
	assert_string_equal(nm.blob_name, "StubRoutines (1)");
	assert_int_equal(nmethod_find(vs, &l, x->low + 4 * SEG + 20, &nm), -ENOENT);  /* free */
	assert_int_equal(nmethod_find(vs, &l, x->low + 25 * SEG, &nm), -ENOENT);      /* unused */
	assert_int_equal(nmethod_find(vs, &l, x->low + NSEG * SEG + 8, &nm), -ENOENT); /* uncommitted */
	assert_int_equal(nmethod_find(vs, &l, 0x10, &nm), -ENOENT);
	assert_int_equal(nmethod_find(vs, &l, x->blob + 16, &nm), -ERANGE);           /* header */
	assert_int_equal(nmethod_find(vs, &l, x->blob + CODE_END + 8, &nm), -ERANGE); /* data */
	/* compile levels 1-3 are C1's, 0 a native wrapper */
	put32(x->j->f, x->blob + (jdk == 17 ? 308 : 216), 2);
	assert_int_equal(nmethod_find(vs, &l, x->code, &nm), 0);
	assert_int_equal(nm.kind, MT_FRAME_C1);
	put32(x->j->f, x->blob + (jdk == 17 ? 308 : 216), 0);
	assert_int_equal(nmethod_find(vs, &l, x->code, &nm), 0);
	assert_int_equal(nm.kind, MT_FRAME_NATIVE);
	fx_free(x);
}

static void test_find_jdk17(void **state)
{
	(void)state;
	check_find(17);
}

static void test_find_jdk25(void **state)
{
	(void)state;
	check_find(25);
}

static void check_scope(const struct mt_nmethod_scope *s, uint64_t m, int bci, enum mt_frame_kind k)
{
	assert_int_equal(s->method, m);
	assert_int_equal(s->bci, bci);
	assert_int_equal(s->kind, k);
}

static void check_scopes(int jdk)
{
	struct fx *x = fx_new(jdk);
	struct mt_nmethod_layout l = layout_of(x);
	const struct mt_vmstructs *vs = x->j->vs;
	struct mt_nmethod_scope sc[8];
	struct mt_methodsym_layout ml;
	struct mt_methodsym ms;
	struct mt_nmethod nm;
	uint64_t pc;
	int line;

	assert_int_equal(nmethod_find(vs, &l, x->code + PC_CHAIN, &nm), 0);
	/* a return address with two inlined frames */
	assert_int_equal(nmethod_scopes(vs, &l, &nm, x->code + PC_CHAIN, 0, sc, 8), 3);
	check_scope(&sc[0], x->m_alloc, 300, MT_FRAME_INLINED);
	check_scope(&sc[1], x->m_a, 3, MT_FRAME_INLINED);
	check_scope(&sc[2], x->m_run, 11, MT_FRAME_C2);
	/* and what the frames are called */
	assert_int_equal(methodsym_layout(vs, &ml), 0);
	assert_int_equal(methodsym_names(vs, &ml, sc[0].method, &ms), 0);
	assert_string_equal(ms.klass, "DeepInline$Inner");
	assert_string_equal(ms.name, "alloc");
	assert_int_equal(methodsym_line(vs, &ml, sc[0].method, sc[0].bci, &line), 0);
	assert_int_equal(line, 31);
	assert_int_equal(methodsym_line(vs, &ml, sc[1].method, sc[1].bci, &line), 0);
	assert_int_equal(line, 12);
	assert_int_equal(methodsym_line(vs, &ml, sc[2].method, sc[2].bci, &line), 0);
	assert_int_equal(line, 36);
	/* no inlining; no debug info (the method at entry) */
	assert_int_equal(nmethod_scopes(vs, &l, &nm, x->code + PC_RUN, 0, sc, 8), 1);
	check_scope(&sc[0], x->m_run, 11, MT_FRAME_C2);
	assert_int_equal(nmethod_scopes(vs, &l, &nm, x->code + PC_NODEBUG, 0, sc, 8), 1);
	check_scope(&sc[0], x->m_run, -1, MT_FRAME_C2);
	/* return addresses match exactly; a sampled pc takes the next PcDesc */
	assert_int_equal(nmethod_scopes(vs, &l, &nm, x->code + PC_CHAIN + 1, 0, sc, 8), -ENOENT);
	assert_int_equal(nmethod_scopes(vs, &l, &nm, x->code + PC_RUN + 1, MT_NMETHOD_APPROX, sc, 8), 3);
	check_scope(&sc[0], x->m_alloc, 300, MT_FRAME_INLINED);
	assert_int_equal(nmethod_scopes(vs, &l, &nm, x->code + 2, MT_NMETHOD_APPROX, sc, 8), 1);
	check_scope(&sc[0], x->m_run, 11, MT_FRAME_C2);
	assert_int_equal(nmethod_scopes(vs, &l, &nm, x->code + PC_BADIDX + 1, MT_NMETHOD_APPROX, sc, 8),
			 -ENOENT); /* only the end sentinel is left */
	/* too many for the caller: the innermost come first */
	assert_int_equal(nmethod_scopes(vs, &l, &nm, x->code + PC_CHAIN, 0, sc, 2), -E2BIG);
	check_scope(&sc[0], x->m_alloc, 300, MT_FRAME_INLINED);
	check_scope(&sc[1], x->m_a, 3, MT_FRAME_INLINED);
	assert_int_equal(nmethod_scopes(vs, &l, &nm, x->code + PC_CHAIN, 0, sc, 0), -EINVAL);
	/* broken scopes: a sender after the scope, a method index past the table */
	assert_int_equal(nmethod_scopes(vs, &l, &nm, x->code + PC_FWD, 0, sc, 8), -EBADMSG);
	assert_int_equal(nmethod_scopes(vs, &l, &nm, x->code + PC_BADIDX, 0, sc, 8), -EBADMSG);
	/* the PcDesc table's pcs, sentinels excluded */
	assert_int_equal(nmethod_pc_at(vs, &l, &nm, 0, &pc), -ERANGE);
	assert_int_equal(nmethod_pc_at(vs, &l, &nm, 2, &pc), 0);
	assert_int_equal(pc, x->code + PC_CHAIN);
	assert_int_equal(nmethod_pc_at(vs, &l, &nm, 6, &pc), -ERANGE);
	assert_int_equal(nmethod_pc_at(vs, &l, &nm, 7, &pc), -ERANGE);
	fx_free(x);
}

static void test_scopes_jdk17(void **state)
{
	(void)state;
	check_scopes(17);
}

static void test_scopes_jdk25(void **state)
{
	(void)state;
	check_scopes(25);
}

/* The nmethod is freed, or replaced by another compilation, while we read. */
static void check_stale(int jdk)
{
	struct fx *x = fx_new(jdk);
	struct mt_nmethod_layout l = layout_of(x);
	const struct mt_vmstructs *vs = x->j->vs;
	uint64_t id_at = x->blob + (jdk == 17 ? 304 : 212);
	uint64_t hb_used = x->low + NM_SEG * SEG + (jdk == 17 ? 8 : 4);
	struct mt_nmethod_scope sc[8];
	struct mt_nmethod nm, now;

	assert_int_equal(nmethod_find(vs, &l, x->code + PC_CHAIN, &nm), 0);
	assert_int_equal(nmethod_verify(vs, &l, &nm), 0);
	put32(x->j->f, id_at, 43); /* another compilation in the same place */
	assert_int_equal(nmethod_verify(vs, &l, &nm), -ESTALE);
	assert_int_equal(nmethod_scopes(vs, &l, &nm, x->code + PC_CHAIN, 0, sc, 8), -ESTALE);
	/* a caller comparing with what it saw at sample time sees it too */
	assert_int_equal(nmethod_find(vs, &l, x->code + PC_CHAIN, &now), 0);
	assert_int_not_equal(now.compile_id, nm.compile_id);
	put32(x->j->f, id_at, 42);
	assert_int_equal(nmethod_scopes(vs, &l, &nm, x->code + PC_CHAIN, 0, sc, 8), 3);
	*(uint8_t *)fake_at(x->j->f, hb_used) = 0; /* freed */
	assert_int_equal(nmethod_verify(vs, &l, &nm), -ESTALE);
	assert_int_equal(nmethod_scopes(vs, &l, &nm, x->code + PC_CHAIN, 0, sc, 8), -ESTALE);
	assert_int_equal(nmethod_find(vs, &l, x->code + PC_CHAIN, &now), -ENOENT);
	fx_free(x);
}

static void test_stale_jdk17(void **state)
{
	(void)state;
	check_stale(17);
}

static void test_stale_jdk25(void **state)
{
	(void)state;
	check_stale(25);
}

struct walked {
	uint64_t blobs[8];
	size_t n;
};

static int walked(void *arg, uint64_t blob)
{
	struct walked *w = arg;

	if (w->n < MT_ARRAY_SIZE(w->blobs))
		w->blobs[w->n] = blob;
	w->n++;
	return 0;
}

static int stop_at_first(void *arg, uint64_t blob)
{
	(void)arg;
	(void)blob;
	return 7;
}

static void check_walk(int jdk)
{
	struct fx *x = fx_new(jdk);
	struct mt_nmethod_layout l = layout_of(x);
	struct walked w = { 0 };
	struct mt_nmethod nm;

	assert_int_equal(nmethod_walk(x->j->vs, &l, walked, &w, 100), 0);
	assert_int_equal(w.n, 2); /* the free block is skipped, the tail ends it */
	assert_int_equal(w.blobs[0], x->stub);
	assert_int_equal(w.blobs[1], x->blob);
	assert_int_equal(nmethod_read(x->j->vs, &l, w.blobs[0], &nm), -ENOEXEC);
	assert_int_equal(nmethod_read(x->j->vs, &l, w.blobs[1], &nm), 0);
	assert_int_equal(nm.compile_id, 42);
	w.n = 0;
	assert_int_equal(nmethod_walk(x->j->vs, &l, walked, &w, 1), 0);
	assert_int_equal(w.n, 1);
	assert_int_equal(nmethod_walk(x->j->vs, &l, stop_at_first, NULL, 100), 7);
	/* a block longer than the heap */
	put_block(x, NM_SEG, 1000, 1);
	assert_int_equal(nmethod_walk(x->j->vs, &l, walked, &w, 100), -EBADMSG);
	fx_free(x);
}

static void test_walk_jdk17(void **state)
{
	(void)state;
	check_walk(17);
}

static void test_walk_jdk25(void **state)
{
	(void)state;
	check_walk(25);
}

/* A JVM without code heaps in its VMStructs (or an unknown nmethod layout). */
static void test_layout_missing(void **state)
{
	struct fj *j = fj_new(25);
	struct mt_nmethod_layout l;

	(void)state;
	/* CodeCache::_heaps is NULL: nothing to look in */
	assert_int_equal(nmethod_layout(j->vs, &l), -ENOENT);
	fj_free(j);
	assert_string_equal(nmethod_kind_name(MT_FRAME_INLINED), "inlined");
	assert_string_equal(nmethod_kind_name(MT_FRAME_C1), "c1");
	assert_string_equal(nmethod_kind_name(MT_FRAME_INTERPRETED), "interpreted");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_jdk17),
		cmocka_unit_test(test_layout_jdk25),
		cmocka_unit_test(test_find_jdk17),
		cmocka_unit_test(test_find_jdk25),
		cmocka_unit_test(test_scopes_jdk17),
		cmocka_unit_test(test_scopes_jdk25),
		cmocka_unit_test(test_stale_jdk17),
		cmocka_unit_test(test_stale_jdk25),
		cmocka_unit_test(test_walk_jdk17),
		cmocka_unit_test(test_walk_jdk25),
		cmocka_unit_test(test_layout_missing),
	};

	if (argc >= 3 && !strcmp(argv[1], "--live"))
		return live(atoi(argv[2]), argc > 3 ? argv[3] : NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
