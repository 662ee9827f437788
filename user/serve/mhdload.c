// SPDX-License-Identifier: GPL-2.0
/* mhdload.c - libmicrohttpd, loaded when `memtrace serve` starts (mhdload.h). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "serve/mhdload.h"

struct mhd_api mhd;

static const char *const sonames_default[] = { "libmicrohttpd.so.12", "libmicrohttpd.so", NULL };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Every function of the table from @h into @api; the first missing one's
 * name in *@missing. 0 or -ENOSYS. */
static int mhd_fill(void *h, struct mhd_api *api, const char **missing)
{
#define MHD_SYM(f)                                                   \
	if (!*missing && !(api->f = (__typeof__(api->f))dlsym(h, "MHD_" #f))) \
		*missing = "MHD_" #f;
	MHD_FUNCS(MHD_SYM)
#undef MHD_SYM
	return *missing ? -ENOSYS : 0;
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
	for (const char *const *s = sonames ? sonames : sonames_default; *s; s++) {
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
