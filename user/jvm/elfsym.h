/* elfsym.h - symbols and USDT notes of an ELF file (libjvm.so), via libelf. */
#ifndef MEMTRACE_ELFSYM_H
#define MEMTRACE_ELFSYM_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

struct mt_elf;

/* One USDT probe from .note.stapsdt. */
struct mt_usdt_note {
	char provider[32];
	char name[64];
	uint64_t pc;        /* link-time address of the probe (prelink-adjusted) */
	uint64_t base;      /* .stapsdt.base address recorded in the note */
	uint64_t semaphore; /* link-time address of the semaphore, 0 if none */
	char args[160];     /* the argument spec, e.g. "8@%r14 8@%rbx" */
};

/*
 * elfsym_open - open @path (e.g. "/proc/PID/root/usr/lib/.../libjvm.so").
 * Returns a handle the caller frees with elfsym_free(), or NULL with errno set
 * (ENOEXEC: not an ELF file). The last file a thread opened stays open for
 * that thread's next open of it within 2 s (the same handle, one more
 * reference): a handle is used by the thread that opened it.
 */
struct mt_elf *elfsym_open(const char *path);
/* elfsym_ro_ranges - the link-time [start, end) of up to @max loadable
 * segments the program cannot write (code, read-only data: what it maps
 * never changes). Returns how many were stored in @r. */
int elfsym_ro_ranges(const struct mt_elf *e, uint64_t (*r)[2], int max);
/* elfsym_free - release @e; NULL is a no-op. */
void elfsym_free(struct mt_elf *e);
/* elfsym_expire - close the file kept open for a next open when it was
 * opened 2 s ago or more (a long-running caller calls it now and then). */
void elfsym_expire(void);

/* elfsym_has_symtab - true when the file keeps its full .symtab (not stripped). */
bool elfsym_has_symtab(const struct mt_elf *e);

/*
 * elfsym_lookup - link-time address and size of symbol @name, searched in
 * .symtab then .dynsym. Returns 0, or -ENOENT when absent.
 */
int elfsym_lookup(const struct mt_elf *e, const char *name, uint64_t *addr, uint64_t *size);

/* elfsym_addr_name - the function symbol containing link-time address @vaddr.
 * *name points into @e (valid until elfsym_free). Returns 0 or -ENOENT. */
int elfsym_addr_name(struct mt_elf *e, uint64_t vaddr, const char **name, uint64_t *start);

/* elfsym_load_bias - what to add to a link-time address to get the runtime
 * address, given the address where the file's offset-0 mapping starts. */
uint64_t elfsym_load_bias(const struct mt_elf *e, uint64_t map_base);

/* elfsym_vaddr_to_offset - file offset of link-time address @vaddr (through the
 * PT_LOAD segment holding it): what a uprobe is attached at. 0 or -ENOENT. */
int elfsym_vaddr_to_offset(const struct mt_elf *e, uint64_t vaddr, uint64_t *off);

/* elfsym_read - @n bytes of the file's contents at link-time address @vaddr
 * (through its PT_LOAD segment; all within the file). 0, -ENOENT or -EIO. */
int elfsym_read(const struct mt_elf *e, uint64_t vaddr, void *buf, size_t n);

/*
 * elfsym_usdt_notes - the probes of provider @provider (NULL: all).
 * Returns the count and a malloc'd array in *out (caller frees), or -errno.
 */
int elfsym_usdt_notes(const struct mt_elf *e, const char *provider, struct mt_usdt_note **out);

#endif
