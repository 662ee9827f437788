// SPDX-License-Identifier: GPL-2.0
/* stacktext.c - Java stacks as one line of text; see stacktext.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jstack/stacktext.h"

static const char kind_letter[PROFILE_NKINDS] = { 'o', '0', '1', 'j', 'i', 'n' };

/* Append @s to @buf at *@at, separators and control characters replaced. */
static void put(char *buf, size_t *at, const char *s)
{
	for (; s && *s; s++)
		buf[(*at)++] = *s == ';' ? ':' : (unsigned char)*s < 0x20 ? '?' : *s;
}

/* The text length of frame @f, its separator included. */
static size_t frame_len(const struct profile_frame *f)
{
	return strlen(f->name ? f->name : "[unknown]") + (f->file ? strlen(f->file) : 0) + 16;
}

int stacktext_encode(const struct profile_frame *f, int n, char *buf, size_t len)
{
	static const char cut[] = "[stack cut: text length]\to\t0\t";
	size_t need = 0, at = 0;
	int first = 0;

	if (len < sizeof(cut) + 1)
		return -EINVAL;
	for (int i = 0; i < n; i++)
		need += frame_len(&f[i]);
	/* drop frames from the root until the rest fits, with the marker */
	while (first < n && need + (first ? sizeof(cut) : 0) >= len)
		need -= frame_len(&f[first++]);
	if (first) {
		memcpy(buf, cut, sizeof(cut) - 1);
		at = sizeof(cut) - 1;
	}
	for (int i = first; i < n; i++) {
		char num[16];

		if (at)
			buf[at++] = ';';
		put(buf, &at, f[i].name ? f[i].name : "[unknown]");
		at += (size_t)snprintf(num, sizeof(num), "\t%c\t%d\t",
				       kind_letter[f[i].kind < PROFILE_NKINDS ? f[i].kind : 0],
				       f[i].line > 0 ? f[i].line : 0);
		memcpy(buf + at - strlen(num), num, strlen(num)); /* tabs as they are */
		put(buf, &at, f[i].file);
	}
	buf[at] = '\0';
	return (int)at;
}

int stacktext_decode(char *text, struct profile_frame *f, int max)
{
	int n = 0;
	char *p = text;

	if (!*p)
		return 0;
	while (p && n < max) {
		char *end = strchr(p, ';'), *t1, *t2, *t3, *k;
		long line;

		if (end)
			*end = '\0';
		t1 = strchr(p, '\t');
		t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
		t3 = t2 ? strchr(t2 + 1, '\t') : NULL;
		if (!t3 || t2 != t1 + 2 || t1 == p)
			return -EBADMSG;
		*t1 = *t2 = *t3 = '\0';
		k = memchr(kind_letter, t1[1], sizeof(kind_letter));
		line = strtol(t2 + 1, &t1, 10);
		if (!k || *t1 || line < 0 || line > 0x7fffffff)
			return -EBADMSG;
		f[n].name = p;
		f[n].kind = (uint8_t)(k - kind_letter);
		f[n].line = (int32_t)line;
		f[n].file = t3[1] ? t3 + 1 : NULL;
		n++;
		p = end ? end + 1 : NULL;
	}
	return n;
}
