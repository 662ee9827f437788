/*
 * jstackstore.h - the Java stacks the BPF walker stored (bpf/jstack.bpf.h,
 * map `jstacks`), moved into user space as they come.
 *
 * The walker stores each new stack in a BPF hash map under the 64-bit hash
 * of its frames; a sample keeps only that key. A map that only grows would
 * have to be sized for a whole session and, with values of 3-12 KiB (128-512
 * frames), allocated as it fills - on javac 88 % of the walks are a new
 * stack, and each allocation was paid in the allocating thread's time. So
 * the map is preallocated and small, and user space drains it: every stack
 * found there is copied here (only the frames it has) and deleted from the
 * map, which the walker then fills again. A stack sampled again after its
 * drain is stored again and found here already.
 *
 * Readers look a key up here first, then in the map (a stack stored since
 * the last drain). Not thread-safe: callers hold their own lock.
 *
 * Before, the map grew to 16 384 stacks and then refused new ones for the
 * rest of the session: javac makes 1 500-3 000 new stacks in 40 s under the
 * default budget, so after a few minutes every new stack was lost (counted).
 * Now the bound is the store's (@max_kept stacks, ~1 KiB each on javac):
 * past it a drain leaves the map as it is, and the walker counts the stacks
 * it cannot store, as before.
 */
#ifndef MEMTRACE_JSTACKSTORE_H
#define MEMTRACE_JSTACKSTORE_H

#include <stdint.h>

#include "memtrace/jstack.h"

struct jstackstore;

/* jstackstore_size_map - make @m (a skeleton's `jstacks`, before load) the
 * small preallocated map a store drains, for stacks of at most @depth frames
 * (1..MT_JSTACK_MAX_DEPTH; the walker's targ_jdepth must be the same): values
 * of MT_JSTACK_BYTES(@depth), as many as MT_JSTACK_DRAINED_BYTES hold (at
 * least MT_JSTACK_DRAINED_MIN). */
struct bpf_map;
void jstackstore_size_map(struct bpf_map *m, uint32_t depth);

/* jstackstore_new - a store of at most @max_kept stacks over the BPF map
 * @map_fd (keys __u64, values the first MT_JSTACK_BYTES(d) bytes of a struct
 * mt_jstack for some d; the caller keeps the fd open while the store lives).
 * Returns the store, or NULL with errno set. Free with jstackstore_free. */
struct jstackstore *jstackstore_new(int map_fd, uint64_t max_kept);

/* Stacks kept in user space by alloc and locks (~64 MiB at javac's ~1 KiB). */
#define JSTACKSTORE_MAX_KEPT 65536

/* jstackstore_free - release @s and its stacks; NULL is a no-op. */
void jstackstore_free(struct jstackstore *s);

/* jstackstore_fn - called once for each stack a drain finds that was not
 * in the store; @st is valid only during the call. */
typedef void (*jstackstore_fn)(void *arg, uint64_t key, const struct mt_jstack *st);

/*
 * jstackstore_drain - move every stack in the map into the store (deleting
 * it from the map), calling @fn (may be NULL) on each new one. The walker
 * may add stacks meanwhile; a drain stops after as many as the map holds,
 * or at the first new one when the store is full.
 * Returns the stacks moved (>= 0), or -ENOMEM (the stack it could not keep
 * stays in the map).
 */
int jstackstore_drain(struct jstackstore *s, jstackstore_fn fn, void *arg);

/* jstackstore_get - the stack under @key into *@st (frames past its depth
 * zeroed, up to the map's bound): 0, or -ENOENT when neither the store nor
 * the map has it. */
int jstackstore_get(const struct jstackstore *s, uint64_t key, struct mt_jstack *st);

/* jstackstore_count - the stacks held in user space. */
uint64_t jstackstore_count(const struct jstackstore *s);

#endif
