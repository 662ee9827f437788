/* test_profile.c - the stack-sample aggregate, allocation stacks stitched
 * together (profile_add_alloc), and its sinks (collapsed, HTML flame graph,
 * pprof: decoded here with a minimal protobuf reader). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "sink/sinks.h"

/* A memstream-backed FILE; returns the text written by @fn. */
static char *capture_collapsed(const struct profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(sink_collapsed_write(p, f), 0);
	fclose(f);
	return buf;
}

static char *capture_html(const struct profile *p, const char *title)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(sink_flamegraph_write(p, f, title), 0);
	fclose(f);
	return buf;
}

static void test_merges_identical_stacks(void **state)
{
	struct profile *p = profile_new();
	const char *a[] = { "main", "work", "byte[]" };
	const char *b[] = { "main", "work", "long[]" };
	const struct profile_stack *s;

	assert_non_null(p);
	assert_int_equal(profile_add(p, a, 3, 100, 1), 0);
	assert_int_equal(profile_add(p, b, 3, 50, 2), 0);
	assert_int_equal(profile_add(p, a, 3, 25, 3), 0);
	assert_int_equal(profile_nstacks(p), 2);
	assert_int_equal(profile_nnames(p), 4);
	s = profile_stack_at(p, 0);
	assert_int_equal(s->n, 3);
	assert_int_equal(s->bytes, 125);
	assert_int_equal(s->count, 4);
	assert_string_equal(profile_name(p, s->frames[2]), "byte[]");
	assert_int_equal(profile_total_bytes(p), 175);
	assert_int_equal(profile_total_count(p), 6);
	assert_null(profile_stack_at(p, 2));
	assert_null(profile_name(p, 4));
	profile_free(p);
	profile_free(NULL);
}

static void test_prefix_is_a_different_stack(void **state)
{
	struct profile *p = profile_new();
	const char *a[] = { "main", "work" };

	assert_int_equal(profile_add(p, a, 2, 10, 1), 0);
	assert_int_equal(profile_add(p, a, 1, 20, 1), 0);
	assert_int_equal(profile_nstacks(p), 2);
	assert_int_equal(profile_stack_at(p, 1)->n, 1);
	profile_free(p);
}

static void test_rejects_bad_depth_and_names_null(void **state)
{
	struct profile *p = profile_new();
	const char *a[] = { "main", NULL };
	const char **deep = calloc(MT_PROFILE_MAX_DEPTH + 1, sizeof(*deep));

	assert_int_equal(profile_add(p, a, 0, 1, 1), -EINVAL);
	assert_int_equal(profile_add(p, a, -1, 1, 1), -EINVAL);
	for (int i = 0; i <= MT_PROFILE_MAX_DEPTH; i++)
		deep[i] = "f";
	assert_int_equal(profile_add(p, deep, MT_PROFILE_MAX_DEPTH + 1, 1, 1), -EINVAL);
	assert_int_equal(profile_add(p, deep, MT_PROFILE_MAX_DEPTH, 1, 1), 0);
	assert_int_equal(profile_add(p, a, 2, 7, 1), 0);
	assert_int_equal(profile_nstacks(p), 2);
	assert_string_equal(profile_name(p, profile_stack_at(p, 1)->frames[1]), "[unknown]");
	free(deep);
	profile_free(p);
}

/* Many stacks and names: the tables grow, nothing is lost. */
static void test_many_stacks(void **state)
{
	struct profile *p = profile_new();
	char names[20][32];
	const char *frames[20];
	uint64_t want = 0;

	for (int i = 0; i < 5000; i++) {
		for (int k = 0; k < 20; k++) {
			snprintf(names[k], sizeof(names[k]), "f%d_%d", k, (i * (k + 1)) % 997);
			frames[k] = names[k];
		}
		assert_int_equal(profile_add(p, frames, 20, (uint64_t)i, 1), 0);
		want += (uint64_t)i;
	}
	assert_int_equal(profile_total_bytes(p), want);
	assert_int_equal(profile_total_count(p), 5000);
	assert_true(profile_nstacks(p) <= 5000);
	{
		char *html = capture_html(p, NULL);
		char *col = capture_collapsed(p);
		char tmpl[] = "/tmp/test_profile.XXXXXX";
		int fd = mkstemp(tmpl);

		assert_true(fd >= 0);
		close(fd);
		assert_int_equal(sink_pprof_write(p, tmpl), 0);
		unlink(tmpl);
		assert_non_null(strstr(html, "\"f0_0\""));
		free(html);
		free(col);
	}
	profile_free(p);
}

/* ---- profile_add_alloc: allocation stacks stitched together ---- */

/* Stack @i of @p as "root;...;leaf". */
static const char *stack_str(const struct profile *p, size_t i)
{
	static char buf[1024];
	const struct profile_stack *s = profile_stack_at(p, i);
	size_t len = 0;

	assert_non_null(s);
	buf[0] = '\0';
	for (int k = 0; k < s->n; k++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", k ? ";" : "",
					profile_name(p, s->frames[k]));
	return buf;
}

/* The one stack a single profile_add_alloc() of @a makes. */
static const char *stitch(const struct profile_alloc *a)
{
	static char out[1024];
	struct profile *p = profile_new();

	assert_non_null(p);
	assert_int_equal(profile_add_alloc(p, a), 0);
	assert_int_equal(profile_nstacks(p), 1);
	assert_int_equal(profile_stack_at(p, 0)->bytes, a->bytes);
	assert_int_equal(profile_stack_at(p, 0)->count, a->count);
	snprintf(out, sizeof(out), "%s", stack_str(p, 0));
	profile_free(p);
	return out;
}

#define MARKER "[callers: run with -XX:+PreserveFramePointer]"

static void test_alloc_without_stack(void **state)
{
	struct profile_alloc a = { .java_leaf = "pkg.A.make", .class_name = "byte[]",
				   .bytes = 64, .count = 2 };

	assert_string_equal(stitch(&a), "pkg.A.make;byte[]");
	a.java_leaf = NULL;
	assert_string_equal(stitch(&a), "[no stack];byte[]");
}

/* Frame pointers all the way: the walk has the Java frames, nothing moves. */
static void test_alloc_complete_walk(void **state)
{
	const char *f[] = { "MemAllocator::allocate", "OptoRuntime::new_instance_C",
			    "pkg.A.make", "pkg.A.run", "java.lang.Thread.run" };
	struct profile_alloc a = { f, 5, "pkg.A.make", false, "pkg.Obj", 24, 1, NULL, 0 };

	assert_string_equal(stitch(&a), "java.lang.Thread.run;pkg.A.run;pkg.A.make;"
			    "OptoRuntime::new_instance_C;MemAllocator::allocate;pkg.Obj");
	/* no Java frame known: the walk as it is */
	a.java_leaf = NULL;
	assert_string_equal(stitch(&a), "java.lang.Thread.run;pkg.A.run;pkg.A.make;"
			    "OptoRuntime::new_instance_C;MemAllocator::allocate;pkg.Obj");
}

/* The kernel's walker gave the whole Java stack: it, then (with --vm-frames)
 * the VM's allocation path from the native walk, then the class. */
static void test_alloc_walked(void **state)
{
	struct profile_frame java[] = { { .name = "java.lang.Thread.run" }, { .name = "pkg.A.run" },
					{ .name = "pkg.A.make" } };
	const char *f[] = { "MemAllocator::allocate", "OptoRuntime::new_instance_C", "[unknown]" };
	struct profile_alloc a = { NULL, 0, "pkg.A.make", false, "pkg.Obj", 24, 1, java, 3 };

	assert_string_equal(stitch(&a), "java.lang.Thread.run;pkg.A.run;pkg.A.make;pkg.Obj");
	a.frames = f;
	a.depth = 3;
	assert_string_equal(stitch(&a), "java.lang.Thread.run;pkg.A.run;pkg.A.make;"
			    "OptoRuntime::new_instance_C;MemAllocator::allocate;pkg.Obj");
	/* a walk cut short keeps its marker frame at the root */
	java[0].name = "[stack cut: depth]";
	a.frames = NULL;
	a.depth = 0;
	assert_string_equal(stitch(&a), "[stack cut: depth];pkg.A.run;pkg.A.make;pkg.Obj");
	a.java_depth = -1;
	{
		struct profile *p = profile_new();

		assert_non_null(p);
		assert_int_equal(profile_add_alloc(p, &a), -EINVAL);
		profile_free(p);
	}
}

/* The walk lost its way past the stub: the Java frame, then one marker. */
static void test_alloc_walk_lost(void **state)
{
	const char *f[] = { "MemAllocator::allocate", "OptoRuntime::new_array_C", "[unknown]",
			    "[unknown]" };
	struct profile_alloc a = { f, 4, "pkg.A.make", false, "byte[]", 1024, 1, NULL, 0 };

	assert_string_equal(stitch(&a), MARKER ";pkg.A.make;OptoRuntime::new_array_C;"
			    "MemAllocator::allocate;byte[]");
	/* nothing above the VM's path at all */
	a.depth = 2;
	assert_string_equal(stitch(&a), MARKER ";pkg.A.make;OptoRuntime::new_array_C;"
			    "MemAllocator::allocate;byte[]");
	/* no frame at all */
	a.depth = 0;
	assert_string_equal(stitch(&a), MARKER ";pkg.A.make;byte[]");
	a.java_leaf = NULL;
	assert_string_equal(stitch(&a), "byte[]");
}

/* Some callers resolved past an unresolved frame: they stay, the Java
 * frame goes under them, above the VM's path. */
static void test_alloc_walk_partial(void **state)
{
	const char *f[] = { "MemAllocator::allocate", "[unknown]", "pkg.A.run",
			    "java.lang.Thread.run" };
	struct profile_alloc a = { f, 4, "pkg.A.make", false, "byte[]", 8, 1, NULL, 0 };

	assert_string_equal(stitch(&a), "java.lang.Thread.run;pkg.A.run;[unknown];pkg.A.make;"
			    "MemAllocator::allocate;byte[]");
}

/* In the interpreter the innermost "[interpreted Java]" is the method. */
static void test_alloc_interpreted(void **state)
{
	const char *f[] = { "MemAllocator::allocate", "InterpreterRuntime::_new",
			    "[interpreted Java]", "[interpreted Java]", "start_thread" };
	struct profile_alloc a = { f, 5, "pkg.A.make", true, "pkg.Obj", 16, 1, NULL, 0 };

	assert_string_equal(stitch(&a), "start_thread;[interpreted Java];pkg.A.make;"
			    "InterpreterRuntime::_new;MemAllocator::allocate;pkg.Obj");
	assert_string_equal(f[2], "[interpreted Java]"); /* the caller's names stay */
	/* without a Method* the frame is not replaced: the Java frame goes above
	 * the VM's path, and interpreted frames are not "lost" */
	a.interpreted = false;
	assert_string_equal(stitch(&a), "start_thread;[interpreted Java];[interpreted Java];"
			    "pkg.A.make;InterpreterRuntime::_new;MemAllocator::allocate;pkg.Obj");
}

static void test_alloc_merges_and_rejects(void **state)
{
	const char *f[] = { "MemAllocator::allocate", "[unknown]" };
	struct profile_alloc a = { f, 2, "pkg.A.make", false, "byte[]", 100, 1, NULL, 0 };
	struct profile *p = profile_new();
	const char **deep = calloc(MT_PROFILE_MAX_DEPTH, sizeof(*deep));

	assert_non_null(p);
	assert_non_null(deep);
	assert_int_equal(profile_add_alloc(p, &a), 0);
	a.bytes = 50, a.count = 3;
	assert_int_equal(profile_add_alloc(p, &a), 0);
	a.class_name = "long[]";
	assert_int_equal(profile_add_alloc(p, &a), 0);
	assert_int_equal(profile_nstacks(p), 2);
	assert_int_equal(profile_stack_at(p, 0)->bytes, 150);
	assert_int_equal(profile_stack_at(p, 0)->count, 4);
	assert_string_equal(stack_str(p, 1), MARKER ";pkg.A.make;MemAllocator::allocate;long[]");
	/* bad depths change nothing */
	a.depth = -1;
	assert_int_equal(profile_add_alloc(p, &a), -EINVAL);
	for (int i = 0; i < MT_PROFILE_MAX_DEPTH; i++)
		deep[i] = "VM::alloc"; /* all the VM's path: marker, Java frame, path, class */
	a.frames = deep;
	a.depth = MT_PROFILE_MAX_DEPTH - 2;
	assert_int_equal(profile_add_alloc(p, &a), -EINVAL);
	a.depth = MT_PROFILE_MAX_DEPTH - 3; /* just fits */
	assert_int_equal(profile_add_alloc(p, &a), 0);
	assert_int_equal(profile_stack_at(p, 2)->n, MT_PROFILE_MAX_DEPTH);
	assert_int_equal(profile_nstacks(p), 3);
	free(deep);
	profile_free(p);
}

static void test_collapsed_format(void **state)
{
	struct profile *p = profile_new();
	const char *a[] = { "main", "a;b", "x\ny" };
	const char *b[] = { "main", "with space", "long[]" };
	char *out;

	assert_int_equal(profile_add(p, a, 3, 10, 1), 0);
	assert_int_equal(profile_add(p, b, 3, 30, 1), 0);
	out = capture_collapsed(p);
	/* heaviest first; ';' and control characters replaced; spaces kept */
	assert_string_equal(out, "main;with space;long[] 30\n"
				 "main;a:b;x?y 10\n");
	free(out);
	profile_free(p);
}

/* A stack whose samples weigh nothing (a thread's first sample: 0 bytes)
 * gets no line: flame graphs take every line as part of the whole. */
static void test_collapsed_no_weightless(void **state)
{
	struct profile *p = profile_new();
	const char *a[] = { "main", "work", "byte[]" };
	const char *b[] = { "main", "first", "long[]" };
	char *out;

	assert_int_equal(profile_add(p, a, 3, 4096, 2), 0);
	assert_int_equal(profile_add(p, b, 3, 0, 1), 0);
	out = capture_collapsed(p);
	assert_string_equal(out, "main;work;byte[] 4096\n");
	free(out);
	profile_free(p);
}

static void test_collapsed_empty(void **state)
{
	struct profile *p = profile_new();
	char *out = capture_collapsed(p);

	assert_string_equal(out, "");
	free(out);
	profile_free(p);
}

static void test_flamegraph_escapes_and_is_self_contained(void **state)
{
	struct profile *p = profile_new();
	const char *a[] = { "java.lang.Thread.run", "</script><script>alert(1)</script>",
			    "say \"hi\"\\ & 'bye'", "line\xe2\x80\xa8sep", "byte[]" };
	const char *b[] = { "java.lang.Thread.run", "com.example.App.main", "java.lang.String" };
	static const char *const banned[] = { "http:", "https:", "//cdn", "src=", "href=", "url(",
					      "@import", "<link", "<iframe", "fetch(",
					      "XMLHttpRequest" };
	char *html;
	const char *script;

	assert_int_equal(profile_add(p, a, 5, 4096, 4), 0);
	assert_int_equal(profile_add(p, b, 3, 1024, 1), 0);
	html = capture_html(p, "t <b>&\"'");
	/* the frames, as JS literals */
	assert_non_null(strstr(html, "\"java.lang.Thread.run\""));
	assert_non_null(strstr(html, "\"com.example.App.main\""));
	assert_non_null(strstr(html, "\"byte[]\""));
	assert_non_null(strstr(html, "\"\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"
				     "\\u003c/script\\u003e\""));
	assert_non_null(strstr(html, "\"say \\\"hi\\\"\\\\ \\u0026 \\u0027bye\\u0027\""));
	assert_non_null(strstr(html, "\"line\\u2028sep\""));
	/* the title, as HTML */
	assert_non_null(strstr(html, "<title>t &lt;b&gt;&amp;&quot;&#39;</title>"));
	/* exactly one script element, closed once: no frame name ended it */
	script = strstr(html, "<script>");
	assert_non_null(script);
	assert_null(strstr(script + 1, "<script"));
	assert_non_null(strstr(html, "</script>"));
	assert_null(strstr(strstr(html, "</script>") + 1, "</script>"));
	/* the root carries the totals: "all" is name index nnames (5 + 2 = 7) */
	assert_non_null(strstr(html, "var T = [\n7,5120,5,1,"));
	for (size_t i = 0; i < sizeof(banned) / sizeof(banned[0]); i++)
		if (strstr(html, banned[i]))
			fail_msg("flame graph HTML contains \"%s\": not self-contained", banned[i]);
	free(html);
	profile_free(p);
}

/* --- a minimal protobuf reader for the pprof checks --- */

struct pb {
	const unsigned char *p, *end;
};

static uint64_t rd_varint(struct pb *b)
{
	uint64_t v = 0;
	int shift = 0;

	while (b->p < b->end) {
		unsigned char c = *b->p++;

		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
		shift += 7;
	}
	fail_msg("truncated varint");
	return 0;
}

/* next field: returns 0 at the end; sets *field, and either *v or *sub */
static int rd_field(struct pb *b, int *field, uint64_t *v, struct pb *sub)
{
	uint64_t key, len;

	if (b->p >= b->end)
		return 0;
	key = rd_varint(b);
	*field = (int)(key >> 3);
	switch (key & 7) {
	case 0:
		*v = rd_varint(b);
		sub->p = sub->end = NULL;
		return 1;
	case 2:
		len = rd_varint(b);
		assert_true(len <= (uint64_t)(b->end - b->p));
		sub->p = b->p;
		sub->end = b->p + len;
		b->p += len;
		return 2;
	default:
		fail_msg("unexpected wire type %d", (int)(key & 7));
	}
	return 0;
}

struct decoded {
	char *strings[64];
	int nstrings;
	int nsamples;
	uint64_t bytes_total, count_total;
	uint64_t first_leaf_loc; /* location id of the first sample's first entry */
	int nlocations, nfunctions;
	uint64_t default_type;
	int nsample_types;
};

static void decode(const unsigned char *d, size_t n, struct decoded *out)
{
	struct pb b = { d, d + n }, sub, sub2;
	uint64_t v;
	int field, f2, k;

	memset(out, 0, sizeof(*out));
	while ((k = rd_field(&b, &field, &v, &sub))) {
		if (field == 1 && k == 2)
			out->nsample_types++;
		if (field == 4 && k == 2)
			out->nlocations++;
		if (field == 5 && k == 2)
			out->nfunctions++;
		if (field == 14 && k == 1)
			out->default_type = v;
		if (field == 6 && k == 2 && out->nstrings < 64)
			out->strings[out->nstrings++] =
				strndup((const char *)sub.p, (size_t)(sub.end - sub.p));
		if (field == 2 && k == 2) {
			int idx = 0;

			while ((k = rd_field(&sub, &f2, &v, &sub2))) {
				if (f2 == 1 && k == 2 && out->nsamples == 0)
					out->first_leaf_loc = rd_varint(&sub2);
				if (f2 == 2 && k == 2) {
					for (idx = 0; sub2.p < sub2.end; idx++) {
						uint64_t x = rd_varint(&sub2);

						if (idx == 0)
							out->bytes_total += x;
						else
							out->count_total += x;
					}
					assert_int_equal(idx, 2);
				}
			}
			out->nsamples++;
		}
	}
}

static void test_pprof_roundtrip(void **state)
{
	struct profile *p = profile_new();
	const char *a[] = { "main", "work", "byte[]" };
	const char *b[] = { "main", "other", "long[]" };
	char tmpl[] = "/tmp/test_profile.XXXXXX";
	unsigned char buf[1 << 16];
	struct decoded dec;
	gzFile gz;
	int fd, n;

	assert_int_equal(profile_add(p, a, 3, 1000, 10), 0);
	assert_int_equal(profile_add(p, b, 3, 500, 5), 0);
	fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(sink_pprof_write(p, tmpl), 0);
	gz = gzopen(tmpl, "rb");
	assert_non_null(gz);
	n = gzread(gz, buf, sizeof(buf));
	gzclose(gz);
	unlink(tmpl);
	assert_true(n > 0);
	decode(buf, (size_t)n, &dec);

	assert_int_equal(dec.nsample_types, 2);
	assert_int_equal(dec.nsamples, 2);
	assert_int_equal(dec.bytes_total, 1500);
	assert_int_equal(dec.count_total, 15);
	assert_int_equal(dec.nlocations, 5);
	assert_int_equal(dec.nfunctions, 5);
	assert_true(dec.nstrings > 5);
	assert_string_equal(dec.strings[0], "");
	assert_string_equal(dec.strings[dec.default_type], "alloc_space");
	/* leaf first: the first sample starts at byte[], the first location made */
	assert_int_equal(dec.first_leaf_loc, 1);
	{
		int seen = 0;

		for (int i = 0; i < dec.nstrings; i++) {
			seen += !strcmp(dec.strings[i], "byte[]") || !strcmp(dec.strings[i], "long[]") ||
				!strcmp(dec.strings[i], "main");
			free(dec.strings[i]);
		}
		assert_int_equal(seen, 6); /* each as name and as system name */
	}
	profile_free(p);
}

/* Frames with kinds and lines: distinct frames, one label per name and kind;
 * collapsed stacks carry the suffixes and merge what differs by line only. */
static void test_frames_kinds_and_labels(void **state)
{
	struct profile *p = profile_new();
	struct profile_frame a[] = {
		{ "java.lang.Thread.run", "Thread.java", 840, PROFILE_INTERPRETED },
		{ "pkg.A.run", "A.java", 10, PROFILE_C2 },
		{ "pkg.A.inl", "A.java", 20, PROFILE_INLINED },
		{ "pkg.B.c1", "B.java", 5, PROFILE_C1 },
		{ "byte[]", NULL, 0, PROFILE_OTHER },
	};
	struct profile_frame b[5];
	char *out, *html;

	memcpy(b, a, sizeof(a));
	b[2].line = 21; /* another line of the same inlined method */
	assert_int_equal(profile_add_frames(p, a, 5, 100, 1), 0);
	assert_int_equal(profile_add_frames(p, b, 5, 50, 1), 0);
	assert_int_equal(profile_nstacks(p), 2);
	assert_int_equal(profile_nnames(p), 6);
	assert_int_equal(profile_nlabels(p), 5);
	assert_int_equal(profile_label_id(p, profile_stack_at(p, 0)->frames[2]),
			 profile_label_id(p, profile_stack_at(p, 1)->frames[2]));
	assert_int_equal(profile_frame(p, profile_stack_at(p, 1)->frames[2])->line, 21);
	assert_string_equal(profile_frame(p, profile_stack_at(p, 0)->frames[0])->file, "Thread.java");
	assert_null(profile_frame(p, profile_stack_at(p, 0)->frames[4])->file);
	assert_string_equal(profile_label(p, profile_label_id(p, profile_stack_at(p, 0)->frames[1])),
			    "pkg.A.run_[j]");
	assert_null(profile_frame(p, 6));
	assert_int_equal(profile_label_id(p, 6), UINT32_MAX);
	assert_null(profile_label(p, 5));
	assert_string_equal(profile_kind_name(PROFILE_C1), "c1");
	assert_string_equal(profile_kind_suffix(PROFILE_NATIVE), "");
	/* the same method as C1 code is another label */
	a[1].kind = PROFILE_C1;
	assert_int_equal(profile_add_frames(p, a, 5, 1, 1), 0);
	assert_int_equal(profile_nlabels(p), 6);
	a[1].kind = PROFILE_NKINDS;
	assert_int_equal(profile_add_frames(p, a, 5, 1, 1), -EINVAL);
	out = capture_collapsed(p);
	assert_string_equal(out, "java.lang.Thread.run_[0];pkg.A.run_[j];pkg.A.inl_[i];pkg.B.c1_[1];byte[] 150\n"
				 "java.lang.Thread.run_[0];pkg.A.run_[1];pkg.A.inl_[i];pkg.B.c1_[1];byte[] 1\n");
	free(out);
	html = capture_html(p, NULL);
	assert_non_null(strstr(html, "\"pkg.A.inl_[i]\""));
	/* one tree node for both lines of pkg.A.inl under pkg.A.run_[j] */
	assert_null(strstr(strstr(html, "\"pkg.A.inl_[i]\"") + 1, "\"pkg.A.inl_[i]\""));
	free(html);
	profile_free(p);
}

/* pprof: a compiled frame and the frames inlined into it are one location
 * with one line each (innermost first); lines and files are kept; the
 * function's system name carries the kind's suffix. */
static void test_pprof_inlined_lines(void **state)
{
	struct profile *p = profile_new();
	struct profile_frame a[] = {
		{ "java.lang.Thread.run", "Thread.java", 840, PROFILE_INTERPRETED },
		{ "pkg.A.run", "A.java", 10, PROFILE_C2 },
		{ "pkg.A.inl", "A.java", 20, PROFILE_INLINED },
		{ "pkg.A.deeper", "A.java", 30, PROFILE_INLINED },
		{ "byte[]", NULL, 0, PROFILE_OTHER },
	};
	char tmpl[] = "/tmp/test_profile.XXXXXX";
	unsigned char buf[1 << 16];
	char *strs[64];
	int nstr = 0, fd, n, field, k, f2, f3, nloc = 0, nlines[8] = { 0 };
	uint64_t line_fn[8][4] = { { 0 } }, line_no[8][4] = { { 0 } }, v;
	uint64_t fn_name[8] = { 0 }, fn_sys[8] = { 0 }, fn_file[8] = { 0 };
	struct pb b, sub, sub2, sub3;
	gzFile gz;

	assert_int_equal(profile_add_frames(p, a, 5, 64, 1), 0);
	fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(sink_pprof_write(p, tmpl), 0);
	gz = gzopen(tmpl, "rb");
	n = gzread(gz, buf, sizeof(buf));
	gzclose(gz);
	unlink(tmpl);
	assert_true(n > 0);
	b = (struct pb){ buf, buf + n };
	while ((k = rd_field(&b, &field, &v, &sub))) {
		if (field == 6 && k == 2 && nstr < 64)
			strs[nstr++] = strndup((const char *)sub.p, (size_t)(sub.end - sub.p));
		if (field == 4 && k == 2) { /* Location: id 1, line 4 {function_id 1, line 2} */
			uint64_t id = 0;
			int nl = 0;
			uint64_t fns[4], lns[4];

			while ((k = rd_field(&sub, &f2, &v, &sub2))) {
				if (f2 == 1)
					id = v;
				if (f2 == 4 && k == 2 && nl < 4) {
					fns[nl] = lns[nl] = 0;
					while (rd_field(&sub2, &f3, &v, &sub3))
						if (f3 == 1)
							fns[nl] = v;
						else if (f3 == 2)
							lns[nl] = v;
					nl++;
				}
			}
			assert_true(id >= 1 && id < 8);
			nlines[id] = nl;
			memcpy(line_fn[id], fns, sizeof(fns));
			memcpy(line_no[id], lns, sizeof(lns));
			nloc++;
		}
		if (field == 5 && k == 2) { /* Function: id 1, name 2, system_name 3, filename 4 */
			uint64_t id = 0, nm = 0, sy = 0, fl = 0;

			while (rd_field(&sub, &f2, &v, &sub2))
				if (f2 == 1)
					id = v;
				else if (f2 == 2)
					nm = v;
				else if (f2 == 3)
					sy = v;
				else if (f2 == 4)
					fl = v;
			assert_true(id >= 1 && id < 8);
			fn_name[id] = nm, fn_sys[id] = sy, fn_file[id] = fl;
		}
	}
	/* byte[], then A.run with its two inlined frames, then Thread.run */
	assert_int_equal(nloc, 3);
	assert_int_equal(nlines[1], 1);
	assert_int_equal(nlines[2], 3);
	assert_int_equal(nlines[3], 1);
	assert_string_equal(strs[fn_name[line_fn[2][0]]], "pkg.A.deeper");
	assert_string_equal(strs[fn_sys[line_fn[2][0]]], "pkg.A.deeper_[i]");
	assert_int_equal(line_no[2][0], 30);
	assert_string_equal(strs[fn_name[line_fn[2][2]]], "pkg.A.run");
	assert_string_equal(strs[fn_sys[line_fn[2][2]]], "pkg.A.run_[j]");
	assert_string_equal(strs[fn_file[line_fn[2][2]]], "A.java");
	assert_int_equal(line_no[2][2], 10);
	assert_string_equal(strs[fn_sys[line_fn[3][0]]], "java.lang.Thread.run_[0]");
	assert_int_equal(line_no[3][0], 840);
	assert_int_equal(line_no[1][0], 0); /* the class: no line */
	for (int i = 0; i < nstr; i++)
		free(strs[i]);
	profile_free(p);
}

static void test_pprof_bad_path(void **state)
{
	struct profile *p = profile_new();

	assert_true(sink_pprof_write(p, "/nonexistent-dir/x.pb.gz") < 0);
	profile_free(p);
}

static void test_order_by_bytes(void **state)
{
	struct profile *p = profile_new();
	const char *a[] = { "a" }, *b[] = { "b" }, *c[] = { "c" }, *d[] = { "d" };
	size_t *o;

	assert_non_null(p);
	o = profile_order_by_bytes(p); /* empty: still an array to free */
	assert_non_null(o);
	free(o);
	assert_int_equal(profile_add(p, a, 1, 10, 1), 0);
	assert_int_equal(profile_add(p, b, 1, 30, 1), 0);
	assert_int_equal(profile_add(p, c, 1, 10, 1), 0);
	assert_int_equal(profile_add(p, d, 1, 20, 1), 0);
	o = profile_order_by_bytes(p);
	assert_non_null(o);
	/* heaviest first, equal weights in order of first appearance */
	assert_int_equal(o[0], 1);
	assert_int_equal(o[1], 3);
	assert_int_equal(o[2], 0);
	assert_int_equal(o[3], 2);
	free(o);
	profile_free(p);
}

/* sink_write_files: each file asked for is written; a failure is reported
 * for its file and the others are still written. */
static void test_write_files(void **state)
{
	struct profile *p = profile_new();
	const char *a[] = { "main", "long[]" };
	char dir[] = "/tmp/mt-test-sinkfiles.XXXXXX", col[64], fg[64], pb[64], *text;
	FILE *f;
	long n;

	assert_non_null(mkdtemp(dir));
	snprintf(col, sizeof(col), "%s/c.txt", dir);
	snprintf(fg, sizeof(fg), "%s/f.html", dir);
	snprintf(pb, sizeof(pb), "%s/p.pb.gz", dir);
	assert_int_equal(profile_add(p, a, 2, 64, 1), 0);
	assert_int_equal(sink_write_files(p, &(struct sink_files){ col, fg, pb }, "t"), 0);
	f = fopen(col, "r");
	assert_non_null(f);
	text = calloc(1, 64);
	assert_non_null(text);
	assert_non_null(fgets(text, 64, f));
	assert_string_equal(text, "main;long[] 64\n");
	fclose(f);
	free(text);
	f = fopen(fg, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fclose(f);
	assert_true(n > 100);
	assert_int_equal(access(pb, R_OK), 0);
	assert_int_equal(unlink(col), 0);
	/* nothing asked for: nothing written, no error */
	assert_int_equal(sink_write_files(p, &(struct sink_files){ NULL, NULL, NULL }, "t"), 0);
	assert_int_equal(access(col, F_OK), -1);
	/* an unwritable collapsed file: -EIO, the pprof beside it still written */
	assert_int_equal(unlink(pb), 0);
	assert_int_equal(sink_write_files(p, &(struct sink_files){ "/nonexistent-dir/c", NULL, pb },
					  "t"), -EIO);
	assert_int_equal(access(pb, R_OK), 0);
	unlink(pb);
	unlink(fg);
	rmdir(dir);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merges_identical_stacks),
		cmocka_unit_test(test_prefix_is_a_different_stack),
		cmocka_unit_test(test_rejects_bad_depth_and_names_null),
		cmocka_unit_test(test_many_stacks),
		cmocka_unit_test(test_alloc_without_stack),
		cmocka_unit_test(test_alloc_complete_walk),
		cmocka_unit_test(test_alloc_walk_lost),
		cmocka_unit_test(test_alloc_walked),
		cmocka_unit_test(test_alloc_walk_partial),
		cmocka_unit_test(test_alloc_interpreted),
		cmocka_unit_test(test_alloc_merges_and_rejects),
		cmocka_unit_test(test_collapsed_format),
		cmocka_unit_test(test_collapsed_empty),
		cmocka_unit_test(test_collapsed_no_weightless),
		cmocka_unit_test(test_flamegraph_escapes_and_is_self_contained),
		cmocka_unit_test(test_pprof_roundtrip),
		cmocka_unit_test(test_frames_kinds_and_labels),
		cmocka_unit_test(test_pprof_inlined_lines),
		cmocka_unit_test(test_pprof_bad_path),
		cmocka_unit_test(test_order_by_bytes),
		cmocka_unit_test(test_write_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
