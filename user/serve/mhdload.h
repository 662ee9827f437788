/* mhdload.h - libmicrohttpd, loaded when `memtrace serve` starts.
 *
 * Only serve needs an HTTP server, but linking libmicrohttpd brings
 * GnuTLS and eight more libraries into every memtrace process: measured on
 * this project's VM, an empty program linked with memtrace's libraries
 * started in 7.1 ms of CPU and 264 page faults with them, 3.0 ms and 97
 * without (each page fault a host fault on a VM that shadows page tables).
 * Every `histo`, `heap` or `leaks` paid that for nothing; serve_http.c calls
 * libmicrohttpd through this table instead, filled by mhd_load(). */
#ifndef MEMTRACE_MHDLOAD_H
#define MEMTRACE_MHDLOAD_H

#include <stddef.h>
#include <microhttpd.h>

/* The libmicrohttpd functions serve_http.c calls (their own prototypes). */
struct mhd_api {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_suspend_connection) *suspend_connection;
	__typeof__(MHD_resume_connection) *resume_connection;
};

/* Filled by mhd_load(); all NULL before. */
extern struct mhd_api mhd;

/* The shared objects mhd_load() tries, in order (NULL-terminated). */
extern const char *const mhd_sonames[];

/*
 * mhd_load - fill `mhd` from the first of @sonames (NULL: mhd_sonames) that
 * loads and has every function; once loaded, later calls return 0 at once
 * (thread-safe). The library stays loaded for the process's life. On
 * failure @err (@n bytes) says which file and what the user can do.
 * Returns 0, -ENOENT (no such library) or -ENOSYS (a function missing).
 */
int mhd_load(const char *const *sonames, char *err, size_t n);

#endif
