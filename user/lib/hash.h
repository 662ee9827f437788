/*
 * hash.h - the two integer hashes memtrace's open-addressing tables use, so
 * each multiplier is written once. Both are inline: they sit in the probe
 * loops of maps with millions of keys.
 *
 *   hash_mix64()  every output bit depends on every input bit: take the LOW
 *                 bits (h & (cap - 1)). For keys that differ in few bits, such
 *                 as 8-byte-aligned addresses close together.
 *   hash_fib64()  Fibonacci hashing, one multiply by 2^64 / phi: take the HIGH
 *                 bits (h >> (64 - bits)). Spreads consecutive keys evenly.
 */
#ifndef MEMTRACE_HASH_H
#define MEMTRACE_HASH_H

#include <stdint.h>

/* hash_mix64 - the finaliser half of MurmurHash3's fmix64. */
static inline uint64_t hash_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

/* hash_fib64 - @x times the 64-bit golden ratio; use the top bits. */
static inline uint64_t hash_fib64(uint64_t x)
{
	return x * 0x9e3779b97f4a7c15ULL;
}

#endif
