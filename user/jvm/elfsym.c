// SPDX-License-Identifier: GPL-2.0
/*
 * elfsym.c - symbol lookup and USDT note listing with libelf.
 *
 * The symbol tables are loaded once into an array with a hash index by
 * name: libjvm.so has ~60k symbols (sorting them by name took 20-25 ms per
 * open). A `histo` opened libjvm three to four times (VMStructs, its flags,
 * the safepoint counters), each open hashing every name byte by byte: ~30
 * ms of memtrace's ~100 ms of CPU at 5 M objects. So names are hashed eight
 * bytes at a time, the hash kept beside each symbol (a probe compares it
 * before the names), and the last file a thread opened is kept open for its
 * next open of that file (the same inode, size and mtime). A 64-bit file's
 * symbols are read as they are in its data, the symbols and their index in
 * one block in 2 MiB pages (stop 58: libjvm's open 963 -> 415 page faults,
 * 19-33 -> 11-13 ms; each command opens it once, kept for the rest).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jvm/elfsym.h"
#include "lib/hash.h"
#include "lib/util.h"

struct mt_sym {
	const char *name; /* points into the file's string table data */
	uint64_t addr;
	uint64_t size;
	uint32_t hash;    /* name_hash()'s low half */
	bool from_symtab;
	bool is_func;
};

struct mt_elf {
	int fd;
	Elf *elf;
	struct mt_sym *syms;
	size_t nsyms;
	bool has_symtab;
	uint64_t first_load_vaddr; /* p_vaddr - p_offset of the PT_LOAD at offset 0 */
	struct mt_sym *byaddr;     /* function symbols by address, built on first use */
	size_t nbyaddr;
	uint32_t *slots;           /* by name: 1 + index into syms, 0 empty */
	size_t mask;               /* slots - 1, a power of two minus one */
	int refs;                  /* handles out (elfsym_open()) and the cache's; under lock */
	struct stat st;            /* the file when opened: the cache's key */
	pthread_t owner;           /* the thread that opened it: the only one it is cached for */
	uint64_t opened_ns;        /* CLOCK_MONOTONIC when opened */
};

/* The name eight bytes at a time (its length in), mixed so that the low
 * bits index the slots. */
static uint64_t name_hash(const char *s)
{
	size_t n = strlen(s);
	uint64_t h = 0xcbf29ce484222325ULL ^ n, w;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, s, n);
	return hash_mix64((h ^ w) * 0x9e3779b97f4a7c15ULL);
}

/* The slot of @name (whose name_hash() is @h): the one holding it, or the
 * empty one it would go to. */
static size_t slot_of(const struct mt_elf *e, const char *name, uint64_t h)
{
	size_t k = (size_t)h & e->mask;

	while (e->slots[k] && (e->syms[e->slots[k] - 1].hash != (uint32_t)h ||
			       strcmp(e->syms[e->slots[k] - 1].name, name)))
		k = (k + 1) & e->mask;
	return k;
}

/* Index every symbol by name into e->slots (zeroed, e->mask + 1 of them);
 * of the same name, the first of .symtab (else of .dynsym) answers. */
static void index_names(struct mt_elf *e)
{
	for (size_t i = 0; i < e->nsyms; i++) {
		size_t k = slot_of(e, e->syms[i].name, e->syms[i].hash);

		if (!e->slots[k] ||
		    (!e->syms[e->slots[k] - 1].from_symtab && e->syms[i].from_symtab))
			e->slots[k] = (uint32_t)(i + 1);
	}
}

/* The symbols section @sh claims, at most its data's @d_size bytes hold
 * (the header's size is a claim). */
static size_t sym_count(const GElf_Shdr *sh, const Elf_Data *data)
{
	size_t n;

	if (!data || !sh->sh_entsize)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	return n > data->d_size / sh->sh_entsize ? data->d_size / sh->sh_entsize : n;
}

/* The string table section @link's data when every offset in it names a
 * NUL-terminated string (its last byte NUL), else NULL (elf_strptr() per
 * name then: it checks each). */
static const Elf_Data *plain_strtab(Elf *elf, size_t link)
{
	Elf_Scn *scn = elf_getscn(elf, link);
	Elf_Data *d;
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_STRTAB)
		return NULL;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size || ((const char *)d->d_buf)[d->d_size - 1])
		return NULL;
	return d;
}

/* Append every named defined symbol of section @scn to e->syms (room for
 * sym_count() more). A 64-bit file's symbols are read as they are in its
 * data (gelf_getsym() and elf_strptr() per symbol took most of an open's
 * CPU: 70 k symbols in libjvm's .symtab). */
static void load_syms(struct mt_elf *e, Elf_Scn *scn, GElf_Shdr *sh, bool from_symtab)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sym_count(sh, data);
	const Elf_Data *str = plain_strtab(e->elf, sh->sh_link);
	bool raw = gelf_getclass(e->elf) == ELFCLASS64 && data && data->d_buf &&
		   data->d_type == ELF_T_SYM && sh->sh_entsize == sizeof(Elf64_Sym);

	/* both tables read end to end (libjvm: 1.6 and 3.3 MiB): their pages
	 * mapped in one call each, not ~1200 faults (~1 ms a command here) */
	if (raw)
		util_prefault_read(data->d_buf, data->d_size);
	if (str)
		util_prefault_read(str->d_buf, str->d_size);
	for (size_t i = 0; i < n; i++) {
		GElf_Sym s;
		const char *name;

		if (raw) /* the memory form, maybe unaligned in the file's image */
			memcpy(&s, (const char *)data->d_buf + i * sizeof(Elf64_Sym), sizeof(s));
		else if (!gelf_getsym(data, (int)i, &s))
			continue;
		if (s.st_shndx == SHN_UNDEF || !s.st_value)
			continue;
		if (str)
			name = s.st_name < str->d_size ? (const char *)str->d_buf + s.st_name : NULL;
		else
			name = elf_strptr(e->elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		e->syms[e->nsyms++] = (struct mt_sym){ name, s.st_value, s.st_size,
						       (uint32_t)name_hash(name), from_symtab,
						       GELF_ST_TYPE(s.st_info) == STT_FUNC };
	}
}

/* One block for @nsyms symbols and their name index's slots (zeroed), into
 * e->syms and e->slots: in 2 MiB pages from 1 MiB (libjvm: 2.2 MiB of
 * symbols, 1 MiB of slots; in 4 KiB pages ~800 faults, each a host fault
 * on a VM whose host shadows the page tables). 0 or -ENOMEM. */
static int syms_block(struct mt_elf *e, size_t nsyms)
{
	size_t cap = 16, sb, bytes;
	void *p;

	while (cap < 2 * nsyms)
		cap *= 2;
	sb = (nsyms ? nsyms : 1) * sizeof(*e->syms);
	sb = (sb + 63) & ~(size_t)63;
	bytes = sb + cap * sizeof(*e->slots);
	if (bytes >= (1u << 20)) {
		bytes = (bytes + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
		if (posix_memalign(&p, 2u << 20, bytes))
			return -ENOMEM;
		util_hugepages(p, bytes);
	} else if (!(p = malloc(bytes))) {
		return -ENOMEM;
	}
	e->syms = p;
	e->slots = (uint32_t *)(void *)((char *)p + sb);
	memset(e->slots, 0, cap * sizeof(*e->slots));
	e->mask = cap - 1;
	return 0;
}

/* The last file opened (one thread's: libelf's handles are not shared
 * between threads), its reference held, for KEEP_NS at most: an open file
 * inside a container's root would keep its mounts busy after it stopped
 * (`serve` drops it with elfsym_expire()); under lock. */
#define KEEP_NS (2 * 1000000000ull)
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct mt_elf *kept;

/* Free @e for good. */
static void elf_destroy(struct mt_elf *e)
{
	free(e->byaddr);
	free(e->syms); /* and the slots (syms_block()) */
	elf_end(e->elf);
	close(e->fd);
	free(e);
}

/* The same file as @st (its inode, size and mtime)? */
static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* This thread's kept handle of the file open at @fd, a reference taken; else NULL. */
static struct mt_elf *take_kept(int fd, struct stat *st)
{
	struct mt_elf *e = NULL;

	if (fstat(fd, st))
		return NULL;
	pthread_mutex_lock(&lock);
	if (kept && pthread_equal(kept->owner, pthread_self()) && same_file(&kept->st, st) &&
	    mono_ns() - kept->opened_ns < KEEP_NS) {
		e = kept;
		e->refs++;
	}
	pthread_mutex_unlock(&lock);
	return e;
}

/* Keep @e (this thread's last open) in place of what was kept. */
static void keep(struct mt_elf *e)
{
	struct mt_elf *old;

	pthread_mutex_lock(&lock);
	old = kept;
	kept = e;
	e->refs++;
	if (old && --old->refs > 0)
		old = NULL;
	pthread_mutex_unlock(&lock);
	if (old)
		elf_destroy(old);
}

void elfsym_expire(void)
{
	struct mt_elf *old = NULL;

	pthread_mutex_lock(&lock);
	if (kept && mono_ns() - kept->opened_ns >= KEEP_NS) {
		old = kept;
		kept = NULL;
		if (--old->refs > 0)
			old = NULL;
	}
	pthread_mutex_unlock(&lock);
	if (old)
		elf_destroy(old);
}

struct mt_elf *elfsym_open(const char *path)
{
	struct {
		Elf_Scn *scn;
		GElf_Shdr sh;
	} sec[8]; /* a file has .symtab and .dynsym (a crafted one, more: the first 8) */
	struct mt_elf *e, *k;
	Elf_Scn *scn = NULL;
	size_t nph, i, nsec = 0, total = 0;
	struct stat st;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = EINVAL;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (e->fd < 0)
		goto err_free;
	k = take_kept(e->fd, &st);
	if (k) {
		close(e->fd);
		free(e);
		return k;
	}
	e->st = st;
	e->owner = pthread_self();
	e->opened_ns = mono_ns();
	e->refs = 1;
	e->elf = elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
	if (!e->elf || elf_kind(e->elf) != ELF_K_ELF) {
		errno = ENOEXEC;
		goto err_close;
	}
	if (!elf_getphdrnum(e->elf, &nph)) {
		for (i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e->elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
				e->first_load_vaddr = ph.p_vaddr - ph.p_offset;
				break;
			}
		}
	}
	/* the symbol sections, counted first: one block for all */
	while ((scn = elf_nextscn(e->elf, scn)) && nsec < MT_ARRAY_SIZE(sec)) {
		if (!gelf_getshdr(scn, &sec[nsec].sh) ||
		    (sec[nsec].sh.sh_type != SHT_SYMTAB && sec[nsec].sh.sh_type != SHT_DYNSYM))
			continue;
		sec[nsec].scn = scn;
		total += sym_count(&sec[nsec].sh, elf_getdata(scn, NULL));
		nsec++;
	}
	if (total > UINT32_MAX - 1) {
		errno = EFBIG;
		goto err_close;
	}
	err = syms_block(e, total);
	if (err) {
		errno = -err;
		goto err_close;
	}
	for (i = 0; i < nsec; i++) {
		bool symtab = sec[i].sh.sh_type == SHT_SYMTAB;

		e->has_symtab |= symtab;
		load_syms(e, sec[i].scn, &sec[i].sh, symtab);
	}
	index_names(e);
	keep(e);
	return e;

err_close:
	err = errno;
	if (e->elf)
		elf_end(e->elf);
	close(e->fd);
	errno = err;
err_free:
	err = errno;
	free(e->syms);
	free(e);
	errno = err;
	return NULL;
}

void elfsym_free(struct mt_elf *e)
{
	bool last;

	if (!e)
		return;
	pthread_mutex_lock(&lock);
	last = --e->refs == 0;
	pthread_mutex_unlock(&lock);
	if (last)
		elf_destroy(e);
}

bool elfsym_has_symtab(const struct mt_elf *e)
{
	return e->has_symtab;
}

int elfsym_lookup(const struct mt_elf *e, const char *name, uint64_t *addr, uint64_t *size)
{
	uint32_t i = e->slots[slot_of(e, name, name_hash(name))];

	if (!i)
		return -ENOENT;
	if (addr)
		*addr = e->syms[i - 1].addr;
	if (size)
		*size = e->syms[i - 1].size;
	return 0;
}

static int addr_cmp(const void *a, const void *b)
{
	const struct mt_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int elfsym_addr_name(struct mt_elf *e, uint64_t vaddr, const char **name, uint64_t *start)
{
	size_t lo = 0, hi;

	if (!e->byaddr) {
		e->byaddr = malloc((e->nsyms ? e->nsyms : 1) * sizeof(*e->byaddr));
		if (!e->byaddr)
			return -ENOMEM;
		for (size_t i = 0; i < e->nsyms; i++)
			if (e->syms[i].is_func)
				e->byaddr[e->nbyaddr++] = e->syms[i];
		qsort(e->byaddr, e->nbyaddr, sizeof(*e->byaddr), addr_cmp);
	}
	hi = e->nbyaddr;
	while (lo < hi) { /* first symbol above vaddr */
		size_t mid = lo + (hi - lo) / 2;

		if (e->byaddr[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -ENOENT;
	lo--;
	/* inside the symbol, or within 64 KiB after a sizeless one */
	if (vaddr >= e->byaddr[lo].addr + (e->byaddr[lo].size ? e->byaddr[lo].size : 65536))
		return -ENOENT;
	*name = e->byaddr[lo].name;
	if (start)
		*start = e->byaddr[lo].addr;
	return 0;
}

uint64_t elfsym_load_bias(const struct mt_elf *e, uint64_t map_base)
{
	return map_base - e->first_load_vaddr;
}

int elfsym_vaddr_to_offset(const struct mt_elf *e, uint64_t vaddr, uint64_t *off)
{
	size_t nph;

	if (elf_getphdrnum(e->elf, &nph))
		return -ENOEXEC;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

int elfsym_ro_ranges(const struct mt_elf *e, uint64_t (*r)[2], int max)
{
	size_t nph;
	int n = 0;

	if (elf_getphdrnum(e->elf, &nph))
		return 0;
	for (size_t i = 0; i < nph && n < max; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_LOAD || (ph.p_flags & PF_W) ||
		    !ph.p_filesz)
			continue;
		r[n][0] = ph.p_vaddr;
		r[n][1] = ph.p_vaddr + ph.p_filesz;
		n++;
	}
	return n;
}

int elfsym_read(const struct mt_elf *e, uint64_t vaddr, void *buf, size_t n)
{
	uint64_t off;
	ssize_t got;

	if (elfsym_vaddr_to_offset(e, vaddr, &off))
		return -ENOENT;
	got = pread(e->fd, buf, n, (off_t)off);
	return got == (ssize_t)n ? 0 : -EIO;
}

/* Address of section @name, 0 if absent. */
static uint64_t section_addr(const struct mt_elf *e, size_t shstrndx, const char *name)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(e->elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name))
			return sh.sh_addr;
	}
	return 0;
}

/* Parse one stapsdt note descriptor into @n. Returns 0 or -EINVAL. */
static int parse_note(const char *desc, size_t len, struct mt_usdt_note *n)
{
	const char *p = desc + 24, *end = desc + len;
	size_t l;

	if (len < 27)
		return -EINVAL;
	memcpy(&n->pc, desc, 8);
	memcpy(&n->base, desc + 8, 8);
	memcpy(&n->semaphore, desc + 16, 8);
	l = strnlen(p, end - p);
	snprintf(n->provider, sizeof(n->provider), "%.*s", (int)l, p);
	p += l + 1;
	if (p >= end)
		return -EINVAL;
	l = strnlen(p, end - p);
	snprintf(n->name, sizeof(n->name), "%.*s", (int)l, p);
	p += l + 1;
	l = p < end ? strnlen(p, end - p) : 0;
	snprintf(n->args, sizeof(n->args), "%.*s", (int)l, p < end ? p : "");
	return 0;
}

int elfsym_usdt_notes(const struct mt_elf *e, const char *provider, struct mt_usdt_note **out)
{
	Elf_Scn *scn = NULL;
	struct mt_usdt_note *v = NULL, *tmp;
	size_t n = 0, cap = 0;
	size_t shstrndx;

	uint64_t base_addr;

	if (elf_getshdrstrndx(e->elf, &shstrndx))
		return -ENOEXEC;
	/* The notes record where .stapsdt.base was at link time; if the file
	 * was prelinked since, every pc moves by the same amount. */
	base_addr = section_addr(e, shstrndx, ".stapsdt.base");
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		const char *sname;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		sname = elf_strptr(e->elf, shstrndx, sh.sh_name);
		if (!sname || strcmp(sname, ".note.stapsdt"))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			struct mt_usdt_note note;

			if (nh.n_type != 3 || nh.n_namesz != 8 ||
			    memcmp((char *)data->d_buf + name_off, "stapsdt", 8))
				continue;
			memset(&note, 0, sizeof(note));
			if (parse_note((char *)data->d_buf + desc_off, nh.n_descsz, &note))
				continue;
			if (provider && strcmp(note.provider, provider))
				continue;
			if (base_addr && note.base)
				note.pc += base_addr - note.base;
			if (n == cap) {
				cap = cap ? 2 * cap : 64;
				tmp = realloc(v, cap * sizeof(*v));
				if (!tmp) {
					free(v);
					return -ENOMEM;
				}
				v = tmp;
			}
			v[n++] = note;
		}
	}
	*out = v;
	return (int)n;
}
