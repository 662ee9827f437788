/* test_attach.c - the pure parts of attach: HotSpot listener replies (JDK 8,
 * 9-20, 21+ formats as measured on JDK 17 and 25), request encoding, the
 * SIGQUIT check, the agent wire protocol (incl. malformed and truncated
 * frames), and agent placement inside a fake target root (planted symlinks). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "agentctl/agentfile.h"
#include "agentctl/agentsock.h"
#include "jvm/attach.h"
#include "memtrace/agent_proto.h"

#define S(lit) lit, sizeof(lit) - 1

static void test_reply_load_ok(void **state)
{
	struct mt_attach_reply r;

	/* JDK 9+ (17 and 25 alike) */
	assert_int_equal(attach_parse_reply(S("0\nreturn code: 0\n"), true, &r), 0);
	assert_int_equal(r.code, 0);
	assert_int_equal(r.agent_rc, 0);
	assert_string_equal(r.text, "return code: 0");
	/* Agent_OnAttach returned 2 */
	assert_int_equal(attach_parse_reply(S("0\nreturn code: 2\n"), true, &r), 0);
	assert_int_equal(r.agent_rc, 2);
	assert_int_equal(attach_parse_reply(S("0\nreturn code: -1\n"), true, &r), 0);
	assert_int_equal(r.agent_rc, -1);
	/* JDK 8: a bare number */
	assert_int_equal(attach_parse_reply(S("0\n0\n"), true, &r), 0);
	assert_int_equal(r.agent_rc, 0);
	/* CRLF and no final newline */
	assert_int_equal(attach_parse_reply(S("0\r\nreturn code: 7"), true, &r), 0);
	assert_int_equal(r.agent_rc, 7);
}

static void test_reply_load_refused(void **state)
{
	struct mt_attach_reply r;

	/* JDK 17: the library cannot be loaded */
	assert_int_equal(attach_parse_reply(S("-1\n/x.so was not loaded.\n/x.so: cannot open "
					      "shared object file\n"), true, &r), 0);
	assert_int_equal(r.code, -1);
	assert_int_equal(r.agent_rc, MT_ATTACH_NO_RC);
	assert_non_null(strstr(r.text, "was not loaded"));
	/* JDK 25: code 0, but a message instead of a return code */
	assert_int_equal(attach_parse_reply(S("0\n/x.so was not loaded.\n"), true, &r), 0);
	assert_int_equal(r.code, 0);
	assert_int_equal(r.agent_rc, MT_ATTACH_NO_RC);
	assert_string_equal(r.text, "/x.so was not loaded.");
	assert_int_equal(attach_parse_reply(S("0\nAgent_OnAttach is not available in "
					      "/lib/libc.so.6\n"), true, &r), 0);
	assert_int_equal(r.agent_rc, MT_ATTACH_NO_RC);
	/* "return code:" with no number */
	assert_int_equal(attach_parse_reply(S("0\nreturn code: \n"), true, &r), 0);
	assert_int_equal(r.agent_rc, MT_ATTACH_NO_RC);
}

static void test_reply_other(void **state)
{
	struct mt_attach_reply r;
	char big[5000];

	assert_int_equal(attach_parse_reply(S("-1\nOperation bogus not recognized!"), false, &r), 0);
	assert_int_equal(r.code, -1);
	assert_string_equal(r.text, "Operation bogus not recognized!");
	/* not a load: a number on line 2 is not an agent rc */
	assert_int_equal(attach_parse_reply(S("0\n5\n"), false, &r), 0);
	assert_int_equal(r.agent_rc, MT_ATTACH_NO_RC);
	/* malformed first lines */
	assert_int_equal(attach_parse_reply(S(""), true, &r), -EBADMSG);
	assert_int_equal(attach_parse_reply(S("\n"), true, &r), -EBADMSG);
	assert_int_equal(attach_parse_reply(S("abc\n"), true, &r), -EBADMSG);
	assert_int_equal(attach_parse_reply(S("0x\n"), true, &r), -EBADMSG);
	assert_int_equal(attach_parse_reply(S("-\n"), true, &r), -EBADMSG);
	assert_int_equal(attach_parse_reply(S("99999999999\n"), true, &r), -EBADMSG);
	/* a long reply is truncated, NULs are made visible */
	memset(big, 'x', sizeof(big));
	big[0] = '0';
	big[1] = '\n';
	big[10] = '\0';
	assert_int_equal(attach_parse_reply(big, sizeof(big), false, &r), 0);
	assert_int_equal(strlen(r.text), sizeof(r.text) - 1);
	/* just the code */
	assert_int_equal(attach_parse_reply(S("0"), false, &r), 0);
	assert_int_equal(r.code, 0);
	assert_string_equal(r.text, "");
}

static void test_request(void **state)
{
	char buf[64];
	int n;

	n = attach_build_request(buf, sizeof(buf), "load", "/a.so", "true", "sock=/s");
	assert_int_equal(n, (int)sizeof("1\0load\0/a.so\0true\0sock=/s"));
	assert_memory_equal(buf, "1\0load\0/a.so\0true\0sock=/s\0", (size_t)n);
	n = attach_build_request(buf, sizeof(buf), "properties", NULL, NULL, NULL);
	assert_int_equal(n, (int)sizeof("1\0properties\0\0\0"));
	assert_memory_equal(buf, "1\0properties\0\0\0\0", (size_t)n);
	/* exactly full, then one byte short */
	n = attach_build_request(buf, 8, "ab", "c", "d", "e");
	assert_int_equal(n, 11 > 8 ? -ENAMETOOLONG : 11);
	n = attach_build_request(buf, 11, "ab", "c", "d", "e");
	assert_int_equal(n, 11);
	assert_int_equal(attach_build_request(buf, 10, "ab", "c", "d", "e"), -ENAMETOOLONG);
}

static void test_sigquit(void **state)
{
	/* a JVM: SIGQUIT (bit 2) caught */
	assert_int_equal(attach_sigquit_caught("Name:\tjava\nSigIgn:\t0000000000000000\n"
					       "SigCgt:\t2000000181005ccf\n"), 1);
	/* -Xrs: no SIGQUIT handler */
	assert_int_equal(attach_sigquit_caught("Name:\tjava\nSigCgt:\t2000000181005cc8\n"), 0);
	assert_int_equal(attach_sigquit_caught("Name:\tjava\n"), -EINVAL);
}

static void test_proto_roundtrip(void **state)
{
	char buf[512];
	struct mt_ap_hello hello = { 1, 1, 42 };
	struct mt_ap_hello_reply rep = { .version = 1, .pid = 7 };
	struct mt_ap_ping ping = { 0x1122334455667788ull };
	struct mt_ap_hdr h;
	const void *pl;
	long n;

	n = mt_ap_encode(buf, sizeof(buf), MT_AP_HELLO, 9, &hello, sizeof(hello));
	assert_int_equal(n, MT_AP_HDR_SIZE + 8);
	assert_int_equal(mt_ap_decode(buf, (size_t)n, &h, &pl), n);
	assert_int_equal(h.type, MT_AP_HELLO);
	assert_int_equal(h.seq, 9);
	assert_memory_equal(pl, &hello, sizeof(hello));

	snprintf(rep.agent_version, sizeof(rep.agent_version), "0.1.0");
	n = mt_ap_encode(buf, sizeof(buf), MT_AP_HELLO_REPLY, 9, &rep, sizeof(rep));
	assert_int_equal(mt_ap_decode(buf, (size_t)n, &h, &pl), n);
	assert_memory_equal(pl, &rep, sizeof(rep));

	/* two frames back to back: PING then DETACH (empty payload) */
	n = mt_ap_encode(buf, sizeof(buf), MT_AP_PING, 1, &ping, sizeof(ping));
	assert_int_equal(mt_ap_encode(buf + n, sizeof(buf) - (size_t)n, MT_AP_DETACH, 2, NULL, 0),
			 MT_AP_HDR_SIZE);
	assert_int_equal(mt_ap_decode(buf, (size_t)n + MT_AP_HDR_SIZE, &h, &pl), n);
	assert_int_equal(h.type, MT_AP_PING);
	assert_int_equal(mt_ap_decode(buf + n, MT_AP_HDR_SIZE, &h, &pl), MT_AP_HDR_SIZE);
	assert_int_equal(h.type, MT_AP_DETACH);
	assert_int_equal(h.len, 0);
}

static void test_proto_truncated(void **state)
{
	char buf[512];
	struct mt_ap_hello_reply rep = { 0 };
	struct mt_ap_hdr h;
	const void *pl;
	long n = mt_ap_encode(buf, sizeof(buf), MT_AP_HELLO_REPLY, 1, &rep, sizeof(rep));

	/* every strict prefix asks for more, never reads past it */
	for (long i = 0; i < n; i++) {
		char *copy = malloc((size_t)i + 1); /* ASan catches an over-read */

		memcpy(copy, buf, (size_t)i);
		assert_int_equal(mt_ap_decode(copy, (size_t)i, &h, &pl), -EAGAIN);
		free(copy);
	}
	assert_int_equal(mt_ap_decode(buf, (size_t)n, &h, &pl), n);
}

static void test_proto_malformed(void **state)
{
	char buf[512];
	struct mt_ap_ping ping = { 1 };
	struct mt_ap_hdr h, *w = (struct mt_ap_hdr *)buf;
	const void *pl;
	long n;

	n = mt_ap_encode(buf, sizeof(buf), MT_AP_PING, 1, &ping, sizeof(ping));
	w->magic ^= 1;
	assert_int_equal(mt_ap_decode(buf, (size_t)n, &h, &pl), -EBADMSG);
	w->magic ^= 1;
	w->version = MT_AP_VERSION + 1;
	assert_int_equal(mt_ap_decode(buf, (size_t)n, &h, &pl), -EPROTONOSUPPORT);
	w->version = MT_AP_VERSION;
	/* an oversized length is refused from the header alone */
	w->len = 0xffffffffu;
	assert_int_equal(mt_ap_decode(buf, MT_AP_HDR_SIZE, &h, &pl), -EMSGSIZE);
	w->len = MT_AP_MAX_PAYLOAD + 1;
	assert_int_equal(mt_ap_decode(buf, MT_AP_HDR_SIZE, &h, &pl), -EMSGSIZE);
	/* a length that does not match the type */
	w->len = 4;
	assert_int_equal(mt_ap_decode(buf, (size_t)n, &h, &pl), -EPROTO);
	w->len = sizeof(ping);
	w->type = 0;
	assert_int_equal(mt_ap_decode(buf, (size_t)n, &h, &pl), -ENOMSG);
	w->type = MT_AP_TYPE_MAX + 1;
	assert_int_equal(mt_ap_decode(buf, (size_t)n, &h, &pl), -ENOMSG);
	w->type = MT_AP_DETACH; /* DETACH carries nothing */
	assert_int_equal(mt_ap_decode(buf, (size_t)n, &h, &pl), -EPROTO);
	/* encode limits */
	assert_int_equal(mt_ap_encode(buf, 10, MT_AP_DETACH, 0, NULL, 0), -EMSGSIZE);
	assert_int_equal(mt_ap_encode(buf, sizeof(buf), MT_AP_PING, 0, &ping, sizeof(buf)),
			 -EMSGSIZE);
	assert_int_equal(mt_ap_encode(buf, sizeof(buf), MT_AP_PING, 0, NULL, 8), -EINVAL);
	assert_int_equal(mt_ap_encode(buf, sizeof(buf), MT_AP_PING, 0, &ping,
				      (size_t)MT_AP_MAX_PAYLOAD + 1), -EMSGSIZE);
}

static void test_paths(void **state)
{
	char buf[128];

	agentsock_path(4242, buf, sizeof(buf));
	assert_string_equal(buf, "/tmp/.memtrace-4242.sock");
	agentfile_name(buf, sizeof(buf));
	assert_string_equal(buf, "libmemtrace-agent-" MT_VERSION ".so");
}

/* A fake target: its root is a temp dir with a tmp/ directory. */
struct fake {
	char root[64];
	char src[128];
	struct mt_proc p;
};

static void fake_setup(struct fake *f)
{
	char tmp[128];
	int fd;

	snprintf(f->root, sizeof(f->root), "/tmp/mt-test-root.XXXXXX");
	assert_non_null(mkdtemp(f->root));
	snprintf(tmp, sizeof(tmp), "%s/tmp", f->root);
	assert_int_equal(mkdir(tmp, 01777), 0);
	snprintf(f->src, sizeof(f->src), "%s/src.so", f->root);
	fd = open(f->src, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "\177ELF-fake", 9), 9);
	close(fd);
	memset(&f->p, 0, sizeof(f->p));
	f->p.pid = 1;
	f->p.uid = geteuid();
	f->p.gid = getegid();
	snprintf(f->p.root, sizeof(f->p.root), "%s", f->root);
}

static void fake_teardown(struct fake *f)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
	assert_int_equal(system(cmd), 0);
}

static void test_place_and_remove(void **state)
{
	struct fake f;
	struct mt_agentfile af;
	char host[PATH_MAX + 128], name[96], buf[32];
	struct stat st;
	int fd;

	fake_setup(&f);
	agentfile_name(name, sizeof(name));
	assert_int_equal(agentfile_place(&f.p, f.src, &af), 0);
	snprintf(host, sizeof(host), "/tmp/.memtrace-%u/%s", (unsigned)f.p.uid, name);
	assert_string_equal(af.path, host);
	/* the copy, seen from the host through the fake root */
	snprintf(host, sizeof(host), "%s%s", f.root, af.path);
	fd = open(host, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 9);
	assert_memory_equal(buf, "\177ELF-fake", 9);
	close(fd);
	snprintf(host, sizeof(host), "%s/tmp/.memtrace-%u", f.root, (unsigned)f.p.uid);
	assert_int_equal(lstat(host, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(st.st_uid, f.p.uid);
	agentfile_remove(&af);
	agentfile_remove(&af); /* twice is a no-op */
	assert_int_equal(lstat(host, &st), -1); /* created by us, removed when empty */
	fake_teardown(&f);
}

static void test_planted_symlinks(void **state)
{
	struct fake f;
	struct mt_agentfile af;
	char dir[512], file[768], victim[256], name[96];
	struct stat st;
	int err;

	fake_setup(&f);
	agentfile_name(name, sizeof(name));
	snprintf(victim, sizeof(victim), "%s/victim", f.root);
	snprintf(dir, sizeof(dir), "%s/tmp/.memtrace-%u", f.root, (unsigned)f.p.uid);

	/* a symlink at the directory's name */
	assert_int_equal(mkdir(victim, 0755), 0);
	assert_int_equal(symlink(victim, dir), 0);
	err = agentfile_place(&f.p, f.src, &af);
	assert_true(err == -ENOTDIR || err == -ELOOP); /* O_NOFOLLOW|O_DIRECTORY: ENOTDIR */
	snprintf(file, sizeof(file), "%s/%s", victim, name);
	assert_int_equal(lstat(file, &st), -1); /* nothing written through it */
	assert_int_equal(unlink(dir), 0);

	/* a symlink at the file's name */
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(file, sizeof(file), "%s/%s", dir, name);
	assert_int_equal(symlink(f.src, file), 0);
	assert_int_equal(agentfile_place(&f.p, f.src, &af), -EEXIST);
	assert_int_equal(lstat(file, &st), 0);
	assert_true(S_ISLNK(st.st_mode)); /* refused, not followed, not removed */
	assert_int_equal(stat(f.src, &st), 0);
	assert_int_equal(st.st_size, 9); /* the link's target is untouched */
	assert_int_equal(unlink(file), 0);

	/* a leftover regular file of an interrupted memtrace is replaced */
	assert_int_equal(close(open(file, O_WRONLY | O_CREAT, 0600)), 0);
	assert_int_equal(agentfile_place(&f.p, f.src, &af), 0);
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_size, 9);
	agentfile_remove(&af);
	assert_int_equal(lstat(dir, &st), 0); /* not ours: kept */
	fake_teardown(&f);
}

static void test_foreign_dir(void **state)
{
	struct fake f;
	struct mt_agentfile af;
	char dir[256];

	if (geteuid() != 0)
		skip();
	fake_setup(&f);
	snprintf(dir, sizeof(dir), "%s/tmp/.memtrace-%u", f.root, (unsigned)f.p.uid);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(chown(dir, 12345, 12345), 0);
	assert_int_equal(agentfile_place(&f.p, f.src, &af), -EPERM);
	fake_teardown(&f);
}

/* attach_remove_stale: a socket someone listens on stays, one whose
 * listener is gone (a JVM killed -9) goes; other files and absent names are
 * left alone. */
static void test_remove_stale(void **state)
{
	char dir[] = "/tmp/test_attach.XXXXXX";
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int dfd, fd, f;

	assert_non_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/.java_pid42", dir);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(attach_remove_stale(dfd, ".java_pid42"), 0); /* alive */
	assert_int_equal(faccessat(dfd, ".java_pid42", F_OK, AT_SYMLINK_NOFOLLOW), 0);
	close(fd);                                                       /* its JVM is gone */
	assert_int_equal(attach_remove_stale(dfd, ".java_pid42"), 1);
	assert_int_equal(faccessat(dfd, ".java_pid42", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	assert_int_equal(attach_remove_stale(dfd, ".java_pid42"), 0);    /* absent */
	f = openat(dfd, ".memtrace-42.sock", O_CREAT | O_WRONLY, 0600);   /* not a socket */
	assert_true(f >= 0);
	close(f);
	assert_int_equal(attach_remove_stale(dfd, ".memtrace-42.sock"), 0);
	assert_int_equal(faccessat(dfd, ".memtrace-42.sock", F_OK, 0), 0);
	unlinkat(dfd, ".memtrace-42.sock", 0);
	close(dfd);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reply_load_ok),
		cmocka_unit_test(test_reply_load_refused),
		cmocka_unit_test(test_reply_other),
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_sigquit),
		cmocka_unit_test(test_proto_roundtrip),
		cmocka_unit_test(test_proto_truncated),
		cmocka_unit_test(test_proto_malformed),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_place_and_remove),
		cmocka_unit_test(test_remove_stale),
		cmocka_unit_test(test_planted_symlinks),
		cmocka_unit_test(test_foreign_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
