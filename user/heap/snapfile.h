/* snapfile.h - the snapshot file (`memtrace snapshot -o`, `query --save`,
 * read by `memtrace query FILE`): a struct mt_snapshot's agent records,
 * saved and read back. The format (version 1; integers little-endian, as
 * the host):
 *
 *     offset 0   char     magic[8]     "MTSNAP\r\n"
 *            8   uint32   version      1
 *           12   uint32   flags        MT_AP_HEAP_* the snapshot was taken with
 *           16   uint64   created_ns   CLOCK_REALTIME when it was saved
 *           24   uint32   pid          the JVM's pid (host)
 *           28   uint32   reserved     0
 *           32   records  body_len bytes of records in the layout of
 *                         agent_proto.h (struct mt_ap_rec: kind, len, arg;
 *                         kinds MT_AP_HREC_*), exactly as the agent sent
 *                         them, then one MT_AP_HREC_DONE record
 *     end-16     uint64   body_len     bytes of records
 *     end-8      uint32   crc32        zlib crc32 of the records
 *     end-4      char     end[4]       "MTSE"
 *
 * The reader checks the magic, the version, that 32 + body_len + 16 is the
 * file's size, the checksum, and every record against its kind before use.
 * A snapshot taken by an agent that sends ages holds its MT_AP_HREC_AGES
 * record among the others, so a saved snapshot answers `age` as the live
 * query did; older files (and .hprof dumps) have no ages. An untagged walk's
 * file holds its NAMED and VISITS records (objects as addresses): the reader
 * numbers them as the live query did (walkids.c), in the same order, so the
 * ids are the same.
 */
#ifndef MEMTRACE_SNAPFILE_H
#define MEMTRACE_SNAPFILE_H

#include <stddef.h>

#include "heap/snapshot.h"

#define MT_SNAP_MAGIC   "MTSNAP\r\n"
#define MT_SNAP_END     "MTSE"
#define MT_SNAP_VERSION 1
#define MT_SNAP_HDR     32
#define MT_SNAP_TRAILER 16

/*
 * snapfile_write - save @s (whose records were kept: snaprec_add() with
 * keep_raw) to @path, created or truncated. Returns 0 or -errno with the
 * message in @why ("cannot create PATH: ...", "cannot write PATH: ...";
 * a partly written file is removed).
 */
int snapfile_write(const struct mt_snapshot *s, const char *path, char *why, size_t wn);

/*
 * snapfile_read_mem - parse a snapshot file's @n bytes at @buf into @s
 * (initialised here; source "snapshot"). Returns 0, or -EINVAL with the
 * reason in @why (not a snapshot, other version, truncated, bad checksum,
 * malformed record), -ENOMEM ("out of memory"); @s is then freed.
 */
int snapfile_read_mem(const void *buf, size_t n, struct mt_snapshot *s, char *why, size_t wn);

#endif
