// SPDX-License-Identifier: GPL-2.0
/* jsoncur.c - a cursor over JSON text (jsoncur.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/jsoncur.h"

void jsoncur_skip_ws(struct jsoncur *c)
{
	while (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n')
		c->p++;
}

void jsoncur_str(struct jsoncur *c, char *out, size_t n)
{
	size_t k = 0;

	if (*c->p != '"') {
		c->bad = true;
		return;
	}
	c->p++;
	while (*c->p && *c->p != '"') {
		char ch = *c->p++;

		if (ch == '\\') {
			ch = *c->p++;
			switch (ch) {
			case 'n': ch = '\n'; break;
			case 't': ch = '\t'; break;
			case 'r': ch = '\r'; break;
			case 'b': ch = '\b'; break;
			case 'f': ch = '\f'; break;
			case 'u': {
				unsigned v = 0;

				for (int i = 0; i < 4; i++) {
					char h = *c->p;

					if (!h) {
						c->bad = true;
						return;
					}
					c->p++;
					v = v * 16 + (unsigned)(h >= 'a' ? h - 'a' + 10 :
							       h >= 'A' ? h - 'A' + 10 : h - '0');
				}
				ch = v < 0x80 ? (char)v : '?';
				break;
			}
			case '\0':
				c->bad = true;
				return;
			default:
				break;
			}
		}
		if (k + 1 < n)
			out[k++] = ch;
	}
	if (*c->p != '"') {
		c->bad = true;
		return;
	}
	c->p++;
	if (n)
		out[k] = '\0';
}

uint64_t jsoncur_num(struct jsoncur *c, double *d)
{
	char *end;
	uint64_t v;

	errno = 0;
	if (d) {
		*d = strtod(c->p, &end);
		v = (uint64_t)*d;
	} else {
		v = strtoull(c->p, &end, 10);
	}
	if (end == c->p || errno)
		c->bad = true;
	c->p = end;
	return v;
}

void jsoncur_skip_value(struct jsoncur *c)
{
	int depth = 0;

	do {
		jsoncur_skip_ws(c);
		if (*c->p == '"') {
			jsoncur_str(c, NULL, 0);
		} else if (*c->p == '{' || *c->p == '[') {
			depth++;
			c->p++;
		} else if (*c->p == '}' || *c->p == ']') {
			depth--;
			c->p++;
		} else if (*c->p == ',' || *c->p == ':') {
			c->p++;
		} else if (*c->p) {
			while (*c->p && !strchr(",}] \t", *c->p))
				c->p++;
		} else {
			c->bad = true;
		}
	} while (depth > 0 && !c->bad);
}

void jsoncur_object(struct jsoncur *c, jsoncur_member_fn fn, void *arg)
{
	char key[64];

	jsoncur_skip_ws(c);
	if (*c->p != '{') {
		c->bad = true;
		return;
	}
	c->p++;
	for (;;) {
		jsoncur_skip_ws(c);
		if (*c->p == '}') {
			c->p++;
			return;
		}
		jsoncur_str(c, key, sizeof(key));
		jsoncur_skip_ws(c);
		if (c->bad || *c->p != ':') {
			c->bad = true;
			return;
		}
		c->p++;
		jsoncur_skip_ws(c);
		fn(c, key, arg);
		if (c->bad)
			return;
		jsoncur_skip_ws(c);
		if (*c->p == ',')
			c->p++;
		else if (*c->p != '}') {
			c->bad = true;
			return;
		}
	}
}

void jsoncur_ints(struct jsoncur *c, int64_t *out, unsigned max, unsigned *n)
{
	*n = 0;
	if (*c->p != '[') {
		c->bad = true;
		return;
	}
	c->p++;
	jsoncur_skip_ws(c);
	while (*c->p != ']' && !c->bad) {
		char *end;

		if (*n == max) {
			c->bad = true;
			return;
		}
		errno = 0;
		out[(*n)++] = *c->p == '-' ? strtoll(c->p, &end, 10) :
					     (int64_t)strtoull(c->p, &end, 10);
		if (end == c->p || errno)
			c->bad = true;
		c->p = end;
		jsoncur_skip_ws(c);
		if (*c->p == ',') {
			c->p++;
			jsoncur_skip_ws(c);
		} else if (*c->p != ']') {
			c->bad = true;
		}
	}
	if (!c->bad)
		c->p++;
}
