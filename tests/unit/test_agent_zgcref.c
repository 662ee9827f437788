/* test_agent_zgcref.c - ZGC's references as the frozen copy's mark reads them
 * (user/agent/zgcref.c): the forwarding hash against HotSpot's own values,
 * JDK 17's colours (good, remapped, stale with and without an entry), the
 * generational zpointers (each of the four load shifts, coloured nulls, a
 * colour no pointer has, which generation's table a stale pointer needs), and
 * forwarding tables built in memory as HotSpot lays them out: a ZForwarding
 * with its entries after it, probed linearly from the hash of the object's
 * index in its old page. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/zgcref.h"

#define MASK   0x3ffffffffffull  /* 42 offset bits (-Xmx up to 256 MiB) */
#define X_M0   0x40000000000ull  /* JDK 17: Marked0, Marked1, Remapped views */
#define X_M1   0x80000000000ull
#define X_REM  0x100000000000ull
#define G_BASE 0x40000000000ull  /* JDK 25: ZAddressHeapBase */
#define FW_START 0
#define FW_SHIFT 16
#define FW_LEN   24
#define FW_ENTRIES 136           /* sizeof(ZForwarding) on JDK 17, rounded up to 8 */
#define GRANULE (1ull << 21)

/* A ZForwarding for the page at heap offset @start (alignment shift 3) with
 * @len entries; put() fills them as ZGC does. */
struct fw {
	uint64_t *mem;
	uint64_t len;
};

static struct fw fw_new(uint64_t start, uint64_t len)
{
	struct fw f = { calloc(1, FW_ENTRIES + len * 8), len };

	assert_non_null(f.mem);
	f.mem[FW_START / 8] = start;
	f.mem[FW_SHIFT / 8] = 3;
	f.mem[FW_LEN / 8] = len;
	return f;
}

/* The object at index @from of the page moved to heap offset @to. */
static void fw_put(struct fw *f, uint64_t from, uint64_t to)
{
	uint64_t *e = f->mem + FW_ENTRIES / 8;
	uint64_t at = zgc_hash((uint32_t)from) & (f->len - 1);

	while (e[at] & 1)
		at = (at + 1) & (f->len - 1);
	e[at] = 1 | (to << 1) | (from << 46);
}

static void refs_init(struct zgc_refs *z, uint32_t variant)
{
	memset(z, 0, sizeof(*z));
	z->variant = variant;
	z->offset_mask = MASK;
	z->fw_start = FW_START;
	z->fw_shift = FW_SHIFT;
	z->fw_length = FW_LEN;
	z->fw_entries = FW_ENTRIES;
	if (variant == MT_AP_ZGC_X) {
		z->remapped = X_REM;
		z->base = X_REM;
		z->good = X_M1;        /* marking: Marked1 is good */
	} else {
		z->base = G_BASE;
		z->load_bad = 0xd000;  /* load-good Remapped01 (0x2000) */
		z->rem_old = 0x3000;
		z->rem_young = 0xa000;
	}
}

/* HotSpot's own values of ZHash::uint32_to_uint32 (docs/zgc-frozen-design.md). */
static void test_hash(void **state)
{
	(void)state;
	assert_int_equal(zgc_hash(0), 0xcaa3caa3u);
	assert_int_equal(zgc_hash(1), 0x12d60bf6u);
	assert_int_equal(zgc_hash(2), 0x25ac1fe5u);
	assert_int_equal(zgc_hash(3), 0x3882835cu);
	assert_int_equal(zgc_hash(16368), 0xe6494005u);
	assert_int_equal(zgc_hash(262143), 0x42d62e2fu);
}

/* JDK 17: good and remapped colours are read in place; a stale Marked0 is
 * looked up in the heap's table (granule 1 relocated, two objects moved, two
 * of them colliding in the hash); an object with no entry did not move. */
static void test_jdk17(void **state)
{
	struct zgc_refs z;
	uint64_t map[4] = { 0 };
	struct fw f = fw_new(GRANULE, 16);
	uint64_t a = GRANULE + 8 * 5, b = GRANULE + 8 * 21, c = GRANULE + 8 * 7;

	(void)state;
	refs_init(&z, MT_AP_ZGC_X);
	z.fwd[0] = (struct zgc_map){ 4, map };
	map[1] = (uint64_t)(uintptr_t)f.mem;
	fw_put(&f, 5, 0x600008);
	fw_put(&f, 21, 0x600100);
	/* 5 and 21 share a slot of 16? either way both are found by probing */
	assert_int_equal(zgc_load(&z, 0), 0);
	assert_int_equal(zgc_load(&z, X_REM | 0x1000), X_REM | 0x1000);
	assert_int_equal(zgc_load(&z, X_M1 | a), X_REM | a);          /* good: in place */
	assert_int_equal(z.nfwd, 0);
	assert_int_equal(zgc_load(&z, X_M0 | a), X_REM | 0x600008);   /* stale: moved */
	assert_int_equal(zgc_load(&z, X_M0 | b), X_REM | 0x600100);
	assert_int_equal(z.nfwd, 2);
	assert_int_equal(zgc_load(&z, X_M0 | c), X_REM | c);          /* no entry: in place */
	assert_int_equal(z.nstale, 1);
	assert_int_equal(zgc_load(&z, X_M0 | 0x1000), X_REM | 0x1000); /* page not relocated */
	assert_int_equal(zgc_load(&z, X_M0 | (5 * GRANULE)), X_REM | (5 * GRANULE)); /* past the map */
	/* a finalizable stale pointer (Marked0 | Finalizable) likewise */
	assert_int_equal(zgc_load(&z, X_M0 | 0x200000000000ull | a), X_REM | 0x600008);
	/* roots are coloured pointers on JDK 17 */
	assert_int_equal(zgc_root(&z, X_M0 | b), X_REM | 0x600100);
	assert_int_equal(zgc_root(&z, 0), 0);
	free(f.mem);
}

/* A zpointer for heap address @addr with remapped bit @rb (one of 0x1000,
 * 0x2000, 0x4000, 0x8000) and low colour bits @low. */
static uint64_t zp(uint64_t addr, uint64_t rb, uint64_t low)
{
	unsigned shift = 13 + (unsigned)__builtin_ctzll(rb >> 12);

	return (addr << shift) | rb | low;
}

/* Generational: every load shift decodes; coloured nulls are null; a colour
 * with two remapped bits is nothing; load-bad pointers go to the young or the
 * old table as ZBarrier::remap_generation() says. */
static void test_generational(void **state)
{
	struct zgc_refs z;
	uint64_t young[4] = { 0 }, old[4] = { 0 };
	struct fw fy = fw_new(GRANULE, 8), fo = fw_new(2 * GRANULE, 8);
	uint64_t a = G_BASE | (GRANULE + 8 * 3), b = G_BASE | (2 * GRANULE + 8 * 4);

	(void)state;
	refs_init(&z, MT_AP_ZGC_GEN);
	z.fwd[0] = (struct zgc_map){ 4, young };
	z.fwd[1] = (struct zgc_map){ 4, old };
	young[1] = (uint64_t)(uintptr_t)fy.mem;
	old[2] = (uint64_t)(uintptr_t)fo.mem;
	fw_put(&fy, 3, 0x500010);
	fw_put(&fo, 4, 0x700020);
	assert_int_equal(zgc_load(&z, 0), 0);
	assert_int_equal(zgc_load(&z, 0x2620), 0);                  /* a coloured null */
	assert_int_equal(zgc_load(&z, zp(a, 0x2000, 0x530)), a);    /* load-good: in place */
	assert_int_equal(z.nfwd, 0);
	assert_int_equal(zgc_load(&z, zp(a, 0x3000 & 0x1000, 0)), G_BASE | 0x500010); /* old-good: young */
	assert_int_equal(zgc_load(&z, zp(b, 0x8000, 0)), G_BASE | 0x700020); /* young-good: old */
	assert_int_equal(zgc_load(&z, zp(b, 0x4000, 0x30)), G_BASE | 0x700020); /* remembered: old */
	assert_int_equal(zgc_load(&z, zp(a, 0x4000, 0x10)), G_BASE | 0x500010); /* young has it */
	assert_int_equal(zgc_load(&z, zp(b, 0x4000, 0x10)), G_BASE | 0x700020); /* young has not */
	assert_int_equal(z.nfwd, 5);
	assert_int_equal(zgc_load(&z, ((b << 14) | 0x3000)), 0);    /* two remapped bits */
	assert_int_equal(z.nbad, 1);
	/* roots are plain addresses */
	assert_int_equal(zgc_root(&z, a), a);
	assert_int_equal(zgc_root(&z, GRANULE + 8), G_BASE | (GRANULE + 8));
	free(fy.mem);
	free(fo.mem);
}

/* A forwarding whose fields make no sense is not probed: the reference is
 * read in place and counted bad. */
static void test_bad_forwarding(void **state)
{
	struct zgc_refs z;
	uint64_t map[2] = { 0 };
	struct fw f = fw_new(GRANULE, 8);

	(void)state;
	refs_init(&z, MT_AP_ZGC_X);
	z.fwd[0] = (struct zgc_map){ 2, map };
	map[1] = (uint64_t)(uintptr_t)f.mem;
	f.mem[FW_LEN / 8] = 12;  /* not a power of two */
	assert_int_equal(zgc_forward(&z, &z.fwd[0], GRANULE + 64), GRANULE + 64);
	assert_int_equal(z.nbad, 1);
	f.mem[FW_LEN / 8] = 8;
	f.mem[FW_START / 8] = GRANULE + 4096; /* the page starts after the object */
	assert_int_equal(zgc_forward(&z, &z.fwd[0], GRANULE + 64), GRANULE + 64);
	assert_int_equal(z.nbad, 2);
	free(f.mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_jdk17),
		cmocka_unit_test(test_generational),
		cmocka_unit_test(test_bad_forwarding),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
