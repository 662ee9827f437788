// SPDX-License-Identifier: GPL-2.0
/* fuzz_usdt.c - libFuzzer entry for the USDT note parser: an input that
 * begins with an ELF magic is an ELF file (libjvm's .note.stapsdt, read
 * through libelf by elfsym_usdt_notes, each note's argument string parsed
 * by usdtspec_parse, its pc turned into a file offset); anything else is
 * one argument string for usdtspec_parse. Seeds: the .note.stapsdt and
 * .stapsdt.base sections of the libjvm of JDK 17 and 25 (objcopy), and
 * their argument strings. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jvm/elfsym.h"
#include "probe/usdtspec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mt_usdt_spec spec;

	if (size >= 4 && !memcmp(data, "\x7f" "ELF", 4)) {
		struct mt_usdt_note *notes = NULL;
		struct mt_elf *e;
		char path[64];
		int fd = memfd_create("fuzz_usdt", MFD_CLOEXEC), n;

		if (fd < 0)
			return 0;
		if (write(fd, data, size) == (ssize_t)size) {
			snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
			e = elfsym_open(path);
			if (e) {
				n = elfsym_usdt_notes(e, NULL, &notes);
				for (int i = 0; i < n; i++) {
					uint64_t off;

					usdtspec_parse(notes[i].args, &spec);
					elfsym_vaddr_to_offset(e, notes[i].pc, &off);
				}
				free(notes);
				n = elfsym_usdt_notes(e, "hotspot", &notes);
				if (n > 0)
					free(notes);
				elfsym_free(e);
			}
		}
		close(fd);
		return 0;
	}
	{
		char args[512];
		size_t n = size < sizeof(args) - 1 ? size : sizeof(args) - 1;

		memcpy(args, data, n);
		args[n] = '\0';
		usdtspec_parse(args, &spec);
	}
	return 0;
}
