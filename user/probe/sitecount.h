/*
 * sitecount.h - allocation volume per allocating Java method, counted in the
 * kernel in fixed space (bpf/sites.bpf.c): load and attach the TLAB uprobes
 * for one JVM, then read the counters named by method ("pkg.Class.method").
 * With the stack walker the allocating frame is named from the live JVM:
 * interpreted frames by Method*, compiled ones expanded into their inlined
 * methods (the innermost is the site) - so name new sites while their code
 * lives (sitecount_warm). Without it, interpreted frames by Method* through
 * VMStructs, compiled ones by pc through the JVM's perf map. See
 * include/memtrace/sites.h.
 */
#ifndef MEMTRACE_SITECOUNT_H
#define MEMTRACE_SITECOUNT_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/sitevol.h"
#include "jvm/proc.h"

struct sitecount;

/*
 * sitecount_new - count allocations per site in JVM @p from now on. Prints
 * what failed (p_err: stripped libjvm, no VMStructs anchor, BPF load) and
 * returns NULL with errno set. Free with sitecount_free().
 */
struct sitecount *sitecount_new(const struct mt_proc *p);
/* sitecount_free - detach and unload; NULL is a no-op. */
void sitecount_free(struct sitecount *c);

/*
 * sitecount_warm - name the sites counted since the last call, now, while
 * their compiled code lives (the JIT frees code it replaces); call it a few
 * times a second. The names are kept for sitecount_read().
 */
void sitecount_warm(struct sitecount *c);

/*
 * sitecount_read - the counters so far into *@out (freed with
 * sitevol_free). @perfmap: ask the JVM to write its perf map first
 * (jcmd Compiler.perfmap) so compiled pcs get names. Returns 0 or -ENOMEM.
 */
int sitecount_read(struct sitecount *c, const struct mt_proc *p, int perfmap,
		   struct mt_site_volumes *out);

#endif
