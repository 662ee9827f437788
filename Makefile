# memtrace - top-level build. `make` builds; `make check` installs what is
# missing, builds and runs every test; `make demo` runs memtrace on a demo JVM.
.DEFAULT_GOAL := all
SHELL := /bin/bash

BUILD    ?= build
CC       ?= cc
CLANG    ?= clang
BPFTOOL  ?= bpftool
JDK17    ?= /usr/lib/jvm/java-17-openjdk-amd64
JDK25    ?= /usr/lib/jvm/temurin-25-jdk-amd64
JAVA_HOME_BUILD ?= $(JDK17)
VERSION  := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

ARCH     := x86
WARN     := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wformat=2
CFLAGS   ?= -O2 -g
ALL_CFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser -I. -I$(BUILD) \
	-DMT_VERSION='"$(VERSION)"'
LDLIBS   := -lbpf -lelf -lz -lm -lpthread -lncursesw
# (libmicrohttpd is not linked: `memtrace serve` loads it, user/serve/mhdload.h)

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(BUILD)/%.bpf.o,$(BPF_SRCS))
SKELS     := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))

# user/ is folders by idea (user/README.md); every .c in them and in dsl/ but
# cmd/main.c is library code that unit tests link. user/agent/ is the JVMTI agent,
# a separate shared object.
USER_DIRS := lib analysis jvm jstack probe agentctl heap monitor sink serve cmd
LIB_SRCS  := $(filter-out user/cmd/main.c,$(wildcard $(patsubst %,user/%/*.c,$(USER_DIRS)))) $(wildcard dsl/*.c)
LIB_OBJS  := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
MAIN_OBJ  := $(BUILD)/obj/user/cmd/main.o
USER_HDRS := $(wildcard include/memtrace/*.h $(patsubst %,user/%/*.h,$(USER_DIRS)) dsl/*.h)
ASAN_OBJS := $(patsubst %.c,$(BUILD)/asan/%.o,$(LIB_SRCS))
SAN       := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

AGENT_SRCS := $(wildcard user/agent/*.c)
AGENT_SO   := $(BUILD)/libmemtrace-agent.so

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

# Skeletons and BPF objects are kept (two makes at once must not delete them).
.SECONDARY: $(SKELS) $(BPF_OBJS) $(BUILD)/noop.skel.h $(BUILD)/noop.bpf.o
# Objects too: make would otherwise delete the sanitizer objects after each unit test link.
.SECONDARY: $(ASAN_OBJS) $(LIB_OBJS)

# make install (GNU layout; DESTDIR for staging): the binary in BINDIR, the
# agent in PREFIX/lib/memtrace/ (memtrace looks in ../lib/memtrace/ from its
# own directory), the man page and the bash completion, both generated from
# the command table by scripts/gen-docs.py.
PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
MANDIR      ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
AGENTDIR    := $(PREFIX)/lib/memtrace
DOCS        := $(BUILD)/memtrace.1 $(BUILD)/memtrace.bash

.PHONY: all deps check unit e2e demo bench clean fuzz fuzz-build install uninstall image
all: $(BUILD)/memtrace $(AGENT_SO) $(DOCS)

$(BUILD)/memtrace.1: $(BUILD)/memtrace scripts/gen-docs.py
	python3 scripts/gen-docs.py $(BUILD)/memtrace man > $@.tmp && mv $@.tmp $@

$(BUILD)/memtrace.bash: $(BUILD)/memtrace scripts/gen-docs.py
	python3 scripts/gen-docs.py $(BUILD)/memtrace completion > $@.tmp && mv $@.tmp $@

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(AGENTDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR)
	install -m 755 $(BUILD)/memtrace $(DESTDIR)$(BINDIR)/memtrace
	install -m 644 $(AGENT_SO) $(DESTDIR)$(AGENTDIR)/libmemtrace-agent.so
	install -m 644 $(BUILD)/memtrace.1 $(DESTDIR)$(MANDIR)/man1/memtrace.1
	install -m 644 $(BUILD)/memtrace.bash $(DESTDIR)$(BASHCOMPDIR)/memtrace

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/memtrace $(DESTDIR)$(AGENTDIR)/libmemtrace-agent.so \
		$(DESTDIR)$(MANDIR)/man1/memtrace.1 $(DESTDIR)$(BASHCOMPDIR)/memtrace
	-rmdir $(DESTDIR)$(AGENTDIR)

deps:
	@scripts/install-deps.sh

# The container image (Containerfile: build stage, runtime stage with memtrace,
# its agent and their libraries; runs `memtrace serve --all`), with podman or
# buildah; the base image is made locally where no registry is reachable.
image: deps
	@scripts/image.sh

$(BUILD):
	@mkdir -p $(BUILD)/obj/user $(BUILD)/obj/dsl $(BUILD)/asan/user $(BUILD)/asan/dsl $(BUILD)/tests

# vmlinux.h from the running kernel's BTF (CO-RE: objects run on other kernels too).
$(BUILD)/vmlinux.h: | $(BUILD)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(BUILD)/vmlinux.h $(wildcard include/memtrace/*.h) $(wildcard bpf/*.bpf.h) | $(BUILD)
	$(CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Iinclude -Ibpf -I$(BUILD) -I/usr/include/$(shell uname -m)-linux-gnu -c $< -o $@
	llvm-strip -g $@ 2>/dev/null || true

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/%.o: %.c $(SKELS) $(USER_HDRS) | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/asan/%.o: %.c $(SKELS) $(USER_HDRS) | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O1 $(SAN) -c $< -o $@

$(BUILD)/memtrace: $(MAIN_OBJ) $(LIB_OBJS)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

# The JVMTI agent: only Agent_On* are exported.
$(AGENT_SO): $(AGENT_SRCS) $(wildcard user/agent/*.h include/memtrace/*.h) | $(BUILD)
	$(CC) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -fPIC -shared -fvisibility=hidden -DMT_VERSION='"$(VERSION)"' \
		-Iinclude -I$(JAVA_HOME_BUILD)/include -I$(JAVA_HOME_BUILD)/include/linux \
		-o $@ $(AGENT_SRCS) -lpthread

# bench/: the bare-trap program and the probe-cost harness.
$(BUILD)/noop.bpf.o: bench/noop.bpf.c $(BUILD)/vmlinux.h | $(BUILD)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(BUILD) -I/usr/include/$(shell uname -m)-linux-gnu -c $< -o $@

# bench/freeze.sh: what a page fault after a fork costs here.
$(BUILD)/bench/faultcost: bench/faultcost.c | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $<

# util_hugepages_wanted()'s question, timed: fresh memory by page size.
$(BUILD)/bench/freshpages: bench/freshpages.c | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $<

# issue #14's two designs, timed: copy into a memfd vs fork.
$(BUILD)/bench/copycost: bench/copycost.c | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $<

# bench/sequencer.sh: the sequencer on a synthetic stream.
$(BUILD)/bench/sequencer_bench: bench/sequencer_bench.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB_OBJS) $(LDLIBS)

$(BUILD)/bench/collector_bench: bench/collector_bench.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB_OBJS) $(LDLIBS)

# bench/query.sh: heap snapshot pause and evaluation speed.
$(BUILD)/bench/query_bench: bench/query_bench.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB_OBJS) $(LDLIBS)

$(BUILD)/bench/probe_cost: bench/probe_cost.c $(BUILD)/gc.skel.h $(BUILD)/noop.skel.h $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB_OBJS) $(LDLIBS)

# Unit tests of the JVMTI agent: test_agent_X links user/agent/X.c and the
# agent sources AGENT_TEST_SRCS_X names (not the library objects: the agent
# shares only include/memtrace/ with them), with the JDK's headers and the
# same sanitizers. Before test_% (the more specific rule).
AGENT_TEST_SRCS_walksend := user/agent/walkstate.c user/agent/walkvec.c user/agent/heapmark.c \
			    user/agent/zgcref.c
AGENT_TEST_SRCS_heapmark := user/agent/zgcref.c
AGENT_TEST_SRCS_freeze := user/agent/zgcfreeze.c
$(BUILD)/tests/test_agent_%: tests/unit/test_agent_%.c $(AGENT_SRCS) $(wildcard user/agent/*.h include/memtrace/*.h) | $(BUILD)
	$(CC) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -DMT_VERSION='"$(VERSION)"' -O1 $(SAN) \
		-Iinclude -Iuser -I$(JAVA_HOME_BUILD)/include -I$(JAVA_HOME_BUILD)/include/linux \
		-o $@ $< user/agent/$*.c $(AGENT_TEST_SRCS_$*) -lcmocka -lpthread

$(BUILD)/tests/test_%: tests/unit/test_%.c $(ASAN_OBJS) | $(BUILD)
	$(CC) $(ALL_CFLAGS) -O1 $(SAN) -o $@ $< $(ASAN_OBJS) -lcmocka $(LDLIBS)

unit: $(UNIT_BINS)
	@tests/run-unit.sh $(UNIT_BINS)

check: deps
	@$(MAKE) --no-print-directory -j$(shell nproc) all $(UNIT_BINS)
	@tests/run-all.sh

e2e: all
	@tests/e2e/run.sh

demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh

bench: deps
	@$(MAKE) --no-print-directory all $(BUILD)/bench/probe_cost $(BUILD)/bench/collector_bench $(BUILD)/bench/sequencer_bench $(BUILD)/bench/query_bench $(BUILD)/bench/faultcost $(BUILD)/bench/copycost $(BUILD)/bench/freshpages
	@bench/run.sh

# libFuzzer harnesses (tests/fuzz/fuzz_NAME.c, tests/fuzz/README.md): clang with
# coverage, ASan and UBSan; each links the objects of the sources it reads
# (FUZZ_NAME below), compiled once into $(BUILD)/fuzz/obj/.
FUZZ_CFLAGS := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -std=gnu11 \
	-D_GNU_SOURCE -Iinclude -Iuser -I. -I$(BUILD) -Itests/fuzz -DMT_VERSION='"$(VERSION)"'
DSL_SRCS := $(wildcard dsl/*.c)
FUZZ_dsl := $(DSL_SRCS) user/lib/util.c
FUZZ_readers := $(addprefix user/heap/,snapshot.c snaprec.c snapfile.c hprof.c walkids.c heapview.c viewrefs.c viewobjs.c \
	recpool.c) \
	$(addprefix user/analysis/,ageranges.c dominators.c heapgraph.c) \
	$(addprefix user/lib/,util.c offmap.c idmap.c) $(DSL_SRCS)
FUZZ_vmstructs := $(addprefix user/jvm/,vmstructs.c hotspot.c elfsym.c proc.c jvmid.c jvmflags.c klassname.c) \
	user/lib/util.c
FUZZ_perfdata := user/jvm/perfdata.c
FUZZ_usdt := user/probe/usdtspec.c user/jvm/elfsym.c user/lib/util.c user/probe/uprobemulti.c user/probe/uprobecost.c
FUZZ_agent_request := user/agent/request.c
FUZZ_agent_frames := $(addprefix user/agentctl/,agentsock.c agentsession.c agentfile.c) \
	$(addprefix user/jvm/,attach.c jvmflags.c proc.c jvmid.c klassname.c elfsym.c vmstructs.c hotspot.c) \
	$(addprefix user/analysis/,samples.c ageranges.c leaks.c sitevol.c) \
	$(addprefix user/monitor/,objrec.c recording.c sequencer.c) $(addprefix user/lib/,util.c idmap.c)
FUZZ_recording := $(addprefix user/monitor/,recording.c recording_read.c sequencer.c check.c objrec.c) \
	$(addprefix user/analysis/,samples.c ageranges.c leaks.c sitevol.c locks.c waitgraph.c) \
	$(addprefix user/lib/,util.c idmap.c jsoncur.c)
FUZZ_http := user/serve/serve_http.c user/serve/mhdload.c user/serve/metrics.c user/serve/serve_api.c user/serve/serve_query.c \
	$(addprefix user/agentctl/,agentsock.c agentsession.c agentfile.c sampling.c) \
	$(addprefix user/heap/,heapview.c viewrefs.c viewobjs.c heapfreeze.c heapmem.c querylive.c recpool.c snaprec.c snapshot.c \
		snaptake.c edenwatch.c walkids.c \
		heaplayout.c snapmark.c walkcompare.c walkestimate.c) \
	$(addprefix user/jvm/,attach.c perfdata.c proc.c jvmid.c vmstructs.c hotspot.c jvmflags.c elfsym.c klassname.c \
		sptrace.c jobject.c javafield.c unsigned5.c) \
	user/analysis/ageranges.c \
	$(addprefix user/analysis/,samples.c dominators.c heapgraph.c) \
	$(addprefix user/lib/,util.c idmap.c offmap.c stopflag.c) $(DSL_SRCS)
FUZZ_LIBS_usdt := -lelf -lbpf
FUZZ_LIBS_vmstructs := -lelf
FUZZ_LIBS_agent_frames := -lelf
FUZZ_LIBS_http := -lpthread -lelf
FUZZERS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))

$(BUILD)/fuzz/obj/%.o: %.c $(USER_HDRS) $(wildcard user/agent/*.h) | $(BUILD)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

define fuzz_rule
$(BUILD)/fuzz/fuzz_$(1): tests/fuzz/fuzz_$(1).c $$(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$$(FUZZ_$(1))) $$(wildcard tests/fuzz/*.h)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $$@ $$< $$(filter %.o,$$^) $$(FUZZ_LIBS_$(1)) -lz -lm
endef
$(foreach f,$(FUZZERS),$(eval $(call fuzz_rule,$(f))))

# The readers' seed maker (tests/fuzz/mkseeds.c: the unit tests' fixture
# heap in each file format), plain cc over the readers' own sources: one list.
$(BUILD)/fuzz/mkseeds: tests/fuzz/mkseeds.c $(FUZZ_readers) $(USER_HDRS) | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser -I. -I$(BUILD) -Itests/unit -o $@ \
		tests/fuzz/mkseeds.c $(FUZZ_readers) -lz -lm

fuzz-build: $(patsubst %,$(BUILD)/fuzz/fuzz_%,$(FUZZERS)) $(BUILD)/fuzz/mkseeds

# Long fuzzing runs: FUZZ_SECONDS per harness (default 300), FUZZERS="a b" to pick.
fuzz:
	@tests/fuzz/run.sh --each $${FUZZ_SECONDS:-300} $(FUZZ_ONLY)

clean:
	rm -rf $(BUILD)
