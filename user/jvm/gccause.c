// SPDX-License-Identifier: GPL-2.0
/* gccause.c - GC cause names from libjvm's GCCause::to_string (see gccause.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "jvm/elfsym.h"
#include "jvm/gccause.h"

static int32_t le32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/* One case: "lea STRING(%rip), %rax ; ret" at @pc; the string into @out. */
static int decode_case(gccause_read_fn rd, void *ctx, uint64_t pc, char *out)
{
	uint8_t c[8];
	char s[GCCAUSE_NAME_LEN];
	int err;

	err = rd(ctx, pc, c, sizeof(c));
	if (err)
		return err;
	if (c[0] != 0x48 || c[1] != 0x8d || c[2] != 0x05 || c[7] != 0xc3)
		return -ENOTSUP;
	err = rd(ctx, pc + 7 + (int64_t)le32(c + 3), s, sizeof(s));
	if (err)
		return err;
	if (!memchr(s, '\0', sizeof(s)) || !s[0])
		return -ENOTSUP;
	for (const char *q = s; *q; q++)
		if (*q < 0x20 || *q > 0x7e)
			return -ENOTSUP;
	memcpy(out, s, sizeof(s));
	return 0;
}

int gccause_decode(gccause_read_fn rd, void *ctx, uint64_t fn, uint64_t size,
		   struct gccause_table *t)
{
	uint8_t c[48];
	uint64_t table = 0, deflt;
	size_t i = 0;
	int n, err;

	memset(t, 0, sizeof(*t));
	err = rd(ctx, fn, c, sizeof(c));
	if (err)
		return err;
	/* cmp $N-1, %edi */
	if (c[0] == 0x83 && c[1] == 0xff) {
		n = c[2] + 1;
		i = 3;
	} else {
		return -ENOTSUP;
	}
	if (n > GCCAUSE_MAX || c[2] & 0x80)
		return -ENOTSUP;
	/* ja DEFAULT */
	if (c[i] == 0x0f && c[i + 1] == 0x87) {
		deflt = fn + i + 6 + (int64_t)le32(c + i + 2);
		i += 6;
	} else if (c[i] == 0x77) {
		deflt = fn + i + 2 + (int8_t)c[i + 1];
		i += 2;
	} else {
		return -ENOTSUP;
	}
	/* lea TABLE(%rip), %reg (REX.W, mod 00, rm 101), then jmp *%reg soon after */
	for (; i + 7 <= 24; i++)
		if ((c[i] & 0xfb) == 0x48 && c[i + 1] == 0x8d && (c[i + 2] & 0xc7) == 0x05) {
			table = fn + i + 7 + (int64_t)le32(c + i + 3);
			break;
		}
	if (!table)
		return -ENOTSUP;
	for (i += 7; i + 1 < sizeof(c); i++)
		if (c[i] == 0xff && (c[i + 1] & 0xf8) == 0xe0)
			break;
	if (i + 1 >= sizeof(c))
		return -ENOTSUP;
	if (deflt < fn || deflt >= fn + size)
		return -ENOTSUP;
	err = decode_case(rd, ctx, deflt, t->unknown);
	if (err)
		return err;
	/* the table: one int32 per cause, relative to the table's address */
	for (int k = 0; k < n; k++) {
		uint8_t e[4];
		uint64_t pc;

		err = rd(ctx, table + 4 * (uint64_t)k, e, sizeof(e));
		if (err)
			return err;
		pc = table + (int64_t)le32(e);
		if (pc < fn || pc >= fn + size)
			return -ENOTSUP;
		err = decode_case(rd, ctx, pc, t->name[k]);
		if (err)
			return err;
	}
	t->n = n;
	return 0;
}

static int elf_read(void *ctx, uint64_t vaddr, void *buf, size_t n)
{
	return elfsym_read(ctx, vaddr, buf, n);
}

int gccause_read(const struct mt_elf *e, struct gccause_table *t)
{
	uint64_t fn, size;

	memset(t, 0, sizeof(*t));
	if (elfsym_lookup(e, GCCAUSE_SYM_TO_STRING, &fn, &size) || !size)
		return -ENOENT;
	return gccause_decode(elf_read, (void *)e, fn, size, t);
}

const char *gccause_name(const struct gccause_table *t, uint32_t c, char *buf, size_t n)
{
	if (t && c < (uint32_t)t->n)
		return t->name[c];
	if (t && t->unknown[0])
		return t->unknown;
	snprintf(buf, n, "cause %u", c);
	return buf;
}
