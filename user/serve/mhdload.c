// SPDX-License-Identifier: GPL-2.0
/* mhdload.c - libmicrohttpd, loaded when `memtrace serve` starts (mhdload.h). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "serve/mhdload.h"

struct mhd_api mhd;

const char *const mhd_sonames[] = { "libmicrohttpd.so.12", "libmicrohttpd.so", NULL };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* One function of @h into *@slot, by @name. 0 or -ENOSYS. */
static int mhd_sym(void *h, const char *name, void **slot)
{
	*slot = dlsym(h, name);
	return *slot ? 0 : -ENOSYS;
}

/* Every function of the table from @h into @api; the first missing one's
 * name in *@missing. 0 or -ENOSYS. */
static int mhd_fill(void *h, struct mhd_api *api, const char **missing)
{
	static const struct {
		const char *name;
		size_t off;
	} fns[] = {
		{ "MHD_start_daemon", offsetof(struct mhd_api, start_daemon) },
		{ "MHD_stop_daemon", offsetof(struct mhd_api, stop_daemon) },
		{ "MHD_create_response_from_buffer", offsetof(struct mhd_api, create_response_from_buffer) },
		{ "MHD_add_response_header", offsetof(struct mhd_api, add_response_header) },
		{ "MHD_queue_response", offsetof(struct mhd_api, queue_response) },
		{ "MHD_destroy_response", offsetof(struct mhd_api, destroy_response) },
		{ "MHD_lookup_connection_value", offsetof(struct mhd_api, lookup_connection_value) },
		{ "MHD_suspend_connection", offsetof(struct mhd_api, suspend_connection) },
		{ "MHD_resume_connection", offsetof(struct mhd_api, resume_connection) },
	};

	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		if (mhd_sym(h, fns[i].name, (void **)((char *)api + fns[i].off))) {
			*missing = fns[i].name;
			return -ENOSYS;
		}
	}
	return 0;
}

int mhd_load(const char *const *sonames, char *err, size_t n)
{
	const char *missing = NULL, *tried = NULL;
	char why[160] = "no file named";
	struct mhd_api api = { 0 };
	int ret = -ENOENT;

	pthread_mutex_lock(&lock);
	if (mhd.start_daemon) {
		ret = 0;
		goto out;
	}
	for (const char *const *s = sonames ? sonames : mhd_sonames; *s; s++) {
		void *h = dlopen(*s, RTLD_NOW | RTLD_LOCAL);

		if (!h) {
			if (!tried) {
				tried = *s;
				snprintf(why, sizeof(why), "%s", dlerror());
			}
			continue;
		}
		ret = mhd_fill(h, &api, &missing);
		if (!ret) {
			mhd = api;
			goto out;
		}
		dlclose(h);
		if (err)
			snprintf(err, n, "%s has no %s: memtrace serve needs a newer libmicrohttpd "
				 "(Debian: apt-get install libmicrohttpd12)", *s, missing);
		goto out;
	}
	if (err)
		snprintf(err, n, "%s could not be loaded (%s): memtrace serve needs libmicrohttpd "
			 "(Debian: apt-get install libmicrohttpd12)", tried ? tried : "libmicrohttpd", why);
out:
	pthread_mutex_unlock(&lock);
	return ret;
}
