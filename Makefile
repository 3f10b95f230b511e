# SPDX-License-Identifier: GPL-2.0
#
# sacred - top-level build.
#
#   make                 sacred.ko (kmod/), libsacred, the sacred CLI,
#                        unit tests and kselftests
#   make check           host unit tests, spin checks of the PMP model,
#                        kselftests in a SoftRoCE VM (Debian 6.1, then
#                        the kernel-facing ones on 6.12)
#   make check-valgrind  every libsacred kselftest under valgrind
#   make model           the spin checks of the PMP model only
#   make demo            boot the VM and show sacred on rxe devices
#   make lint            checkpatch --strict on the kernel sources; the
#                        module built against every supported kernel with
#                        W=1 and sparse, warnings are errors; no cycle
#                        between kmod/'s files (in make check)
#   make install         libsacred, headers, CLI, man pages, sacred.pc
#   make bench           every benchmark in one VM boot, reports into
#                        bench/results/ (bench/README.md)
#   make bench-check     the quick run, held against bench/targets; the
#                        switch against the base's module (BENCH_BASE)
#
# KVER selects the kernel the module is built for and the VM boots
# (default: the newest installed Debian 6.1 kernel); KDIR overrides the
# build tree.

KVER	?= $(shell ls -1 /lib/modules 2>/dev/null | grep '^6\.1\..*-amd64$$' | sort -V | tail -n 1)
KDIR	?= /lib/modules/$(KVER)/build
KVERS_COMPAT ?= $(shell ls -1 /lib/modules 2>/dev/null | grep -E '^6\.(1|12)\..*-amd64$$' | sort -V)

PREFIX	?= /usr/local
LIBDIR	?= $(PREFIX)/lib
INCDIR	?= $(PREFIX)/include
SBINDIR	?= $(PREFIX)/sbin
MANDIR	?= $(PREFIX)/share/man
DESTDIR	?=

VERSION		:= 0.1.0
SONAME		:= libsacred.so.0

CC	?= gcc
NL_CFLAGS := $(shell pkg-config --cflags libnl-genl-3.0 2>/dev/null)
NL_LIBS	  := $(shell pkg-config --libs libnl-genl-3.0 2>/dev/null)
CFLAGS	?= -O2 -g
CFLAGS	+= -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE \
	   -Iinclude/uapi -Ilib -Itools $(NL_CFLAGS)
LDLIBS	+= $(NL_LIBS) -lrdmacm -libverbs -lsodium

# Kernel files used at build time only, extracted from linux-source-6.1;
# none of them is committed.
LINUX_SRC_TAR ?= $(firstword $(wildcard /usr/src/linux-source-6.1.tar.xz))
KFILES	:= build/linux
HARNESS	:= $(KFILES)/tools/testing/selftests/kselftest_harness.h

LIB_SRCS   := $(wildcard lib/*.c)
# The public headers: lib/sacred.h includes one per layer, lib/sacred/*.h.
LIB_PUBHDRS := lib/sacred.h $(wildcard lib/sacred/*.h)
LIB_OBJS   := $(LIB_SRCS:.c=.o)
LIB_PIC	   := $(LIB_SRCS:.c=.pic.o)
TOOL_SRCS  := $(wildcard tools/*.c)
TOOL_OBJS  := $(TOOL_SRCS:.c=.o)
UNIT_SRCS  := $(wildcard tests/unit/*.c)
UNIT_BINS  := $(UNIT_SRCS:.c=)
ST_SRCS	   := $(wildcard selftests/*.c)
ST_BINS	   := $(ST_SRCS:.c=)
ST_HDRS	   := $(wildcard selftests/*.h)
EX_SRCS	   := $(wildcard examples/*.c)
EX_BINS	   := $(EX_SRCS:.c=)
POL_SRCS   := $(wildcard examples/policies/*.bpf.c)
POL_OBJS   := $(POL_SRCS:.c=.o)
POL_TOOLS  := examples/policies/allowlist-edit
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(BENCH_SRCS:.c=)

.PHONY: all module lib tools unit selftests benchprogs examples bench bench-check check check-unit check-valgrind check-vm model demo \
	lint kcompat checkpatch install uninstall dkms-install clean deps kfiles

all: module lib tools unit selftests benchprogs examples

deps:
	scripts/deps

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

lib: lib/libsacred.a lib/$(SONAME)

lib/%.o: lib/%.c $(wildcard lib/*.h) $(LIB_PUBHDRS) include/uapi/linux/sacred.h
	$(CC) $(CFLAGS) -c -o $@ $<

lib/%.pic.o: lib/%.c $(wildcard lib/*.h) $(LIB_PUBHDRS) include/uapi/linux/sacred.h
	$(CC) $(CFLAGS) -fPIC -fvisibility=default -c -o $@ $<

lib/libsacred.a: $(LIB_OBJS)
	$(AR) rcs $@ $^

lib/$(SONAME): $(LIB_PIC) lib/libsacred.map
	$(CC) -shared -Wl,-soname,$(SONAME) \
		-Wl,--version-script=lib/libsacred.map -o $@ $(LIB_PIC) $(LDLIBS)

tools: tools/sacred tools/kv/sacred-kv

tools/%.o: tools/%.c $(wildcard tools/*.h) $(LIB_PUBHDRS) include/uapi/linux/sacred.h
	$(CC) $(CFLAGS) -c -o $@ $<

# sacred -V prints the version of the package it was built from.
tools/sacred.o: CFLAGS += -DSACRED_VERSION='"$(VERSION)"'

# The client of the sacred-kv replicas (tools/kv/kv_client.h): sacred-kv's
# own client commands, bench/kvbench and selftests/sacred_kv link it in.
KV_CLIENT := tools/kv/kv_client.o
$(KV_CLIENT): tools/kv/kv_client.c tools/kv/kv_client.h tools/kv/kv.h
	$(CC) $(CFLAGS) -c -o $@ $<

tools/kv/sacred-kv: tools/kv/sacred-kv.c tools/kv/kv.h $(KV_CLIENT) \
		    lib/libsacred.a
	$(CC) $(CFLAGS) -Itools/kv -o $@ $< $(KV_CLIENT) lib/libsacred.a \
		$(LDLIBS)

# The CLI links libsacred statically so that it runs from the tree, and
# libbpf for the programs of bpf regions (tools/prog.c).
tools/sacred: $(TOOL_OBJS) lib/libsacred.a
	$(CC) $(CFLAGS) -o $@ $(TOOL_OBJS) lib/libsacred.a $(LDLIBS) -lbpf

unit: $(UNIT_BINS)

tests/unit/%: tests/unit/%.c tests/unit/tap.h tools/utils.o tools/json.o
	$(CC) $(CFLAGS) -o $@ $< tools/utils.o tools/json.o $(LDLIBS)

tests/unit/test_lincheck: selftests/sacred_lincheck.h

kfiles: $(HARNESS)

$(HARNESS):
	@test -n "$(LINUX_SRC_TAR)" || { echo "linux-source-6.1 is not installed: run scripts/deps" >&2; exit 1; }
	mkdir -p $(KFILES)
	tar -xJf $(LINUX_SRC_TAR) -C $(KFILES) --strip-components=1 --wildcards \
		'*/tools/testing/selftests/kselftest_harness.h' \
		'*/tools/testing/selftests/kselftest.h' \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch' '*/.clang-format'
	touch $@

selftests: $(ST_BINS)

# The harness macros compare values of mixed signedness by design.
selftests/%: selftests/%.c $(ST_HDRS) $(HARNESS) lib/libsacred.a
	$(CC) $(CFLAGS) -Wno-unused-parameter -Wno-sign-compare -I$(KFILES)/tools/testing/selftests \
		-o $@ $< $(ST_OBJS) lib/libsacred.a $(LDLIBS) $(ST_LIBS) -lpthread

# sacred_bpf and sacred_consensus load programs with libbpf, the
# examples' among them.
selftests/sacred_bpf selftests/sacred_consensus: ST_LIBS := -lbpf
selftests/sacred_bpf selftests/sacred_consensus: $(POL_OBJS)

selftests/sacred_kv: ST_OBJS := $(KV_CLIENT)
selftests/sacred_kv: $(KV_CLIENT)

benchprogs: $(BENCH_BINS)

examples: $(EX_BINS) $(POL_OBJS) $(POL_TOOLS)

examples/%: examples/%.c lib/libsacred.a
	$(CC) $(CFLAGS) -o $@ $< lib/libsacred.a $(LDLIBS)

# acceptChange programs for bpf regions (Documentation/policies.rst), and
# the control program that edits the allow-list's map.
BPF_CFLAGS := -O2 -g -Wall -Werror -target bpf -Iinclude/uapi \
	      -I/usr/include/$(shell $(CC) -dumpmachine)
examples/policies/%.bpf.o: examples/policies/%.bpf.c examples/policies/policy.h \
			   include/uapi/linux/sacred.h
	clang $(BPF_CFLAGS) -c -o $@ $<

examples/policies/allowlist-edit: examples/policies/allowlist-edit.c lib/libsacred.a
	$(CC) $(CFLAGS) -o $@ $< lib/libsacred.a $(LDLIBS) -lbpf

bench/%: bench/%.c bench/bench.h lib/libsacred.a
	$(CC) $(CFLAGS) -o $@ $< lib/libsacred.a $(LDLIBS) $(BENCH_LDWRAP) \
		$(BENCH_LIBS) -lpthread

# bench/kvbench asks the replicas through tools/kv/kv_client.o (an
# object: linked whole wherever it stands on the line).
bench/kvbench: BENCH_LIBS := $(KV_CLIENT)
bench/kvbench: $(KV_CLIENT)

# bench/bpfswitch loads examples/policies/ballot.bpf.o with libbpf.
bench/bpfswitch: BENCH_LIBS := -lbpf
bench/bpfswitch: $(POL_OBJS)

# bench/multivm reads the multi-VM run's environment as the selftest does.
bench/multivm: selftests/sacred_multivm_env.h

# bench/agreement times the library's signing and verifying (its comment).
bench/agreement: BENCH_LDWRAP := -Wl,--wrap=sacred_bz_sign \
	-Wl,--wrap=sacred_bz_verify

# Benchmarks run in the VM, one boot, side by side (bench/run-all); the
# reports land in bench/results/ (see bench/README.md), and
# scripts/bench-report puts them together in report.md and switch.png.
# BENCH_ARGS go to permswitch and userswitch, AGREEMENT_ARGS, SCALE_ARGS,
# FAILOVER_ARGS and KV_ARGS to their programs. The guest writes into
# BENCH_OUT (shared with it), then the reports are copied.
BENCH_OUT ?= /tmp/sacred-bench-$(shell id -u)
# The host, and its load (other VMs weigh on every figure): a Markdown line.
bench_host = printf -- '- host, $(1) the run: %s CPUs (%s), load average %s\n' \
	"$$(nproc)" "$$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)" \
	"$$(cut -d' ' -f1-3 /proc/loadavg)"
BENCH_VM   = scripts/vm-run -q $(if $(KVER),--kver $(KVER)) --module kmod/sacred.ko --timeout 3600
# The switch's regression guard (bench/abswitch) loads this tree's module
# and the base's in turns: scripts/bench-base builds the base's into
# $(1)/ab (BENCH_BASE names it; default: HEAD for uncommitted work in the
# module, else a branch's merge-base with main, else HEAD~1), and
# bench_ab_args is what bench/run-all passes to bench/abswitch.
BENCH_BASE ?=
bench_ab = scripts/bench-base $(if $(BENCH_BASE),-r $(BENCH_BASE)) \
		$(if $(KVER),-k $(KVER)) $(1)/ab && cp kmod/sacred.ko $(1)/ab/this.ko
bench_ab_args = 'abswitch=-l $(1)/ab/base.txt $(1)/ab/this.ko $(1)/ab/base.ko'
# The memories on three VMs of their own (scripts/vm-multi --bench):
# bench/multivm's report, then what the host was, into
# bench/results/multivm.md (removed first: a failed run leaves none for
# the report to take as this run's). MULTIVM_N: samples per row.
MULTIVM_N ?= 300
bench_multivm = mkdir -p $(BENCH_OUT) bench/results && \
	rm -f bench/results/multivm.md && \
	$(call bench_host,before) > $(BENCH_OUT)/multivm-host.md && \
	scripts/vm-multi --bench $(MULTIVM_N) $(if $(KVER),--kver $(KVER)) \
		> $(BENCH_OUT)/multivm.md && \
	$(call bench_host,after) >> $(BENCH_OUT)/multivm-host.md && \
	{ cat $(BENCH_OUT)/multivm.md; \
	  printf '\nFour TCG VMs of one vCPU each (three memories, one client) on the host:\n\n'; \
	  cat $(BENCH_OUT)/multivm-host.md; } > bench/results/multivm.md
bench:
	scripts/deps
	$(MAKE) all
	rm -rf $(BENCH_OUT) && mkdir -p $(BENCH_OUT) bench/results
	$(call bench_ab,$(BENCH_OUT))
	$(call bench_host,before) > $(BENCH_OUT)/host.md
	$(BENCH_VM) --out $(BENCH_OUT) -- bench/run-all $(BENCH_OUT) \
		'permswitch=$(BENCH_ARGS)' 'userswitch=$(BENCH_ARGS)' \
		'agreement=$(AGREEMENT_ARGS)' 'scale=$(SCALE_ARGS)' \
		'failover=$(FAILOVER_ARGS)' 'kvbench=$(KV_ARGS)' \
		$(call bench_ab_args,$(BENCH_OUT)); \
	rc=$$?; $(call bench_host,after) >> $(BENCH_OUT)/host.md; \
	cp $(BENCH_OUT)/*.md bench/results/ || rc=1; \
	$(bench_multivm) || rc=1; \
	scripts/bench-report && cat bench/results/report.md && exit $$rc

# bench/multivm alone (make bench runs it too), then the report again.
.PHONY: bench-multivm
bench-multivm:
	scripts/deps
	$(MAKE) module tools bench/multivm
	$(bench_multivm)
	scripts/bench-report
	cat bench/results/multivm.md

# The regression guard: a short run (few samples) in one boot, the switch
# of this tree's module against the base's among it (bench/abswitch),
# then scripts/bench-check holds its ratios against bench/targets (margins
# there; every row a guard, a target missed today fails: bench/README.md).
bench-check:
	scripts/deps
	$(MAKE) all
	rm -rf $(BENCH_OUT)-check && mkdir -p $(BENCH_OUT)-check
	$(call bench_ab,$(BENCH_OUT)-check)
	$(call bench_host,before)
	$(BENCH_VM) --out $(BENCH_OUT)-check -- bench/run-all -q $(BENCH_OUT)-check \
		$(call bench_ab_args,$(BENCH_OUT)-check)
	$(call bench_host,after)
	scripts/bench-check -d $(BENCH_OUT)-check

# make check boots KVER if given, else the rig's default (Debian 6.1) and
# then Debian 6.12 for the suites that exercise the kernel's side
# (scripts/check --also-kver). scripts/check finds the 6.12 kernel when it
# runs, after scripts/deps: on a fresh machine none is installed yet when
# make reads this file.
CHECK_KERNELS = $(if $(filter file,$(origin KVER)),--also-kver 6.12,--kver $(KVER))

# check, demo and bench install what is missing first (as root; a no-op
# when everything is there), then build in a fresh make, which sees the
# headers and kernels that may just have been installed.
check:
	scripts/deps
	$(MAKE) all
	scripts/check $(CHECK_KERNELS)

check-unit: unit
	scripts/check --unit-only

# Every kselftest built on libsacred under valgrind, and nothing else
# (make check runs six of them again, two at a time; the log, KV and
# Cheap Quorum ones race clocks and take minutes under valgrind, so here
# they run one at a time unless SACRED_VALGRIND_JOBS says otherwise:
# Documentation/testing.rst).
VALGRIND_SUITES := sacred_cheapq sacred_log sacred_kv sacred_conn sacred_neb \
	sacred_rmem sacred_consensus sacred_prims sacred_io
check-valgrind:
	scripts/deps
	$(MAKE) all
	SACRED_VALGRIND_JOBS=$${SACRED_VALGRIND_JOBS:-1} \
	SACRED_SELFTESTS=none SACRED_VALGRIND="$(VALGRIND_SUITES)" \
		scripts/check --vm-only --no-multivm $(if $(KVER),--kver $(KVER))

# The multi-VM test alone (scripts/vm-multi, Documentation/testing.rst):
# the replicated log on memories in three VMs, one killed mid-run. make
# check runs it too, after the kselftests.
.PHONY: check-multivm
check-multivm:
	scripts/deps
	$(MAKE) module tools selftests/sacred_multivm
	scripts/vm-multi $(if $(KVER),--kver $(KVER))

# Protected Memory Paxos in Promela (models/pmp.pml), checked with spin;
# builds in build/model/ (Documentation/pmp-model.rst).
model:
	scripts/check-model

# Soak mode of the faults tests (Documentation/testing.rst, "Soak runs"):
# the revoke guarantee with SOAK_TRIALS revokes per write size (8 B, 4 KiB
# and 16 KiB: below and above the MTU; default 10^5, hours in a TCG
# guest) and the netlink fuzzer with SOAK_FUZZ_COUNT messages
# (default 10^6), each in its own VM with SOAK_TIMEOUT seconds. Each size
# prints a "# soak:" line; runs are recorded in bench/results/soak.md.
SOAK_TRIALS	?= 100000
SOAK_FUZZ_COUNT	?= 1000000
SOAK_TIMEOUT	?= 43200

.PHONY: soak
soak:
	scripts/deps
	$(MAKE) all
	scripts/vm-run -q --timeout $(SOAK_TIMEOUT) $(if $(KVER),--kver $(KVER)) \
		--module kmod/sacred.ko -- env SACRED_REVOKE_TRIALS=$(SOAK_TRIALS) \
		selftests/sacred_revoke
	scripts/vm-run -q --timeout $(SOAK_TIMEOUT) $(if $(KVER),--kver $(KVER)) \
		--module kmod/sacred.ko -- env SACRED_KO=$(CURDIR)/kmod/sacred.ko \
		SACRED_FUZZ_COUNT=$(SOAK_FUZZ_COUNT) selftests/sacred_nlfuzz

demo:
	scripts/deps
	$(MAKE) all
	scripts/demo $(if $(KVER),--kver $(KVER))

# checkpatch --strict, W=1 -Werror + sparse builds against every
# supported kernel, and scripts/check-kmod-layers; kcompat and checkpatch
# are the older names.
lint kcompat checkpatch: $(HARNESS)
	KVERS="$(KVERS_COMPAT)" scripts/check-lint

install: lib tools
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR)/linux \
		$(DESTDIR)$(INCDIR)/sacred \
		$(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(MANDIR)/man3 \
		$(DESTDIR)$(MANDIR)/man1
	install -m 644 lib/libsacred.a $(DESTDIR)$(LIBDIR)/
	install -m 755 lib/$(SONAME) $(DESTDIR)$(LIBDIR)/libsacred.so.$(VERSION)
	ln -sf libsacred.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libsacred.so
	install -m 644 lib/sacred.h $(DESTDIR)$(INCDIR)/
	install -m 644 lib/sacred/*.h $(DESTDIR)$(INCDIR)/sacred/
	install -m 644 include/uapi/linux/sacred.h $(DESTDIR)$(INCDIR)/linux/
	install -m 755 tools/sacred $(DESTDIR)$(SBINDIR)/
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 tools/kv/sacred-kv $(DESTDIR)$(PREFIX)/bin/
	install -m 644 Documentation/man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 Documentation/man/*.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 644 Documentation/man/*.3 $(DESTDIR)$(MANDIR)/man3/
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCDIR@|$(INCDIR)|; s|@VERSION@|$(VERSION)|' \
		lib/sacred.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/sacred.pc

# Every file install puts down; the man pages by the names in the tree
# (the .so link pages included: they are plain files).
uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libsacred.a $(DESTDIR)$(LIBDIR)/libsacred.so.$(VERSION) \
		$(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libsacred.so \
		$(DESTDIR)$(LIBDIR)/pkgconfig/sacred.pc \
		$(DESTDIR)$(INCDIR)/sacred.h $(DESTDIR)$(INCDIR)/linux/sacred.h \
		$(addprefix $(DESTDIR)$(INCDIR)/sacred/,$(notdir $(wildcard lib/sacred/*.h))) \
		$(DESTDIR)$(SBINDIR)/sacred $(DESTDIR)$(PREFIX)/bin/sacred-kv \
		$(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(wildcard Documentation/man/*.1))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man8/,$(notdir $(wildcard Documentation/man/*.8))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(wildcard Documentation/man/*.3)))
	rmdir $(DESTDIR)$(INCDIR)/sacred 2>/dev/null || :

# The module's sources for DKMS (dkms.conf): the top-level Kbuild, kmod/
# without build products and the uapi header. Without DESTDIR and with
# dkms installed, the tree is registered, built and installed for the
# running kernel if its headers are there, else for KVER (DKMS_KVER
# overrides); an earlier registration of this version is removed first.
# AUTOINSTALL=yes has dkms build it for kernels installed later.
DKMS_SRC  := $(DESTDIR)/usr/src/sacred-$(VERSION)
DKMS_KVER ?= $(if $(wildcard /lib/modules/$(shell uname -r)/build),$(shell uname -r),$(KVER))

dkms-install:
	@if [ -z "$(DESTDIR)" ] && command -v dkms > /dev/null && \
	    [ -n "$$(dkms status -m sacred -v $(VERSION))" ]; then \
		echo "dkms remove sacred/$(VERSION) --all"; \
		dkms remove sacred/$(VERSION) --all; \
	fi
	rm -rf $(DKMS_SRC)
	install -d $(DKMS_SRC)/kmod $(DKMS_SRC)/include/uapi/linux
	install -m 644 Kbuild dkms.conf $(DKMS_SRC)/
	install -m 644 kmod/Kbuild $(filter-out %.mod.c,$(wildcard kmod/*.c)) kmod/*.h $(DKMS_SRC)/kmod/
	install -m 644 include/uapi/linux/sacred.h $(DKMS_SRC)/include/uapi/linux/
	@if [ -n "$(DESTDIR)" ]; then \
		echo "dkms-install: sources in $(DKMS_SRC); DESTDIR is set: not running dkms"; \
	elif ! command -v dkms > /dev/null; then \
		echo "dkms-install: sources in $(DKMS_SRC); dkms is not installed"; \
	else \
		set -ex; \
		dkms add -m sacred -v $(VERSION); \
		dkms build -m sacred -v $(VERSION) -k $(DKMS_KVER); \
		dkms install -m sacred -v $(VERSION) -k $(DKMS_KVER); \
	fi

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	rm -f lib/*.o lib/*.a lib/*.so* tools/*.o tools/sacred tools/kv/sacred-kv $(KV_CLIENT) $(UNIT_BINS) $(ST_BINS) $(BENCH_BINS) $(EX_BINS) \
		$(POL_OBJS) $(POL_TOOLS)
	rm -rf build/kcompat
