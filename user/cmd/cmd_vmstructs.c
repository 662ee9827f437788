// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_vmstructs.c - `memtrace vmstructs -p PID ...`: a hidden debugging
 * command that prints what the VMStructs, JVM flag and class name modules
 * read from a live JVM, one JSON object per line. The e2e tests drive it.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "jvm/jvmflags.h"
#include "jvm/javafield.h"
#include "jvm/jobject.h"
#include "jvm/klassname.h"
#include "jvm/proc.h"
#include "lib/util.h"
#include "jvm/vmstructs.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace vmstructs -p PID [--dump] [--flag NAME]... [--field Type::field]...\n"
		   "                          [--type NAME]... [--klass-test] [--symtab-only]\n"
		   "                          [--java-field pkg/Class.field]...\n"
		   "Debugging aid: prints what memtrace reads from the JVM's own tables, one\n"
		   "JSON object per line. --symtab-only reads flags through .symtab only.\n");
}

/* Print every entry of every table. */
static void dump(const struct mt_vmstructs *vs)
{
	for (size_t i = 0; i < vmstructs_nfields(vs); i++) {
		const struct mt_vmfield *f = vmstructs_field_at(vs, i);

		printf("{\"kind\":\"field\",\"type\":");
		json_str(stdout, f->type);
		printf(",\"field\":");
		json_str(stdout, f->field);
		printf(",\"type_string\":");
		json_str(stdout, f->type_string);
		printf(",\"static\":%s,\"offset\":%" PRIu64 ",\"address\":%" PRIu64 "}\n",
		       f->is_static ? "true" : "false", f->offset, f->address);
	}
	for (size_t i = 0; i < vmstructs_ntypes(vs); i++) {
		const struct mt_vmtype *t = vmstructs_type_at(vs, i);

		printf("{\"kind\":\"type\",\"name\":");
		json_str(stdout, t->name);
		printf(",\"super\":");
		json_str(stdout, t->super);
		printf(",\"oop\":%d,\"integer\":%d,\"unsigned\":%d,\"size\":%" PRIu64 "}\n",
		       t->is_oop, t->is_integer, t->is_unsigned, t->size);
	}
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < vmstructs_nconsts(vs, l); i++) {
			const struct mt_vmconst *c = vmstructs_const_at(vs, l, i);

			printf("{\"kind\":\"%s\",\"name\":", l ? "long" : "int");
			json_str(stdout, c->name);
			printf(",\"value\":%" PRId64 "}\n", (int64_t)c->value);
		}
}

/* One {"flag":...} line: presence, type, where, value. */
static int show_flag(const struct mt_proc *p, const struct mt_vmstructs *vs, const char *name)
{
	struct mt_jvmflag f;
	int err = jvmflags_find(p, vs, name, &f);
	union {
		uint8_t b;
		int32_t i32;
		uint32_t v32;
		int64_t i64;
		uint64_t w64;
		double d;
	} v = { .w64 = 0 };

	printf("{\"flag\":");
	json_str(stdout, name);
	if (err == -ENOENT) {
		printf(",\"present\":false}\n");
		return 0;
	}
	if (err) {
		printf("}\n");
		p_err("can't look up flag %s: %s", name, strerror(-err));
		return err;
	}
	err = vs ? vmstructs_read(vs, f.addr, &v, 8) : proc_read_mem(p->pid, f.addr, &v, 8);
	if (err) {
		printf("}\n");
		p_err("can't read flag %s at 0x%" PRIx64 ": %s", name, f.addr, strerror(-err));
		return err;
	}
	printf(",\"present\":true,\"type\":\"%s\",\"via\":\"%s\",\"addr\":\"0x%" PRIx64
	       "\",\"kind_bits\":%u,\"value\":",
	       jvmflags_type_name(f.type), f.via_symtab ? "symtab" : "vmstructs", f.addr, f.flags);
	switch (f.type) {
	case MT_FLAG_BOOL:
		printf("%s", v.b ? "true" : "false");
		break;
	case MT_FLAG_INT:
		printf("%" PRId32, v.i32);
		break;
	case MT_FLAG_UINT:
		printf("%" PRIu32, v.v32);
		break;
	case MT_FLAG_INTX:
		printf("%" PRId64, v.i64);
		break;
	case MT_FLAG_UINTX:
	case MT_FLAG_UINT64:
	case MT_FLAG_SIZE_T:
		printf("%" PRIu64, v.w64);
		break;
	case MT_FLAG_DOUBLE:
		if (isfinite(v.d))
			printf("%.17g", v.d);
		else
			printf("null");
		break;
	case MT_FLAG_CCSTR:
	case MT_FLAG_CCSTRLIST: {
		char buf[1024];

		if (vs && v.w64 && vmstructs_read_string(vs, v.w64, buf, sizeof(buf)) >= 0)
			json_str(stdout, buf);
		else
			printf("null");
		break;
	}
	default: /* via .symtab: no type, the first byte is a bool's value */
		printf("%s,\"raw\":%" PRIu64, v.b ? "true" : "false", v.w64);
	}
	printf("}\n");
	return 0;
}

/* One {"field":...} line for "Type::field". */
static int show_field(const struct mt_vmstructs *vs, const char *spec)
{
	const char *sep = strstr(spec, "::");
	const struct mt_vmfield *f;
	char type[256];

	if (!sep || (size_t)(sep - spec) >= sizeof(type)) {
		p_err("--field wants Type::field, not '%s'", spec);
		return -EINVAL;
	}
	snprintf(type, sizeof(type), "%.*s", (int)(sep - spec), spec);
	f = vmstructs_field(vs, type, sep + 2);
	printf("{\"field\":");
	json_str(stdout, spec);
	if (!f) {
		printf(",\"present\":false}\n");
		return 0;
	}
	printf(",\"present\":true,\"type_string\":");
	json_str(stdout, f->type_string);
	if (f->is_static)
		printf(",\"static\":true,\"address\":\"0x%" PRIx64 "\"}\n", f->address);
	else
		printf(",\"static\":false,\"offset\":%" PRIu64 "}\n", f->offset);
	return 0;
}

/* One {"type":...} line. */
static void show_type(const struct mt_vmstructs *vs, const char *name)
{
	const struct mt_vmtype *t = vmstructs_type(vs, name);

	printf("{\"type\":");
	json_str(stdout, name);
	if (t)
		printf(",\"present\":true,\"size\":%" PRIu64 "}\n", t->size);
	else
		printf(",\"present\":false}\n");
}

/* Print {"klass_check":what,"klass":...,"name":...}. */
static void show_klass(struct mt_klassname_cache *c, const char *what, const char *internal,
		       uint64_t klass)
{
	char name[1024];
	int n = klassname_cache_get(c, klass, name, sizeof(name));

	printf("{\"klass_check\":\"%s\",\"klass\":\"0x%" PRIx64 "\"", what, klass);
	if (internal) {
		printf(",\"internal\":");
		json_str(stdout, internal);
	}
	if (n < 0)
		printf(",\"error\":\"%s\"}\n", strerror(-n));
	else {
		printf(",\"name\":");
		json_str(stdout, name);
		printf("}\n");
	}
}

struct walk_ctx {
	const struct mt_vmstructs *vs;
	struct mt_klass_layout l;
	struct mt_klassname_cache *c;
	size_t n, errors;
};

/* Report the array classes Idle creates, and Idle itself, found by walking
 * every class loader's klass list. */
static int walk_one(void *arg, uint64_t klass)
{
	static const char *const wanted[] = { "[I", "[[J", "[Ljava/lang/String;", "Idle" };
	struct walk_ctx *w = arg;
	char internal[512];

	w->n++;
	if (klassname_read(w->vs, &w->l, klass, false, internal, sizeof(internal)) < 0) {
		w->errors++;
		return 0;
	}
	for (size_t i = 0; i < MT_ARRAY_SIZE(wanted); i++)
		if (!strcmp(internal, wanted[i]))
			show_klass(w->c, "walk", internal, klass);
	return 0;
}

/* Names of Klass* values found through VMStructs: vmClasses statics,
 * Object's array class, and a walk of the class loader data graph. */
static int klass_test(const struct mt_vmstructs *vs)
{
	static const char *const vm_classes[] = { "Object", "String", "Thread" };
	struct walk_ctx w = { .vs = vs };
	uint64_t addr, k, off;
	char field[128];
	int err;

	w.c = klassname_cache_new(vs);
	if (!w.c) {
		p_err("can't find Klass::_name / Symbol layout in VMStructs: %s", strerror(errno));
		return -errno;
	}
	klassname_layout(vs, &w.l);
	printf("{\"klass_layout\":{\"klass_name\":%" PRIu64 ",\"sym_length\":%" PRIu64
	       ",\"sym_body\":%" PRIu64 ",\"length_size\":%u}}\n",
	       w.l.klass_name, w.l.sym_length, w.l.sym_body, w.l.length_size);
	for (size_t i = 0; i < MT_ARRAY_SIZE(vm_classes); i++) {
		snprintf(field, sizeof(field), "_klasses[static_cast<int>(vmClassID::%s_klass_knum)]",
			 vm_classes[i]);
		if (vmstructs_static_addr(vs, "vmClasses", field, &addr) ||
		    vmstructs_read_ptr(vs, addr, &k))
			continue;
		snprintf(field, sizeof(field), "vmClasses::%s", vm_classes[i]);
		show_klass(w.c, field, NULL, k);
		if (i == 0 && !vmstructs_field_offset(vs, "InstanceKlass", "_array_klasses", &off) &&
		    !vmstructs_read_ptr(vs, k + off, &k) && k)
			show_klass(w.c, "Object._array_klasses", NULL, k);
	}
	err = klassname_walk(vs, walk_one, &w, 1000000);
	printf("{\"klass_walk\":{\"klasses\":%zu,\"unreadable\":%zu,\"cached\":%zu,"
	       "\"error\":%d}}\n", w.n, w.errors, klassname_cache_count(w.c), err);
	klassname_cache_free(w.c);
	return 0;
}

/* --java-field pkg/Class.field: a Java field's offset as memtrace reads it
 * from the class's field table (tests compare it with Unsafe.objectFieldOffset). */
static int show_java_field(const struct mt_proc *p, const struct mt_vmstructs *vs,
			   const char *spec)
{
	struct javafield_layout l;
	char cls[512];
	const char *dot = strrchr(spec, '.');
	uint64_t ik;
	uint32_t off = 0;
	int err;

	if (!dot || dot == spec || (size_t)(dot - spec) >= sizeof(cls)) {
		p_err("bad --java-field '%s' (want pkg/Class.field)", spec);
		return -EINVAL;
	}
	snprintf(cls, sizeof(cls), "%.*s", (int)(dot - spec), spec);
	if ((err = javafield_layout(vs, &l)) || (err = jobject_find_class(vs, cls, &ik)) ||
	    (err = javafield_offset(vs, &l, ik, dot + 1, &off))) {
		printf("{\"java_field\":\"%s\",\"error\":\"%s\"}\n", spec, strerror(-err));
		return err;
	}
	printf("{\"java_field\":\"%s\",\"klass\":%" PRIu64 ",\"offset\":%u}\n", spec, ik, off);
	(void)p;
	return 0;
}

int do_vmstructs(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "dump", no_argument, NULL, 'd' },
		{ "flag", required_argument, NULL, 'f' },
		{ "field", required_argument, NULL, 'F' },
		{ "type", required_argument, NULL, 't' },
		{ "klass-test", no_argument, NULL, 'k' },
		{ "java-field", required_argument, NULL, 'J' },
		{ "symtab-only", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cmdopt o = { .usage = usage };
	struct mt_vmstructs *vs = NULL;
	struct mt_proc p;
	bool do_dump = false, do_klass = false, symtab_only = false;
	int pid = 0, opt, err, ret = 1;

	/* First pass: options; the queries run in a second pass, in order. */
	optind = 0;
	while ((opt = getopt_long(argc, argv, "p:dh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (parse_pid(optarg, &pid)) {
				p_err("bad pid '%s'", optarg);
				return 2;
			}
			break;
		case 'd':
			do_dump = true;
			break;
		case 'k':
			do_klass = true;
			break;
		case 's':
			symtab_only = true;
			break;
		case 'f':
		case 'F':
		case 't':
		case 'J':
			break;
		default:
			err = cmdopt_common(opt, optarg, &o);
			if (err != MT_CMDOPT_MORE)
				return err;
		}
	}
	if (!pid) {
		usage(stderr);
		return 2;
	}
	if (cmdopt_open_jvm(pid, NULL, &p))
		return 1;
	err = vmstructs_open(&p, &vs);
	if (err) {
		p_err("can't read VMStructs of pid %d (%s): %s", pid, p.libjvm, vmstructs_strerror(err));
		return 1;
	}
	if (do_dump)
		dump(vs);
	ret = 0;
	optind = 0;
	while ((opt = getopt_long(argc, argv, "p:dh", longopts, NULL)) != -1) {
		if (opt == 'f')
			err = show_flag(&p, symtab_only ? NULL : vs, optarg);
		else if (opt == 'F')
			err = show_field(vs, optarg);
		else if (opt == 't')
			show_type(vs, optarg), err = 0;
		else if (opt == 'J')
			err = show_java_field(&p, vs, optarg);
		else
			continue;
		if (err)
			ret = 1;
	}
	if (do_klass && klass_test(vs))
		ret = 1;
	vmstructs_free(vs);
	return ret;
}
