/* recording_read.h - read recording files (recording_read.c; the format,
 * its framing and what a cut file keeps are in recording.h). */
#ifndef MEMTRACE_RECORDING_READ_H
#define MEMTRACE_RECORDING_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memtrace/events.h"
#include "monitor/recording.h"

struct recording_reader;

/* Called by recording_next() for each object-sampling line (@s valid during the call). */
typedef void (*recording_side_fn)(void *ctx, const struct recording_side *s);

/* recording_open - open @path and read its header into *h. NULL with errno
 * set: EINVAL (not a memtrace recording), ENODATA (a recording cut before
 * the end of its header line), or the error of open(2). */
struct recording_reader *recording_open(const char *path, struct recording_header *h);
/*
 * recording_next - the next event into *e (*text gets the name of an MT_EV_NAME,
 * valid until the next call), *line its line number. Object-sampling lines
 * on the way go to the recording_on_side() handler (or are skipped). Returns
 * 1, 0 at the end - of the file, or where it was cut: recording_cut() says
 * which - (the trailer, if any, is then in recording_trailer()), or -EINVAL
 * for a complete line that is not valid (recording_error() says why), -EIO,
 * -ENOMEM.
 */
int recording_next(struct recording_reader *r, struct mt_ev *e, const char **text, uint64_t *line);
/* recording_on_side - have recording_next() call @fn for object-sampling lines (without
 * a handler they are skipped). */
void recording_on_side(struct recording_reader *r, recording_side_fn fn, void *ctx);
/* recording_error - why recording_next() failed. */
const char *recording_error(const struct recording_reader *r);
const struct recording_trailer *recording_trailer(const struct recording_reader *r);

/* Where and why a recording ends before its trailer (the framing in recording.h). */
enum recording_cut_kind {
	REC_CUT_NONE,          /* complete: the trailer was read */
	REC_CUT_TORN,
	REC_CUT_CORRUPT,
	REC_CUT_GARBAGE,
	REC_CUT_NO_TRAILER,
	REC_CUT_WRITER_ERROR,
};

struct recording_cut {
	enum recording_cut_kind kind;
	uint64_t at;             /* file offset where what was not read begins */
	uint64_t size;           /* the file's size */
	uint64_t line;           /* the last line read */
	uint64_t members;        /* complete members read */
};

/* recording_cut - after recording_next() returned 0: REC_CUT_NONE, or where
 * and why the file was cut. */
const struct recording_cut *recording_cut(const struct recording_reader *r);
/* recording_cut_name - "torn", "corrupt", "garbage", "no_trailer",
 * "writer_error" ("" for REC_CUT_NONE). */
const char *recording_cut_name(enum recording_cut_kind k);
/* recording_cut_explain - one sentence on @c for a person, into @buf (the
 * trailer's error for REC_CUT_WRITER_ERROR). */
void recording_cut_explain(const struct recording_reader *r, char *buf, size_t n);
/* recording_close_read - NULL is a no-op. */
void recording_close_read(struct recording_reader *r);

#endif
