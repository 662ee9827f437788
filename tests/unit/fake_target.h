/* fake_target.h - a synthetic JVM memory image for unit tests: one fake
 * address space read through a fake reader, and helpers that lay out
 * VMStructs tables in it (shared by test_vmstructs.c and test_jvmflags.c). */
#ifndef MEMTRACE_TEST_FAKE_TARGET_H
#define MEMTRACE_TEST_FAKE_TARGET_H

#include "jvm/hotspot.h"

/* ---- a fake target address space: one mapping from FAKE_BASE up to the
 * page holding the last byte used (mappings are whole pages) ---- */

#define FAKE_BASE 0x100000ULL
#define FAKE_SIZE (1u << 20)

struct fake {
	unsigned char mem[FAKE_SIZE];
	size_t used;
	unsigned long reads;
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;
	size_t end = (f->used + 4095) & ~(size_t)4095;

	f->reads++;
	if (addr < FAKE_BASE || addr - FAKE_BASE > end || len > end - (addr - FAKE_BASE))
		return -EFAULT;
	memcpy(buf, f->mem + (addr - FAKE_BASE), len);
	return 0;
}

static uint64_t fake_alloc(struct fake *f, size_t n)
{
	uint64_t a;

	f->used = (f->used + 7) & ~(size_t)7;
	assert_true(f->used + n <= FAKE_SIZE);
	a = FAKE_BASE + f->used;
	f->used += n;
	return a;
}

static void *fake_at(struct fake *f, uint64_t addr)
{
	return f->mem + (addr - FAKE_BASE);
}

static void put64(struct fake *f, uint64_t addr, uint64_t v)
{
	memcpy(fake_at(f, addr), &v, 8);
}

static void put32(struct fake *f, uint64_t addr, uint32_t v)
{
	memcpy(fake_at(f, addr), &v, 4);
}

static uint64_t fake_str(struct fake *f, const char *s)
{
	uint64_t a;

	if (!s)
		return 0;
	a = fake_alloc(f, strlen(s) + 1);
	memcpy(fake_at(f, a), s, strlen(s) + 1);
	return a;
}

/* A layout variable holding @v; returns its address. */
static uint64_t var(struct fake *f, uint64_t v)
{
	uint64_t a = fake_alloc(f, 8);

	put64(f, a, v);
	return a;
}

struct tfield {
	const char *type, *field, *type_string;
	int is_static;
	uint64_t offset, address;
};
struct ttype {
	const char *name, *super;
	int oop, integer, is_unsigned;
	uint64_t size;
};
struct tconst {
	const char *name;
	int64_t value;
};

/* HotSpot's entry layouts on x86_64 (what the JVM publishes). */
enum { SF_STRIDE = 48, TY_STRIDE = 40, C_STRIDE = 16 };

/* Build the four tables (each with its NULL terminator) and the layout
 * variables describing them into @f, exactly as given; fill @s with their
 * addresses. */
static void build_exact(struct fake *f, struct mt_vmstructs_syms *s, const struct tfield *fl,
			size_t nf, const struct ttype *ty, size_t nt, const struct tconst *ic,
			size_t ni, const struct tconst *lc, size_t nl)
{
	uint64_t t;

	t = fake_alloc(f, (nf + 1) * SF_STRIDE);
	memset(fake_at(f, t), 0, (nf + 1) * SF_STRIDE);
	for (size_t i = 0; i < nf; i++) {
		uint64_t e = t + i * SF_STRIDE;

		put64(f, e + 0, fake_str(f, fl[i].type));
		put64(f, e + 8, fake_str(f, fl[i].field));
		put64(f, e + 16, fake_str(f, fl[i].type_string));
		put32(f, e + 24, fl[i].is_static);
		put64(f, e + 32, fl[i].offset);
		put64(f, e + 40, fl[i].address);
	}
	s->structs = var(f, t);
	s->s_type_name = var(f, 0);
	s->s_field_name = var(f, 8);
	s->s_type_string = var(f, 16);
	s->s_is_static = var(f, 24);
	s->s_offset = var(f, 32);
	s->s_address = var(f, 40);
	s->s_stride = var(f, SF_STRIDE);

	t = fake_alloc(f, (nt + 1) * TY_STRIDE);
	memset(fake_at(f, t), 0, (nt + 1) * TY_STRIDE);
	for (size_t i = 0; i < nt; i++) {
		uint64_t e = t + i * TY_STRIDE;

		put64(f, e + 0, fake_str(f, ty[i].name));
		put64(f, e + 8, fake_str(f, ty[i].super));
		put32(f, e + 16, ty[i].oop);
		put32(f, e + 20, ty[i].integer);
		put32(f, e + 24, ty[i].is_unsigned);
		put64(f, e + 32, ty[i].size);
	}
	s->types = var(f, t);
	s->t_type_name = var(f, 0);
	s->t_super_name = var(f, 8);
	s->t_is_oop = var(f, 16);
	s->t_is_integer = var(f, 20);
	s->t_is_unsigned = var(f, 24);
	s->t_size = var(f, 32);
	s->t_stride = var(f, TY_STRIDE);

	for (int l = 0; l < 2; l++) {
		const struct tconst *c = l ? lc : ic;
		size_t n = l ? nl : ni;

		t = fake_alloc(f, (n + 1) * C_STRIDE);
		memset(fake_at(f, t), 0, (n + 1) * C_STRIDE);
		for (size_t i = 0; i < n; i++) {
			put64(f, t + i * C_STRIDE, fake_str(f, c[i].name));
			if (l)
				put64(f, t + i * C_STRIDE + 8, (uint64_t)c[i].value);
			else
				put32(f, t + i * C_STRIDE + 8, (uint32_t)(int32_t)c[i].value);
		}
		if (l) {
			s->longs = var(f, t);
			s->l_name = var(f, 0);
			s->l_value = var(f, 8);
			s->l_stride = var(f, C_STRIDE);
		} else {
			s->ints = var(f, t);
			s->i_name = var(f, 0);
			s->i_value = var(f, 8);
			s->i_stride = var(f, C_STRIDE);
		}
	}
}

/* Whether @fl (@nf entries) has Type::field @n. */
static int has_tfield(const struct tfield *fl, size_t nf, const struct hotspot_name *n)
{
	for (size_t i = 0; i < nf; i++)
		if (!strcmp(fl[i].type, n->type) && !strcmp(fl[i].field, n->field))
			return 1;
	return 0;
}

/*
 * build - build_exact() of a JVM that has at least what every HotSpot has:
 * the required entries of hotspot_table (Klass::_name, Symbol::_length,
 * Symbol::_body) that @fl lacks are added at offset 0, so that a test lays
 * out only the fields its module reads and vmstructs_parse() still opens it.
 * (Required entries are fields; a test that wants one missing uses
 * build_exact().)
 */
static void build(struct fake *f, struct mt_vmstructs_syms *s, const struct tfield *fl, size_t nf,
		  const struct ttype *ty, size_t nt, const struct tconst *ic, size_t ni,
		  const struct tconst *lc, size_t nl)
{
	struct tfield *all = calloc(nf + hotspot_nentries, sizeof(*all));
	size_t n = nf;

	assert_non_null(all);
	if (nf)
		memcpy(all, fl, nf * sizeof(*fl));
	for (size_t i = 0; i < hotspot_nentries; i++) {
		const struct hotspot_entry *e = &hotspot_table[i];

		if (!e->required || has_tfield(fl, nf, &e->name[0]))
			continue;
		assert_true(e->kind == HOTSPOT_OFFSET || e->kind == HOTSPOT_SIZED ||
			    e->kind == HOTSPOT_INHERITED);
		all[n++] = (struct tfield){ e->name[0].type, e->name[0].field, "", 0, 0, 0 };
	}
	build_exact(f, s, all, n, ty, nt, ic, ni, lc, nl);
	free(all);
}

#endif
