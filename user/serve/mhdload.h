/* mhdload.h - libmicrohttpd, loaded when `memtrace serve` starts.
 *
 * Only serve needs an HTTP server, but linking libmicrohttpd brings
 * GnuTLS and eight more libraries (ldd: 19 -> 9) into every memtrace process: measured on
 * this project's VM, an empty program linked with memtrace's libraries
 * started in 7.1 ms of CPU and 264 page faults with them, 3.0 ms and 97
 * without (each page fault a host fault on a VM that shadows page tables).
 * Every `histo`, `heap` or `leaks` paid that for nothing; serve_http.c calls
 * libmicrohttpd through this table instead, filled by mhd_load(). */
#ifndef MEMTRACE_MHDLOAD_H
#define MEMTRACE_MHDLOAD_H

#include <stddef.h>
#include <microhttpd.h>

/* The libmicrohttpd functions serve_http.c calls, each once: the table's
 * fields (their own prototypes) and what mhd_load() looks up ("MHD_" f). */
#define MHD_FUNCS(X)                                                              \
	X(start_daemon) X(stop_daemon) X(create_response_from_buffer)             \
	X(add_response_header) X(queue_response) X(destroy_response)              \
	X(lookup_connection_value) X(suspend_connection) X(resume_connection)

struct mhd_api {
#define MHD_FIELD(f) __typeof__(MHD_##f) *f;
	MHD_FUNCS(MHD_FIELD)
#undef MHD_FIELD
};

/* Filled by mhd_load(); all NULL before. */
extern struct mhd_api mhd;

/*
 * mhd_load - fill `mhd` from the first of @sonames (NULL: libmicrohttpd.so.12,
 * then libmicrohttpd.so) that
 * loads and has every function; once loaded, later calls return 0 at once
 * (thread-safe). The library stays loaded for the process's life. On
 * failure @err (@n bytes) says which file and what the user can do.
 * Returns 0, -ENOENT (no such library) or -ENOSYS (a function missing).
 */
int mhd_load(const char *const *sonames, char *err, size_t n);

#endif
