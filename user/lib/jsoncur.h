/*
 * jsoncur.h - a cursor over JSON text (jsoncur.c): the lines of a recording
 * file read member by member, without building a tree. A step that meets
 * something it cannot take sets c->bad (then stop reading: the cursor is
 * left where it failed). The text is NUL-terminated.
 */
#ifndef MEMTRACE_JSONCUR_H
#define MEMTRACE_JSONCUR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jsoncur {
	const char *p;   /* the next byte (NUL-terminated text) */
	bool bad;        /* the text is not what the last step expected */
};

/* jsoncur_skip_ws - past spaces, tabs, CRs and newlines. */
void jsoncur_skip_ws(struct jsoncur *c);
/* jsoncur_str - the string literal at the cursor into @out (unescaped,
 * NUL-terminated, at most @n bytes; \u escapes above 0x7f become '?'),
 * @out NULL with @n 0 to skip it. */
void jsoncur_str(struct jsoncur *c, char *out, size_t n);
/* jsoncur_num - the unsigned decimal integer at the cursor, or with @d the
 * number (any JSON number) into *@d and its integer part returned. */
uint64_t jsoncur_num(struct jsoncur *c, double *d);
/* jsoncur_ints - the array of integers (signed allowed) at the cursor into
 * @out (at most @max; more is an error); the count into *@n. */
void jsoncur_ints(struct jsoncur *c, int64_t *out, unsigned max, unsigned *n);
/* jsoncur_skip_value - past any JSON value (nested objects and arrays included). */
void jsoncur_skip_value(struct jsoncur *c);

/* Called with the cursor at a member's value, @key its name (at most 63
 * bytes): it must read or skip the value. */
typedef void (*jsoncur_member_fn)(struct jsoncur *c, const char *key, void *arg);
/* jsoncur_object - call @fn for each member of the object at the cursor. */
void jsoncur_object(struct jsoncur *c, jsoncur_member_fn fn, void *arg);

#endif
