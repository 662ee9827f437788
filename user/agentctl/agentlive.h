/* agentlive.h - a long-lived, non-blocking sampling session with memtrace's
 * JVMTI agent, for the tools that keep running (`serve`, the live view):
 * start (load the agent if needed, SAMPLE_START), poll without blocking
 * (EVENTS into a sample store), read live sampled bytes by age, stop
 * (SAMPLE_STOP, DETACH; the agent goes dormant). `age`/`leaks` use the
 * one-shot sampling_run() instead.
 */
#ifndef MEMTRACE_AGENTLIVE_H
#define MEMTRACE_AGENTLIVE_H

#include <stdint.h>

#include "analysis/ageranges.h"
#include "jvm/proc.h"
#include "analysis/samples.h"

struct agentlive;

/* Live sampled objects by GCs survived (ageranges_bucket_name() per bucket). */
struct agentlive_ages {
	uint64_t samples[MT_AGE_BUCKETS];
	double bytes[MT_AGE_BUCKETS];    /* estimates (samples.h) */
	uint64_t gcs;                    /* GCs the agent reported since the start */
	uint64_t lost;                   /* agent drops + evictions + bad batches */
};

/*
 * agentlive_start - load/connect the agent of JVM @p and start sampling every
 * @interval bytes (0: the agent's default). This blocks while the agent loads
 * (up to a few seconds). Prints the reason (p_err) and returns NULL with
 * errno set on failure. Stop with agentlive_stop().
 */
struct agentlive *agentlive_start(const struct mt_proc *p, uint32_t interval);

/*
 * agentlive_poll - apply what the agent sent, without waiting. Returns 0, or
 * -errno after printing the reason once (the session is then dead: stop it).
 */
int agentlive_poll(struct agentlive *a);

/* agentlive_ages - the live samples by age now. */
void agentlive_ages(const struct agentlive *a, struct agentlive_ages *out);

/* agentlive_samples - the sample store (read only; valid until the next poll). */
const struct mt_samples *agentlive_samples(const struct agentlive *a);

/* agentlive_stop - stop sampling, detach (the agent goes dormant) and free;
 * waits up to a second for the agent's confirmation. NULL is a no-op. */
void agentlive_stop(struct agentlive *a);

#endif
