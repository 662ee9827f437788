// SPDX-License-Identifier: GPL-2.0
/* detach.c - a destroy on a thread of its own; see detach.h. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "probe/detach.h"

struct detacher {
	void (*fn)(void *obj);
	pthread_mutex_t mu;
	pthread_cond_t idle;  /* inflight reached 0 */
	size_t inflight;
};

struct job {
	struct detacher *d;
	void *obj;
};

struct detacher *detach_new(void (*fn)(void *obj))
{
	struct detacher *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->fn = fn;
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->idle, NULL);
	return d;
}

/* One call, then one fewer in flight (the last wakes detach_free()). */
static void *run(void *arg)
{
	struct job *j = arg;
	struct detacher *d = j->d;

	d->fn(j->obj);
	free(j);
	pthread_mutex_lock(&d->mu);
	if (--d->inflight == 0)
		pthread_cond_broadcast(&d->idle);
	pthread_mutex_unlock(&d->mu);
	return NULL;
}

void detach_later(struct detacher *d, void *obj)
{
	pthread_attr_t a;
	pthread_t th;
	struct job *j;
	bool started = false;

	if (!d || !obj)
		return;
	j = malloc(sizeof(*j));
	pthread_mutex_lock(&d->mu);
	if (j && d->inflight < DETACH_MAX_INFLIGHT) {
		*j = (struct job){ d, obj };
		d->inflight++;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		started = !pthread_create(&th, &a, run, j);
		pthread_attr_destroy(&a);
		if (!started)
			d->inflight--;
	}
	pthread_mutex_unlock(&d->mu);
	if (!started) {
		free(j);
		d->fn(obj);
	}
}

size_t detach_inflight(struct detacher *d)
{
	size_t n;

	if (!d)
		return 0;
	pthread_mutex_lock(&d->mu);
	n = d->inflight;
	pthread_mutex_unlock(&d->mu);
	return n;
}

void detach_free(struct detacher *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->mu);
	while (d->inflight)
		pthread_cond_wait(&d->idle, &d->mu);
	pthread_mutex_unlock(&d->mu);
	pthread_mutex_destroy(&d->mu);
	pthread_cond_destroy(&d->idle);
	free(d);
}
