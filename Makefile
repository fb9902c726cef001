# SPDX-License-Identifier: GPL-2.0
#
# make            build every module against the target kernel's headers
# make unit       build the userspace unit tests of the algorithm cores
# make unit-asan  the same under AddressSanitizer and UBSan, and run them
# make fuzz-build build the libFuzzer targets of tests/fuzz/ (clang) into
#                 build/fuzz/: every parser and core, and the tc plugin's
#                 option parser
# make fuzz-smoke every target for FUZZ_SMOKE_SECONDS (8) from its seeds and
#                 crash reproducers (tests/fuzz/corpus, regress); fails on
#                 any crash, leak or timeout; writes only under build/
# make fuzz       the same for FUZZ_SECONDS (600) each, growing a corpus in
#                 build/fuzz/work/ run after run; prints executions per target
# make tc         build the tc plugin(s) for iproute2
# make bpf        build esack as a BPF congestion control (bpf_esack,
#                 docs/esack.md) into build/bpf/esack.bpf.o, against
#                 build/bpf/vmlinux.h made from the VM kernel's BTF
#                 (tools/vm-run --vmlinux; BPF_KERNEL=6.12 for that one)
# make test       fuzz-smoke and the tests of tests/*.py on the host, then
#                 the in-VM suite in two guests at once: test-real (the
#                 deterministic tests, real clock) and test-virtual (the
#                 statistical runs, virtual clock); each also runs alone
# make test-debug the in-VM suite under the debug kernel (KASAN, UBSAN,
#                 lockdep, kmemleak, failslab), built once by tools/debug-kernel
# make soak       SOAK_MINUTES (10) of churn and faults under the debug kernel
#                 (tests/soak): counters must add up, nothing may crash or leak
# make bench      every seed experiment's quick set (satnet run), then the
#                 report docs/results.md (satnet report); BENCH_ARGS adds options
# make head-to-head  the head-to-head experiments (testbed/experiments/h2h-*.toml),
#                 then the report and docs/head-to-head.md
# make bench-epdn the epdn qdisc's per-packet cost (docs/epdn-bench.md)
# make bench-epdn-cost  the epdn core's instructions per operation, counted
#                 by callgrind on the host, no VM (docs/epdn-bench.md)
# make install    install modules (and the tc plugin) on this host, then
#                 depmod, so that modprobe finds them (README.md)
# make modules-6.12  build every module against Debian's 6.12 headers
#                 (KDIR_612) into build/k6.12/, beside the default set
#
# KDIR selects the kernel build tree.  Default: the running kernel when it
# can load modules and its headers are installed, otherwise the newest
# Debian 6.1 linux-headers-6.1.*-amd64 under /usr/src, the kernel that
# tools/vm-run boots by default.  make test builds with W=1 and -Werror
# (SATNET_WERROR=1); other builds, DKMS's among them, do not stop on a
# warning of a newer compiler or kernel.

PROJECT_VERSION := $(file < VERSION)
CURDIR_ABS := $(abspath $(CURDIR))

# Debian's newest headers of a series, generic flavour (not -cloud, -rt).
debian_headers = $(lastword $(shell ls -d /usr/src/linux-headers-$(1).*-amd64 \
	2>/dev/null | grep -Ev -- '-(cloud|rt)-amd64$$' | sort -V))

running_kdir := /lib/modules/$(shell uname -r)/build
ifeq ($(origin KDIR),undefined)
  ifneq ($(wildcard /proc/modules),)
    ifneq ($(wildcard $(running_kdir)/Makefile),)
      KDIR := $(running_kdir)
    endif
  endif
endif
ifeq ($(KDIR),)
  KDIR := $(call debian_headers,6.1)
endif
KDIR_612 ?= $(call debian_headers,6.12)
# The release modules_install writes under: uname -r of that kernel (Debian's
# include/config/kernel.release says 6.1.192 for 6.1.0-56-amd64).
krelease = $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
	$(1)/include/generated/utsrelease.h 2>/dev/null)

# The 6.12 set is built from a copy of the module sources, as kbuild
# writes its objects beside them: build/k6.12/ has the checkout's layout,
# tools/vm-run --kernel 6.12 puts its .ko files in the checkout's place.
MODULE_DIRS := $(patsubst %/,%,$(shell sed -n 's,^obj-m += \(.*/\)$$,\1,p' Kbuild))
MODULE_SRCS := Kbuild VERSION $(wildcard include/satnet/*.h) \
	$(foreach d,$(MODULE_DIRS),$(wildcard $(d)/Kbuild $(d)/*.[ch]))
K612 := build/k6.12
# make test's module builds: every W=1 warning is an error.
CI_KFLAGS := W=1 SATNET_WERROR=1

CC ?= cc
UNIT_CFLAGS := -O2 -g -Wall -Wextra -Werror -std=gnu11 -Iinclude -I.
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,build/unit/%,$(UNIT_SRCS))

# libFuzzer targets: the unit tests' flags, clang, ASan and UBSan.
FUZZ_CC ?= clang
FUZZ_CFLAGS := $(UNIT_CFLAGS) -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(FUZZ_SRCS))
FUZZ_SMOKE_SECONDS ?= 8
FUZZ_SECONDS ?= 600

# The BPF programs: clang, vmlinux.h from the BTF of the kernel the VM
# boots (CO-RE relocates the object to other kernels' layouts).
BPF_KERNEL ?= stock
BPF_CLANG ?= clang
BPF_CFLAGS := -target bpf -O2 -g -Wall -Werror -D__TARGET_ARCH_x86 \
	-Ibuild/bpf -Iinclude
BPF_OBJS := build/bpf/esack.bpf.o

TC_LIBDIR ?= $(firstword $(wildcard /usr/lib/x86_64-linux-gnu/tc /usr/lib/tc) /usr/lib/tc)

.PHONY: all modules modules-6.12 unit unit-asan fuzz-build fuzz-smoke fuzz tc bpf test \
	test-real test-virtual test-6.12 test-real-6.12 test-debug soak bench \
	head-to-head clock-check bench-epdn bench-epdn-cost install clean deps kdir

all: modules unit tc

kdir:
	@echo $(KDIR)

modules:
	@test -n "$(KDIR)" || { echo "No kernel headers found: install linux-headers-amd64 (tools/install-deps.sh) or set KDIR=" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR_ABS) modules

modules-6.12: $(addprefix $(K612)/,$(MODULE_SRCS))
	@test -n "$(KDIR_612)" || { echo "No 6.12 headers found: install linux-headers-6.12-amd64 (tools/install-deps.sh) or set KDIR_612=" >&2; exit 1; }
	$(MAKE) -C $(KDIR_612) M=$(CURDIR_ABS)/$(K612) modules

$(K612)/%: %
	@mkdir -p $(dir $@)
	cp $< $@

unit: $(UNIT_BINS)

build/unit/%: tests/unit/%.c $(wildcard include/satnet/*.h) $(wildcard */*_core.c) $(wildcard tests/unit/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -o $@ $< -lm

unit-asan: $(patsubst build/unit/%,build/unit-asan/%,$(UNIT_BINS))
	@set -e; for t in $^; do $$t; done

build/unit-asan/%: tests/unit/%.c $(wildcard include/satnet/*.h) $(wildcard */*_core.c) $(wildcard tests/unit/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -o $@ $< -lm

fuzz-build: $(FUZZ_BINS)

build/fuzz/%: tests/fuzz/%.c $(wildcard tests/fuzz/*.h) $(wildcard include/satnet/*.h) \
		$(wildcard */*_core.c) $(wildcard tests/unit/*.h) tools/tc/q_epdn.c tools/tc/tc_abi.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< -lm

fuzz-smoke: fuzz-build
	tools/fuzz-run --seconds $(FUZZ_SMOKE_SECONDS) $(FUZZ_BINS)

fuzz: fuzz-build
	tools/fuzz-run --seconds $(FUZZ_SECONDS) --keep $(FUZZ_BINS)

tc:
	$(MAKE) -C tools/tc

bpf: $(BPF_OBJS)

# Made anew when the kernel choice changes (the path is in the .cmd file).
build/bpf/vmlinux.h: FORCE
	@mkdir -p $(dir $@)
	@vmlinux=$$(tools/vm-run --kernel $(BPF_KERNEL) --vmlinux) && \
	if [ "$$(cat $@.cmd 2>/dev/null)" != "$$vmlinux" ] || \
	   [ "$$vmlinux" -nt $@ ]; then \
		echo "  BTF     $@ ($$vmlinux)"; \
		bpftool btf dump file "$$vmlinux" format c > $@.tmp && \
		mv $@.tmp $@ && echo "$$vmlinux" > $@.cmd; \
	fi

build/bpf/%.bpf.o: */%.bpf.c build/bpf/vmlinux.h $(wildcard include/satnet/*.h) \
		$(wildcard */*_core.c) $(wildcard */*_hooks.h)
	$(BPF_CLANG) $(BPF_CFLAGS) -c $< -o $@

.PHONY: FORCE
FORCE:

deps:
	tools/install-deps.sh

# The tests of tests/*.py need neither root nor a kernel: they run on the
# host.  The in-VM suite runs in two guests side by side: its deterministic
# tests on the real clock (test-real, then the 6.12 part), its statistical
# runs over netem on the virtual clock (test-virtual), where the other
# guest's load cannot change their outcome.  Each guest's output is printed
# when it ends.  On 6.12 the peer scripts and the tc cases run, with the
# modules built for it (build/k6.12/); the scripts in one process
# (tests/peer/run.py), half the time of one interpreter per script.
PYTEST := /usr/bin/python3 -m pytest -p no:cacheprovider

test: deps
	$(MAKE) modules modules-6.12 $(CI_KFLAGS)
	$(MAKE) unit tc bpf
	$(MAKE) fuzz-smoke
	$(PYTEST) -v --ignore=tests/integration tests
	$(MAKE) -j2 --output-sync=target test-real-6.12 test-virtual

# A test still running after TEST_DUMP_S prints every thread's traceback
# (it is not stopped: the limits are vm-run's).
TEST_DUMP_S := 600
test-real:
	tools/vm-run --timeout 3600 --log build/test-console.log -- \
		$(PYTEST) -v --durations=20 -o faulthandler_timeout=$(TEST_DUMP_S) \
		-m 'not statistical' tests/integration

test-virtual:
	tools/vm-run --clock virtual --timeout 3600 \
		--log build/test-virtual-console.log -- \
		$(PYTEST) -v --durations=20 -m statistical tests/integration

test-6.12:
	tools/vm-run --vm --kernel 6.12 --timeout 2400 \
		--log build/test-6.12-console.log -- sh -c \
		'python3 tests/peer/run.py tests/peer/scripts/*/*.py && \
		$(PYTEST) -v -o faulthandler_timeout=$(TEST_DUMP_S) \
		tests/integration/test_tc_cases.py'

# One guest after the other, beside test-virtual.
test-real-6.12:
	$(MAKE) test-real
	$(MAKE) test-6.12

# The modules are rebuilt against the debug tree here, and against the stock
# headers again by the next plain build (kbuild sees the changed command).
# Only the in-VM suite's deterministic tests: the host's tests touch no
# kernel, and the statistical runs measure performance, which the debug
# kernel's checks distort (make soak drives real traffic under it).
test-debug: deps
	tools/debug-kernel --build
	$(MAKE) modules KDIR=$$(tools/debug-kernel --kdir)
	$(MAKE) unit tc
	tools/vm-run --kernel debug --timeout 14400 \
		--log build/test-debug-console.log -- \
		$(PYTEST) -v --durations=20 -m 'not statistical' tests/integration

# tests/soak on the debug kernel (tools/debug-kernel builds it once); the
# modules are rebuilt against it here and for Debian's kernel by the next
# plain build.  The run ends within SOAK_MINUTES + 10 minutes; its figures
# and checks go to build/soak/soak.json, the console to build/soak-console.log.
SOAK_MINUTES ?= 10
soak: deps
	tools/debug-kernel --build
	$(MAKE) modules KDIR=$$(tools/debug-kernel --kdir)
	$(MAKE) tc
	tools/vm-run --kernel debug --timeout $$(( ($(SOAK_MINUTES) + 15) * 60 )) \
		--log build/soak-console.log -- \
		tests/soak/run.py --minutes $(SOAK_MINUTES) --require-debug \
		--out build/soak

SEED_EXPS := $(basename $(notdir $(shell grep -l '^\[quick\]' \
	testbed/experiments/s[0-9]*.toml)))
H2H_EXPS := $(basename $(notdir $(wildcard testbed/experiments/h2h-*.toml)))

bench: deps
	$(MAKE) all
	satnet run --quick --width-check s000-fig2:tcp-r $(BENCH_ARGS) \
		$(SEED_EXPS)
	satnet report --command "make bench"

head-to-head: deps
	$(MAKE) all
	satnet run --quick $(BENCH_ARGS) $(H2H_EXPS)
	satnet report --command "make head-to-head"

# The same points on the real clock, the virtual clock and the virtual
# clock on a loaded host, one experiment per family of paths; the tables
# go to build/clock/clock-check.md (docs/testbed.md).  About 2 hours.
clock-check: deps
	$(MAKE) all
	tools/clock-check $(CLOCK_ARGS)

# The epdn qdisc's per-packet cost against pfifo and fq_codel (pktgen) and
# its TCP goodput (iperf3), docs/epdn-bench.md: 20-30 minutes in the VM.
bench-epdn: deps
	$(MAKE) all
	tools/vm-run --timeout 3600 --log build/bench-epdn-console.log -- tools/bench-epdn

# Instructions per operation of the epdn core, current and old (callgrind).
bench-epdn-cost:
	tools/epdn-cost

# INSTALL_MOD_PATH and DESTDIR stage an install under another root.  The
# modules are unsigned, so a kernel that enforces signatures refuses them
# (others log "tainting kernel").  depmod is run here: modules_install
# runs it only with a System.map, which Debian's headers lack.
install: modules tc
	$(MAKE) -C $(KDIR) M=$(CURDIR_ABS) modules_install INSTALL_MOD_PATH=$(INSTALL_MOD_PATH)
	depmod $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) $(call krelease,$(KDIR))
	$(MAKE) -C tools/tc install TC_LIBDIR=$(TC_LIBDIR) DESTDIR=$(DESTDIR)

clean:
	@test -z "$(KDIR)" || $(MAKE) -C $(KDIR) M=$(CURDIR_ABS) clean
	rm -rf build
	$(MAKE) -C tools/tc clean
