/*
 * unsigned5.h - HotSpot's UNSIGNED5 variable-length numbers (unsigned5.hpp,
 * compressedStream.hpp): bytes below L end a number, bytes from L carry 6
 * more bits, at most 5 bytes. JDK 20 and later exclude the byte 0 (every byte
 * is stored +1, L = 191): field-info streams, debug info, line tables; JDK 17
 * and 19 stored debug info and line tables without exclusion (L = 192).
 */
#ifndef MEMTRACE_UNSIGNED5_H
#define MEMTRACE_UNSIGNED5_H

#include <stddef.h>
#include <stdint.h>

/*
 * unsigned5_read - decode one number at buf[*pos] (len bytes in @buf) with
 * @excl excluded low bytes (0 or 1), advancing *pos. Returns 0; -EBADMSG for
 * an excluded byte; -ERANGE when the number runs past @len (*pos untouched on
 * error). Pure.
 */
int unsigned5_read(const uint8_t *buf, size_t len, size_t *pos, unsigned excl, uint32_t *val);

/* unsigned5_signed - the signed value of a zigzag-coded number. Pure. */
int32_t unsigned5_signed(uint32_t v);

#endif
