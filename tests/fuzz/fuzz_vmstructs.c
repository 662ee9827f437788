// SPDX-License-Identifier: GPL-2.0
/* fuzz_vmstructs.c - libFuzzer entry for the VMStructs reader fed a hostile
 * memory image (memimage.h): the layout variables, the four tables and their
 * strings (vmstructs_parse), then what memtrace reads through the handle
 * (vmexercise.h: lookups, the JVMFlag table, class names through the class
 * loader data graph). Seeds: images captured from live JVMs 17 and 25
 * (capture_vmstructs.c). */
#include <stdint.h>
#include <stdlib.h>

#include "memimage.h"
#include "vmexercise.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct memimage m;
	struct mt_vmstructs *vs;

	if (memimage_parse(data, size, &m))
		return 0;
	if (vmstructs_parse(&m.syms, memimage_read, &m, &vs))
		return 0;
	vmex_run(vs);
	vmstructs_free(vs);
	return 0;
}
