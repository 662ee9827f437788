// SPDX-License-Identifier: GPL-2.0
/* recording.c - write and read recording files (format in recording.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "monitor/recording.h"
#include "monitor/sequencer.h"
#include "lib/util.h"

#define LINE_MAX_LEN 65536

struct recording_writer {
	gzFile gz;
	char *buf;
	size_t cap;
	bool err;
};

struct recording_reader {
	gzFile gz;
	char *line;
	uint64_t lineno;
	char *text;
	struct recording_trailer trailer;
	recording_side_fn side_fn;
	void *side_ctx;
	char error[160];
};

/* ---- writing ---- */

/* Append the JSON string literal of @s to @p (at most @room bytes). */
static size_t put_str(char *p, size_t room, const char *s)
{
	size_t n = 0;

	if (room < 8)
		return 0;
	p[n++] = '"';
	for (; *s && n + 8 < room; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			p[n++] = '\\';
			p[n++] = (char)c;
		} else if (c < 0x20) {
			n += (size_t)snprintf(p + n, room - n, "\\u%04x", c);
		} else {
			p[n++] = (char)c;
		}
	}
	p[n++] = '"';
	return n;
}

struct recording_writer *recording_create(const char *path, const struct recording_header *h)
{
	struct recording_writer *w = calloc(1, sizeof(*w));
	char line[4096];
	size_t n;

	if (!w)
		return NULL;
	w->cap = LINE_MAX_LEN;
	w->buf = malloc(w->cap);
	w->gz = gzopen(path, "wb6");
	if (!w->buf || !w->gz) {
		int err = errno ? errno : ENOMEM;

		if (w->gz)
			gzclose(w->gz);
		free(w->buf);
		free(w);
		errno = err;
		return NULL;
	}
	n = (size_t)snprintf(line, sizeof(line),
			     "{\"memtrace_recording\":1,\"pid\":%d,\"nspid\":%d,\"start_mono_ns\":%llu,"
			     "\"mono_to_real_ns\":%llu,\"jdk\":",
			     h->pid, h->nspid, (unsigned long long)h->start_mono_ns,
			     (unsigned long long)h->mono_to_real_ns);
	n += put_str(line + n, sizeof(line) - n, h->jdk);
	n += (size_t)snprintf(line + n, sizeof(line) - n, ",\"libjvm\":");
	n += put_str(line + n, sizeof(line) - n, h->libjvm);
	n += (size_t)snprintf(line + n, sizeof(line) - n, ",\"filter\":");
	n += put_str(line + n, sizeof(line) - n, h->filter);
	n += (size_t)snprintf(line + n, sizeof(line) - n, "}\n");
	if (gzwrite(w->gz, line, (unsigned)n) != (int)n)
		w->err = true;
	return w;
}

#define PUT(key, val)                                                                   \
	do {                                                                            \
		if (val)                                                                \
			n += (size_t)snprintf(p + n, room - n, ",\"" key "\":%llu",     \
					      (unsigned long long)(val));               \
	} while (0)

/* Close the JSON object of @n bytes in w->buf and write the line. 0 or -EIO. */
static int end_line(struct recording_writer *w, size_t n)
{
	w->buf[n++] = '}';
	w->buf[n++] = '\n';
	if (gzwrite(w->gz, w->buf, (unsigned)n) != (int)n) {
		w->err = true;
		return -EIO;
	}
	return 0;
}

int recording_write(struct recording_writer *w, const struct mt_ev *e, const char *text)
{
	char *p = w->buf;
	size_t room = w->cap - 2, n;
	const char *k = sequencer_ev_kind_name(e->kind);

	if (!k)
		return -EINVAL;
	if (e->kind == MT_EV_NAME) {
		n = (size_t)snprintf(p, room, "{\"k\":\"name\",\"id\":%llu,\"s\":",
				     (unsigned long long)e->id);
		n += put_str(p + n, room - n, text ? text : "");
	} else {
		n = (size_t)snprintf(p, room, "{\"k\":\"%s\",\"t\":%llu", k,
				     (unsigned long long)e->ts);
		PUT("f", e->flags);
		PUT("a", e->aux);
		PUT("th", e->thread);
		PUT("id", e->id);
		PUT("ref", e->ref);
		PUT("n", e->name);
		PUT("n2", e->name2);
		if (e->v[0] | e->v[1] | e->v[2] | e->v[3])
			n += (size_t)snprintf(p + n, room - n, ",\"v\":[%llu,%llu,%llu,%llu]",
					      (unsigned long long)e->v[0],
					      (unsigned long long)e->v[1],
					      (unsigned long long)e->v[2],
					      (unsigned long long)e->v[3]);
		PUT("u", e->uid);
	}
	return end_line(w, n);
}

static const char *const side_names[] = {
	[REC_SIDE_OSESSION] = "osession", [REC_SIDE_METHOD] = "method",
	[REC_SIDE_STACK] = "stack",       [REC_SIDE_OSTACK] = "ostack",
	[REC_SIDE_OGC] = "ogc",           [REC_SIDE_OSTATS] = "ostats",
	[REC_SIDE_SITEVOL] = "sitevol",   [REC_SIDE_SITEVOLS] = "sitevols",
};

static enum recording_side_kind side_kind_parse(const char *k)
{
	for (size_t i = 1; i < MT_ARRAY_SIZE(side_names); i++)
		if (!strcmp(k, side_names[i]))
			return (enum recording_side_kind)i;
	return REC_SIDE_NONE;
}

int recording_write_side(struct recording_writer *w, const struct recording_side *sd)
{
	char *p = w->buf;
	size_t room = w->cap - 2, n;

	if (sd->kind <= REC_SIDE_NONE || sd->kind >= (int)MT_ARRAY_SIZE(side_names) ||
	    sd->nv > REC_SIDE_MAXV || sd->nfr > MT_AP_MAX_DEPTH)
		return -EINVAL;
	n = (size_t)snprintf(p, room, "{\"k\":\"%s\"", side_names[sd->kind]);
	if (sd->kind == REC_SIDE_OSESSION || sd->kind == REC_SIDE_OGC)
		n += (size_t)snprintf(p + n, room - n, ",\"t\":%llu", (unsigned long long)sd->ts);
	if (sd->kind == REC_SIDE_METHOD || sd->kind == REC_SIDE_STACK ||
	    sd->kind == REC_SIDE_OSTACK)
		n += (size_t)snprintf(p + n, room - n, ",\"id\":%llu", (unsigned long long)sd->id);
	if (sd->kind == REC_SIDE_OSTACK)
		n += (size_t)snprintf(p + n, room - n, ",\"st\":%llu", (unsigned long long)sd->st);
	if (sd->kind == REC_SIDE_METHOD || sd->kind == REC_SIDE_SITEVOL) {
		n += (size_t)snprintf(p + n, room - n, ",\"s\":");
		n += put_str(p + n, room - n, sd->s ? sd->s : "");
	}
	if (sd->kind == REC_SIDE_SITEVOLS)
		n += (size_t)snprintf(p + n, room - n, ",\"sec\":%.3f", sd->sec);
	if (sd->kind == REC_SIDE_STACK) {
		n += (size_t)snprintf(p + n, room - n, ",\"fr\":[");
		for (unsigned i = 0; i < sd->nfr; i++)
			n += (size_t)snprintf(p + n, room - n, "%s%u,%d", i ? "," : "",
					      sd->fr[i].method, sd->fr[i].line);
		n += (size_t)snprintf(p + n, room - n, "]");
	}
	if (sd->nv) {
		n += (size_t)snprintf(p + n, room - n, ",\"v\":[");
		for (unsigned i = 0; i < sd->nv; i++)
			n += (size_t)snprintf(p + n, room - n, "%s%llu", i ? "," : "",
					      (unsigned long long)sd->v[i]);
		n += (size_t)snprintf(p + n, room - n, "]");
	}
	return end_line(w, n);
}

uint64_t recording_written(const struct recording_writer *w)
{
	return w ? (uint64_t)gzoffset(w->gz) : 0;
}

int recording_close(struct recording_writer *w, const struct recording_trailer *t)
{
	int err;

	if (!w)
		return 0;
	if (t)
		gzprintf(w->gz,
			 "{\"k\":\"end\",\"t\":%llu,\"lost\":%llu,\"duration_s\":%.3f,"
			 "\"jvm_exited\":%s,\"events_in\":%llu,\"events_out\":%llu,\"dropped\":%llu}\n",
			 (unsigned long long)t->ts, (unsigned long long)t->lost, t->duration_s,
			 t->jvm_exited ? "true" : "false", (unsigned long long)t->events_in,
			 (unsigned long long)t->events_out, (unsigned long long)t->dropped);
	err = gzclose(w->gz) != Z_OK || w->err ? -EIO : 0;
	free(w->buf);
	free(w);
	return err;
}

/* ---- reading: a flat JSON object reader for the lines above ---- */

struct jcur {
	const char *p;
	bool bad;
};

static void skip_ws(struct jcur *c)
{
	while (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n')
		c->p++;
}

/* A string literal into @out (unescaped, NUL-terminated, at most @n bytes). */
static void parse_str(struct jcur *c, char *out, size_t n)
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

static uint64_t parse_num(struct jcur *c, double *d)
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

/* Skip any JSON value (nested objects and arrays included). */
static void skip_value(struct jcur *c)
{
	int depth = 0;

	do {
		skip_ws(c);
		if (*c->p == '"') {
			parse_str(c, NULL, 0);
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

/* Call @fn for each member of the object at the cursor. */
static void parse_obj(struct jcur *c, void (*fn)(struct jcur *c, const char *key, void *arg),
		      void *arg)
{
	char key[64];

	skip_ws(c);
	if (*c->p != '{') {
		c->bad = true;
		return;
	}
	c->p++;
	for (;;) {
		skip_ws(c);
		if (*c->p == '}') {
			c->p++;
			return;
		}
		parse_str(c, key, sizeof(key));
		skip_ws(c);
		if (c->bad || *c->p != ':') {
			c->bad = true;
			return;
		}
		c->p++;
		skip_ws(c);
		fn(c, key, arg);
		if (c->bad)
			return;
		skip_ws(c);
		if (*c->p == ',')
			c->p++;
		else if (*c->p != '}') {
			c->bad = true;
			return;
		}
	}
}

static void header_member(struct jcur *c, const char *key, void *arg)
{
	struct recording_header *h = arg;

	if (!strcmp(key, "pid"))
		h->pid = (int)parse_num(c, NULL);
	else if (!strcmp(key, "nspid"))
		h->nspid = (int)parse_num(c, NULL);
	else if (!strcmp(key, "start_mono_ns"))
		h->start_mono_ns = parse_num(c, NULL);
	else if (!strcmp(key, "mono_to_real_ns"))
		h->mono_to_real_ns = parse_num(c, NULL);
	else if (!strcmp(key, "jdk"))
		parse_str(c, h->jdk, sizeof(h->jdk));
	else if (!strcmp(key, "libjvm"))
		parse_str(c, h->libjvm, sizeof(h->libjvm));
	else if (!strcmp(key, "filter"))
		parse_str(c, h->filter, sizeof(h->filter));
	else
		skip_value(c);
}

struct ev_parse {
	struct recording_reader *r;
	struct mt_ev *e;
	char kind[32];
	bool is_end;
};

static void ev_member(struct jcur *c, const char *key, void *arg)
{
	struct ev_parse *ep = arg;
	struct mt_ev *e = ep->e;
	struct recording_trailer *t = &ep->r->trailer;

	if (!strcmp(key, "k")) {
		parse_str(c, ep->kind, sizeof(ep->kind));
	} else if (!strcmp(key, "s")) {
		parse_str(c, ep->r->text, LINE_MAX_LEN);
	} else if (!strcmp(key, "t")) {
		e->ts = t->ts = parse_num(c, NULL);
	} else if (!strcmp(key, "f")) {
		e->flags = (uint16_t)parse_num(c, NULL);
	} else if (!strcmp(key, "a")) {
		e->aux = (uint32_t)parse_num(c, NULL);
	} else if (!strcmp(key, "th")) {
		e->thread = parse_num(c, NULL);
	} else if (!strcmp(key, "id")) {
		e->id = parse_num(c, NULL);
	} else if (!strcmp(key, "ref")) {
		e->ref = parse_num(c, NULL);
	} else if (!strcmp(key, "n")) {
		e->name = parse_num(c, NULL);
	} else if (!strcmp(key, "n2")) {
		e->name2 = parse_num(c, NULL);
	} else if (!strcmp(key, "u")) {
		e->uid = parse_num(c, NULL);
	} else if (!strcmp(key, "v")) {
		if (*c->p != '[') {
			c->bad = true;
			return;
		}
		c->p++;
		for (int i = 0; i < 4 && !c->bad; i++) {
			skip_ws(c);
			e->v[i] = parse_num(c, NULL);
			skip_ws(c);
			if (*c->p == ',')
				c->p++;
		}
		skip_ws(c);
		if (*c->p != ']')
			c->bad = true;
		else
			c->p++;
	} else if (!strcmp(key, "lost")) {
		t->lost = parse_num(c, NULL);
	} else if (!strcmp(key, "duration_s")) {
		parse_num(c, &t->duration_s);
	} else if (!strcmp(key, "events_in")) {
		t->events_in = parse_num(c, NULL);
	} else if (!strcmp(key, "events_out")) {
		t->events_out = parse_num(c, NULL);
	} else if (!strcmp(key, "dropped")) {
		t->dropped = parse_num(c, NULL);
	} else if (!strcmp(key, "jvm_exited")) {
		t->jvm_exited = !strncmp(c->p, "true", 4);
		skip_value(c);
	} else {
		skip_value(c);
	}
}

/* A JSON array of integers (signed allowed) into @out (at most @max; more is
 * an error); the count into *@n. */
static void parse_ints(struct jcur *c, int64_t *out, unsigned max, unsigned *n)
{
	*n = 0;
	if (*c->p != '[') {
		c->bad = true;
		return;
	}
	c->p++;
	skip_ws(c);
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
		skip_ws(c);
		if (*c->p == ',') {
			c->p++;
			skip_ws(c);
		} else if (*c->p != ']') {
			c->bad = true;
		}
	}
	if (!c->bad)
		c->p++;
}

struct side_parse {
	struct recording_reader *r;
	struct recording_side *sd;
};

static void side_member(struct jcur *c, const char *key, void *arg)
{
	struct side_parse *sp = arg;
	struct recording_side *sd = sp->sd;
	int64_t vals[2 * MT_AP_MAX_DEPTH];
	unsigned n;

	if (!strcmp(key, "t")) {
		sd->ts = parse_num(c, NULL);
	} else if (!strcmp(key, "id")) {
		sd->id = parse_num(c, NULL);
	} else if (!strcmp(key, "st")) {
		sd->st = parse_num(c, NULL);
	} else if (!strcmp(key, "sec")) {
		parse_num(c, &sd->sec);
	} else if (!strcmp(key, "s")) {
		parse_str(c, sp->r->text, LINE_MAX_LEN);
		sd->s = sp->r->text;
	} else if (!strcmp(key, "v")) {
		parse_ints(c, vals, REC_SIDE_MAXV, &n);
		for (unsigned i = 0; i < n; i++)
			sd->v[i] = (uint64_t)vals[i];
		sd->nv = n;
	} else if (!strcmp(key, "fr")) {
		parse_ints(c, vals, 2 * MT_AP_MAX_DEPTH, &n);
		if (n % 2)
			c->bad = true;
		for (unsigned i = 0; i + 1 < n; i += 2) {
			sd->fr[i / 2].method = (uint32_t)vals[i];
			sd->fr[i / 2].line = (int32_t)vals[i + 1];
		}
		sd->nfr = n / 2;
	} else {
		skip_value(c);
	}
}

/* The kind of a line whose first member is "k" (every line we write), or "". */
static void line_kind(const char *line, char *out, size_t n)
{
	size_t k = 0;

	out[0] = '\0';
	if (strncmp(line, "{\"k\":\"", 6))
		return;
	for (line += 6; *line && *line != '"' && k + 1 < n; line++)
		out[k++] = *line;
	out[k] = '\0';
}

/* An object-sampling line: hand it to the handler. 0 or -EINVAL. */
static int side_line(struct recording_reader *r, enum recording_side_kind kind)
{
	struct recording_side *sd = calloc(1, sizeof(*sd));
	struct side_parse sp = { .r = r, .sd = sd };
	struct jcur c = { .p = r->line };

	if (!sd) {
		snprintf(r->error, sizeof(r->error), "out of memory at line %llu",
			 (unsigned long long)r->lineno);
		return -ENOMEM;
	}
	sd->kind = kind;
	r->text[0] = '\0';
	parse_obj(&c, side_member, &sp);
	if (c.bad) {
		snprintf(r->error, sizeof(r->error), "line %llu is not a valid \"%s\" line",
			 (unsigned long long)r->lineno, side_names[kind]);
		free(sd);
		return -EINVAL;
	}
	if (r->side_fn)
		r->side_fn(r->side_ctx, sd);
	free(sd);
	return 0;
}

void recording_on_side(struct recording_reader *r, recording_side_fn fn, void *ctx)
{
	r->side_fn = fn;
	r->side_ctx = ctx;
}

static bool read_line(struct recording_reader *r)
{
	size_t n;

	if (!gzgets(r->gz, r->line, LINE_MAX_LEN))
		return false;
	r->lineno++;
	n = strlen(r->line);
	if (n && r->line[n - 1] == '\n')
		r->line[n - 1] = '\0';
	return true;
}

struct recording_reader *recording_open(const char *path, struct recording_header *h)
{
	struct recording_reader *r = calloc(1, sizeof(*r));
	struct jcur c;

	if (!r)
		return NULL;
	r->line = malloc(LINE_MAX_LEN);
	r->text = malloc(LINE_MAX_LEN);
	r->gz = gzopen(path, "rb");
	if (!r->line || !r->text || !r->gz) {
		int err = errno ? errno : ENOMEM;

		recording_close_read(r);
		errno = err;
		return NULL;
	}
	memset(h, 0, sizeof(*h));
	if (!read_line(r) || strncmp(r->line, "{\"memtrace_recording\":1", 23)) {
		recording_close_read(r);
		errno = EINVAL;
		return NULL;
	}
	c.p = r->line;
	c.bad = false;
	parse_obj(&c, header_member, h);
	if (c.bad) {
		recording_close_read(r);
		errno = EINVAL;
		return NULL;
	}
	return r;
}

int recording_next(struct recording_reader *r, struct mt_ev *e, const char **text, uint64_t *line)
{
	for (;;) {
		struct ev_parse ep = { .r = r, .e = e };
		struct jcur c;

		if (!read_line(r)) {
			int errnum;

			gzerror(r->gz, &errnum);
			if (errnum != Z_OK && errnum != Z_BUF_ERROR) {
				snprintf(r->error, sizeof(r->error), "read error after line %llu",
					 (unsigned long long)r->lineno);
				return -EIO;
			}
			return 0;
		}
		if (!r->line[0])
			continue;
		{
			char k[32];
			enum recording_side_kind sk;
			int err;

			line_kind(r->line, k, sizeof(k));
			sk = side_kind_parse(k);
			if (sk != REC_SIDE_NONE) {
				err = side_line(r, sk);
				if (err) {
					*line = r->lineno;
					return err;
				}
				continue;
			}
		}
		memset(e, 0, sizeof(*e));
		r->text[0] = '\0';
		c.p = r->line;
		c.bad = false;
		parse_obj(&c, ev_member, &ep);
		*line = r->lineno;
		if (c.bad) {
			snprintf(r->error, sizeof(r->error), "line %llu is not a JSON object of the "
				 "recording format", (unsigned long long)r->lineno);
			return -EINVAL;
		}
		if (!strcmp(ep.kind, "end")) {
			r->trailer.present = true;
			continue;
		}
		e->kind = (uint16_t)sequencer_ev_kind_parse(ep.kind);
		if (e->kind == MT_EV_NONE) {
			snprintf(r->error, sizeof(r->error), "line %llu: unknown event kind \"%s\"",
				 (unsigned long long)r->lineno, ep.kind);
			return -EINVAL;
		}
		*text = r->text;
		return 1;
	}
}

const char *recording_error(const struct recording_reader *r)
{
	return r->error;
}

const struct recording_trailer *recording_trailer(const struct recording_reader *r)
{
	return &r->trailer;
}

void recording_close_read(struct recording_reader *r)
{
	if (!r)
		return;
	if (r->gz)
		gzclose(r->gz);
	free(r->line);
	free(r->text);
	free(r);
}
