// SPDX-License-Identifier: GPL-2.0
/*
 * klassname.c - class names of a live JVM's Klass* values.
 *
 * A Klass points to a Symbol: { u4 _hash_and_refcount; u2 _length; u1 _body[] }
 * (JDK 17 and 25 alike, but offsets come from VMStructs). The cache is an
 * open-addressing table keyed by Klass* with linear probing and
 * backward-shift deletion, so invalidation leaves no tombstones.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/hotspot.h"
#include "jvm/klassname.h"
#include "lib/hash.h"
#include "lib/util.h"
#include "jvm/vmstructs.h"

int klassname_layout(const struct mt_vmstructs *vs, struct mt_klass_layout *l)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	/* "u2" in JDK 17 and 25; take the table's word for it if it changes. */
	uint64_t size = hs->symbol_length.size ? hs->symbol_length.size : 2;

	l->klass_name = hs->klass_name;
	l->sym_body = hs->symbol_body;
	l->sym_length = hs->symbol_length.off;
	if (size != 2 && size != 4)
		return -EINVAL;
	l->length_size = (unsigned)size;
	return 0;
}

/* Java name of a primitive array element descriptor, or NULL. */
static const char *prim_name(char c)
{
	switch (c) {
	case 'B': return "byte";
	case 'C': return "char";
	case 'D': return "double";
	case 'F': return "float";
	case 'I': return "int";
	case 'J': return "long";
	case 'S': return "short";
	case 'Z': return "boolean";
	default: return NULL;
	}
}

/* True when s[0..len) is "+0x" or "/0x" followed by hex digits only: the
 * suffix HotSpot appends to a hidden class's name (its Symbol has '/' on JDK
 * 17.0.15 and 25.0.3, as `jmap -histo` prints it). */
static bool hidden_suffix(const char *s, size_t len)
{
	if (len < 4 || (s[0] != '+' && s[0] != '/') || s[1] != '0' || s[2] != 'x')
		return false;
	for (size_t i = 3; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
		      (s[i] >= 'A' && s[i] <= 'F')))
			return false;
	return true;
}

/* Append @n bytes of @s to out at *pos. Returns 0 or -ENOSPC. */
static int put(char *out, size_t outlen, size_t *pos, const char *s, size_t n)
{
	if (*pos + n >= outlen)
		return -ENOSPC;
	memcpy(out + *pos, s, n);
	*pos += n;
	out[*pos] = '\0';
	return 0;
}

/* Append the class name s[0..len) with '/' -> '.', but a hidden class's
 * suffix, whose '+' or '/' stays (as) '/'. */
static int put_class(char *out, size_t outlen, size_t *pos, const char *s, size_t len)
{
	const char *plus = NULL;

	if (!len)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (s[i] == '+' || s[i] == '/')
			plus = s + i;
	if (plus && !hidden_suffix(plus, len - (plus - s)))
		plus = NULL;
	for (size_t i = 0; i < len; i++) {
		char c = s[i] == '/' ? '.' : s[i];
		int err;

		if (s + i == plus)
			c = '/';
		else if (s[i] == '\0' || s[i] == ';' || s[i] == '[')
			return -EINVAL;
		if ((err = put(out, outlen, pos, &c, 1)))
			return err;
	}
	return 0;
}

int klassname_to_java(const char *internal, size_t len, char *out, size_t outlen)
{
	size_t dims = 0, pos = 0;
	const char *p = internal;
	int err;

	if (!outlen)
		return -ENOSPC;
	out[0] = '\0';
	while (dims < len && p[dims] == '[')
		dims++;
	if (dims > 255)
		return -EINVAL;
	if (!dims) {
		err = put_class(out, outlen, &pos, p, len);
	} else {
		const char *elem = p + dims;
		size_t elen = len - dims;

		if (elen == 1 && prim_name(elem[0]))
			err = put(out, outlen, &pos, prim_name(elem[0]), strlen(prim_name(elem[0])));
		else if (elen >= 3 && elem[0] == 'L' && elem[elen - 1] == ';')
			err = put_class(out, outlen, &pos, elem + 1, elen - 2);
		else
			err = -EINVAL;
		for (size_t i = 0; !err && i < dims; i++)
			err = put(out, outlen, &pos, "[]", 2);
	}
	if (err) {
		out[0] = '\0';
		return err;
	}
	return (int)pos;
}

int klassname_read(const struct mt_vmstructs *vs, const struct mt_klass_layout *l,
		   uint64_t klass, bool java, char *out, size_t outlen)
{
	uint64_t sym;
	uint32_t n = 0;
	char *raw;
	int err;

	if (!outlen)
		return -ENOSPC;
	out[0] = '\0';
	if (!klass)
		return -EFAULT;
	if ((err = vmstructs_read_ptr(vs, klass + l->klass_name, &sym)))
		return err;
	if (!sym)
		return -EFAULT;
	/* Little-endian: the low bytes of n receive the u2 or u4 length. */
	if ((err = vmstructs_read(vs, sym + l->sym_length, &n, l->length_size)))
		return err;
	if (!n || n > MT_KLASSNAME_MAX)
		return -EINVAL;
	if (!java && n >= outlen)
		return -ENOSPC;
	raw = java ? malloc(n) : out;
	if (!raw)
		return -ENOMEM;
	err = vmstructs_read(vs, sym + l->sym_body, raw, n);
	if (!err && memchr(raw, '\0', n))
		err = -EINVAL;
	if (!err && java)
		err = klassname_to_java(raw, n, out, outlen);
	else if (!err)
		raw[n] = '\0', err = (int)n;
	if (java)
		free(raw);
	if (err < 0)
		out[0] = '\0';
	return err;
}

int klassname_walk(const struct mt_vmstructs *vs, int (*fn)(void *arg, uint64_t klass),
		   void *arg, size_t max)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	uint64_t cld_klasses, cld_next, next_link, cld, k;
	size_t seen = 0, nclds = 0;
	int err;

	if (!hs->classloaderdatagraph_head || !hs->has_classloaderdata_klasses ||
	    !hs->has_classloaderdata_next || !hs->has_klass_next_link)
		return -ENOENT;
	cld_klasses = hs->classloaderdata_klasses;
	cld_next = hs->classloaderdata_next;
	next_link = hs->klass_next_link;
	if ((err = vmstructs_read_ptr(vs, hs->classloaderdatagraph_head, &cld)))
		return err;
	/* Loaders are bounded by @max too: a loader holds at least one class
	 * or it would not be worth counting. */
	for (; cld && nclds < max && seen < max; nclds++) {
		if ((err = vmstructs_read_ptr(vs, cld + cld_klasses, &k)))
			return err;
		for (; k && seen < max; seen++) {
			if ((err = fn(arg, k)))
				return err;
			if ((err = vmstructs_read_ptr(vs, k + next_link, &k)))
				return err;
		}
		if ((err = vmstructs_read_ptr(vs, cld + cld_next, &cld)))
			return err;
	}
	return 0;
}

struct slot {
	uint64_t klass; /* 0: empty */
	char *name;
};

struct mt_klassname_cache {
	const struct mt_vmstructs *vs;
	struct mt_klass_layout l;
	struct slot *slots;
	size_t cap;  /* power of two */
	size_t count;
};

#define CACHE_MIN_CAP 1024

static size_t slot_of(const struct mt_klassname_cache *c, uint64_t klass)
{
	/* Klass* values are 8-aligned and close together: mix the bits. */
	return hash_mix64(klass) & (c->cap - 1);
}

struct mt_klassname_cache *klassname_cache_new(const struct mt_vmstructs *vs)
{
	struct mt_klassname_cache *c = calloc(1, sizeof(*c));
	int err;

	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	err = klassname_layout(vs, &c->l);
	if (err) {
		free(c);
		errno = -err;
		return NULL;
	}
	c->vs = vs;
	c->cap = CACHE_MIN_CAP;
	c->slots = calloc(c->cap, sizeof(*c->slots));
	if (!c->slots) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

void klassname_cache_clear(struct mt_klassname_cache *c)
{
	for (size_t i = 0; i < c->cap; i++) {
		free(c->slots[i].name);
		c->slots[i].name = NULL;
		c->slots[i].klass = 0;
	}
	c->count = 0;
}

void klassname_cache_free(struct mt_klassname_cache *c)
{
	if (!c)
		return;
	klassname_cache_clear(c);
	free(c->slots);
	free(c);
}

size_t klassname_cache_count(const struct mt_klassname_cache *c)
{
	return c->count;
}

/* Index of @klass's slot, or of the empty slot where it would go. */
static size_t probe(const struct mt_klassname_cache *c, uint64_t klass)
{
	size_t i = slot_of(c, klass);

	while (c->slots[i].klass && c->slots[i].klass != klass)
		i = (i + 1) & (c->cap - 1);
	return i;
}

/* Double the table (keeping the load at most 1/2). Returns 0 or -ENOMEM. */
static int cache_grow(struct mt_klassname_cache *c)
{
	struct slot *old = c->slots;
	size_t oldcap = c->cap;

	c->slots = calloc(oldcap * 2, sizeof(*c->slots));
	if (!c->slots) {
		c->slots = old;
		return -ENOMEM;
	}
	c->cap = oldcap * 2;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].klass)
			c->slots[probe(c, old[i].klass)] = old[i];
	free(old);
	return 0;
}

int klassname_cache_get(struct mt_klassname_cache *c, uint64_t klass, char *out, size_t outlen)
{
	char buf[1024];
	size_t i, n;
	char *name;
	int len;

	if (!outlen)
		return -ENOSPC;
	out[0] = '\0';
	if (!klass)
		return -EFAULT;
	i = probe(c, klass);
	if (c->slots[i].klass) {
		n = strlen(c->slots[i].name);
		if (n >= outlen)
			return -ENOSPC;
		memcpy(out, c->slots[i].name, n + 1);
		return (int)n;
	}
	len = klassname_read(c->vs, &c->l, klass, true, buf, sizeof(buf));
	if (len == -ENOSPC) /* a very long name: read it straight into out, uncached */
		return klassname_read(c->vs, &c->l, klass, true, out, outlen);
	if (len < 0)
		return len;
	if ((size_t)len >= outlen)
		return -ENOSPC;
	memcpy(out, buf, len + 1);

	/* Remember it; start over when full rather than grow without bound. */
	if (c->count >= MT_KLASSNAME_CACHE_MAX)
		klassname_cache_clear(c);
	if ((c->count + 1) * 2 > c->cap && cache_grow(c))
		return len; /* no memory to remember: still a valid answer */
	name = strdup(buf);
	if (!name)
		return len;
	i = probe(c, klass);
	c->slots[i].klass = klass;
	c->slots[i].name = name;
	c->count++;
	return len;
}

void klassname_cache_invalidate(struct mt_klassname_cache *c, uint64_t klass)
{
	size_t i, j, home;

	if (!klass)
		return;
	i = probe(c, klass);
	if (!c->slots[i].klass)
		return;
	free(c->slots[i].name);
	c->slots[i].klass = 0;
	c->slots[i].name = NULL;
	c->count--;
	/* Backward-shift: move later members of the run into the hole when
	 * their home slot does not lie cyclically in (i, j]. */
	for (j = (i + 1) & (c->cap - 1); c->slots[j].klass; j = (j + 1) & (c->cap - 1)) {
		home = slot_of(c, c->slots[j].klass);
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		c->slots[i] = c->slots[j];
		c->slots[j].klass = 0;
		c->slots[j].name = NULL;
		i = j;
	}
}
