# SPDX-License-Identifier: GPL-2.0
#
# Inline BPF socket-local storage: a patch series against Debian's
# linux-source-6.12, with the guest, tests and tools that exercise it.
#
#   make check   install what is missing, build, boot and run every test
#   make demo    boot the kernel with the inline tail on and show it
#   make help    every target

SHELL		:= /bin/bash
JOBS		?= $(shell nproc)
SRC_TARBALL	?= /usr/src/linux-source-6.12.tar.xz
BUILD		:= build
TREE		:= $(BUILD)/linux
OBJ		:= $(BUILD)/obj
KSFT_NAME	:= bpf_sk_inline
KSFT_SRC	:= $(TREE)/tools/testing/selftests/$(KSFT_NAME)
KSFT_INSTALL	:= $(BUILD)/kselftest
ROOTFS		:= $(BUILD)/initramfs.cpio
SERIES		:= $(sort $(wildcard [0-9][0-9][0-9][0-9]-*.patch))
PATCHES		:= $(filter-out 0000-%,$(SERIES))
KMAKE		:= $(MAKE) -C $(TREE) O=$(abspath $(OBJ)) ARCH=x86_64 -j$(JOBS)

# Boot configurations "make check" runs the whole kselftest target under:
# feature off, a valid tail, an unaligned tail, the largest tail with every
# new slab object zeroed (init_on_alloc=1), a tail for TCP and UDP only
# (and a name no protocol has, after a list the last one overrides),
# invalid values (the last of two counts), and the plain words of earlier
# versions, which set nothing. The tail and the list are sysctls set on
# the command line, in a different spelling in each boot.
CHECK_BOOTS	?= off: \
		   tail128:sysctl.net.core.bpf_sk_inline_bytes=128 \
		   'unaligned100:sysctl.net.core.bpf_sk_inline_bytes=-1 sysctl..net.core.bpf_sk_inline_bytes=100' \
		   'tail1024:sysctl/net/core/bpf_sk_inline_bytes=1024 sysctl.net.core.bpf_sk_inline_protos=all init_on_alloc=1' \
		   'protos:sysctl./net/core/bpf_sk_inline_bytes=128 sysctl.net/core.bpf_sk_inline_protos=UNIX sysctl/net.core//bpf_sk_inline_protos=TCP,UDP,TCPv6,UDPv6,NOSUCH' \
		   'toolarge:sysctl.net/core/bpf_sk_inline_bytes=128 sysctl.net.core.bpf_sk_inline_bytes=4096' \
		   'notanumber:sysctl./net//core/bpf_sk_inline_bytes=12abc sysctl.net.core.bpf_sk_inline_protos=' \
		   negative:sysctl.net/core.bpf_sk_inline_bytes=-8 \
		   'plain:bpf_sk_inline_bytes=128 bpf_sk_inline_protos=TCP'
DEMO_APPEND	?= sysctl.net.core.bpf_sk_inline_bytes=128

.PHONY: help deps tree kernel selftests rootfs check demo shell patches checkpatch shellcheck \
	bisect-build bisect-boot build-matrix kernel-debug kernel-pristine check-debug memcg sparse bench bench-plot clean distclean \
	cachesim cachesim-selftest bench-misses bench-misses-doc workload tax layout many-maps hot-churn

help:
	@echo "help        this list"
	@echo "deps        install the Debian packages the project needs (only missing ones)"
	@echo "tree        extract $(SRC_TARBALL) to $(TREE) and apply the series"
	@echo "kernel      build the guest kernel into $(BUILD)/bzImage"
	@echo "selftests   build and install the kselftest target into $(KSFT_INSTALL)"
	@echo "rootfs      build the guest initramfs $(ROOTFS)"
	@echo "check       everything above, then run the kselftests under each boot"
	@echo "            and the tree's BPF selftests for sk storage under two of them"
	@echo "upstream-selftests  build those selftests into $(BPFST) (clang-19)"
	@echo "check-upstream      run only those selftests, in the boots check runs them in"
	@echo "demo        boot with $(DEMO_APPEND) and show the sysctl, the socket"
	@echo "            caches, which maps get a slot and who pays for values"
	@echo "shell       a shell in that guest on this terminal (DEMO_APPEND=...:"
	@echo "            other kernel arguments; exit or Ctrl-A X to leave)"
	@echo "patches     regenerate the patch files from the commits in $(TREE)"
	@echo "checkpatch  scripts/checkpatch.pl --strict on every patch"
	@echo "shellcheck  shellcheck on every shell script of the project"
	@echo "bisect-build build the kernel at every commit of the series"
	@echo "bisect-boot  boot each of those kernels with a tail and run the tree's"
	@echo "             sk storage selftests"
	@echo "build-matrix compile net/core, kernel/bpf and fs/proc for i386, arm64,"
	@echo "             MEMCG=n, BPF_SK_INLINE_STORAGE=n, BPF_SYSCALL=n, CGROUPS=n,"
	@echo "             INET=n (MATRIX_EACH=1: every commit, the files it changed;"
	@echo "             MATRIX_FULL=1 too: the folders)"
	@echo "kernel-pristine  the same kernel without the series (for bench)"
	@echo "kernel-debug build that kernel into $(BUILD)/bzImage-debug"
	@echo "check-debug  run the kselftests on a KASAN/lockdep/kmemleak kernel"
	@echo "memcg       compare memcg charges of dynamic and inline sk storage (doc/memcg.md)"
	@echo "tax         socket sizes and memcg charge per protocol, tail 0 and 128, next"
	@echo "            to a first dynamic value's charge (doc/tax.md)"
	@echo "layout      offsets and cache lines of the fields the lookups read (doc/layout.md)"
	@echo "sparse      sparse on the files the series touches (new warnings fail)"
	@echo "bench       benchmark lookups, memory, map free, socket cost (doc/bench.md); then workload"
	@echo "workload    request/response and churn workloads, inline against dynamic,"
	@echo "            as doc/workload.md and doc/workload-misses.png (also run by bench)"
	@echo "bench-plot  plot $(BUILD)/bench/lookup.dat as doc/bench-lookup.png"
	@echo "many-maps   lookup time as maps per socket grow (1 to 64), inline against"
	@echo "            dynamic, tail 1024 (doc/many-maps.md)"
	@echo "hot-churn   one busy connection while another CPU churns sockets with values,"
	@echo "            cache simulator with coherence, per HOT_KERNELS (doc/hot-churn.md)"
	@echo "cachesim    build the cache simulator plugin (tools/cachesim) and its self-test"
	@echo "cachesim-selftest  run only the simulator's self-test (part of check)"
	@echo "bench-misses  simulated cache misses per lookup, the cold walk's goals, table,"
	@echo "             plot and profiles (doc/bench-misses.md)"
	@echo "bench-misses-doc  that document again from the last run's counts"
	@echo "verifier-stats  veristat over every sk storage program: unpatched, tail 0"
	@echo "             (must be equal) and tail 128, as doc/verifier-stats.md"
	@echo "clean       remove the kernel objects, the guest and the logs"
	@echo "distclean   remove $(BUILD) altogether"

deps:
	@series/install-deps

# The tree is a git repository: "pristine" is the tarball, each later
# commit is one patch. Edit and commit there, then "make patches".
tree: deps
	@series/apply-series $(SRC_TARBALL) $(TREE) $(PATCHES)

# One configuration rule for the normal, debug and pristine kernels:
# tinyconfig, then the fragments $(3) merged into $(2)/.config for the
# source tree $(1), each fragment checked to have survived olddefconfig
# (with $(4), a tree: but for the options that tree does not have).
define kernel_config
	@mkdir -p $(2)
	$(MAKE) -C $(1) O=$(abspath $(2)) ARCH=x86_64 -s tinyconfig >/dev/null
	$(1)/scripts/kconfig/merge_config.sh -m -O $(2) $(2)/.config $(3) >/dev/null
	$(MAKE) -C $(1) O=$(abspath $(2)) ARCH=x86_64 -s olddefconfig
	@for f in $(3); do vm/check-config $(2)/.config $$f $(4) || exit 1; done
endef

$(OBJ)/.config: vm/kernel.config | tree
	$(call kernel_config,$(TREE),$(OBJ),vm/kernel.config)

# "modules" writes Module.symvers, which bpf_testmod.ko links against
# (vm/kernel.config builds only a thermal driver and qrtr.ko as modules).
kernel: tree $(OBJ)/.config
	$(KMAKE) bzImage modules
	@cp $(OBJ)/arch/x86/boot/bzImage $(BUILD)/bzImage
	@echo "kernel: $(BUILD)/bzImage"

# The uapi headers the tests and tools compile against. Only bpf.h
# changes in the series: rebuild them when it does, not on every run, so
# that user-space builds never run kbuild beside a kernel build.
UAPI_HDRS	:= $(OBJ)/usr/include/linux/bpf.h

$(UAPI_HDRS): $(TREE)/include/uapi/linux/bpf.h | $(OBJ)/.config
	$(KMAKE) -s headers
	@touch $@

# After the kernel: the BPF programs take its types from its BTF (vmlinux.h).
selftests: kernel $(UAPI_HDRS)
	@vm/check-config $(OBJ)/.config kselftest/config
	@mkdir -p $(KSFT_SRC)
	@rsync -a --delete kselftest/ $(KSFT_SRC)/
	$(MAKE) -s -C $(TREE)/tools/testing/selftests TARGETS=$(KSFT_NAME) CLANG=clang-19 \
		O=$(abspath $(OBJ)) KHDR_INCLUDES="-isystem $(abspath $(OBJ))/usr/include" \
		VMLINUX_BTF=$(abspath $(OBJ))/vmlinux \
		INSTALL_PATH=$(abspath $(KSFT_INSTALL)) install >/dev/null

# Guest tools written in C, linked statically like the kselftests.
GUEST_TOOLS	:= $(BUILD)/tools/sk-map-hold $(BUILD)/tools/sk-memcg-compare \
		   $(BUILD)/tools/bpf-jited $(BUILD)/tools/sk-tax-open

$(BUILD)/tools/%: tools/%.c tools/tool_util.h kselftest/sk_memcg.h kselftest/sk_inline_util.h \
		| selftests
	@mkdir -p $(BUILD)/tools
	$(CC) -O2 -Wall -isystem $(OBJ)/usr/include -o $@ $< -static -lbpf -lelf -lz

# The benchmark: its BPF object and skeleton are built against the guest
# kernel's BTF and kept here too.
BENCH_TOOL	:= $(BUILD)/tools/sk-bench

# Written again only when the kernel's BTF changed ("kernel" always
# runs), so that the benchmark and its initramfs are not rebuilt for nothing.
$(BUILD)/tools/vmlinux.h: kernel
	@mkdir -p $(BUILD)/tools
	@bpftool btf dump file $(OBJ)/vmlinux format c > $@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi

$(BUILD)/tools/%.bpf.o: tools/%.bpf.c tools/%.h kselftest/sk_storage_maps.bpf.h \
		$(BUILD)/tools/vmlinux.h
	clang-19 -g -O2 -target bpf -D__TARGET_ARCH_x86 -I$(BUILD)/tools -c $< -o $@

$(BUILD)/tools/%.skel.h: $(BUILD)/tools/%.bpf.o
	bpftool gen skeleton $< name $(subst -,_,$*) > $@.tmp && mv $@.tmp $@

.PRECIOUS: $(BUILD)/tools/%.bpf.o $(BUILD)/tools/%.skel.h

BENCH_SRCS	:= tools/sk-bench.c tools/sk-bench-sockets.c tools/sk-bench-lookup.c \
		   tools/sk-bench-memory.c tools/sk-bench-create.c

$(BENCH_TOOL): $(BENCH_SRCS) tools/sk-bench.h tools/sk-bench-user.h tools/tool_util.h \
		$(BUILD)/tools/sk-bench.skel.h kselftest/sk_memcg.h kselftest/sk_inline_util.h \
		| $(UAPI_HDRS)
	$(CC) -O2 -Wall -isystem $(OBJ)/usr/include -I$(BUILD)/tools -o $@ $(filter %.c,$^) \
		-static -lbpf -lelf -lz

# Lookups as the maps holding values in each socket grow (make many-maps).
MANY_MAPS_TOOL	:= $(BUILD)/tools/sk-many-maps
MANY_MAPS_ARGS	?= -n 10000 -p 5
MANY_MAPS	:= $(BUILD)/many-maps

$(MANY_MAPS_TOOL): tools/sk-many-maps.c tools/sk-many-maps.h tools/tool_util.h \
		$(BUILD)/tools/sk-many-maps.skel.h | $(UAPI_HDRS)
	$(CC) -O2 -Wall -isystem $(OBJ)/usr/include -I$(BUILD)/tools -o $@ $(filter %.c,$^) \
		-static -lbpf -lelf -lz

many-maps: kernel $(MANY_MAPS_TOOL)
	@mkdir -p $(MANY_MAPS)/no-kselftest $(MANY_MAPS)/tools
	@cp $(MANY_MAPS_TOOL) $(MANY_MAPS)/tools/
	@vm/mkroot --kselftest $(MANY_MAPS)/no-kselftest --tools $(MANY_MAPS)/tools \
		--out $(MANY_MAPS)/initramfs.cpio
	@vm/run --kernel $(BUILD)/bzImage --initramfs $(MANY_MAPS)/initramfs.cpio \
		--append "sysctl.net.core.bpf_sk_inline_bytes=1024" --log $(MANY_MAPS)/guest.log \
		-- /tools/sk-many-maps $(MANY_MAPS_ARGS) > $(MANY_MAPS)/out.txt
	@{ echo "# Many maps per socket (make many-maps)"; echo; \
	   echo "Generated by \`make many-maps\` from one run; not edited by hand. A 1024-byte tail,"; \
	   echo "UDP sockets with a value in each of the first M maps of 64 that asked for"; \
	   echo "a slot (inline) and of 64 that did not (dynamic); an iterator looks up all M"; \
	   echo "in every socket. TCG timings (no cache model): compare the columns of one"; \
	   echo "row, and the rows of one column, not the numbers with hardware's. The"; \
	   echo "dynamic storage caches 16 maps per socket; past 16, maps evict each other"; \
	   echo "from the cache and every lookup walks the socket's list and takes its lock."; \
	   echo "Below 16 the first lookup of each socket, which reaches its lines first, is"; \
	   echo "spread over more maps on either path: the goals compare 64 maps with 16."; \
	   echo; echo '```'; grep -v '^data:\|^\[' $(MANY_MAPS)/out.txt; echo '```'; } > doc/many-maps.md
	@cat doc/many-maps.md

# The request/response and churn workloads (make workload); a short run
# of it checks its records in the kselftests (kselftest/workload.c).
WORKLOAD_TOOL	:= $(BUILD)/tools/sk-workload

$(WORKLOAD_TOOL): tools/sk-workload.c tools/sk-workload-churn.c tools/sk-workload-hot.c \
		tools/sk-workload.h \
		tools/sk-workload-user.h tools/tool_util.h $(BUILD)/tools/sk-workload.skel.h \
		kselftest/sk_memcg.h kselftest/sk_inline_util.h | $(UAPI_HDRS)
	$(CC) -O2 -Wall -isystem $(OBJ)/usr/include -I$(BUILD)/tools -o $@ $(filter %.c,$^) \
		-static -lbpf -lelf -lz -lpthread

# Debian's bpftool goes in too: the tests run it on inline maps. So does
# qrtr.ko, the module kselftest/unload.c loads and unloads.
rootfs: selftests $(GUEST_TOOLS) $(WORKLOAD_TOOL)
	@vm/mkroot --kselftest $(KSFT_INSTALL) --tools tools --tools $(BUILD)/tools \
		--bin /usr/sbin/bpftool --out $(ROOTFS) \
		--file $(OBJ)/net/qrtr/qrtr.ko:/lib/modules/qrtr.ko

# The cache simulator's self-test first, then the tree's BPF selftests
# for sk storage (test/bpf-selftests); their results join the total.
check: kernel rootfs cachesim upstream-selftests
	@tools/cachesim/selftest --plugin $(CACHESIM_SO) --guest $(CACHESIM_GUEST) \
		--kernel $(BUILD)/bzImage --initramfs $(CACHESIM_ROOT) --logs $(BUILD)/logs \
		--result $(BUILD)/logs/cachesim-selftest.result || true
	@$(BPFST_RUN) || true
	@test/check-boots --kernel $(BUILD)/bzImage --initramfs $(ROOTFS) \
		--logs $(BUILD)/logs --results cachesim:$(BUILD)/logs/cachesim-selftest.result \
		--results bpf-selftests:$(BPFST_RESULT) $(CHECK_BOOTS)

# The debug kernel: KASAN, lockdep, PROVE_RCU, atomic-sleep checks,
# kmemleak and SLUB debugging, in its own object folder.
DEBUG_OBJ	:= $(BUILD)/obj-debug
DEBUG_KMAKE	:= $(MAKE) -C $(TREE) O=$(abspath $(DEBUG_OBJ)) ARCH=x86_64 -j$(JOBS)
# Fewer boots than "make check": the checkers make each one slower. One
# boot has 4 vCPUs, for races that 2 hide; on a 2-core host they run at
# half speed, so both churns of the stress test run 16 s there, against
# 8 s and 5 s (an unknown NAME=value on the kernel command line reaches
# init's environment).
DEBUG_BOOTS	?= off: \
		   'tail128:sysctl.net.core.bpf_sk_inline_bytes=128 init_on_alloc=1' \
		   'unaligned100@4:sysctl/net/core/bpf_sk_inline_bytes=100 sysctl.net.core.bpf_sk_inline_protos=all SK_STRESS_SECONDS=16'

$(DEBUG_OBJ)/.config: vm/kernel.config vm/kernel-debug.config | tree
	$(call kernel_config,$(TREE),$(DEBUG_OBJ),vm/kernel.config vm/kernel-debug.config)

kernel-debug: tree $(DEBUG_OBJ)/.config
	$(DEBUG_KMAKE) bzImage modules
	@cp $(DEBUG_OBJ)/arch/x86/boot/bzImage $(BUILD)/bzImage-debug
	@echo "kernel-debug: $(BUILD)/bzImage-debug"

# The same kernel without the series, for the dynamic-lookup reference of
# "make bench": the tree's "pristine" commit in a worktree of its own.
PRISTINE_TREE	:= $(BUILD)/linux-pristine
PRISTINE_OBJ	:= $(BUILD)/obj-pristine
PRISTINE_KMAKE	:= $(MAKE) -C $(PRISTINE_TREE) O=$(abspath $(PRISTINE_OBJ)) ARCH=x86_64 -j$(JOBS)

$(PRISTINE_TREE)/Makefile: | tree
	git -C $(TREE) worktree add --detach $(abspath $(PRISTINE_TREE)) pristine

$(PRISTINE_OBJ)/.config: vm/kernel.config | $(PRISTINE_TREE)/Makefile
	$(call kernel_config,$(PRISTINE_TREE),$(PRISTINE_OBJ),vm/kernel.config,$(PRISTINE_TREE))

kernel-pristine: $(PRISTINE_OBJ)/.config
	$(PRISTINE_KMAKE) bzImage
	@cp $(PRISTINE_OBJ)/arch/x86/boot/bzImage $(BUILD)/bzImage-pristine
	@echo "kernel-pristine: $(BUILD)/bzImage-pristine"

# The same guest, with the debug kernel's qrtr.ko over the other one.
check-debug: kernel-debug rootfs
	@vm/mkroot --file $(DEBUG_OBJ)/net/qrtr/qrtr.ko:/lib/modules/qrtr.ko \
		--out $(BUILD)/initramfs-debug-modules.cpio
	@cat $(ROOTFS) $(BUILD)/initramfs-debug-modules.cpio > $(BUILD)/initramfs-debug.cpio
	@test/check-boots --kernel $(BUILD)/bzImage-debug --initramfs $(BUILD)/initramfs-debug.cpio \
		--timeout 2400 --logs $(BUILD)/logs-debug $(DEBUG_BOOTS)

demo: kernel rootfs
	@vm/run --kernel $(BUILD)/bzImage --initramfs $(ROOTFS) \
		--append "$(DEMO_APPEND)" --log $(BUILD)/logs/demo.log -- /tools/demo

# A shell in the guest, on this terminal (Ctrl-A X quits QEMU).
shell: kernel rootfs
	@vm/run --kernel $(BUILD)/bzImage --initramfs $(ROOTFS) --interactive \
		--timeout 86400 --append "$(DEMO_APPEND)" \
		--log $(BUILD)/logs/shell.log -- setsid cttyhack sh

# Memory cgroup charges of sk storage, dynamic and inline, side by side.
memcg: kernel rootfs
	@mkdir -p $(BUILD)/memcg
	@set -o pipefail; vm/run --kernel $(BUILD)/bzImage --initramfs $(ROOTFS) \
		--append "$(DEMO_APPEND)" --log $(BUILD)/logs/memcg.log \
		-- /tools/sk-memcg-compare | tee $(BUILD)/memcg/table.txt
	@{ echo "# Memory cgroup charges (make memcg)"; echo; \
	   echo "Generated by \`make memcg\` (boot: $(DEMO_APPEND)); not edited by hand."; \
	   echo "[operating.md](operating.md) says what the columns are and how to choose."; \
	   echo; echo '```'; tr -d '\r' < $(BUILD)/memcg/table.txt | grep -v '^\[ *[0-9.]*\]'; \
	   echo '```'; } > doc/memcg.md

# What the tail costs every socket with no BPF loaded: tail 0 and 128,
# protocols all, /tools/sk-tax in each boot; doc/tax.md.
tax: kernel rootfs
	@tools/tax-report --kernel $(BUILD)/bzImage --initramfs $(ROOTFS) \
		--logs $(BUILD)/logs --made-by "make tax" --out doc/tax.md

# Where the fields the lookups read sit in the built kernel (pahole).
layout: kernel
	@tools/layout-report --vmlinux $(OBJ)/vmlinux --made-by "make layout" --out doc/layout.md

# The benchmark in guests of its own. First the dynamic lookup at tail 0
# against the kernel without the series, boots of each in turn (TCG's
# speed drifts between boots: medians of BENCH_REF_BOOTS each); the
# first boot of each also gives socket costs beside sockets with values,
# and the tail-0 one the reference socket costs. Then one boot with a
# 128-byte tail for the rest.
# BENCH_VM="--kvm --mem 4096" runs it under KVM where there is one.
BENCH		:= $(BUILD)/bench
BENCH_N		?= 1000,3000,10000,30000,100000
BENCH_ARGS	?= --passes 15
BENCH_VM	?= --mem 4096 --timeout 1800
BENCH_APPEND	?= sysctl.net.core.bpf_sk_inline_bytes=128
BENCH_REF_N	?= 1000,10000
BENCH_REF_BOOTS	?= 3

$(BENCH)/initramfs.cpio: $(BENCH_TOOL) $(WORKLOAD_TOOL) vm/mkroot vm/init
	@mkdir -p $(BENCH)/no-kselftest
	@vm/mkroot --kselftest $(BENCH)/no-kselftest --tools tools --tools $(BUILD)/tools \
		--out $@

bench: kernel kernel-pristine $(BENCH)/initramfs.cpio
	@for i in $$(seq $(BENCH_REF_BOOTS)); do \
		for k in pristine tail0; do \
			img=$(BUILD)/bzImage; [ $$k = tail0 ] || img=$(BUILD)/bzImage-pristine; \
			only=dynref; [ $$i != 1 ] || only=dynref,create,registered; \
			echo "bench: $$k boot $$i: sk-bench --only $$only -n $(BENCH_REF_N)"; \
			vm/run $(BENCH_VM) --kernel $$img --initramfs $(BENCH)/initramfs.cpio \
				--log $(BENCH)/ref-$$k-$$i.log -- /tools/sk-bench --only $$only \
				-n $(BENCH_REF_N) $(BENCH_ARGS) --data >/dev/null || exit 1; \
		done; \
	done
	@tools/bench-dynref --unpatched $(BENCH)/ref-pristine-*.log \
		--patched $(BENCH)/ref-tail0-*.log > $(BENCH)/dynref.txt
	@cat $(BENCH)/dynref.txt
	@ref=$$(tr -d '\r' < $(BENCH)/ref-tail0-1.log | sed -n 's/^create-ref: //p'); \
	[ -n "$$ref" ] || { echo "bench: no create-ref in $(BENCH)/ref-tail0-1.log" >&2; exit 1; }; \
	echo "bench: boot with $(BENCH_APPEND): sk-bench -n $(BENCH_N) $(BENCH_ARGS)"; \
	vm/run $(BENCH_VM) --initramfs $(BENCH)/initramfs.cpio --append "$(BENCH_APPEND)" \
		--log $(BENCH)/tail128.log -- /tools/sk-bench -n $(BENCH_N) $(BENCH_ARGS) \
		--data --create-ref "$$ref"
	@tr -d '\r' < $(BENCH)/tail128.log | grep -v -e '^\[ *[0-9.]*\]' -e '^sk-bench: ' \
		-e '^data: ' -e '^create-ref: ' > $(BENCH)/results.txt
	@tools/bench-registered unpatched=$(BENCH)/ref-pristine-1.log \
		tail0=$(BENCH)/ref-tail0-1.log tail128=$(BENCH)/tail128.log > $(BENCH)/registered.txt
	@{ echo; cat $(BENCH)/dynref.txt; echo; cat $(BENCH)/registered.txt; } >> $(BENCH)/results.txt
	@tr -d '\r' < $(BENCH)/tail128.log | sed -n -e 's/^data: # walk /# /p' \
		-e 's/^data: cold //p' > $(BENCH)/lookup.dat
	@tr -d '\r' < $(BENCH)/tail128.log | sed -n -e 's/^data: # walk /# /p' \
		-e 's/^data: hot //p' > $(BENCH)/lookup-hot.dat
	@{ echo "# Lookup benchmark (make bench)"; echo; \
	   echo "Generated by \`make bench\` from one run ($(BENCH_REF_BOOTS) boots each of the"; \
	   echo "kernel without the series and of tail 0, one with $(BENCH_APPEND));"; \
	   echo "not edited by hand. [performance.md](performance.md) says what each"; \
	   echo "table measures and how to read it."; echo; \
	   echo '```'; cat $(BENCH)/results.txt; echo '```'; } > doc/bench.md
	@echo "bench: $(BENCH)/results.txt and doc/bench.md, per-N medians in $(BENCH)/lookup.dat (cold) and lookup-hot.dat"
	@$(MAKE) --no-print-directory workload

# The workloads an operator runs (tools/sk-workload.c): request/response
# over N connections and connection churn, each in a boot of its own per
# kernel (with the tail of BENCH_APPEND, tail 0, without the series: the
# churn starts from a fresh slab), and request/response once more under
# the cache simulator; doc/workload.md and doc/workload-misses.png.
WORKLOAD	:= $(BUILD)/workload
WORKLOAD_N	?= 1000,3000,10000,30000,100000
WORKLOAD_ARGS	?= --passes 5 --segment 10000 --churn-seconds 60
# The simulator runs a few hundred transactions/s: N up to 30000.
WORKLOAD_MISSES_N ?= 1000,3000,10000,30000
WORKLOAD_MISSES_ARGS ?= --passes 3 --segment 2000
WORKLOAD_VM	?= --mem 4096 --timeout 3600
WORKLOAD_RUNS	:= tail:$(BUILD)/bzImage:$(BENCH_APPEND) tail0:$(BUILD)/bzImage: \
		   unpatched:$(BUILD)/bzImage-pristine:

workload: kernel kernel-pristine $(BENCH)/initramfs.cpio $(CACHESIM_SO)
	@mkdir -p $(WORKLOAD)
	@for run in $(WORKLOAD_RUNS); do \
		IFS=: read -r name img app <<< "$$run"; \
		for part in reqresp churn; do \
			echo "workload: $$name, $$part: $$img '$$app': sk-workload --only $$part" \
				"-n $(WORKLOAD_N) $(WORKLOAD_ARGS)"; \
			vm/run $(WORKLOAD_VM) --kernel $$img --initramfs $(BENCH)/initramfs.cpio \
				--append "$$app" --log $(WORKLOAD)/$$name-$$part.log \
				-- /tools/sk-workload --only $$part -n $(WORKLOAD_N) \
				$(WORKLOAD_ARGS) || exit 1; \
		done; \
		cat $(WORKLOAD)/$$name-reqresp.log $(WORKLOAD)/$$name-churn.log > $(WORKLOAD)/$$name.log; \
	done
	@tools/cachesim/workload-misses --plugin $(CACHESIM_SO) --binary $(WORKLOAD_TOOL) \
		--initramfs $(BENCH)/initramfs.cpio --append "$(BENCH_APPEND)" \
		--vm "$(WORKLOAD_VM)" --out $(WORKLOAD)/misses \
		-- -n $(WORKLOAD_MISSES_N) $(WORKLOAD_MISSES_ARGS)
	@tools/workload-report --log "$(BENCH_APPEND)=$(WORKLOAD)/tail.log" \
		--log "tail 0=$(WORKLOAD)/tail0.log" \
		--log "without the series=$(WORKLOAD)/unpatched.log" \
		--misses $(WORKLOAD)/misses --dat $(WORKLOAD)/misses.dat \
		--plot workload-misses.png > $(WORKLOAD)/workload.md
	@mkdir -p doc && cp $(WORKLOAD)/workload.md doc/workload.md
	gnuplot -e "data='$(WORKLOAD)/misses.dat'; out='doc/workload-misses.png'" tools/workload.gp
	@echo "workload: doc/workload.md, doc/workload-misses.png"

# One busy connection on CPU 0 while CPU 1 creates and frees sockets that
# hold values, under the cache simulator with coherence (make hot-churn):
# misses on the busy connection's record lines, inline against dynamic,
# per kernel of HOT_KERNELS (NAME=bzImage ...); doc/hot-churn.md.
HOT		:= $(BUILD)/hot-churn
HOT_KERNELS	?= current=$(BUILD)/bzImage
HOT_ARGS	?= --passes 3 --segment 2000

hot-churn: kernel $(BENCH)/initramfs.cpio $(CACHESIM_SO)
	@mkdir -p $(HOT)
	@for k in $(HOT_KERNELS); do \
		tools/cachesim/hot-misses --plugin $(CACHESIM_SO) --binary $(WORKLOAD_TOOL) \
			--initramfs $(BENCH)/initramfs.cpio --kernel $${k#*=} \
			--append "$(BENCH_APPEND)" --out $(HOT)/$${k%%=*} -- $(HOT_ARGS) || exit 1; \
	done
	@{ echo "# The hot connection under churn"; echo; \
	   echo "Generated by \`make hot-churn\` (tools/sk-workload-hot.c, tools/hot-report):"; \
	   echo "one TCP connection served on vCPU 0 of a two-vCPU guest, its record updated"; \
	   echo "on every segment, in phases without churn (quiet) and with a thread on vCPU 1"; \
	   echo "replacing the oldest of 512 live connections by a new one, a value created"; \
	   echo "in every new socket (churn): about four sockets holding values share each"; \
	   echo "registry bucket with the busy ones. $(BENCH_APPEND), under the cache"; \
	   echo "simulator with coherence (a store invalidates the line in the other vCPU's"; \
	   echo "L1 and L2). Counts are vCPU 0's; medians over the passes ($(HOT_ARGS))."; \
	   echo "The last column counts the misses on the lines of the two busy sockets'"; \
	   echo "records (inline: the slot, tag and value; dynamic: the value) that the other"; \
	   echo "vCPU's writes caused. kselftest/registry checks the same without timing."; echo; \
	   tools/hot-report $(foreach k,$(HOT_KERNELS),--run "$(firstword $(subst =, ,$(k)))=$(HOT)/$(firstword $(subst =, ,$(k)))"); \
	} > $(HOT)/hot-churn.md
	@mkdir -p doc && cp $(HOT)/hot-churn.md doc/hot-churn.md && cat doc/hot-churn.md

$(BENCH)/lookup.dat:
	@echo "bench-plot: no $@ (make bench)" >&2; exit 1

bench-plot: $(BENCH)/lookup.dat
	@mkdir -p doc
	gnuplot -e "data='$<'; out='doc/bench-lookup.png'" tools/sk-bench.gp
	@echo "bench-plot: doc/bench-lookup.png"

patches:
	@series/export-series $(TREE)

checkpatch: tree
	@cd $(TREE) && PATH=/usr/bin:$$PATH ./scripts/checkpatch.pl --strict --quiet \
		$(addprefix $(CURDIR)/,$(PATCHES)) && echo "checkpatch: clean"

# Every shell script of ours: a first line "#!/bin/sh", "#!/bin/bash" or
# "#!/bin/busybox sh".
shellcheck: deps
	@shellcheck $$(git ls-files | while read -r f; do head -n1 "$$f" 2>/dev/null | \
		grep -q '^#!/bin/\(bash\|sh\|busybox sh\)$$' && echo "$$f"; done) && \
		echo "shellcheck: clean"

# sparse on what the series touches, against the same files unpatched.
SPARSE_OBJS	:= net/core/bpf_sk_inline.o net/core/bpf_sk_storage.o \
		   net/core/sock.o net/core/sysctl_net_core.o

sparse: tree $(OBJ)/.config
	@JOBS=$(JOBS) series/sparse-check $(TREE) $(OBJ) $(BUILD)/sparse $(SPARSE_OBJS)

# BISECT_FROM=<commit> checks only the commits after it.
bisect-build: tree $(OBJ)/.config
	@JOBS=$(JOBS) series/bisect-build $(TREE) $(BUILD)/bisect $(OBJ)/.config $(BISECT_FROM)

# Every commit's kernel that bisect-build kept, booted with a tail, runs
# the tree's sk storage selftests (series/bisect-boot).
bisect-boot: upstream-selftests
	@series/bisect-boot $(BUILD)/bisect $(BPFST_ROOT)

clean:
	rm -rf $(OBJ) $(KSFT_INSTALL) $(ROOTFS) $(BUILD)/bzImage $(BUILD)/logs

distclean:
	rm -rf $(BUILD)

# Configurations a build bot tries, at HEAD (MATRIX_EACH=1: every commit).
build-matrix: tree
	@series/build-matrix $(if $(MATRIX_EACH),--each-commit) $(if $(MATRIX_FULL),--full) \
		$(TREE) $(BUILD)/matrix

# ---- Simulated caches under TCG: tools/cachesim ----
# A QEMU TCG plugin that runs every guest data access through a per-vCPU
# L1D and L2 and a shared LLC, and counts misses in the phases a guest
# program marks by calling two empty functions (their addresses from nm).
# "make check" runs its self-test in a guest of its own; "make
# bench-misses" counts sk-bench's misses per lookup.
CACHESIM	:= $(BUILD)/cachesim
CACHESIM_SO	:= $(CACHESIM)/cachesim.so
CACHESIM_GUEST	:= $(CACHESIM)/tools/cachesim-selftest
CACHESIM_ROOT	:= $(CACHESIM)/selftest.cpio

$(CACHESIM_SO): tools/cachesim/cachesim.c tools/cachesim/qemu-plugin-api.h
	@mkdir -p $(CACHESIM)
	$(CC) -O2 -Wall -shared -fPIC -fvisibility=hidden -o $@ $< -lpthread

# Static and not PIE: the markers are where nm says.
$(CACHESIM_GUEST): tools/cachesim/selftest-guest.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -static -no-pie -pthread -o $@ $<

$(CACHESIM_ROOT): $(CACHESIM_GUEST) vm/mkroot vm/init
	@mkdir -p $(CACHESIM)/no-kselftest
	@vm/mkroot --kselftest $(CACHESIM)/no-kselftest --tools $(dir $(CACHESIM_GUEST)) \
		--out $@

cachesim: $(CACHESIM_SO) $(CACHESIM_ROOT)

cachesim-selftest: kernel cachesim
	@tools/cachesim/selftest --plugin $(CACHESIM_SO) --guest $(CACHESIM_GUEST) \
		--kernel $(BUILD)/bzImage --initramfs $(CACHESIM_ROOT) --logs $(BUILD)/logs

# Misses per lookup: sk-bench's walks in one guest under cachesim, booted
# with the tail as "make bench" boots it (BENCH_APPEND). Table, profiles
# and raw counts in $(MISSES); the plot and the report go to doc/.
MISSES		:= $(BUILD)/bench-misses
MISSES_N	?= 1000,3000,10000,30000,100000
MISSES_ARGS	?= --passes 5
MISSES_VM	?= --mem 4096 --timeout 5400
# Plugin options, e.g. CACHESIM_OPTS="llc=8M llcassoc=16" (cachesim.c).
CACHESIM_OPTS	?=
comma		:= ,

bench-misses: kernel $(BENCH)/initramfs.cpio $(CACHESIM_SO)
	@tools/cachesim/bench-misses --binary $(BENCH_TOOL) \
		--plugin "$(CACHESIM_SO)$(subst $() ,,$(addprefix $(comma),$(CACHESIM_OPTS)))" \
		--initramfs $(BENCH)/initramfs.cpio --system-map $(OBJ)/System.map \
		--append "$(BENCH_APPEND)" --vm "$(MISSES_VM)" --out $(MISSES) \
		-- -n $(MISSES_N) $(MISSES_ARGS)
	@$(MAKE) -s bench-misses-doc

# The documents of the last bench-misses run, from its raw counts again.
bench-misses-doc:
	@test -f $(MISSES)/cachesim.out || { echo "bench-misses-doc: no run in $(MISSES)" >&2; exit 1; }
	@tools/cachesim/misses-table $(MISSES)/guest.txt $(MISSES)/cachesim.out \
		--dat $(MISSES)/misses.dat --md $(MISSES)/misses.md \
		--md-hot $(MISSES)/misses-hot.md --md-goals $(MISSES)/goals.md > $(MISSES)/table.txt
	@mkdir -p doc
	gnuplot -e "data='$(MISSES)/misses.dat'; out='doc/bench-misses.png'" \
		tools/cachesim/bench-misses.gp
	@{ echo "# Simulated cache misses per lookup (make bench-misses)"; echo; \
	   echo "Generated by \`make bench-misses\` (boot: $(BENCH_APPEND)); not edited by hand."; \
	   echo "The cold walk is the one upstream's sk-storage-get benchmark makes: an"; \
	   echo "iterator (iter/udp, iter/tcp) visits every socket once and looks up one"; \
	   echo "value in each (raw: a read of sk_mark instead; hash: a hash map keyed by"; \
	   echo "the socket cookie). [performance.md](performance.md) says why the goals are these."; \
	   echo; cat $(MISSES)/goals.md; echo; \
	   echo "Cold walk, misses per lookup beyond the visit-only pass, median of the passes:"; \
	   echo; cat $(MISSES)/misses.md; echo; \
	   echo "Hot walk (one socket, 100,000 lookups in bpf_loop()), memory accesses and"; \
	   echo "instructions per lookup beyond the visit-only pass, at the largest N; call"; \
	   echo "is the inline map read through the helper call:"; \
	   echo; cat $(MISSES)/misses-hot.md; echo; echo '```'; \
	   grep -e '^targets' -e 'passes marked' $(MISSES)/table.txt; echo; \
	   cat $(MISSES)/profile-inline.txt; echo; cat $(MISSES)/profile-dynamic.txt; \
	   echo; cat $(MISSES)/profile-hash.txt; echo '```'; } > doc/bench-misses.md
	@echo "bench-misses: $(MISSES)/table.txt, profiles in $(MISSES)/profile-*.txt," \
		"doc/bench-misses.png and doc/bench-misses.md ($$(cat $(MISSES)/seconds)s in the guest)"

# ---- The kernel tree's own BPF selftests that touch sk storage ----
# test/bpf-selftests finds them in the tree (the tests of
# tools/testing/selftests/bpf whose programs use an sk storage map or
# helper, and test_maps' sk_storage_map case) and writes a makefile that
# has upstream's build only those, and what they need, into $(BPFST)
# (OUTPUT=), with Debian's clang-19 and the tree's libbpf and bpftool:
# upstream's files are left as they are. bpf_testmod.ko is built out of
# the tree against $(OBJ). Their guest root is $(ROOTFS) with
# /bpf-selftests and Debian's ip, rm, dash (a shell that runs programs
# from PATH, not busybox applets) and libgcc_s (pthread_exit()) on top;
# test/bpf-selftests-guest runs them there. "make check" runs them in each
# boot of BPFST_BOOTS (test/check-boots, with test/bpf-selftests as its
# suite); test/bpf-selftests.deny names those not run in a
# boot, and why.
BPFST		:= $(BUILD)/bpf-selftests
BPFST_SRC	:= $(TREE)/tools/testing/selftests/bpf
BPFST_LLVM	?= CLANG=clang-19 LLC=llc-19 LLVM_STRIP=llvm-strip-19
BPFST_BOOTS	?= off: tail128:sysctl.net.core.bpf_sk_inline_bytes=128
BPFST_DENY	:= test/bpf-selftests.deny
BPFST_ROOT	:= $(BPFST)/initramfs.cpio
BPFST_RESULT	:= $(BUILD)/logs/bpf-selftests.result
BPFST_RUN	= test/check-boots --kernel $(BUILD)/bzImage --initramfs $(BPFST_ROOT) \
		  --timeout 900 --logs $(BUILD)/logs --result $(BPFST_RESULT) \
		  --suite "test/bpf-selftests --deny $(BPFST_DENY)" $(BPFST_BOOTS)
BPFST_MAKE	= $(MAKE) -s -C $(BPFST_SRC) -f $(abspath $(BPFST))/upstream.mk \
		  OUTPUT=$(abspath $(BPFST)) $(BPFST_LLVM) feature-llvm=0 \
		  VMLINUX_BTF=$(abspath $(OBJ))/vmlinux
BPFST_INC	:= -I$(BPFST_SRC) -I$(BPFST)/tools/include -I$(TREE)/tools/lib \
		   -I$(TREE)/tools/include -I$(TREE)/tools/arch/x86/include \
		   -I$(TREE)/tools/include/uapi

.PHONY: upstream-selftests check-upstream verifier-stats

# test_progs: upstream's make knows what changed (the kernel's BTF
# included); the rest are rules of ours.
upstream-selftests: kernel rootfs
	@mkdir -p $(BPFST)
	@test/bpf-selftests prepare $(BPFST_SRC) $(BPFST)
	@set -o pipefail; $(BPFST_MAKE) $(abspath $(BPFST))/test_progs 2>&1 | \
		{ grep -v -e 'warning: overriding recipe' -e 'warning: ignoring old recipe' || true; }
	@$(MAKE) -s $(BPFST_ROOT)

$(BPFST)/test_maps_sk_storage: test/bpf-selftests-maps.c $(BPFST_SRC)/map_tests/sk_storage_map.c \
		$(BPFST_SRC)/test_maps.h $(BPFST)/test_progs
	$(CC) -g -O2 -Wall $(BPFST_INC) -o $@ $(filter %.c,$^) \
		$(BPFST)/tools/build/libbpf/libbpf.a -lelf -lz -lpthread

# Out of the tree: its sources are copied, kbuild writes next to them.
# Its BTF is split against vmlinux's, whose type ids move when the kernel
# changes, but kbuild relinks an external module only when its own files
# change: the .ko goes first, or the kernel refuses its BTF.
$(BPFST)/bpf_testmod.ko: $(wildcard $(BPFST_SRC)/bpf_testmod/*.[ch]) $(OBJ)/vmlinux
	@mkdir -p $(BPFST)/bpf_testmod
	@rsync -a --include='*.[ch]' --include=Makefile --exclude='*' \
		$(BPFST_SRC)/bpf_testmod/ $(BPFST)/bpf_testmod/
	@rm -f $(BPFST)/bpf_testmod/bpf_testmod.ko
	$(KMAKE) -s M=$(abspath $(BPFST))/bpf_testmod modules
	@cp $(BPFST)/bpf_testmod/bpf_testmod.ko $@

# veristat from the tree, static: the guest has no libelf of its own.
VERISTAT	:= $(BPFST)/veristat

$(VERISTAT): $(BPFST_SRC)/veristat.c $(BPFST)/test_progs
	$(CC) -g -O2 -Wall $(BPFST_INC) -o $@ $< \
		$(BPFST)/tools/build/libbpf/libbpf.a -static -lelf -lz -lm

# Verifier statistics of every sk storage program, the tree's selftests'
# and ours: booted without a tail, the series must verify each exactly as
# the unpatched kernel does; with one, the difference is shown.
verifier-stats: kernel kernel-pristine upstream-selftests $(VERISTAT)
	@test/verifier-stats --veristat $(VERISTAT) --out doc/verifier-stats.md --same tail0 \
		$$(test/bpf-selftests list $(BPFST_SRC) | sed -n 's|^prog progs/\(.*\)\.c$$|$(BPFST)/\1.bpf.o|p') \
		$(OBJ)/kselftest/$(KSFT_NAME) -- pristine=$(BUILD)/bzImage-pristine \
		tail0=$(BUILD)/bzImage tail128=$(BUILD)/bzImage:sysctl.net.core.bpf_sk_inline_bytes=128

$(BPFST_ROOT): $(ROOTFS) $(BPFST)/test_progs $(BPFST)/test_maps_sk_storage \
		$(BPFST)/bpf_testmod.ko $(BPFST)/tests.txt $(BPFST)/objs.txt \
		test/bpf-selftests-guest vm/mkroot
	@rm -rf $(BPFST)/guest && mkdir -p $(BPFST)/guest
	@strip --strip-debug -o $(BPFST)/guest/test_progs $(BPFST)/test_progs
	@cp $(BPFST)/test_maps_sk_storage $(BPFST)/bpf_testmod.ko $(BPFST)/tests.txt \
		$(BPFST)/guest/
	@sed 's|^|$(BPFST)/|' $(BPFST)/objs.txt | xargs -r cp -t $(BPFST)/guest/
	@cp test/bpf-selftests-guest $(BPFST)/guest/run
	@vm/mkroot --tree $(BPFST)/guest:/bpf-selftests --bin /bin/ip --bin /bin/rm \
		--bin /bin/dash --lib /lib/x86_64-linux-gnu/libgcc_s.so.1 \
		--out $(BPFST)/guest.cpio
	@cat $(ROOTFS) $(BPFST)/guest.cpio > $@.tmp && mv $@.tmp $@
	@echo "upstream-selftests: $@ ($$(wc -l < $(BPFST)/tests.txt) tests)"

check-upstream: kernel upstream-selftests
	@$(BPFST_RUN)
# ---- end of the kernel tree's BPF selftests ----
