// SPDX-License-Identifier: GPL-2.0
/* diag.c - diagnostics recorded with line:col, rendered with a caret line. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "dsl.h"

struct dsl_diags *dsl_diags_new(void)
{
	struct dsl_diags *d = calloc(1, sizeof(*d));

	if (!d)
		errno = ENOMEM;
	return d;
}

void dsl_diags_free(struct dsl_diags *d)
{
	if (!d)
		return;
	free(d->filename);
	free(d->src);
	free(d);
}

int dsl_diags_set_source(struct dsl_diags *d, const char *filename,
			 const char *src, size_t len)
{
	char *fn = strdup(filename ? filename : "<query>");
	char *s = malloc(len + 1);

	if (!fn || !s) {
		free(fn);
		free(s);
		return -ENOMEM;
	}
	memcpy(s, src, len);
	s[len] = '\0';
	free(d->filename);
	free(d->src);
	d->filename = fn;
	d->src = s;
	d->len = len;
	d->n = 0;
	d->dropped = 0;
	return 0;
}

/* A byte that starts a character (not a UTF-8 continuation byte). */
static bool starts_char(unsigned char c)
{
	return (c & 0xC0) != 0x80;
}

void dsl_linecol(const char *src, size_t len, size_t off, int *line, int *col)
{
	int l = 1, c = 1;

	if (off > len)
		off = len;
	for (size_t i = 0; i < off; i++) {
		if (src[i] == '\n') {
			l++;
			c = 1;
		} else if (starts_char((unsigned char)src[i])) {
			c++;
		}
	}
	*line = l;
	*col = c;
}

void dsl_diags_add(struct dsl_diags *d, size_t off, const char *fmt, ...)
{
	va_list ap;

	if (!d)
		return;
	if (d->n >= DSL_MAX_DIAGS) {
		d->dropped++;
		return;
	}
	struct dsl_diag *g = &d->v[d->n++];

	g->off = off > d->len ? d->len : off;
	if (d->src)
		dsl_linecol(d->src, d->len, g->off, &g->line, &g->col);
	else
		g->line = g->col = 0;
	va_start(ap, fmt);
	vsnprintf(g->msg, sizeof(g->msg), fmt, ap);
	va_end(ap);
}

/* Write the source line holding off, then the caret under off. */
static void render_line(const struct dsl_diags *d, size_t off, FILE *f)
{
	size_t start = off, end = off;

	while (start > 0 && d->src[start - 1] != '\n')
		start--;
	while (end < d->len && d->src[end] != '\n')
		end++;
	fprintf(f, "%.*s\n", (int)(end - start), d->src + start);
	for (size_t i = start; i < off; i++) {
		unsigned char c = (unsigned char)d->src[i];

		if (c == '\t')
			fputc('\t', f);
		else if (starts_char(c))
			fputc(' ', f);
	}
	fputs("^\n", f);
}

int dsl_diags_render(const struct dsl_diags *d, FILE *f)
{
	for (int i = 0; i < d->n; i++) {
		const struct dsl_diag *g = &d->v[i];

		fprintf(f, "%s:%d:%d: error: %s\n", d->filename ? d->filename : "<query>",
			g->line, g->col, g->msg);
		if (d->src)
			render_line(d, g->off, f);
	}
	if (d->dropped)
		fprintf(f, "%s: %d more errors not shown\n",
			d->filename ? d->filename : "<query>", d->dropped);
	return ferror(f) ? -EIO : 0;
}

char *dsl_diags_render_str(const struct dsl_diags *d)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	if (!f)
		return NULL;
	dsl_diags_render(d, f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
