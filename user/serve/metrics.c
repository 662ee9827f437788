// SPDX-License-Identifier: GPL-2.0
/* metrics.c - metric families, labelled series, OpenMetrics and JSON output. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "serve/metrics.h"
#include "lib/util.h"

struct series {
	int nlabels;
	char *key[MT_METRICS_MAX_LABELS]; /* sorted by name */
	char *val[MT_METRICS_MAX_LABELS];
	double value;                     /* counter, gauge; histogram: sum */
	uint64_t count;                   /* histogram */
	uint64_t *buckets;                /* histogram: nbounds + 1, not cumulative */
};

struct family {
	char *name, *unit, *help;
	enum metric_type type;
	double bounds[MT_METRICS_MAX_BUCKETS];
	int nbounds;
	struct series *s;
	size_t n, cap;
};

struct metrics {
	pthread_mutex_t lock;
	struct family *f;
	size_t n, cap;
};

static bool valid_name(const char *s, bool colon)
{
	if (!s || !*s)
		return false;
	for (const char *c = s; *c; c++) {
		bool alpha = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' ||
			     (colon && *c == ':');

		if (!alpha && !(c != s && *c >= '0' && *c <= '9'))
			return false;
	}
	return true;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

struct metrics *metrics_new(void)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&m->lock, NULL);
	return m;
}

static void series_clear(struct series *s)
{
	for (int i = 0; i < s->nlabels; i++) {
		free(s->key[i]);
		free(s->val[i]);
	}
	free(s->buckets);
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		struct family *f = &m->f[i];

		for (size_t j = 0; j < f->n; j++)
			series_clear(&f->s[j]);
		free(f->s);
		free(f->name);
		free(f->unit);
		free(f->help);
	}
	free(m->f);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static struct family *find_family(struct metrics *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->f[i].name, name))
			return &m->f[i];
	return NULL;
}

static int do_register(struct metrics *m, const char *name, enum metric_type type,
		       const char *unit, const char *help, const double *bounds, int nb)
{
	struct family *f;
	char suffix[64];

	if (!valid_name(name, true) || (unit && *unit && !valid_name(unit, false)))
		return -EINVAL;
	if (unit && *unit) {
		snprintf(suffix, sizeof(suffix), "_%s", unit);
		if (!ends_with(name, suffix))
			return -EINVAL;
	}
	if (type == METRIC_COUNTER && ends_with(name, "_total"))
		return -EINVAL;
	if (nb < 0 || nb > MT_METRICS_MAX_BUCKETS)
		return -EINVAL;
	for (int i = 0; i < nb; i++)
		if (!isfinite(bounds[i]) || (i && bounds[i] <= bounds[i - 1]))
			return -EINVAL;
	f = find_family(m, name);
	if (f)
		return f->type == type ? 0 : -EEXIST;
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		struct family *nf = realloc(m->f, cap * sizeof(*nf));

		if (!nf)
			return -ENOMEM;
		m->f = nf;
		m->cap = cap;
	}
	f = &m->f[m->n];
	memset(f, 0, sizeof(*f));
	f->name = strdup(name);
	f->unit = strdup(unit ? unit : "");
	f->help = strdup(help ? help : "");
	if (!f->name || !f->unit || !f->help) {
		free(f->name);
		free(f->unit);
		free(f->help);
		return -ENOMEM;
	}
	f->type = type;
	f->nbounds = nb;
	if (nb)
		memcpy(f->bounds, bounds, (size_t)nb * sizeof(*bounds));
	m->n++;
	return 0;
}

int metrics_register(struct metrics *m, const char *name, enum metric_type type,
		     const char *unit, const char *help)
{
	int err;

	if (type == METRIC_HISTOGRAM)
		return -EINVAL;
	pthread_mutex_lock(&m->lock);
	err = do_register(m, name, type, unit, help, NULL, 0);
	pthread_mutex_unlock(&m->lock);
	return err;
}

int metrics_register_histogram(struct metrics *m, const char *name, const char *unit,
			       const char *help, const double *bounds, int n)
{
	int err;

	pthread_mutex_lock(&m->lock);
	err = do_register(m, name, METRIC_HISTOGRAM, unit, help, bounds, n);
	pthread_mutex_unlock(&m->lock);
	return err;
}

/* Labels as sorted (name, value) pointer pairs, empty values dropped. */
struct labelset {
	int n;
	const char *key[MT_METRICS_MAX_LABELS];
	const char *val[MT_METRICS_MAX_LABELS];
};

static int labelset_make(const char *const *labels, struct labelset *ls)
{
	ls->n = 0;
	for (int i = 0; labels && labels[i]; i += 2) {
		const char *k = labels[i], *v = labels[i + 1];
		int j;

		if (!v || !valid_name(k, false) || !strcmp(k, "le"))
			return -EINVAL;
		if (!*v)
			continue;
		if (ls->n == MT_METRICS_MAX_LABELS)
			return -EINVAL;
		for (j = ls->n; j > 0 && strcmp(ls->key[j - 1], k) > 0; j--) {
			ls->key[j] = ls->key[j - 1];
			ls->val[j] = ls->val[j - 1];
		}
		if (j > 0 && !strcmp(ls->key[j - 1], k))
			return -EINVAL; /* duplicate label name */
		ls->key[j] = k;
		ls->val[j] = v;
		ls->n++;
	}
	return 0;
}

static bool series_matches(const struct series *s, const struct labelset *ls)
{
	if (s->nlabels != ls->n)
		return false;
	for (int i = 0; i < ls->n; i++)
		if (strcmp(s->key[i], ls->key[i]) || strcmp(s->val[i], ls->val[i]))
			return false;
	return true;
}

/* lookup - the series of family @name with @labels, created if missing. */
static int lookup(struct metrics *m, const char *name, enum metric_type type,
		  const char *const *labels, struct series **out)
{
	struct family *f = find_family(m, name);
	struct labelset ls;
	struct series *s;
	int err;

	if (!f)
		return -ENOENT;
	if (f->type != type)
		return -EINVAL;
	err = labelset_make(labels, &ls);
	if (err)
		return err;
	for (size_t i = 0; i < f->n; i++)
		if (series_matches(&f->s[i], &ls)) {
			*out = &f->s[i];
			return 0;
		}
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 8;
		struct series *ns = realloc(f->s, cap * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		f->s = ns;
		f->cap = cap;
	}
	s = &f->s[f->n];
	memset(s, 0, sizeof(*s));
	if (type == METRIC_HISTOGRAM) {
		s->buckets = calloc((size_t)f->nbounds + 1, sizeof(*s->buckets));
		if (!s->buckets)
			return -ENOMEM;
	}
	for (int i = 0; i < ls.n; i++) {
		s->key[i] = strdup(ls.key[i]);
		s->val[i] = strdup(ls.val[i]);
		s->nlabels = i + 1;
		if (!s->key[i] || !s->val[i]) {
			series_clear(s);
			return -ENOMEM;
		}
	}
	f->n++;
	*out = s;
	return 0;
}

int metrics_gauge_set(struct metrics *m, const char *name, const char *const *labels, double v)
{
	struct series *s;
	int err;

	pthread_mutex_lock(&m->lock);
	err = lookup(m, name, METRIC_GAUGE, labels, &s);
	if (!err)
		s->value = v;
	pthread_mutex_unlock(&m->lock);
	return err;
}

int metrics_counter_add(struct metrics *m, const char *name, const char *const *labels,
			double delta)
{
	struct series *s;
	int err;

	if (!(delta >= 0))
		return -EINVAL;
	pthread_mutex_lock(&m->lock);
	err = lookup(m, name, METRIC_COUNTER, labels, &s);
	if (!err)
		s->value += delta;
	pthread_mutex_unlock(&m->lock);
	return err;
}

int metrics_counter_set(struct metrics *m, const char *name, const char *const *labels,
			double v)
{
	struct series *s;
	int err;

	pthread_mutex_lock(&m->lock);
	err = lookup(m, name, METRIC_COUNTER, labels, &s);
	if (!err && !(v >= s->value))
		err = -EINVAL;
	if (!err)
		s->value = v;
	pthread_mutex_unlock(&m->lock);
	return err;
}

int metrics_histogram_observe(struct metrics *m, const char *name, const char *const *labels,
			      double v)
{
	struct series *s;
	int err;

	if (isnan(v))
		return -EINVAL;
	pthread_mutex_lock(&m->lock);
	err = lookup(m, name, METRIC_HISTOGRAM, labels, &s);
	if (!err) {
		const struct family *f = find_family(m, name);
		int b = 0;

		while (b < f->nbounds && v > f->bounds[b])
			b++;
		s->buckets[b]++;
		s->count++;
		s->value += v;
	}
	pthread_mutex_unlock(&m->lock);
	return err;
}

/* remove_in - drop the series of @f whose label @key equals @value. */
static int remove_in(struct family *f, const char *key, const char *value)
{
	int removed = 0;
	size_t k = 0;

	for (size_t j = 0; j < f->n; j++) {
		bool match = false;

		for (int l = 0; l < f->s[j].nlabels; l++)
			if (!strcmp(f->s[j].key[l], key) && !strcmp(f->s[j].val[l], value))
				match = true;
		if (match) {
			series_clear(&f->s[j]);
			removed++;
		} else {
			f->s[k++] = f->s[j];
		}
	}
	f->n = k;
	return removed;
}

int metrics_remove_series(struct metrics *m, const char *key, const char *value)
{
	int removed = 0;

	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->n; i++)
		removed += remove_in(&m->f[i], key, value);
	pthread_mutex_unlock(&m->lock);
	return removed;
}

int metrics_remove_family_series(struct metrics *m, const char *name, const char *key,
				 const char *value)
{
	struct family *f;
	int removed = 0;

	pthread_mutex_lock(&m->lock);
	f = find_family(m, name);
	if (f)
		removed = remove_in(f, key, value);
	pthread_mutex_unlock(&m->lock);
	return removed;
}

int metrics_series_count(struct metrics *m)
{
	int n = 0;

	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->n; i++)
		n += (int)m->f[i].n;
	pthread_mutex_unlock(&m->lock);
	return n;
}

/* write_number - integers exactly, other values with round-trip precision. */
static void write_number(FILE *f, double v)
{
	if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", f);
	else if (isnan(v))
		fputs("NaN", f);
	else if (v == floor(v) && fabs(v) < 1e15)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.17g", v);
}

/* write_label_value - OpenMetrics escaping: backslash, quote, newline. */
static void write_label_value(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			putc(*s, f);
	}
}

/* write_help - HELP text escaping: backslash and newline. */
static void write_help(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			putc(*s, f);
	}
}

/* write_sample - "name{labels[,le="x"]} value\n". */
static void write_sample(FILE *f, const char *name, const char *suffix, const struct series *s,
			 const char *le, double v)
{
	fprintf(f, "%s%s", name, suffix);
	if (s->nlabels || le) {
		putc('{', f);
		for (int i = 0; i < s->nlabels; i++) {
			fprintf(f, "%s%s=\"", i ? "," : "", s->key[i]);
			write_label_value(f, s->val[i]);
			putc('"', f);
		}
		if (le)
			fprintf(f, "%sle=\"%s\"", s->nlabels ? "," : "", le);
		putc('}', f);
	}
	putc(' ', f);
	write_number(f, v);
	putc('\n', f);
}

static const char *type_name(enum metric_type t)
{
	return t == METRIC_COUNTER ? "counter" : t == METRIC_GAUGE ? "gauge" : "histogram";
}

int metrics_write_openmetrics(struct metrics *m, FILE *f)
{
	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->n; i++) {
		const struct family *fam = &m->f[i];

		fprintf(f, "# TYPE %s %s\n", fam->name, type_name(fam->type));
		if (fam->unit[0])
			fprintf(f, "# UNIT %s %s\n", fam->name, fam->unit);
		if (fam->help[0]) {
			fprintf(f, "# HELP %s ", fam->name);
			write_help(f, fam->help);
			putc('\n', f);
		}
		for (size_t j = 0; j < fam->n; j++) {
			const struct series *s = &fam->s[j];
			uint64_t cum = 0;
			char le[64];

			switch (fam->type) {
			case METRIC_COUNTER:
				write_sample(f, fam->name, "_total", s, NULL, s->value);
				break;
			case METRIC_GAUGE:
				write_sample(f, fam->name, "", s, NULL, s->value);
				break;
			case METRIC_HISTOGRAM:
				for (int b = 0; b <= fam->nbounds; b++) {
					cum += s->buckets[b];
					if (b < fam->nbounds)
						snprintf(le, sizeof(le), "%g", fam->bounds[b]);
					else
						snprintf(le, sizeof(le), "+Inf");
					write_sample(f, fam->name, "_bucket", s, le, (double)cum);
				}
				write_sample(f, fam->name, "_count", s, NULL, (double)s->count);
				write_sample(f, fam->name, "_sum", s, NULL, s->value);
				break;
			}
		}
	}
	pthread_mutex_unlock(&m->lock);
	fputs("# EOF\n", f);
	return fflush(f) || ferror(f) ? -EIO : 0;
}

int metrics_write_json(struct metrics *m, FILE *f)
{
	pthread_mutex_lock(&m->lock);
	fputs("{\"metrics\":[", f);
	for (size_t i = 0; i < m->n; i++) {
		const struct family *fam = &m->f[i];

		fprintf(f, "%s{\"name\":", i ? "," : "");
		json_str(f, fam->name);
		fprintf(f, ",\"type\":\"%s\",\"unit\":", type_name(fam->type));
		json_str(f, fam->unit);
		fputs(",\"help\":", f);
		json_str(f, fam->help);
		fputs(",\"series\":[", f);
		for (size_t j = 0; j < fam->n; j++) {
			const struct series *s = &fam->s[j];

			fprintf(f, "%s{\"labels\":{", j ? "," : "");
			for (int l = 0; l < s->nlabels; l++) {
				if (l)
					putc(',', f);
				json_str(f, s->key[l]);
				putc(':', f);
				json_str(f, s->val[l]);
			}
			putc('}', f);
			if (fam->type != METRIC_HISTOGRAM) {
				fputs(",\"value\":", f);
				write_number(f, s->value);
			} else {
				uint64_t cum = 0;

				fprintf(f, ",\"count\":%llu,\"sum\":", (unsigned long long)s->count);
				write_number(f, s->value);
				fputs(",\"buckets\":[", f);
				for (int b = 0; b <= fam->nbounds; b++) {
					cum += s->buckets[b];
					fprintf(f, "%s{\"le\":", b ? "," : "");
					if (b < fam->nbounds)
						write_number(f, fam->bounds[b]);
					else
						fputs("\"+Inf\"", f);
					fprintf(f, ",\"count\":%llu}", (unsigned long long)cum);
				}
				putc(']', f);
			}
			putc('}', f);
		}
		fputs("]}", f);
	}
	fputs("]}\n", f);
	pthread_mutex_unlock(&m->lock);
	return fflush(f) || ferror(f) ? -EIO : 0;
}
