/*
 * stacktext.h - a Java stack as one line of text, the form allocation stacks
 * take in recordings (MT_EV_NAME definitions, so an identical stack travels
 * once): frames root first, separated by ';', each
 *
 *     NAME \t KIND \t LINE \t FILE
 *
 * KIND one letter: o other, 0 interpreted, 1 C1, j C2, i inlined, n native
 * (collapsed stacks' suffixes); LINE a decimal, 0 unknown; FILE may be empty.
 * Names never hold ';', tabs or control characters (the namer lets only
 * printable UTF-8 through; the encoder replaces them anyway).
 */
#ifndef MEMTRACE_STACKTEXT_H
#define MEMTRACE_STACKTEXT_H

#include <stddef.h>

#include "analysis/profile.h"

/* Longest text stacktext_encode() writes (NUL included): recordings' lines
 * are at most 64 KiB, and JSON escapes (a tab is two characters) grow it by a
 * few per cent. ~400 frames of 80 characters. */
#define STACKTEXT_MAX 32768

/*
 * stacktext_encode - @f[0..n-1] (root first) into @buf (@len bytes). A stack
 * whose text would not fit loses frames from the root, and a first frame
 * "[stack cut: text length]" says so. Returns the length written (without
 * the NUL), or -EINVAL for a @len too small for one frame.
 */
int stacktext_encode(const struct profile_frame *f, int n, char *buf, size_t len);

/*
 * stacktext_decode - the frames of @text, which is modified (fields are cut
 * in place): @f[i].name and .file point into it. At most @max frames.
 * Returns the count, or -EBADMSG for text that is not of this form.
 */
int stacktext_decode(char *text, struct profile_frame *f, int max);

#endif
