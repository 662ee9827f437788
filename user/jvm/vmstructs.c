// SPDX-License-Identifier: GPL-2.0
/*
 * vmstructs.c - read HotSpot's gHotSpotVM* tables out of a live JVM.
 *
 * Every table entry is read once with the layout the JVM itself publishes
 * (offsets and stride variables); names go into an arena of string blocks;
 * the arrays are then sorted so lookups are binary searches. Bounded against
 * corrupt tables: MT_VMSTRUCTS_MAX_ENTRIES entries per table,
 * MT_VMSTRUCTS_MAX_STR bytes per name.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/elfsym.h"
#include "jvm/hotspot.h"
#include "jvm/proc.h"
#include "lib/util.h"
#include "jvm/vmstructs.h"

#define POOL_BLOCK 65536
#define PAGE 4096
#define MAX_STRIDE 4096
#define TABLE_BATCH_BYTES 16384 /* a table's entries read this much at a time */

struct pool_block {
	struct pool_block *next;
	size_t used;
	char data[POOL_BLOCK];
};

/* Pages of libjvm's read-only segments read for strings (the names of every
 * VMStructs entry and JVM flag: ~8700 reads of the JVM's memory a `histo`,
 * ~20 ms, before it), direct-mapped; what they hold never changes. */
#define SC_PAGES 64
#define SC_RANGES 4
struct strcache {
	pthread_mutex_t lock;
	uint64_t ro[SC_RANGES][2]; /* the segments' addresses in the JVM */
	int nro;
	uint64_t tag[SC_PAGES];    /* page address + 1; 0 empty */
	char page[SC_PAGES][PAGE];
};

struct mt_vmstructs {
	mt_read_fn rd;
	void *ctx;
	struct strcache *sc;   /* NULL: every string read from the JVM */
	struct mt_elf *elf;    /* NULL for vmstructs_parse() handles */
	uint64_t bias;
	struct pool_block *pool;
	struct mt_vmfield *fields;
	size_t nfields;
	struct mt_vmtype *types;
	size_t ntypes;
	struct mt_vmconst *ints, *longs;
	size_t nints, nlongs;
	struct mt_hotspot hs;  /* hotspot_table's entries, filled once at parse */
};

/* The required entry the calling thread's last parse lacked ("" if none). */
static __thread char missing[2 * MT_VMSTRUCTS_MAX_STR];

int vmstructs_proc_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return proc_read_mem((int)(intptr_t)ctx, addr, buf, len);
}

int vmstructs_read(const struct mt_vmstructs *vs, uint64_t addr, void *buf, size_t len)
{
	if (!addr)
		return -EFAULT;
	return vs->rd(vs->ctx, addr, buf, len);
}

int vmstructs_read_ptr(const struct mt_vmstructs *vs, uint64_t addr, uint64_t *val)
{
	return vmstructs_read(vs, addr, val, sizeof(*val));
}

/* @n bytes at @addr (within one page) through vs->sc when the page is one of
 * libjvm's read-only ones; else (or when the page does not read whole) read
 * from the JVM. 0 or -errno. */
static int read_cached(const struct mt_vmstructs *vs, uint64_t addr, char *buf, size_t n)
{
	struct strcache *sc = vs->sc;
	uint64_t pg = addr & ~(uint64_t)(PAGE - 1);
	size_t k = (pg / PAGE) % SC_PAGES;
	bool ro = false;
	int err = 0;

	for (int i = 0; sc && i < sc->nro && !ro; i++)
		ro = pg >= sc->ro[i][0] && pg + PAGE <= sc->ro[i][1];
	if (!ro)
		return vs->rd(vs->ctx, addr, buf, n);
	pthread_mutex_lock(&sc->lock);
	if (sc->tag[k] != pg + 1) {
		sc->tag[k] = 0;
		err = vs->rd(vs->ctx, pg, sc->page[k], PAGE);
		if (!err)
			sc->tag[k] = pg + 1;
	}
	if (!err)
		memcpy(buf, sc->page[k] + (addr - pg), n);
	pthread_mutex_unlock(&sc->lock);
	return err ? vs->rd(vs->ctx, addr, buf, n) : 0;
}

int vmstructs_read_string(const struct mt_vmstructs *vs, uint64_t addr, char *buf, size_t len)
{
	size_t got = 0;
	int err;

	if (!len)
		return -EINVAL;
	buf[0] = '\0';
	if (!addr)
		return -EFAULT;
	/* Read page by page so a string at the end of a mapping stays readable. */
	while (got < len - 1) {
		size_t chunk = PAGE - ((addr + got) % PAGE);
		char *nul;

		if (chunk > len - 1 - got)
			chunk = len - 1 - got;
		err = read_cached(vs, addr + got, buf + got, chunk);
		if (err) {
			buf[got] = '\0';
			return err;
		}
		nul = memchr(buf + got, '\0', chunk);
		if (nul)
			return (int)(nul - buf);
		got += chunk;
	}
	buf[len - 1] = '\0';
	return -E2BIG;
}

/* Copy @s into the handle's string arena. Returns NULL when out of memory. */
static const char *pool_dup(struct mt_vmstructs *vs, const char *s)
{
	size_t n = strlen(s) + 1;
	struct pool_block *b = vs->pool;

	if (!b || b->used + n > POOL_BLOCK) {
		b = malloc(sizeof(*b));
		if (!b)
			return NULL;
		b->next = vs->pool;
		b->used = 0;
		vs->pool = b;
	}
	memcpy(b->data + b->used, s, n);
	b->used += n;
	return b->data + b->used - n;
}

/* Read the string pointed to by the 8 bytes at entry + off into the arena.
 * A NULL pointer gives "" (and *was_null). Truncates over-long names. */
static int entry_str(struct mt_vmstructs *vs, const unsigned char *entry, uint64_t off,
		     const char **out, bool *was_null)
{
	char buf[MT_VMSTRUCTS_MAX_STR];
	uint64_t ptr;
	int err;

	memcpy(&ptr, entry + off, sizeof(ptr));
	if (was_null)
		*was_null = !ptr;
	buf[0] = '\0';
	if (ptr) {
		err = vmstructs_read_string(vs, ptr, buf, sizeof(buf));
		if (err < 0 && err != -E2BIG)
			return err;
	}
	*out = pool_dup(vs, buf);
	return *out ? 0 : -ENOMEM;
}

static uint64_t entry_u64(const unsigned char *entry, uint64_t off)
{
	uint64_t v;

	memcpy(&v, entry + off, sizeof(v));
	return v;
}

static int32_t entry_i32(const unsigned char *entry, uint64_t off)
{
	int32_t v;

	memcpy(&v, entry + off, sizeof(v));
	return v;
}

/* Read the values of @n layout variables whose addresses are @addrs. */
static int read_layout(struct mt_vmstructs *vs, const uint64_t *addrs, uint64_t *vals, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int err = vmstructs_read_ptr(vs, addrs[i], &vals[i]);

		if (err)
			return err;
	}
	return 0;
}

/* The stride is vals[n-1]; every other value is an offset of a field of
 * field_size[i] bytes that must fit in the stride. Returns 0, -EAGAIN for an
 * all-zero (not yet initialised) layout, -EINVAL for nonsense. */
static int check_layout(const uint64_t *vals, const int *field_size, size_t n)
{
	uint64_t stride = vals[n - 1];

	if (!stride)
		return -EAGAIN;
	if (stride > MAX_STRIDE)
		return -EINVAL;
	for (size_t i = 0; i + 1 < n; i++) /* no overflow: an offset near 2^64 wrapped */
		if (vals[i] > stride || (uint64_t)field_size[i] > stride - vals[i])
			return -EINVAL;
	return 0;
}

/* Grow *arr (of *cap elements of @size bytes) to hold @need elements. */
static int grow(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t ncap;
	void *tmp;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 256;
	if (ncap > MT_VMSTRUCTS_MAX_ENTRIES)
		ncap = MT_VMSTRUCTS_MAX_ENTRIES;
	tmp = realloc(*arr, ncap * size);
	if (!tmp)
		return -ENOMEM;
	*arr = tmp;
	*cap = ncap;
	return 0;
}

/* Read the table whose base pointer is stored at @table_sym, entry by entry
 * (stride lay[nlay - 1]), into *arr (elements of @elem bytes); @one decodes an
 * entry and returns 1 at the terminator. */
typedef int (*entry_fn)(struct mt_vmstructs *vs, const unsigned char *e, const uint64_t *lay,
			void *arr, size_t *n);

static int read_table(struct mt_vmstructs *vs, uint64_t table_sym, const uint64_t *lay,
		      size_t nlay, entry_fn one, size_t elem, void **arr, size_t *n)
{
	unsigned char entry[MAX_STRIDE], batch[TABLE_BATCH_BYTES];
	uint64_t base, stride = lay[nlay - 1];
	size_t cap = 0;
	int err;

	err = vmstructs_read_ptr(vs, table_sym, &base);
	if (err)
		return err;
	if (!base)
		return -EAGAIN;
	for (size_t i = 0, have = 0, at = 0;; i++) {
		if (i >= MT_VMSTRUCTS_MAX_ENTRIES)
			return -E2BIG;
		/* TABLE_BATCH entries a read (one each where a batch does not
		 * read: the table's end near its mapping's) */
		if (i - at >= have) {
			at = i;
			have = sizeof(batch) / stride;
			if (vs->rd(vs->ctx, base + i * stride, batch, have * stride))
				have = 0;
		}
		if (have) {
			memcpy(entry, batch + (i - at) * stride, stride);
		} else {
			err = vs->rd(vs->ctx, base + i * stride, entry, stride);
			if (err)
				return err;
			at = i + 1;
		}
		err = grow(arr, &cap, *n + 1, elem);
		if (err)
			return err;
		err = one(vs, entry, lay, *arr, n);
		if (err < 0)
			return err;
		if (err == 1)
			return 0;
	}
}

/* VMStructEntry: typeName, fieldName, typeString, isStatic, offset, address. */
static int one_field(struct mt_vmstructs *vs, const unsigned char *e, const uint64_t *lay,
		     void *arr, size_t *n)
{
	struct mt_vmfield *f = (struct mt_vmfield *)arr + *n;
	bool null;
	int err;

	err = entry_str(vs, e, lay[0], &f->type, &null);
	if (err || null)
		return err ? err : 1;
	if ((err = entry_str(vs, e, lay[1], &f->field, NULL)) ||
	    (err = entry_str(vs, e, lay[2], &f->type_string, NULL)))
		return err;
	f->is_static = entry_i32(e, lay[3]) != 0;
	f->offset = entry_u64(e, lay[4]);
	f->address = entry_u64(e, lay[5]);
	(*n)++;
	return 0;
}

/* VMTypeEntry: typeName, superclassName, isOopType, isIntegerType, isUnsigned, size. */
static int one_type(struct mt_vmstructs *vs, const unsigned char *e, const uint64_t *lay,
		    void *arr, size_t *n)
{
	struct mt_vmtype *t = (struct mt_vmtype *)arr + *n;
	bool null;
	int err;

	err = entry_str(vs, e, lay[0], &t->name, &null);
	if (err || null)
		return err ? err : 1;
	if ((err = entry_str(vs, e, lay[1], &t->super, NULL)))
		return err;
	t->is_oop = entry_i32(e, lay[2]) != 0;
	t->is_integer = entry_i32(e, lay[3]) != 0;
	t->is_unsigned = entry_i32(e, lay[4]) != 0;
	t->size = entry_u64(e, lay[5]);
	(*n)++;
	return 0;
}

/* VMIntConstantEntry / VMLongConstantEntry: name, value. */
static int one_const(struct mt_vmstructs *vs, const unsigned char *e, const uint64_t *lay,
		     void *arr, size_t *n, bool is_long)
{
	struct mt_vmconst *c = (struct mt_vmconst *)arr + *n;
	bool null;
	int err;

	err = entry_str(vs, e, lay[0], &c->name, &null);
	if (err || null)
		return err ? err : 1;
	c->value = is_long ? entry_u64(e, lay[1]) : (uint64_t)(int64_t)entry_i32(e, lay[1]);
	(*n)++;
	return 0;
}

static int one_int(struct mt_vmstructs *vs, const unsigned char *e, const uint64_t *lay,
		   void *arr, size_t *n)
{
	return one_const(vs, e, lay, arr, n, false);
}

static int one_long(struct mt_vmstructs *vs, const unsigned char *e, const uint64_t *lay,
		    void *arr, size_t *n)
{
	return one_const(vs, e, lay, arr, n, true);
}

static int field_cmp(const void *a, const void *b)
{
	const struct mt_vmfield *x = a, *y = b;
	int c = strcmp(x->type, y->type);

	return c ? c : strcmp(x->field, y->field);
}

static int type_cmp(const void *a, const void *b)
{
	return strcmp(((const struct mt_vmtype *)a)->name, ((const struct mt_vmtype *)b)->name);
}

static int const_cmp(const void *a, const void *b)
{
	return strcmp(((const struct mt_vmconst *)a)->name, ((const struct mt_vmconst *)b)->name);
}

/* One spelling @n of entry @e: its value into @dst (the member's type
 * follows e->kind). 0 or -ENOENT (absent, or static where it should not be
 * and the reverse). */
static int hotspot_one(const struct mt_vmstructs *vs, const struct hotspot_entry *e,
		       const struct hotspot_name *n, void *dst)
{
	const struct mt_vmfield *f;
	const struct mt_vmtype *t;
	struct hotspot_sized *sz = dst;

	switch (e->kind) {
	case HOTSPOT_OFFSET:
		return vmstructs_field_offset(vs, n->type, n->field, dst) ? -ENOENT : 0;
	case HOTSPOT_INHERITED:
		return vmstructs_field_offset_inherited(vs, n->type, n->field, dst);
	case HOTSPOT_SIZED:
		f = vmstructs_field(vs, n->type, n->field);
		if (!f || f->is_static)
			return -ENOENT;
		t = f->type_string[0] ? vmstructs_type(vs, f->type_string) : NULL;
		sz->off = f->offset;
		sz->size = t ? t->size : 0;
		return 0;
	case HOTSPOT_STATIC:
		return vmstructs_static_addr(vs, n->type, n->field, dst) ? -ENOENT : 0;
	case HOTSPOT_SIZEOF:
		return vmstructs_type_size(vs, n->type, dst);
	case HOTSPOT_INT:
		return vmstructs_int_constant(vs, n->field, dst);
	case HOTSPOT_LONG:
		return vmstructs_long_constant(vs, n->field, dst);
	}
	return -ENOENT;
}

/* Fill vs->hs from hotspot_table, each entry by the first of its spellings
 * the tables have. Returns 0, or -ENOENT for a required entry missing (its
 * first spelling into missing[]). */
static int fill_hotspot(struct mt_vmstructs *vs)
{
	for (size_t i = 0; i < hotspot_nentries; i++) {
		const struct hotspot_entry *e = &hotspot_table[i];
		void *dst = (char *)&vs->hs + e->at;
		bool found = false;

		for (int k = 0; k < HOTSPOT_NAMES && !found; k++)
			if (e->name[k].type || e->name[k].field)
				found = !hotspot_one(vs, e, &e->name[k], dst);
		if (e->has != HOTSPOT_NO_FLAG)
			*(bool *)((char *)&vs->hs + e->has) = found;
		if (!found && e->required) {
			snprintf(missing, sizeof(missing), "%s%s%s",
				 e->name[0].type ? e->name[0].type : "",
				 e->name[0].type && e->name[0].field ? "::" : "",
				 e->name[0].field ? e->name[0].field : "");
			return -ENOENT;
		}
	}
	return 0;
}

/* vmstructs_parse(), strings in the JVM's [@ro[i][0], @ro[i][1]) (its
 * read-only memory, @nro ranges) read through a page cache. */
static int parse(const struct mt_vmstructs_syms *s, mt_read_fn rd, void *ctx,
		 const uint64_t (*ro)[2], int nro, struct mt_vmstructs **out);

int vmstructs_parse(const struct mt_vmstructs_syms *s, mt_read_fn rd, void *ctx,
		    struct mt_vmstructs **out)
{
	return parse(s, rd, ctx, NULL, 0, out);
}

static int parse(const struct mt_vmstructs_syms *s, mt_read_fn rd, void *ctx,
		 const uint64_t (*ro)[2], int nro, struct mt_vmstructs **out)
{
	static const int fsz[] = { 8, 8, 8, 4, 8, 8, 0 };
	static const int tsz[] = { 8, 8, 4, 4, 4, 8, 0 };
	static const int isz[] = { 8, 4, 0 };
	static const int lsz[] = { 8, 8, 0 };
	const uint64_t fa[] = { s->s_type_name, s->s_field_name, s->s_type_string, s->s_is_static,
				s->s_offset, s->s_address, s->s_stride };
	const uint64_t ta[] = { s->t_type_name, s->t_super_name, s->t_is_oop, s->t_is_integer,
				s->t_is_unsigned, s->t_size, s->t_stride };
	const uint64_t ia[] = { s->i_name, s->i_value, s->i_stride };
	const uint64_t la[] = { s->l_name, s->l_value, s->l_stride };
	uint64_t fl[7], tl[7], il[3], ll[3];
	struct mt_vmstructs *vs;
	int err;

	*out = NULL;
	missing[0] = '\0';
	vs = calloc(1, sizeof(*vs));
	if (!vs)
		return -ENOMEM;
	vs->rd = rd;
	vs->ctx = ctx;
	if (nro > 0 && (vs->sc = calloc(1, sizeof(*vs->sc)))) { /* without it: slower */
		pthread_mutex_init(&vs->sc->lock, NULL);
		vs->sc->nro = nro < SC_RANGES ? nro : SC_RANGES;
		memcpy(vs->sc->ro, ro, (size_t)vs->sc->nro * sizeof(ro[0]));
	}

	/* Entry layouts first: all-zero means the JVM has not run its static
	 * initialisers yet. */
	if ((err = read_layout(vs, fa, fl, 7)) || (err = read_layout(vs, ta, tl, 7)) ||
	    (err = read_layout(vs, ia, il, 3)) || (err = read_layout(vs, la, ll, 3)))
		goto err;
	if ((err = check_layout(fl, fsz, 7)) || (err = check_layout(tl, tsz, 7)) ||
	    (err = check_layout(il, isz, 3)) || (err = check_layout(ll, lsz, 3)))
		goto err;

	/* Then the four tables, each up to its NULL-named terminator. */
	if ((err = read_table(vs, s->structs, fl, 7, one_field, sizeof(*vs->fields),
			      (void **)&vs->fields, &vs->nfields)) ||
	    (err = read_table(vs, s->types, tl, 7, one_type, sizeof(*vs->types),
			      (void **)&vs->types, &vs->ntypes)) ||
	    (err = read_table(vs, s->ints, il, 3, one_int, sizeof(*vs->ints),
			      (void **)&vs->ints, &vs->nints)) ||
	    (err = read_table(vs, s->longs, ll, 3, one_long, sizeof(*vs->longs),
			      (void **)&vs->longs, &vs->nlongs)))
		goto err;

	qsort(vs->fields, vs->nfields, sizeof(*vs->fields), field_cmp);
	qsort(vs->types, vs->ntypes, sizeof(*vs->types), type_cmp);
	qsort(vs->ints, vs->nints, sizeof(*vs->ints), const_cmp);
	qsort(vs->longs, vs->nlongs, sizeof(*vs->longs), const_cmp);
	/* Last, the named entries memtrace reads: once, here. */
	if ((err = fill_hotspot(vs)))
		goto err;
	*out = vs;
	return 0;
err:
	vmstructs_free(vs);
	return err;
}

/* The exported symbols, in the order of struct mt_vmstructs_syms. */
static const char *const sym_names[] = {
	"gHotSpotVMStructs",
	"gHotSpotVMStructEntryTypeNameOffset",
	"gHotSpotVMStructEntryFieldNameOffset",
	"gHotSpotVMStructEntryTypeStringOffset",
	"gHotSpotVMStructEntryIsStaticOffset",
	"gHotSpotVMStructEntryOffsetOffset",
	"gHotSpotVMStructEntryAddressOffset",
	"gHotSpotVMStructEntryArrayStride",
	"gHotSpotVMTypes",
	"gHotSpotVMTypeEntryTypeNameOffset",
	"gHotSpotVMTypeEntrySuperclassNameOffset",
	"gHotSpotVMTypeEntryIsOopTypeOffset",
	"gHotSpotVMTypeEntryIsIntegerTypeOffset",
	"gHotSpotVMTypeEntryIsUnsignedOffset",
	"gHotSpotVMTypeEntrySizeOffset",
	"gHotSpotVMTypeEntryArrayStride",
	"gHotSpotVMIntConstants",
	"gHotSpotVMIntConstantEntryNameOffset",
	"gHotSpotVMIntConstantEntryValueOffset",
	"gHotSpotVMIntConstantEntryArrayStride",
	"gHotSpotVMLongConstants",
	"gHotSpotVMLongConstantEntryNameOffset",
	"gHotSpotVMLongConstantEntryValueOffset",
	"gHotSpotVMLongConstantEntryArrayStride",
};

_Static_assert(sizeof(struct mt_vmstructs_syms) == sizeof(sym_names) / sizeof(sym_names[0]) * 8,
	       "sym_names must match struct mt_vmstructs_syms");

/* The runtime addresses of the exported symbols of @p's libjvm, from @e
 * (libjvm opened) and its load @bias. 0 or -ENOENT. */
static int syms_of(const struct mt_elf *e, uint64_t bias, struct mt_vmstructs_syms *s)
{
	uint64_t *slot = (uint64_t *)s;

	for (size_t i = 0; i < MT_ARRAY_SIZE(sym_names); i++) {
		uint64_t addr, size;
		int err = elfsym_lookup(e, sym_names[i], &addr, &size);

		if (err)
			return err;
		slot[i] = addr + bias;
	}
	return 0;
}

int vmstructs_syms(const struct mt_proc *p, struct mt_vmstructs_syms *s)
{
	struct mt_elf *e;
	int err;

	if (!p->libjvm_host[0])
		return -ENOENT;
	e = elfsym_open(p->libjvm_host);
	if (!e)
		return -errno;
	err = syms_of(e, elfsym_load_bias(e, p->libjvm_base), s);
	elfsym_free(e);
	return err;
}

int vmstructs_open(const struct mt_proc *p, struct mt_vmstructs **out)
{
	struct mt_vmstructs_syms s;
	struct mt_elf *e;
	uint64_t bias, ro[SC_RANGES][2];
	int err, nro;

	*out = NULL;
	missing[0] = '\0';
	if (!p->libjvm_host[0])
		return -ENOENT;
	e = elfsym_open(p->libjvm_host);
	if (!e)
		return -errno;
	bias = elfsym_load_bias(e, p->libjvm_base);
	nro = elfsym_ro_ranges(e, ro, SC_RANGES);
	for (int i = 0; i < nro; i++) {
		ro[i][0] += bias;
		ro[i][1] += bias;
	}
	err = syms_of(e, bias, &s);
	if (!err)
		err = parse(&s, vmstructs_proc_read, (void *)(intptr_t)p->pid, ro, nro, out);
	if (err) {
		elfsym_free(e);
		return err;
	}
	(*out)->elf = e;
	(*out)->bias = bias;
	return 0;
}

void vmstructs_free(struct mt_vmstructs *vs)
{
	struct pool_block *b, *next;

	if (!vs)
		return;
	for (b = vs->pool; b; b = next) {
		next = b->next;
		free(b);
	}
	free(vs->fields);
	free(vs->types);
	free(vs->ints);
	free(vs->longs);
	if (vs->sc)
		pthread_mutex_destroy(&vs->sc->lock);
	free(vs->sc);
	elfsym_free(vs->elf);
	free(vs);
}

const struct mt_vmfield *vmstructs_field(const struct mt_vmstructs *vs, const char *type,
					 const char *field)
{
	struct mt_vmfield key = { .type = type, .field = field };

	return bsearch(&key, vs->fields, vs->nfields, sizeof(key), field_cmp);
}

int vmstructs_field_offset(const struct mt_vmstructs *vs, const char *type, const char *field,
			   uint64_t *off)
{
	const struct mt_vmfield *f = vmstructs_field(vs, type, field);

	if (!f)
		return -ENOENT;
	if (f->is_static)
		return -EINVAL;
	*off = f->offset;
	return 0;
}

int vmstructs_field_offset_inherited(const struct mt_vmstructs *vs, const char *type,
				     const char *field, uint64_t *off)
{
	for (int depth = 0; type && type[0] && depth < 16; depth++) {
		const struct mt_vmtype *t;

		if (!vmstructs_field_offset(vs, type, field, off))
			return 0;
		t = vmstructs_type(vs, type);
		type = t ? t->super : NULL;
	}
	return -ENOENT;
}

int vmstructs_field_sized(const struct mt_vmstructs *vs, const char *type, const char *field,
			  uint64_t *off, unsigned *size, unsigned dflt)
{
	const struct mt_vmfield *f = vmstructs_field(vs, type, field);
	const struct mt_vmtype *t;

	if (!f || f->is_static)
		return -ENOENT;
	*off = f->offset;
	t = f->type_string ? vmstructs_type(vs, f->type_string) : NULL;
	*size = t && t->size && t->size <= 8 ? (unsigned)t->size : dflt;
	return 0;
}

int vmstructs_static_addr(const struct mt_vmstructs *vs, const char *type, const char *field,
			  uint64_t *addr)
{
	const struct mt_vmfield *f = vmstructs_field(vs, type, field);

	if (!f)
		return -ENOENT;
	if (!f->is_static)
		return -EINVAL;
	*addr = f->address;
	return 0;
}

const struct mt_vmtype *vmstructs_type(const struct mt_vmstructs *vs, const char *name)
{
	struct mt_vmtype key = { .name = name };

	return bsearch(&key, vs->types, vs->ntypes, sizeof(key), type_cmp);
}

int vmstructs_type_size(const struct mt_vmstructs *vs, const char *name, uint64_t *size)
{
	const struct mt_vmtype *t = vmstructs_type(vs, name);

	if (!t)
		return -ENOENT;
	*size = t->size;
	return 0;
}

static const struct mt_vmconst *find_const(const struct mt_vmconst *arr, size_t n,
					   const char *name)
{
	struct mt_vmconst key = { .name = name };

	return bsearch(&key, arr, n, sizeof(key), const_cmp);
}

int vmstructs_int_constant(const struct mt_vmstructs *vs, const char *name, int32_t *val)
{
	const struct mt_vmconst *c = find_const(vs->ints, vs->nints, name);

	if (!c)
		return -ENOENT;
	*val = (int32_t)c->value;
	return 0;
}

int vmstructs_long_constant(const struct mt_vmstructs *vs, const char *name, uint64_t *val)
{
	const struct mt_vmconst *c = find_const(vs->longs, vs->nlongs, name);

	if (!c)
		return -ENOENT;
	*val = c->value;
	return 0;
}

size_t vmstructs_nfields(const struct mt_vmstructs *vs)
{
	return vs->nfields;
}

const struct mt_vmfield *vmstructs_field_at(const struct mt_vmstructs *vs, size_t i)
{
	return i < vs->nfields ? &vs->fields[i] : NULL;
}

size_t vmstructs_ntypes(const struct mt_vmstructs *vs)
{
	return vs->ntypes;
}

const struct mt_vmtype *vmstructs_type_at(const struct mt_vmstructs *vs, size_t i)
{
	return i < vs->ntypes ? &vs->types[i] : NULL;
}

size_t vmstructs_nconsts(const struct mt_vmstructs *vs, bool longs)
{
	return longs ? vs->nlongs : vs->nints;
}

const struct mt_vmconst *vmstructs_const_at(const struct mt_vmstructs *vs, bool longs, size_t i)
{
	if (longs)
		return i < vs->nlongs ? &vs->longs[i] : NULL;
	return i < vs->nints ? &vs->ints[i] : NULL;
}

int vmstructs_symbol(const struct mt_vmstructs *vs, const char *name, uint64_t *addr)
{
	uint64_t a, size;
	int err;

	if (!vs->elf)
		return -ENOENT;
	err = elfsym_lookup(vs->elf, name, &a, &size);
	if (err)
		return err;
	*addr = a + vs->bias;
	return 0;
}

bool vmstructs_has_symtab(const struct mt_vmstructs *vs)
{
	return vs->elf && elfsym_has_symtab(vs->elf);
}

const struct mt_hotspot *vmstructs_hotspot(const struct mt_vmstructs *vs)
{
	return &vs->hs;
}

const char *vmstructs_missing(void)
{
	return missing;
}

const char *vmstructs_strerror(int err)
{
	static __thread char buf[sizeof(missing) + 64];

	if (err == -ENOENT && missing[0]) {
		snprintf(buf, sizeof(buf), "no %s in its VMStructs", missing);
		return buf;
	}
	return strerror(-err);
}
