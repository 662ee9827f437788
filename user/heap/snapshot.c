// SPDX-License-Identifier: GPL-2.0
/* snapshot.c - heap snapshots: from the agent, to and from files, to a dsl_heap.
 * The file format is described in snapshot.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "heap/hprof.h"
#include "heap/snapshot.h"
#include "lib/util.h"
#include "heap/walkids.h"

void snapshot_init(struct mt_snapshot *s)
{
	memset(s, 0, sizeof(*s));
}

void snapshot_free(struct mt_snapshot *s)
{
	free(s->objs);
	free(s->refs);
	free(s->roots);
	free(s->prims);
	for (size_t i = 0; i < s->nclasses; i++)
		free(s->classes[i].fields);
	free(s->classes);
	free(s->threads);
	free(s->strings);
	free(s->visits);
	free(s->named);
	free(s->raw);
	dsl_arena_free(s->names);
	ageranges_free(&s->ages);
	memset(s, 0, sizeof(*s));
}

int snapshot_ages_set(struct mt_snapshot *s, const void *body, size_t n, uint32_t nwalks,
		      char *why, size_t wn)
{
	const char *b = body;
	struct mt_ap_hages h;
	struct mt_agerange *r;

	if (n < sizeof(h))
		goto bad;
	memcpy(&h, b, sizeof(h));
	if (h.nwalks != nwalks || !nwalks || (n - sizeof(h)) / sizeof(struct mt_ap_hwalk) < nwalks)
		goto bad;
	r = calloc(nwalks, sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (uint32_t i = 0; i < nwalks; i++) {
		struct mt_ap_hwalk w;

		memcpy(&w, b + sizeof(h) + i * sizeof(w), sizeof(w));
		if (w.gcs > h.gcs || (i && (w.first_id <= r[i - 1].start || w.gcs < r[i - 1].epoch))) {
			free(r);
			goto bad;
		}
		r[i].start = w.first_id;
		r[i].epoch = w.gcs;
	}
	ageranges_free(&s->ages);
	s->ages.r = r;
	s->ages.n = s->ages.cap = nwalks;
	s->ages.epoch = h.gcs;
	s->ages_walks_dropped = h.dropped;
	s->has_ages = true;
	return 0;
bad:
	snprintf(why, wn, "malformed age record");
	return -EBADMSG;
}

uint64_t snapshot_age(const struct mt_snapshot *s, uint64_t id)
{
	return s->has_ages ? ageranges_age(&s->ages, id) : 0;
}

/* Make room for @k more entries of @esz bytes in *p (n used, *cap allocated). */
int snapshot_grow(void *pp, size_t *cap, size_t n, size_t k, size_t esz)
{
	void **p = pp;
	size_t nc;
	void *np;

	if (n + k <= *cap)
		return 0;
	nc = *cap ? *cap : 1024;
	while (nc < n + k) {
		if (nc > SIZE_MAX / 2 / esz)
			return -ENOMEM;
		nc *= 2;
	}
	np = realloc(*p, nc * esz);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = nc;
	return 0;
}

const char *snapshot_strdup(struct mt_snapshot *s, const char *p, size_t n)
{
	if (!s->names) {
		s->names = dsl_arena_new();
		if (!s->names)
			return NULL;
	}
	return dsl_arena_strndup(s->names, p, n);
}

/* Append @k entries of @esz bytes from @src (records are 8-byte aligned). */
#define APPEND(s, arr, src, k)                                                     \
	(!(k) ? 0 :                                                                \
	 snapshot_grow(&(s)->arr, &(s)->cap_##arr, (s)->n##arr, (k),              \
		       sizeof(*(s)->arr)) ? -ENOMEM :                              \
	 (memcpy((s)->arr + (s)->n##arr, (src), (k) * sizeof(*(s)->arr)),          \
	  (s)->n##arr += (k), 0))

static int parse_class(struct mt_snapshot *s, const struct mt_ap_rec *r, const char *b, size_t bl,
		       char *why, size_t wn)
{
	struct mt_ap_hclass h;
	struct mt_snap_class *c;
	const char *p, *end = b + bl, *z;

	if (bl < sizeof(h) + 1)
		goto bad;
	memcpy(&h, b, sizeof(h));
	if (h.nfields != r->arg || h.nfields > bl)
		goto bad;
	p = b + sizeof(h);
	z = memchr(p, '\0', (size_t)(end - p));
	if (!z)
		goto bad;
	if (snapshot_grow(&s->classes, &s->cap_classes, s->nclasses, 1, sizeof(*s->classes)))
		return -ENOMEM;
	c = &s->classes[s->nclasses];
	memset(c, 0, sizeof(*c));
	c->id = h.id;
	c->super = h.super;
	c->loader = h.loader;
	c->sig = snapshot_strdup(s, p, (size_t)(z - p));
	if (!c->sig)
		return -ENOMEM;
	p = z + 1;
	if (h.nfields) {
		c->fields = calloc(h.nfields, sizeof(*c->fields));
		if (!c->fields)
			return -ENOMEM;
	}
	s->nclasses++;
	for (uint32_t i = 0; i < h.nfields; i++) {
		struct mt_snap_field *f = &c->fields[i];

		if (end - p < 6)
			goto bad;
		memcpy(&f->index, p, 4);
		f->type = p[4];
		p += 5;
		z = memchr(p, '\0', (size_t)(end - p));
		if (!z || f->index < 0 || !strchr("BCSIJFDZTL[", f->type) || !f->type)
			goto bad;
		f->name = snapshot_strdup(s, p, (size_t)(z - p));
		if (!f->name)
			return -ENOMEM;
		p = z + 1;
		c->nfields++;
	}
	return 0;
bad:
	snprintf(why, wn, "malformed class record");
	return -EBADMSG;
}

int snapshot_add_records(struct mt_snapshot *s, const void *buf, size_t n, bool keep_raw,
			 char *why, size_t wn)
{
	size_t off = 0;
	int rc;

	if (keep_raw) {
		if (snapshot_grow(&s->raw, &s->raw_cap, s->raw_len, n, 1))
			return -ENOMEM;
		memcpy(s->raw + s->raw_len, buf, n);
		s->raw_len += n;
	}
	for (;;) {
		struct mt_ap_rec r;
		const void *body;
		const char *b;
		size_t bl;
		int err = 0;

		rc = mt_ap_rec_next(buf, n, &off, &r, &body, &bl);
		if (rc == 0)
			return 0;
		if (rc < 0) {
			snprintf(why, wn, "malformed record at byte %zu", off);
			return -EBADMSG;
		}
		b = body;
		switch (r.kind) {
		case MT_AP_HREC_OBJS:
			if (bl / sizeof(struct mt_ap_hobj) < r.arg)
				goto bad;
			err = APPEND(s, objs, b, r.arg);
			break;
		case MT_AP_HREC_REFS:
			if (bl / sizeof(struct mt_ap_href) < r.arg)
				goto bad;
			err = APPEND(s, refs, b, r.arg);
			break;
		case MT_AP_HREC_ROOTS:
			if (bl / sizeof(struct mt_ap_hroot) < r.arg)
				goto bad;
			err = APPEND(s, roots, b, r.arg);
			break;
		case MT_AP_HREC_PRIMS:
			if (bl / sizeof(struct mt_ap_hprim) < r.arg)
				goto bad;
			err = APPEND(s, prims, b, r.arg);
			break;
		case MT_AP_HREC_STRING: {
			struct mt_snap_string st;

			if (bl < 9 || r.arg > bl - 9 || b[8 + r.arg] != '\0')
				goto bad;
			memcpy(&st.obj, b, 8);
			st.s = snapshot_strdup(s, b + 8, r.arg);
			if (!st.s)
				return -ENOMEM;
			err = APPEND(s, strings, &st, 1);
			break;
		}
		case MT_AP_HREC_THREAD: {
			struct mt_snap_thread t;
			const char *z = bl > 8 ? memchr(b + 8, '\0', bl - 8) : NULL;

			if (!z)
				goto bad;
			memcpy(&t.id, b, 8);
			t.name = snapshot_strdup(s, b + 8, (size_t)(z - (b + 8)));
			if (!t.name)
				return -ENOMEM;
			err = APPEND(s, threads, &t, 1);
			break;
		}
		case MT_AP_HREC_CLASS:
			err = parse_class(s, &r, b, bl, why, wn);
			break;
		case MT_AP_HREC_DONE:
			if (bl < sizeof(s->info))
				goto bad;
			memcpy(&s->info, b, sizeof(s->info));
			break;
		case MT_AP_HREC_AGES:
			err = snapshot_ages_set(s, b, bl, r.arg, why, wn);
			break;
		case MT_AP_HREC_VISITS:
			if (bl / sizeof(struct mt_ap_hvisit) < r.arg)
				goto bad;
			err = APPEND(s, visits, b, r.arg);
			break;
		case MT_AP_HREC_NAMED: {
			struct mt_ap_hnamed_hdr h;

			if (bl < sizeof(h) || (bl - sizeof(h)) / sizeof(struct mt_ap_hnamed) < r.arg)
				goto bad;
			memcpy(&h, b, sizeof(h));
			if (s->nnamed && h.next_id != s->named_next)
				goto bad;
			s->named_next = h.next_id;
			err = APPEND(s, named, b + sizeof(h), r.arg);
			break;
		}
		default:
			break; /* a newer agent's record: skipped */
		}
		if (err)
			return err;
		continue;
bad:
		snprintf(why, wn, "malformed record of kind %u", (unsigned)r.kind);
		return -EBADMSG;
	}
}

int snapshot_write(const struct mt_snapshot *s, const char *path)
{
	char hdr[MT_SNAP_HDR] = { 0 }, trl[MT_SNAP_TRAILER], done[8 + sizeof(s->info)];
	uint32_t v = MT_SNAP_VERSION, flags = s->info.flags, pid = (uint32_t)s->pid;
	uint64_t now = real_ns(), body;
	size_t off = 0;
	uLong crc;
	int fd, err;

	mt_ap_rec_put(done, sizeof(done), &off, MT_AP_HREC_DONE, 0, &s->info, sizeof(s->info));
	memcpy(hdr, MT_SNAP_MAGIC, 8);
	memcpy(hdr + 8, &v, 4);
	memcpy(hdr + 12, &flags, 4);
	memcpy(hdr + 16, &now, 8);
	memcpy(hdr + 24, &pid, 4);
	body = s->raw_len + off;
	crc = crc32(0L, Z_NULL, 0);
	for (size_t i = 0; i < s->raw_len; i += 1u << 30) /* crc32 takes a uInt length */
		crc = crc32(crc, (const Bytef *)s->raw + i,
			    (uInt)(s->raw_len - i < (1u << 30) ? s->raw_len - i : (1u << 30)));
	crc = crc32(crc, (const Bytef *)done, (uInt)off);
	memcpy(trl, &body, 8);
	v = (uint32_t)crc;
	memcpy(trl + 8, &v, 4);
	memcpy(trl + 12, MT_SNAP_END, 4);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		p_err("cannot create %s: %s", path, strerror(errno));
		return 1;
	}
	err = write_all(fd, hdr, sizeof(hdr));
	if (!err)
		err = write_all(fd, s->raw, s->raw_len);
	if (!err)
		err = write_all(fd, done, off);
	if (!err)
		err = write_all(fd, trl, sizeof(trl));
	if (close(fd) && !err)
		err = -errno;
	if (err) {
		p_err("cannot write %s: %s", path, strerror(-err));
		unlink(path);
		return 1;
	}
	return 0;
}

int snapshot_read_mem(const void *vbuf, size_t n, struct mt_snapshot *s, char *why, size_t wn)
{
	const char *buf = vbuf;
	uint32_t v, crc_file, pid;
	uint64_t body;
	uLong crc;
	int err;

	snapshot_init(s);
	s->source = "snapshot";
	if (n < 8 || memcmp(buf, MT_SNAP_MAGIC, 8)) {
		snprintf(why, wn, "not a memtrace snapshot (bad magic)");
		return -EINVAL;
	}
	if (n < MT_SNAP_HDR + MT_SNAP_TRAILER) {
		snprintf(why, wn, "truncated: %zu bytes, shorter than header and trailer", n);
		return -EINVAL;
	}
	memcpy(&v, buf + 8, 4);
	if (v != MT_SNAP_VERSION) {
		snprintf(why, wn, "snapshot format version %u; this memtrace reads version %d", v,
			 MT_SNAP_VERSION);
		return -EINVAL;
	}
	memcpy(&s->created_ns, buf + 16, 8);
	memcpy(&pid, buf + 24, 4);
	s->pid = (int)pid;
	memcpy(&body, buf + n - MT_SNAP_TRAILER, 8);
	memcpy(&crc_file, buf + n - 8, 4);
	if (memcmp(buf + n - 4, MT_SNAP_END, 4) ||
	    body != n - MT_SNAP_HDR - MT_SNAP_TRAILER) {
		snprintf(why, wn, "truncated or extended: the trailer does not match the file's "
			 "size (%zu bytes)", n);
		return -EINVAL;
	}
	crc = crc32(0L, Z_NULL, 0);
	for (size_t i = 0; i < body; i += 1u << 30)
		crc = crc32(crc, (const Bytef *)buf + MT_SNAP_HDR + i,
			    (uInt)(body - i < (1u << 30) ? body - i : (1u << 30)));
	if ((uint32_t)crc != crc_file) {
		snprintf(why, wn, "checksum mismatch (file %08x, computed %08x): the file is "
			 "corrupt", crc_file, (uint32_t)crc);
		return -EINVAL;
	}
	err = snapshot_add_records(s, buf + MT_SNAP_HDR, (size_t)body, false, why, wn);
	if (!err) /* an untagged walk's records: ids now */
		err = walkids_resolve(s, NULL, 0, why, wn);
	if (err == -EBADMSG || err == -EPROTO)
		err = -EINVAL;
	if (err == -ENOMEM)
		snprintf(why, wn, "out of memory");
	if (err)
		snapshot_free(s);
	else
		s->source = "snapshot";
	return err;
}

int snapshot_load(const char *path, struct mt_snapshot *s)
{
	struct stat st;
	char why[160];
	void *map;
	int fd, err;

	snapshot_init(s);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		p_err("cannot open %s: %s", path, strerror(errno));
		return 1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		p_err("%s is not a regular file", path);
		close(fd);
		return 1;
	}
	if (st.st_size == 0) {
		p_err("%s is empty: not a memtrace snapshot or an HPROF dump", path);
		close(fd);
		return 1;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		p_err("cannot map %s: %s", path, strerror(errno));
		return 1;
	}
	if (hprof_is(map, (size_t)st.st_size))
		err = hprof_read_mem(map, (size_t)st.st_size, s, why, sizeof(why));
	else
		err = snapshot_read_mem(map, (size_t)st.st_size, s, why, sizeof(why));
	munmap(map, (size_t)st.st_size);
	if (err) {
		p_err("%s: %s", path, why);
		return 1;
	}
	return 0;
}

/* Print the pause and what the walk saw, once, on stderr. */
void snapshot_print_walk(const struct mt_snapshot *s)
{
	char b[32];

	if (!strcmp(s->source, "live"))
		p_info("heap walk paused JVM %d for %s (%s; %llu objects, %llu references, "
		       "%u classes%s)", s->pid, fmt_ns(s->info.pause_ns, b, sizeof(b)),
		       s->pause_from_jvm ? "the JVM's safepoint time" : "timed by the agent",
		       (unsigned long long)s->info.objects, (unsigned long long)s->info.refs,
		       s->info.nclasses, s->info.partial ? "; PARTIAL" : "");
	if (s->info.partial)
		p_warn("the heap walk was cut short (--max-pause or out of memory): the result "
		       "covers only part of the heap");
	if (s->info.mismatches)
		p_warn("%llu field values had an unexpected type and were left out",
		       (unsigned long long)s->info.mismatches);
}

const char *snapshot_java_name(const char *sig, char *buf, size_t n)
{
	static const char prim[] = "ZBCSIJFD";
	static const char *const pname[] = { "boolean", "byte", "char", "short", "int", "long",
					     "float", "double" };
	int dims = 0;
	size_t o;
	const char *p = sig, *q;

	while (*p == '[')
		dims++, p++;
	if (*p == 'L' && (q = strchr(p, ';'))) {
		snprintf(buf, n, "%.*s", (int)(q - p - 1), p + 1);
	} else if (dims && p[0] && strchr(prim, p[0]) && !p[1]) {
		snprintf(buf, n, "%s", pname[strchr(prim, p[0]) - prim]);
	} else {
		snprintf(buf, n, "%s", sig);
		dims = 0;
	}
	for (char *c = buf; *c; c++)
		if (*c == '/')
			*c = '.';
	o = strlen(buf);
	for (int i = 0; i < dims && o + 2 < n; i++, o += 2)
		memcpy(buf + o, "[]", 3);
	return buf;
}

/* ===== id → index maps (ids are dense from the agent, addresses from hprof) ===== */

struct idmap64 {
	uint64_t *keys;  /* NULL: direct mode, vals[key] for keys <= mask */
	uint32_t *vals;
	size_t mask;
};

/* A map for n keys; keys up to maxkey, when that is small enough, index an
 * array directly (the agent's ids are dense from 1). */
static int idmap_init(struct idmap64 *m, size_t n, uint64_t maxkey)
{
	size_t cap = 16;

	if (maxkey <= 4 * (uint64_t)n + 4096) {
		m->keys = NULL;
		m->mask = (size_t)maxkey;
		m->vals = malloc(((size_t)maxkey + 1) * sizeof(*m->vals));
		if (m->vals)
			memset(m->vals, 0xff, ((size_t)maxkey + 1) * sizeof(*m->vals));
		return m->vals ? 0 : -ENOMEM;
	}
	while (cap < n * 2 + 16)
		cap *= 2;
	m->keys = calloc(cap, sizeof(*m->keys));
	m->vals = malloc(cap * sizeof(*m->vals));
	m->mask = cap - 1;
	return m->keys && m->vals ? 0 : -ENOMEM;
}

static void idmap_free(struct idmap64 *m)
{
	free(m->keys);
	free(m->vals);
}

static size_t idhash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k;
}

/* Key 0 is "no object" and is never stored. The first value put wins. */
static void idmap_put(struct idmap64 *m, uint64_t k, uint32_t v)
{
	size_t i = idhash(k) & m->mask;

	if (!k)
		return;
	if (!m->keys) {
		if (k <= m->mask && m->vals[k] == DSL_NOOBJ)
			m->vals[k] = v;
		return;
	}
	while (m->keys[i] && m->keys[i] != k)
		i = (i + 1) & m->mask;
	if (m->keys[i])
		return;
	m->keys[i] = k;
	m->vals[i] = v;
}

static uint32_t idmap_get(const struct idmap64 *m, uint64_t k)
{
	size_t i = idhash(k) & m->mask;

	if (!k)
		return DSL_NOOBJ;
	if (!m->keys)
		return k <= m->mask ? m->vals[k] : DSL_NOOBJ;
	while (m->keys[i]) {
		if (m->keys[i] == k)
			return m->vals[i];
		i = (i + 1) & m->mask;
	}
	return DSL_NOOBJ;
}

/* ===== snapshot → dsl_heap ===== */

static void *own(struct mt_heapview *hv, size_t n, size_t esz)
{
	void *p;

	if (snapshot_grow(&hv->owned, &hv->cap_owned, hv->nowned, 1, sizeof(void *)))
		return NULL;
	p = calloc(n ? n : 1, esz);
	if (p)
		hv->owned[hv->nowned++] = p;
	return p;
}

void heapview_free(struct mt_heapview *hv)
{
	for (size_t i = 0; i < hv->nowned; i++)
		free(hv->owned[i]);
	free(hv->owned);
	memset(hv, 0, sizeof(*hv));
}

static enum dsl_field_kind field_kind(char t)
{
	switch (t) {
	case 'B': case 'C': case 'S': case 'I': case 'J': return DSL_FK_INT;
	case 'F': case 'D': return DSL_FK_FLOAT;
	case 'Z': return DSL_FK_BOOL;
	case 'T': return DSL_FK_STRING;
	default: return DSL_FK_REF;
	}
}

static int ref_kind(uint32_t k)
{
	static const int8_t map[] = {
		[1] = DSL_REF_CLASS, [2] = DSL_REF_FIELD, [3] = DSL_REF_ARRAY_ELEMENT,
		[4] = DSL_REF_CLASS_LOADER, [5] = DSL_REF_SIGNERS, [6] = DSL_REF_PROTECTION_DOMAIN,
		[7] = DSL_REF_INTERFACE, [8] = DSL_REF_STATIC_FIELD, [9] = DSL_REF_CONSTANT_POOL,
		[10] = DSL_REF_SUPERCLASS, [21] = DSL_ROOT_JNI_GLOBAL, [22] = DSL_ROOT_SYSTEM_CLASS,
		[23] = DSL_ROOT_MONITOR, [24] = DSL_ROOT_STACK_LOCAL, [25] = DSL_ROOT_JNI_LOCAL,
		[26] = DSL_ROOT_THREAD, [27] = DSL_ROOT_OTHER,
	};

	if (k >= MT_ARRAY_SIZE(map) || (k > 10 && k < 21) || k == 0)
		return -1;
	return map[k];
}

static bool name_needed(const struct dsl_needs *needs, const char *name)
{
	if (!needs)
		return true;
	for (int i = 0; i < needs->nfields; i++)
		if (!strcmp(needs->fields[i], name))
			return true;
	return false;
}

struct cls_aux {
	int32_t *slot;  /* [JVMTI index] -> field slot, -1 */
	int32_t nslot;
	bool values;    /* objects of this class carry values */
};

int snapshot_heap(const struct mt_snapshot *s, const struct dsl_needs *needs,
		  struct mt_heapview *hv, char *why, size_t wn)
{
	struct idmap64 objmap = { 0 }, clsmap = { 0 }, loadmap = { 0 }, strmap = { 0 };
	struct dsl_hobject *objs;
	struct dsl_hclass *cls;
	struct dsl_hloader *loaders;
	struct dsl_hthread *threads;
	struct dsl_hroot *roots;
	struct dsl_href *refs;
	struct cls_aux *aux = NULL;
	uint32_t *rcount = NULL, nroots = 0, nloaders = 0, unknown, ncls;
	size_t nrefs = 0;
	uint64_t maxid = 0;
	int err = -ENOMEM;

	memset(hv, 0, sizeof(*hv));
	if (s->nobjs >= DSL_NOOBJ || s->nclasses >= DSL_NOOBJ - 1 || s->nrefs >= DSL_NOOBJ ||
	    s->nroots >= DSL_NOOBJ) {
		snprintf(why, wn, "the snapshot is too large (more than 2^32 entries)");
		return -EINVAL;
	}
	ncls = (uint32_t)s->nclasses + 1; /* + "<unknown class>" */
	unknown = ncls - 1;
	for (size_t i = 0; i < s->nobjs; i++)
		maxid = s->objs[i].id > maxid ? s->objs[i].id : maxid;
	for (size_t i = 0; i < s->nclasses; i++) {
		maxid = s->classes[i].id > maxid ? s->classes[i].id : maxid;
		maxid = s->classes[i].loader > maxid ? s->classes[i].loader : maxid;
	}
	for (size_t i = 0; i < s->nstrings; i++)
		maxid = s->strings[i].obj > maxid ? s->strings[i].obj : maxid;
	if (idmap_init(&objmap, s->nobjs, maxid) || idmap_init(&clsmap, ncls, maxid) ||
	    idmap_init(&loadmap, s->nclasses, maxid) || idmap_init(&strmap, s->nstrings, maxid))
		goto out;
	objs = own(hv, s->nobjs, sizeof(*objs));
	cls = own(hv, ncls, sizeof(*cls));
	loaders = own(hv, s->nclasses + 1, sizeof(*loaders));
	threads = own(hv, s->nthreads, sizeof(*threads));
	roots = own(hv, s->nroots, sizeof(*roots));
	aux = calloc(ncls, sizeof(*aux));
	rcount = calloc(s->nobjs + 1, sizeof(*rcount));
	if (!objs || !cls || !loaders || !threads || !roots || !aux || !rcount)
		goto out;
	for (size_t i = 0; i < s->nobjs; i++)
		idmap_put(&objmap, s->objs[i].id, (uint32_t)i);
	for (size_t i = 0; i < s->nclasses; i++)
		idmap_put(&clsmap, s->classes[i].id, (uint32_t)i);
	for (size_t i = 0; i < s->nstrings; i++)
		idmap_put(&strmap, s->strings[i].obj, (uint32_t)i);
	/* classes, loaders */
	for (size_t i = 0; i < s->nclasses; i++) {
		const struct mt_snap_class *c = &s->classes[i];
		struct dsl_hfield *f = own(hv, c->nfields, sizeof(*f));
		char nb[1024];
		char *name;
		int32_t maxi = -1;

		if (!f)
			goto out;
		if (c->name) {
			name = (char *)c->name;
		} else {
			snapshot_java_name(c->sig, nb, sizeof(nb));
			name = own(hv, strlen(nb) + 1, 1);
			if (!name)
				goto out;
			memcpy(name, nb, strlen(nb) + 1);
		}
		cls[i].name = name;
		cls[i].obj = idmap_get(&objmap, c->id);
		cls[i].super = c->super ? idmap_get(&clsmap, c->super) : DSL_NOOBJ;
		cls[i].loader = DSL_NOOBJ;
		if (c->loader) {
			uint32_t li = idmap_get(&loadmap, c->loader);

			if (li == DSL_NOOBJ) {
				li = nloaders++;
				idmap_put(&loadmap, c->loader, li);
				loaders[li].obj = idmap_get(&objmap, c->loader);
				loaders[li].id = c->loader;
			}
			cls[i].loader = li;
		}
		for (uint32_t k = 0; k < c->nfields; k++) {
			f[k].name = c->fields[k].name;
			f[k].kind = field_kind(c->fields[k].type);
			if (c->fields[k].index > maxi)
				maxi = c->fields[k].index;
			if (name_needed(needs, f[k].name))
				aux[i].values = true;
		}
		cls[i].fields = f;
		cls[i].nfields = c->nfields;
		if (maxi >= 0 && maxi < (1 << 20)) {
			aux[i].slot = malloc(((size_t)maxi + 1) * sizeof(int32_t));
			if (!aux[i].slot)
				goto out;
			aux[i].nslot = maxi + 1;
			memset(aux[i].slot, 0xff, ((size_t)maxi + 1) * sizeof(int32_t));
			for (uint32_t k = 0; k < c->nfields; k++)
				aux[i].slot[c->fields[k].index] = (int32_t)k;
		}
	}
	cls[unknown].name = "<unknown class>";
	cls[unknown].obj = cls[unknown].super = cls[unknown].loader = DSL_NOOBJ;
	/* objects */
	for (size_t i = 0; i < s->nobjs; i++) {
		const struct mt_ap_hobj *o = &s->objs[i];
		uint32_t ci = idmap_get(&clsmap, o->cls);

		objs[i].id = o->id;
		objs[i].cls = ci == DSL_NOOBJ ? unknown : ci;
		objs[i].size = o->size;
		objs[i].length = o->length < 0 ? -1 : o->length;
		if (s->has_ages) {
			uint64_t age = snapshot_age(s, o->id);

			objs[i].age = age > UINT32_MAX ? UINT32_MAX : (uint32_t)age;
		}
		if (aux[objs[i].cls].values && cls[objs[i].cls].nfields) {
			const struct dsl_hclass *c = &cls[objs[i].cls];
			struct dsl_hval *v = own(hv, c->nfields, sizeof(*v));

			if (!v)
				goto out;
			for (uint32_t k = 0; k < c->nfields; k++) {
				switch (c->fields[k].kind) {
				case DSL_FK_INT: v[k].kind = DSL_HV_INT; break;
				case DSL_FK_FLOAT: v[k].kind = DSL_HV_FLOAT; break;
				case DSL_FK_BOOL: v[k].kind = DSL_HV_BOOL; break;
				default: break;
				}
			}
			objs[i].values = v;
			hv->value_objects++;
		}
	}
	/* primitive values */
	for (size_t i = 0; i < s->nprims; i++) {
		const struct mt_ap_hprim *p = &s->prims[i];
		uint32_t oi = idmap_get(&objmap, p->obj);
		struct dsl_hval *v;
		int32_t slot;

		if (oi == DSL_NOOBJ || !objs[oi].values)
			continue;
		if (p->index < 0 || p->index >= aux[objs[oi].cls].nslot)
			continue;
		slot = aux[objs[oi].cls].slot[p->index];
		if (slot < 0)
			continue;
		v = (struct dsl_hval *)&objs[oi].values[slot];
		switch (cls[objs[oi].cls].fields[slot].kind) {
		case DSL_FK_INT: v->u.i = (int64_t)p->bits; break;
		case DSL_FK_FLOAT: memcpy(&v->u.f, &p->bits, 8); break;
		case DSL_FK_BOOL: v->u.b = p->bits != 0; break;
		default: break;
		}
	}
	/* references: counted per referrer, then placed (a stable counting sort) */
	for (size_t i = 0; i < s->nrefs; i++) {
		uint32_t from = idmap_get(&objmap, s->refs[i].from);
		uint32_t to = idmap_get(&objmap, s->refs[i].to);
		int k = ref_kind(s->refs[i].kind);

		if (from == DSL_NOOBJ || to == DSL_NOOBJ || k < 0 || DSL_REF_IS_ROOT(k))
			continue;
		rcount[from]++;
		nrefs++;
	}
	refs = own(hv, nrefs, sizeof(*refs));
	if (!refs)
		goto out;
	{
		uint32_t acc = 0;

		for (size_t i = 0; i < s->nobjs; i++) {
			objs[i].ref_first = acc;
			acc += rcount[i];
			rcount[i] = objs[i].ref_first;
		}
	}
	for (size_t i = 0; i < s->nrefs; i++) {
		const struct mt_ap_href *r = &s->refs[i];
		uint32_t from = idmap_get(&objmap, r->from);
		uint32_t to = idmap_get(&objmap, r->to);
		int k = ref_kind(r->kind);
		struct dsl_href *d;
		const struct cls_aux *a;
		int32_t slot = -1;

		if (from == DSL_NOOBJ || to == DSL_NOOBJ || k < 0 || DSL_REF_IS_ROOT(k))
			continue;
		d = &refs[rcount[from]++];
		objs[from].nrefs++;
		d->to = to;
		d->kind = (uint8_t)k;
		a = &aux[objs[from].cls];
		if (k == DSL_REF_FIELD && r->index >= 0 && r->index < a->nslot)
			slot = a->slot[r->index];
		if (slot < 0)
			continue;
		d->field = cls[objs[from].cls].fields[slot].name;
		if (objs[from].values) {
			struct dsl_hval *v = (struct dsl_hval *)&objs[from].values[slot];

			if (cls[objs[from].cls].fields[slot].kind == DSL_FK_STRING) {
				uint32_t si = idmap_get(&strmap, r->to);

				if (si != DSL_NOOBJ) {
					v->kind = DSL_HV_STR;
					v->u.s = s->strings[si].s;
				}
			} else {
				v->kind = DSL_HV_REF;
				v->u.ref = to;
			}
		}
	}
	for (size_t i = 0; i < s->nroots; i++) {
		uint32_t to = idmap_get(&objmap, s->roots[i].to);
		int k = ref_kind(s->roots[i].kind);

		if (to == DSL_NOOBJ || k < 0 || !DSL_REF_IS_ROOT(k))
			continue;
		roots[nroots].obj = to;
		roots[nroots].kind = (uint8_t)k;
		nroots++;
	}
	{
		uint32_t nt = 0;

		for (size_t i = 0; i < s->nthreads; i++) {
			uint32_t o = idmap_get(&objmap, s->threads[i].id);

			if (o == DSL_NOOBJ)
				continue;
			threads[nt].obj = o;
			threads[nt].name = s->threads[i].name;
			nt++;
		}
		hv->heap.nthreads = nt;
	}
	hv->heap.objects = objs;
	hv->heap.nobjects = (uint32_t)s->nobjs;
	hv->heap.classes = cls;
	hv->heap.nclasses = ncls;
	hv->heap.refs = refs;
	hv->heap.nrefs = (uint32_t)nrefs;
	hv->heap.roots = roots;
	hv->heap.nroots = nroots;
	hv->heap.loaders = loaders;
	hv->heap.nloaders = nloaders;
	hv->heap.threads = threads;
	if (!s->has_ages)
		hv->heap.no_age = s->source && !strcmp(s->source, "hprof") ?
			"a heap dump (.hprof) carries no GC history" :
			s->source && !strcmp(s->source, "live") ?
			"the agent in this JVM sends no GC history (an older memtrace agent)" :
			"this snapshot carries no GC history (saved by an older memtrace)";
	err = 0;
out:
	if (err == -ENOMEM)
		snprintf(why, wn, "out of memory building the heap");
	if (aux)
		for (uint32_t i = 0; i < ncls; i++)
			free(aux[i].slot);
	free(aux);
	free(rcount);
	idmap_free(&objmap);
	idmap_free(&clsmap);
	idmap_free(&loadmap);
	idmap_free(&strmap);
	if (err)
		heapview_free(hv);
	return err;
}
