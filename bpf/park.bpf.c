// SPDX-License-Identifier: GPL-2.0
/*
 * park.bpf.c - java.util.concurrent parks per blocker object, aggregated in
 * the kernel (see include/memtrace/park.h). Each program is a uprobe at one
 * site of its USDT probe, attached by user/probe/usdtspec.c with the site's
 * argument spec as cookie.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "memtrace/jvmev.h"
#include "memtrace/park.h"
#include "maps.bpf.h"
#include "usdt_args.bpf.h"
#include "jstack.bpf.h" /* the waiters' stacks (targ_jw.nheaps 0: not walked) */

/* Filled by user space before load (VMStructs and the Java field tables). */
const volatile __u32 targ_tgid = 0;        /* host tgid of the JVM; 0 = any */
const volatile __u32 targ_threadobj = 0;   /* JavaThread::_threadObj (OopHandle) */
const volatile __u32 targ_f_blocker = 0;   /* java.lang.Thread.parkBlocker */
const volatile __u32 targ_f_eetop = 0;     /* java.lang.Thread.eetop (JavaThread*) */
const volatile __u32 targ_osthread = 0;    /* JavaThread/Thread::_osthread */
const volatile __u32 targ_os_tid = 0;      /* OSThread::_thread_id */
const volatile __u32 targ_klass_off = 8;   /* oopDesc::_metadata */
const volatile __u32 targ_coops = 1;       /* references are narrow */
const volatile __u32 targ_ccp = 1;         /* klass words are narrow */
const volatile __u32 targ_mark_klass_shift = 0; /* compact headers: the klass is mark >> this */
const volatile __u32 targ_same_pidns = 0; /* the JVM's tids are ours: the Parker scan can check them */
const volatile __u64 targ_oop_base = 0;
const volatile __u32 targ_oop_shift = 0;
const volatile __u64 targ_klass_base = 0;
const volatile __u32 targ_klass_shift = 0;
const volatile __u32 targ_aggregate = 1;   /* count parks per blocker in park_locks */
const volatile __u32 targ_stream = 0;      /* send each park and sleep to jvm_events */
const volatile __u32 targ_klass_name = 0;  /* Klass::_name (the blocker's type key) */
const volatile __u32 targ_sym_body = 0;    /* Symbol::_body */

/*
 * With targ_stream: the collector's ring buffer and drop counter (user space
 * makes them bpf/jvmev.bpf.c's maps with bpf_map__reuse_fd before load), so
 * that a thread's parks stay in order with its other events.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} jvm_events SEC(".maps");

MT_DEFINE_DROPS(jvm_drops);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MT_PARK_MAX_LOCKS);
	__type(key, struct mt_park_key);
	__type(value, struct mt_park_val);
} park_locks SEC(".maps");

/* kernel tid -> JavaThread*, filled by user space from the JVM's thread list */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MT_PARK_MAX_THREADS);
	__type(key, __u32);
	__type(value, __u64);
} park_jthreads SEC(".maps");

/* parking threads whose JavaThread was unknown: tid -> Parker*, for user
 * space to learn Parker* - JavaThread* once it has listed the thread */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} park_unknown SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MT_PARK_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct mt_park_inflight);
} park_inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mt_park_cfg);
} park_cfg SEC(".maps");

/* names of the threads started while tracing (owners and waiters may be gone
 * when the counters are read); LRU: long runs start many threads */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MT_PARK_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct mt_park_name);
} park_names SEC(".maps");

/* --stacks: contended monitor entries per (monitor, contending stack) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MT_PARK_MAX_LOCKS);
	__type(key, struct mt_mon_key);
	__type(value, struct mt_mon_val);
} mon_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MT_PARK_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct mt_mon_inflight);
} mon_inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MT_PARK_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} park_stats SEC(".maps");

static __always_inline void stat(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&park_stats, &which);

	if (n)
		*n += 1;
}

static __always_inline bool ours(__u32 *tid)
{
	__u64 id = bpf_get_current_pid_tgid();

	*tid = (__u32)id;
	return !targ_tgid || (id >> 32) == targ_tgid;
}

/* A reference field of @obj at @off, decoded. 0 on failure. */
static __always_inline __u64 ref_at(__u64 obj, __u32 off)
{
	__u64 v = 0;

	if (!obj || bpf_probe_read_user(&v, targ_coops ? 4 : 8, (void *)(obj + off)))
		return 0;
	if (targ_coops && v)
		v = targ_oop_base + ((v & 0xffffffff) << targ_oop_shift);
	return v;
}

static __always_inline __u64 klass_of(__u64 obj)
{
	__u64 v = 0;

	if (targ_mark_klass_shift) {
		if (!obj || bpf_probe_read_user(&v, 8, (void *)obj))
			return 0;
		v >>= targ_mark_klass_shift;
	} else if (!obj || bpf_probe_read_user(&v, targ_ccp ? 4 : 8, (void *)(obj + targ_klass_off))) {
		return 0;
	}
	return targ_ccp ? targ_klass_base + (v << targ_klass_shift) : v;
}

#define SCAN_WORDS 512 /* Parker within the first 4 KiB of its JavaThread */

/*
 * Find Parker* - JavaThread* without a listed thread: the JavaThread is the
 * address below @parker whose _osthread's _thread_id is @tid. Done once (the
 * offset is the same for every thread); user space learns it too, from a
 * thread that parked before it was listed, and the map check below catches a
 * wrong one.
 */
static __always_inline void scan_parker_off(__u32 tid, __u64 parker, struct mt_park_cfg *cfg)
{
	for (int i = 1; i <= SCAN_WORDS; i++) {
		__u64 jt = parker - (__u64)i * 8, os = 0;
		__s32 id = 0;

		if (bpf_probe_read_user(&os, 8, (void *)(jt + targ_osthread)) || !os ||
		    (os & 7) || bpf_probe_read_user(&id, 4, (void *)(os + targ_os_tid)))
			continue;
		if ((__u32)id == tid) {
			cfg->parker_off = (__u64)i * 8;
			return;
		}
	}
}

/* The JavaThread of the parking thread @tid whose Parker is @parker. */
static __always_inline __u64 jthread_of(__u32 tid, __u64 parker, struct mt_park_cfg *cfg)
{
	__u64 *jt = bpf_map_lookup_elem(&park_jthreads, &tid);

	if (jt && *jt) {
		if (cfg && parker > *jt) {
			__u64 off = parker - *jt;

			if (!cfg->parker_off && off < 65536)
				cfg->parker_off = off;
			else if (cfg->parker_off != off)
				cfg->parker_bad = 1;
		}
		return *jt;
	}
	if (cfg && !cfg->parker_off && !cfg->parker_bad && targ_same_pidns && parker > 8 * SCAN_WORDS)
		scan_parker_off(tid, parker, cfg);
	if (cfg && cfg->parker_off && !cfg->parker_bad && parker > cfg->parker_off)
		return parker - cfg->parker_off;
	return 0;
}

/* A park or sleep event for the collector (no name: MT_JVMEV_HEAD_LEN bytes). */
static __always_inline struct mt_jvmev_raw *ev_reserve(__u32 tid, __u32 kind, __u64 ts)
{
	struct mt_jvmev_raw *e = bpf_ringbuf_reserve(&jvm_events, MT_JVMEV_HEAD_LEN, 0);

	if (!e) {
		mt_count_drop(&jvm_drops);
		return NULL;
	}
	e->ts_ns = ts;
	e->tid = tid;
	e->kind = kind;
	e->a0 = e->a1 = e->a2 = 0;
	e->v[0] = e->v[1] = e->v[2] = e->v[3] = 0;
	e->name_len = 0;
	e->pad = 0;
	return e;
}

/* The type key of class @klass: its name Symbol's bytes, as class__loaded passes them. */
static __always_inline __u64 type_key(__u64 klass)
{
	__u64 sym = 0;

	if (!targ_klass_name || !klass ||
	    bpf_probe_read_user(&sym, sizeof(sym), (void *)(klass + targ_klass_name)) || !sym)
		return 0;
	return sym + targ_sym_body;
}

static __always_inline void stream_park_begin(__u32 tid, const struct mt_park_inflight *in,
					      __u64 time, __u64 absolute, __u64 flags)
{
	struct mt_jvmev_raw *e = ev_reserve(tid, MT_J_PARK_BEGIN, in->ts);

	if (!e)
		return;
	e->a0 = in->key.blocker;
	e->a1 = in->key.klass;
	e->a2 = type_key(in->key.klass);
	e->v[0] = time;
	e->v[1] = absolute;
	e->v[2] = in->owner_tid;
	e->v[3] = flags;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

SEC("uprobe")
int handle_park_begin(struct pt_regs *ctx)
{
	const struct mt_usdt_spec *s = mt_usdt_spec(ctx);
	struct mt_park_inflight in = { 0 };
	struct mt_park_cfg *cfg;
	__u64 jt, parker, slot = 0, thread = 0, blocker, owner, owner_jt = 0, os = 0;
	__u64 absolute, time, flags = 0;
	__u32 tid, zero = 0, otid = 0;
	struct mt_regs *g;

	if (!s || !ours(&tid))
		return 0;
	stat(MT_PARK_BEGIN);
	g = mt_regs_percpu(ctx);
	if (!g)
		return 0;
	cfg = bpf_map_lookup_elem(&park_cfg, &zero);
	/* park__begin(Parker* this, int isAbsolute, jlong time) */
	absolute = mt_usdt_arg(g, s, 1) & 0xffffffff;
	time = mt_usdt_arg(g, s, 2);
	in.key.timed = absolute || time ? MT_PARK_TIMED : MT_PARK_UNTIMED;
	parker = mt_usdt_arg(g, s, 0);
	jt = jthread_of(tid, parker, cfg);
	if (!jt) {
		stat(MT_PARK_NO_THREAD);
		bpf_map_update_elem(&park_unknown, &tid, &parker, BPF_NOEXIST);
		flags = MT_J_PARK_NO_THREAD;
		goto out;
	}
	/* JavaThread::_threadObj is an OopHandle: the address of a slot */
	if (bpf_probe_read_user(&slot, 8, (void *)(jt + targ_threadobj)) || !slot ||
	    bpf_probe_read_user(&thread, 8, (void *)slot))
		goto out;
	/* the waiter's Java stack, blocker or not (a parkNanos sleeper's too) */
	in.key.jstack = jstack_walk(jt);
	blocker = ref_at(thread, targ_f_blocker);
	if (!blocker)
		goto out;
	in.key.blocker = blocker;
	in.key.klass = klass_of(blocker);
	if (cfg && cfg->f_owner) {
		owner = ref_at(blocker, cfg->f_owner);
		if (owner && !bpf_probe_read_user(&owner_jt, 8, (void *)(owner + targ_f_eetop)) &&
		    owner_jt && !bpf_probe_read_user(&os, 8, (void *)(owner_jt + targ_osthread)) && os)
			bpf_probe_read_user(&otid, 4, (void *)(os + targ_os_tid));
		in.owner_tid = otid;
	}
out:
	/* the park begins when this program is done: its own work (the stack
	 * walk) is not the thread's time parked, and JFR's jdk.ThreadPark starts
	 * after this probe returns (a monitor enter is timed the other way) */
	in.ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&park_inflight, &tid, &in, BPF_ANY);
	if (targ_stream)
		stream_park_begin(tid, &in, time, absolute, flags);
	return 0;
}

static __always_inline __u32 log2_bucket(__u64 v)
{
	__u32 r = 0;

	for (int i = 0; i < MT_PARK_HIST - 1; i++) {
		if (v < 2)
			break;
		v >>= 1;
		r++;
	}
	return r;
}

static __always_inline int end_park(void)
{
	struct mt_park_inflight *in;
	struct mt_park_val *v, zero_val = { 0 };
	__u64 ns, now;
	__u32 tid, b;

	if (!ours(&tid))
		return 0;
	in = bpf_map_lookup_elem(&park_inflight, &tid);
	if (!in || !in->ts) {
		stat(MT_PARK_NO_BEGIN);
		return 0;
	}
	now = bpf_ktime_get_ns();
	ns = now - in->ts;
	if (targ_stream) {
		struct mt_jvmev_raw *e = ev_reserve(tid, in->key.timed == MT_PARK_SLEEP ?
							 MT_J_SLEEP_END : MT_J_PARK_END, now);

		if (e) {
			e->a0 = in->key.blocker;
			e->a1 = in->key.klass;
			bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
		}
	}
	if (!targ_aggregate)
		goto done;
	v = bpf_map_lookup_elem(&park_locks, &in->key);
	if (!v) {
		if (bpf_map_update_elem(&park_locks, &in->key, &zero_val, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&park_locks, &in->key)) {
			stat(MT_PARK_FULL);
			goto done;
		}
		v = bpf_map_lookup_elem(&park_locks, &in->key);
		if (!v)
			goto done;
	}
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->total_ns, ns);
	if (ns > v->max_ns)
		v->max_ns = ns;
	if (in->owner_tid) {
		__sync_fetch_and_add(&v->with_owner, 1);
		v->owner_tid = in->owner_tid;
	}
	v->waiter_tid = tid;
	b = log2_bucket(ns);
	if (b < MT_PARK_HIST)
		__sync_fetch_and_add(&v->hist[b], 1);
done:
	in->ts = 0;
	return 0;
}

SEC("uprobe")
int handle_park_end(struct pt_regs *ctx)
{
	return end_park();
}

/* Thread.sleep of a platform thread: thread__sleep__begin(millis), counted
 * with the parks under its own key (MT_PARK_SLEEP), never as contention */
SEC("uprobe")
int handle_sleep_begin(struct pt_regs *ctx)
{
	const struct mt_usdt_spec *s = mt_usdt_spec(ctx);
	struct mt_park_inflight in = { 0 };
	struct mt_jvmev_raw *e;
	struct mt_regs *g;
	__u32 tid;

	if (!ours(&tid))
		return 0;
	stat(MT_PARK_SLEEPS);
	in.ts = bpf_ktime_get_ns();
	in.key.timed = MT_PARK_SLEEP;
	bpf_map_update_elem(&park_inflight, &tid, &in, BPF_ANY);
	if (targ_stream && (e = ev_reserve(tid, MT_J_SLEEP_BEGIN, in.ts))) {
		if (s && (g = mt_regs_percpu(ctx))) {
			e->v[0] = mt_usdt_arg(g, s, 0); /* millis */
		}
		bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	}
	return 0;
}

SEC("uprobe")
int handle_sleep_end(struct pt_regs *ctx)
{
	return end_park();
}

/*
 * monitor__contended__enter(java_tid, ObjectMonitor*, class, len): the
 * contending thread is in the VM (it came from a runtime call: its frame
 * anchor is set), so its Java stack can be walked, as at a park.
 */
SEC("uprobe")
int handle_mon_enter(struct pt_regs *ctx)
{
	const struct mt_usdt_spec *s = mt_usdt_spec(ctx);
	struct mt_mon_inflight in = { 0 };
	__u64 jt, none = 0;
	struct mt_regs *g;
	__u32 tid;

	if (!s || !ours(&tid))
		return 0;
	stat(MT_PARK_MON_ENTER);
	g = mt_regs_percpu(ctx);
	if (!g)
		return 0;
	/* before the walk, unlike a park's: JFR's jdk.JavaMonitorEnter brackets
	 * both probes, this program included, and while the monitor stays held
	 * the walk only uses up time the thread would have waited anyway (taken
	 * after it, H2's MVTable entries read 18 % below JFR's, 1-3 % before) */
	in.ts = bpf_ktime_get_ns();
	in.key.monitor = mt_usdt_arg(g, s, 1);
	jt = jthread_of(tid, 0, NULL);
	if (jt) {
		in.key.jstack = jstack_walk(jt);
	} else {
		/* not listed yet: user space walks the thread list at its next poll */
		stat(MT_PARK_MON_NO_THREAD);
		bpf_map_update_elem(&park_unknown, &tid, &none, BPF_NOEXIST);
	}
	bpf_map_update_elem(&mon_inflight, &tid, &in, BPF_ANY);
	return 0;
}

/* monitor__contended__entered(same): the entry's time, under its stack. */
SEC("uprobe")
int handle_mon_entered(struct pt_regs *ctx)
{
	struct mt_mon_val *v, zero_val = { 0 };
	struct mt_mon_inflight *in;
	__u64 ns;
	__u32 tid;

	if (!ours(&tid))
		return 0;
	in = bpf_map_lookup_elem(&mon_inflight, &tid);
	if (!in || !in->ts)
		return 0;
	ns = bpf_ktime_get_ns() - in->ts;
	v = bpf_map_lookup_elem(&mon_stacks, &in->key);
	if (!v) {
		if (bpf_map_update_elem(&mon_stacks, &in->key, &zero_val, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&mon_stacks, &in->key)) {
			stat(MT_PARK_MON_FULL);
			goto done;
		}
		v = bpf_map_lookup_elem(&mon_stacks, &in->key);
		if (!v)
			goto done;
	}
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->total_ns, ns);
	if (ns > v->max_ns)
		v->max_ns = ns;
done:
	in->ts = 0;
	return 0;
}

/*
 * uprobe JavaThread::run(this): a Java thread begins, on itself. Its
 * JavaThread is known from its first instruction on, not only from user
 * space's next walk of the thread list (a thread may contend at once).
 */
SEC("uprobe")
int BPF_KPROBE(handle_jthread_run, void *thread)
{
	__u64 jt = (__u64)thread;
	__u32 tid;

	if (ours(&tid) && jt)
		bpf_map_update_elem(&park_jthreads, &tid, &jt, BPF_ANY);
	return 0;
}

/* hotspot:compiled__method__unload(...): code may be freed from now on */
SEC("uprobe")
int handle_code_unload(struct pt_regs *ctx)
{
	__u32 tid;

	if (ours(&tid))
		__sync_fetch_and_add(&code_gen, 1);
	return 0;
}

/* thread__start(name, len, java_tid, native_tid, daemon) */
SEC("uprobe")
int handle_thread_start(struct pt_regs *ctx)
{
	const struct mt_usdt_spec *s = mt_usdt_spec(ctx);
	struct mt_park_name n = { 0 };
	struct mt_regs *g;
	__u64 len;
	__u32 tid;

	if (!s || !ours(&tid))
		return 0;
	g = mt_regs_percpu(ctx);
	if (!g)
		return 0;
	len = mt_usdt_arg(g, s, 1);
	if (len > MT_PARK_NAME_LEN - 1)
		len = MT_PARK_NAME_LEN - 1;
	if (bpf_probe_read_user(n.name, len & (MT_PARK_NAME_LEN - 1), (void *)mt_usdt_arg(g, s, 0)))
		return 0;
	tid = (__u32)mt_usdt_arg(g, s, 3);
	bpf_map_update_elem(&park_names, &tid, &n, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
