/* test_agent_zgcfreeze.c - a frozen copy of a ZGC heap (user/agent/zgcfreeze.c)
 * on a heap built here as generational ZGC lays it out: a memfd named
 * java_heap mapped shared at the heap base, a page table of two used pages
 * (of 1 MiB and 512 KiB) and one empty, the masks in variables, forwarding
 * tables. The test forks as the agent does in the pause: both halves of the
 * used pages are copied (the parent's and the child's), the child's view of
 * the heap is then its own - what the parent writes afterwards does not
 * reach it, what it writes does not reach the parent, the unused rest of
 * the view reads as zeros - and a forwarding still relocating refuses the
 * freeze (-EAGAIN), its files kept for the retry; a used heap over
 * memtrace's bound refuses it (-EFBIG). JDK 17's three views sit where ASan keeps its shadow
 * memory (4-16 TiB): e2e walk_zgc covers them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/zgcfreeze.h"

#define BASE    0x200000000000ull   /* above ASan's shadow; offsets below 2^42 */
#define MASK    0x3ffffffffffull
#define HEAP_SZ (8ull << 20)        /* 4 granules */
#define GR      (2ull << 20)
/* JDK 25's offsets: ZPage _virtual._start @16, _top @32; ZForwarding as there */
#define PG_START 16
#define PG_TOP   32
#define FW_LEN   24
#define FW_RC    136
#define FW_ENT   184

static uint64_t offset_mask = MASK, good = 0x2000, bad = 0xd000, heap_base = BASE,
		rem_old = 0x3000, rem_young = 0xa000;

struct heap {
	int fd;
	unsigned char *view;
	uint64_t pages[2][8];       /* two ZPages (160 bytes each would do) */
	uint64_t pt_slots[4];
	uint64_t pt[2];             /* granule map: size, slots */
	uint64_t fw_slots[2][4];
	uint64_t fwt[2][2];
	uint64_t fw[32];            /* a ZForwarding with 8 entries after it (184 + 64) */
	struct mt_ap_heap_zgc req;
};

static void heap_init(struct heap *h)
{
	memset(h, 0, sizeof(*h));
	h->fd = memfd_create("java_heap", MFD_CLOEXEC);
	assert_true(h->fd >= 0);
	assert_int_equal(ftruncate(h->fd, (off_t)HEAP_SZ), 0);
	h->view = mmap((void *)(uintptr_t)BASE, HEAP_SZ, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_FIXED_NOREPLACE, h->fd, 0);
	assert_true(h->view == (void *)(uintptr_t)BASE);
	memset(h->view, 'A', 1 << 20);               /* page 1: granule 0, 1 MiB used */
	memset(h->view + 2 * GR, 'B', 512 << 10);    /* page 2: granule 2, 512 KiB used */
	h->pages[0][PG_START / 8] = 0;
	h->pages[0][PG_TOP / 8] = 1 << 20;
	h->pages[1][PG_START / 8] = 2 * GR;
	h->pages[1][PG_TOP / 8] = 2 * GR + (512 << 10);
	h->pt_slots[0] = (uint64_t)(uintptr_t)h->pages[0];
	h->pt_slots[2] = (uint64_t)(uintptr_t)h->pages[1];
	h->pt[0] = 4;
	h->pt[1] = (uint64_t)(uintptr_t)h->pt_slots;
	for (int i = 0; i < 2; i++) {
		h->fwt[i][0] = 4;
		h->fwt[i][1] = (uint64_t)(uintptr_t)h->fw_slots[i];
	}
	h->req = (struct mt_ap_heap_zgc){
		.size = sizeof(h->req), .variant = MT_AP_ZGC_GEN,
		.offset_mask = (uint64_t)(uintptr_t)&offset_mask,
		.good_mask = (uint64_t)(uintptr_t)&good, .bad_mask = (uint64_t)(uintptr_t)&bad,
		.heap_base = (uint64_t)(uintptr_t)&heap_base,
		.remapped_old = (uint64_t)(uintptr_t)&rem_old,
		.remapped_young = (uint64_t)(uintptr_t)&rem_young,
		.page_table = (uint64_t)(uintptr_t)h->pt,
		.fwd_tables = { (uint64_t)(uintptr_t)h->fwt[0], (uint64_t)(uintptr_t)h->fwt[1] },
		.page_start = PG_START, .page_top = PG_TOP, .fw_start = 0, .fw_shift = 16,
		.fw_length = FW_LEN, .fw_refcount = FW_RC, .fw_entries = FW_ENT,
	};
}

static void heap_free(struct heap *h)
{
	munmap(h->view, HEAP_SZ);
	close(h->fd);
}

static int idles; /* the socket thread's duties, called while the room is touched */

static void idle(void)
{
	idles++;
}

static bool all(const unsigned char *p, size_t n, unsigned char c)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != c)
			return false;
	return true;
}

/* In the child: the copy's view after the JVM's half is in and the JVM has
 * written 'C' over its own: 0 when the copy still sees 'A', 'B' and zeros. */
static int child_checks(struct heap *h, int go)
{
	char c;

	if (read(go, &c, 1) != 1)
		return 10;
	if (!all(h->view, 1 << 20, 'A'))
		return 11;
	if (!all(h->view + 2 * GR, 512 << 10, 'B'))
		return 12;
	if (!all(h->view + GR, 4096, 0)) /* granule 1: no page, private zeros */
		return 13;
	h->view[8] = 'E'; /* the copy's write stays in the copy */
	return 0;
}

static void test_copy(void **state)
{
	struct heap h;
	struct zgc_freeze zf;
	char why[128];
	uint64_t ns = 0;
	int go[2], status = 0;
	pid_t pid;

	(void)state;
	heap_init(&h);
	idles = 0;
	assert_int_equal(zgcfreeze_begin(&zf, &h.req, idle, why, sizeof(why)), 0);
	assert_true(idles >= 2); /* 2 x 36 MiB touched, 32 MiB at a time */
	assert_int_equal(zgcfreeze_pause(&zf, why, sizeof(why)), 0);
	assert_int_equal(zf.npages, 2);
	assert_true(zf.lo == 0 && zf.hi == 2 * GR + (512 << 10));
	assert_true(zf.bytes == (1 << 20) + (512 << 10));
	assert_int_equal(zf.nviews, 1);
	assert_true(zf.views[0] == BASE && zf.refs.base == BASE);
	assert_true(zf.need[0] + zf.need[1] == zf.bytes && zf.need[0] > 0 && zf.need[1] > 0);
	assert_int_equal(pipe(go), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(go[1]);
		if (zgcfreeze_child(&zf))
			_exit(9);
		_exit(child_checks(&h, go[0]));
	}
	close(go[0]);
	assert_int_equal(zgcfreeze_wait(&zf, &ns, why, sizeof(why)), 0);
	assert_true(ns > 0);
	zgcfreeze_end(&zf);
	memset(h.view, 'C', 1 << 20); /* the JVM after the pause */
	memset(h.view + 2 * GR, 'C', 512 << 10);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(h.view[8], 'C');
	close(go[1]);
	zgcfreeze_end(&zf); /* twice: nothing */
	heap_free(&h);
}

/* A page still being relocated (its ZForwarding's _ref_count not 0): the
 * freeze is refused for now; once it is 0, it goes on. */
static void test_relocating(void **state)
{
	struct heap h;
	struct zgc_freeze zf;
	char why[128];

	(void)state;
	heap_init(&h);
	h.fw[FW_LEN / 8] = 8;
	h.fw[FW_RC / 8] = 1;
	h.fw_slots[1][2] = (uint64_t)(uintptr_t)h.fw; /* the old generation's page 2 */
	assert_int_equal(zgcfreeze_begin(&zf, &h.req, idle, why, sizeof(why)), 0);
	assert_int_equal(zgcfreeze_pause(&zf, why, sizeof(why)), -EAGAIN);
	assert_non_null(strstr(why, "relocating"));
	h.fw[FW_RC / 8] = 0;
	assert_int_equal(zgcfreeze_pause(&zf, why, sizeof(why)), 0);
	h.fw[FW_LEN / 8] = 6; /* entries that make no sense: refused, not read */
	assert_int_equal(zgcfreeze_pause(&zf, why, sizeof(why)), -EPROTO);
	zgcfreeze_end(&zf);
	/* the refused freeze's files (no copy took them) serve the retry: not
	 * touched again, so nothing to wait for */
	idles = 0;
	assert_int_equal(zgcfreeze_begin(&zf, &h.req, idle, why, sizeof(why)), 0);
	assert_int_equal(idles, 0);
	assert_true(zf.copy_fd[0] >= 0 && zf.copy_fd[1] >= 0);
	zgcfreeze_end(&zf);
	heap_free(&h);
}

/* memtrace's bound on the copy (max_copy_mib): the used heap (1.5 MiB here)
 * over it refuses the freeze before the pause (zgcfreeze_fits) and in it
 * (-EFBIG, the used heap and the bound said); within it, both pass. */
static void test_bound(void **state)
{
	struct heap h;
	struct zgc_freeze zf;
	uint64_t used = 0;
	char why[160];

	(void)state;
	heap_init(&h);
	h.req.max_copy_mib = 1;
	assert_int_equal(zgcfreeze_begin(&zf, &h.req, idle, why, sizeof(why)), 0);
	assert_int_equal(zgcfreeze_fits(&zf, &used, why, sizeof(why)), -EFBIG);
	assert_true(used == (1 << 20) + (512 << 10));
	assert_non_null(strstr(why, "was 2 MiB before the pause, over the 1 MiB"));
	assert_int_equal(zgcfreeze_pause(&zf, why, sizeof(why)), -EFBIG);
	assert_non_null(strstr(why, "was 2 MiB in the pause"));
	zgcfreeze_end(&zf);
	h.req.max_copy_mib = 2;
	assert_int_equal(zgcfreeze_begin(&zf, &h.req, idle, why, sizeof(why)), 0);
	assert_int_equal(zgcfreeze_fits(&zf, &used, why, sizeof(why)), 0);
	assert_int_equal(zgcfreeze_pause(&zf, why, sizeof(why)), 0);
	zgcfreeze_end(&zf);
	h.req.max_copy_mib = 0; /* no bound */
	assert_int_equal(zgcfreeze_begin(&zf, &h.req, idle, why, sizeof(why)), 0);
	assert_int_equal(zgcfreeze_fits(&zf, NULL, why, sizeof(why)), 0);
	zgcfreeze_end(&zf);
	heap_free(&h);
}

/* The copy's deadline (max_pause_ms from the pause's start): a copy that
 * never says its half is done is not waited for past it (-ETIME, the JVM's
 * half said as copied, the files kept for the retry); a deadline already
 * gone when the JVM's half starts stops that half before its first byte (0
 * of it copied, no estimate of the whole). */
static void test_deadline(void **state)
{
	struct heap h;
	struct zgc_freeze zf;
	struct timespec nap = { 0, 30 * 1000000 };
	char why[400];
	uint64_t ns = 0;
	int status = 0;
	pid_t pid;

	(void)state;
	heap_init(&h);
	h.req.max_pause_ms = 20;
	assert_int_equal(zgcfreeze_begin(&zf, &h.req, idle, why, sizeof(why)), 0);
	assert_int_equal(zgcfreeze_pause(&zf, why, sizeof(why)), 0);
	assert_true(zf.deadline > 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) { /* a copy that never gets through its half */
		pause();
		_exit(0);
	}
	assert_int_equal(zgcfreeze_wait(&zf, &ns, why, sizeof(why)), -ETIME);
	assert_non_null(strstr(why, "ZGC's copy of 1 MiB cut at 20 ms (JVM's half: 1/1 MiB in "));
	assert_true(zf.copied == zf.need[0] && !zf.consumed); /* its files: the retry's */
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	zgcfreeze_end(&zf);

	h.req.max_pause_ms = 1;
	assert_int_equal(zgcfreeze_begin(&zf, &h.req, idle, why, sizeof(why)), 0);
	assert_int_equal(zgcfreeze_pause(&zf, why, sizeof(why)), 0);
	nanosleep(&nap, NULL); /* the deadline goes by (a fork that took it all) */
	assert_int_equal(zgcfreeze_wait(&zf, &ns, why, sizeof(why)), -ETIME);
	assert_true(zf.copied == 0);
	assert_non_null(strstr(why, "(JVM's half: 0/1 MiB in 0 ms; all: ~0 ms)"));
	zgcfreeze_end(&zf);

	h.req.max_pause_ms = 0; /* no deadline: none set */
	assert_int_equal(zgcfreeze_begin(&zf, &h.req, idle, why, sizeof(why)), 0);
	assert_int_equal(zgcfreeze_pause(&zf, why, sizeof(why)), 0);
	assert_true(zf.deadline == 0);
	zgcfreeze_end(&zf);
	heap_free(&h);
}

/* A medium page's objects (ZObjectAlignmentMedium apart): a byte[] and a
 * long[] whose elements are left out of the copy (their first 4 KiB page,
 * the header, copied), then something that is no object: the rest of the
 * page copied whole. The copy sees the headers and the rest as they were,
 * the elements as zeros; the bound counts what is copied. */
static uint64_t klasses[8];    /* two fake Klasses: their layout helper at 8 */
static int32_t medium_align = 4096;

static void put_array(unsigned char *at, uint32_t nk, int32_t len)
{
	uint64_t mark = 1;

	memcpy(at, &mark, 8);
	memcpy(at + 8, &nk, 4);
	memcpy(at + 12, &len, 4);
}

static int child_bodies(struct heap *h, int go)
{
	const unsigned char *v = h->view;
	char c;

	if (read(go, &c, 1) != 1)
		return 10;
	if (!all(v + 16, 4096 - 16, 'A') || !all(v + 4096, 299008 - 4096, 0) ||
	    !all(v + 299008, 303104 - 299008, 'A'))
		return 11; /* the byte[]: header page kept, elements zeros, its tail kept */
	if (!all(v + 307200, 782336 - 307200, 0) || !all(v + 782336, 786432 - 782336, 'A') ||
	    !all(v + 786432 + 16, (1 << 20) - 786432 - 16, 'A'))
		return 12; /* the long[]'s elements zeros; past the object that stops it, all */
	if (!all(v + 2 * GR, 512 << 10, 'B'))
		return 13;
	return 0;
}

static void test_bodies(void **state)
{
	struct mt_ap_heap_layout L = { .size = sizeof(L), .flags = MT_AP_LAYOUT_CKLASS,
				       .klass_base = (uint64_t)(uintptr_t)klasses, .klass_shift = 0,
				       .obj_align = 8, .klass_off = 8, .length_off = 12,
				       .k_layout_helper = 8 };
	struct heap h;
	struct zgc_freeze zf;
	uint64_t used = 0, ns = 0;
	char why[160];
	int go[2], status = 0;
	pid_t pid;

	(void)state;
	heap_init(&h);
	klasses[1] = 0xC0100800u;             /* Klass at +0: byte[] (tag 3, T_BYTE) */
	klasses[5] = 0xC0100B03u;             /* Klass at +32: long[] */
	klasses[7] = 0;                       /* Klass at +48: no layout helper */
	put_array(h.view, 0, 300000);         /* 300016 bytes */
	put_array(h.view + 303104, 32, 60000); /* 480016 bytes */
	put_array(h.view + 786432, 48, 7);
	((unsigned char *)h.pages[0])[8] = 1; /* page 1 medium: _type at 8 */
	h.req.page_type = 8 + 1;
	h.req.medium_align = (uint64_t)(uintptr_t)&medium_align;
	h.req.max_copy_mib = 1; /* 1.5 MiB used: fits only without the elements */
	assert_int_equal(zgcfreeze_begin(&zf, &h.req, idle, why, sizeof(why)), 0);
	zf.bodies = &L;
	assert_int_equal(zgcfreeze_fits(&zf, &used, why, sizeof(why)), 0);
	assert_true(used == (1 << 20) + (512 << 10) - 770048);
	assert_int_equal(zgcfreeze_pause(&zf, why, sizeof(why)), 0);
	assert_true(zf.skipped == 770048 && zf.nskips == 2);
	assert_true(zf.bytes == (1 << 20) + (512 << 10) - 770048);
	assert_int_equal(pipe(go), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(go[1]);
		if (zgcfreeze_child(&zf))
			_exit(9);
		_exit(child_bodies(&h, go[0]));
	}
	close(go[0]);
	assert_int_equal(zgcfreeze_wait(&zf, &ns, why, sizeof(why)), 0);
	zgcfreeze_end(&zf);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(go[1]);
	/* without the layout (a walk that reads strings) nothing is left out */
	assert_int_equal(zgcfreeze_begin(&zf, &h.req, idle, why, sizeof(why)), 0);
	assert_int_equal(zgcfreeze_fits(&zf, &used, why, sizeof(why)), -EFBIG);
	zgcfreeze_end(&zf);
	heap_free(&h);
}

/* Addresses that do not read: refused with a reason, nothing left open. */
static void test_bad_request(void **state)
{
	struct heap h;
	struct zgc_freeze zf;
	char why[128];

	(void)state;
	heap_init(&h);
	h.req.heap_base = 8; /* an unmapped address */
	assert_int_equal(zgcfreeze_begin(&zf, &h.req, idle, why, sizeof(why)), -EFAULT);
	assert_non_null(strstr(why, "masks"));
	zgcfreeze_end(&zf);
	h.req.heap_base = (uint64_t)(uintptr_t)&heap_base;
	h.pt[0] = 0; /* an empty page table */
	assert_true(zgcfreeze_begin(&zf, &h.req, idle, why, sizeof(why)) < 0);
	assert_non_null(strstr(why, "page table"));
	zgcfreeze_end(&zf);
	heap_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_relocating),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_bodies),
		cmocka_unit_test(test_bad_request),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
