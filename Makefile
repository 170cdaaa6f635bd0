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
# feature off, a valid tail, an unaligned tail and invalid values.
CHECK_BOOTS	?= off:: \
		   tail128:sysctl.net.core.bpf_sk_inline_bytes=128 \
		   unaligned100:sysctl.net.core.bpf_sk_inline_bytes=100 \
		   tail1024:sysctl.net.core.bpf_sk_inline_bytes=1024 \
		   toolarge:sysctl.net.core.bpf_sk_inline_bytes=4096 \
		   notanumber:sysctl.net.core.bpf_sk_inline_bytes=12abc \
		   negative:sysctl.net.core.bpf_sk_inline_bytes=-8
DEMO_APPEND	?= sysctl.net.core.bpf_sk_inline_bytes=128

.PHONY: help deps tree kernel selftests rootfs check demo patches checkpatch \
	bisect-build kernel-debug check-debug memcg sparse clean distclean

help:
	@echo "deps        install the Debian packages the project needs (only missing ones)"
	@echo "tree        extract $(SRC_TARBALL) to $(TREE) and apply the series"
	@echo "kernel      build the guest kernel into $(BUILD)/bzImage"
	@echo "selftests   build and install the kselftest target into $(KSFT_INSTALL)"
	@echo "rootfs      build the guest initramfs $(ROOTFS)"
	@echo "check       everything above, then run the kselftests under each boot"
	@echo "demo        boot with $(DEMO_APPEND) and show the sysctl and caches"
	@echo "patches     regenerate the patch files from the commits in $(TREE)"
	@echo "checkpatch  scripts/checkpatch.pl --strict on every patch"
	@echo "bisect-build build the kernel at every commit of the series"
	@echo "check-debug  run the kselftests on a KASAN/lockdep/kmemleak kernel"
	@echo "memcg       compare memcg charges of dynamic and inline sk storage"
	@echo "sparse      sparse on the files the series touches (new warnings fail)"

deps:
	@vm/install-deps

# The tree is a git repository: "pristine" is the tarball, each later
# commit is one patch. Edit and commit there, then "make patches".
tree: deps
	@vm/apply-series $(SRC_TARBALL) $(TREE) $(PATCHES)

$(OBJ)/.config: vm/kernel.config | tree
	@mkdir -p $(OBJ)
	$(KMAKE) -s tinyconfig >/dev/null
	$(TREE)/scripts/kconfig/merge_config.sh -m -O $(OBJ) $(OBJ)/.config vm/kernel.config >/dev/null
	$(KMAKE) -s olddefconfig
	@vm/check-config $(OBJ)/.config vm/kernel.config

kernel: tree $(OBJ)/.config
	$(KMAKE) bzImage
	@cp $(OBJ)/arch/x86/boot/bzImage $(BUILD)/bzImage
	@echo "kernel: $(BUILD)/bzImage"

# The uapi headers the tests and tools compile against. Only bpf.h
# changes in the series: rebuild them when it does, not on every run, so
# that user-space builds never run kbuild beside a kernel build.
UAPI_HDRS	:= $(OBJ)/usr/include/linux/bpf.h

$(UAPI_HDRS): $(TREE)/include/uapi/linux/bpf.h | $(OBJ)/.config
	$(KMAKE) -s headers
	@touch $@

selftests: tree $(UAPI_HDRS)
	@mkdir -p $(KSFT_SRC)
	@rsync -a --delete kselftest/ $(KSFT_SRC)/
	$(MAKE) -s -C $(TREE)/tools/testing/selftests TARGETS=$(KSFT_NAME) \
		O=$(abspath $(OBJ)) KHDR_INCLUDES="-isystem $(abspath $(OBJ))/usr/include" \
		VMLINUX_BTF=$(abspath $(OBJ))/vmlinux \
		INSTALL_PATH=$(abspath $(KSFT_INSTALL)) install >/dev/null

# Guest tools written in C, linked statically like the kselftests.
GUEST_TOOLS	:= $(BUILD)/tools/sk-map-hold $(BUILD)/tools/sk-memcg-compare

$(BUILD)/tools/%: tools/%.c kselftest/sk_memcg.h | selftests
	@mkdir -p $(BUILD)/tools
	$(CC) -O2 -Wall -isystem $(OBJ)/usr/include -o $@ $< -static -lbpf -lelf -lz

rootfs: selftests $(GUEST_TOOLS)
	@vm/mkroot --kselftest $(KSFT_INSTALL) --tools tools --tools $(BUILD)/tools \
		--out $(ROOTFS)

check: kernel rootfs
	@vm/check-boots --kernel $(BUILD)/bzImage --initramfs $(ROOTFS) \
		--logs $(BUILD)/logs $(CHECK_BOOTS)

# The debug kernel: KASAN, lockdep, PROVE_RCU, atomic-sleep checks,
# kmemleak and SLUB debugging, in its own object folder.
DEBUG_OBJ	:= $(BUILD)/obj-debug
DEBUG_KMAKE	:= $(MAKE) -C $(TREE) O=$(abspath $(DEBUG_OBJ)) ARCH=x86_64 -j$(JOBS)
# Fewer boots than "make check": the checkers make each one slower.
DEBUG_BOOTS	?= off:: \
		   tail128:sysctl.net.core.bpf_sk_inline_bytes=128 \
		   unaligned100:sysctl.net.core.bpf_sk_inline_bytes=100

$(DEBUG_OBJ)/.config: vm/kernel.config vm/kernel-debug.config | tree
	@mkdir -p $(DEBUG_OBJ)
	$(DEBUG_KMAKE) -s tinyconfig >/dev/null
	$(TREE)/scripts/kconfig/merge_config.sh -m -O $(DEBUG_OBJ) $(DEBUG_OBJ)/.config \
		vm/kernel.config vm/kernel-debug.config >/dev/null
	$(DEBUG_KMAKE) -s olddefconfig
	@vm/check-config $(DEBUG_OBJ)/.config vm/kernel-debug.config

kernel-debug: tree $(DEBUG_OBJ)/.config
	$(DEBUG_KMAKE) bzImage
	@cp $(DEBUG_OBJ)/arch/x86/boot/bzImage $(BUILD)/bzImage-debug
	@echo "kernel-debug: $(BUILD)/bzImage-debug"

check-debug: kernel-debug rootfs
	@vm/check-boots --kernel $(BUILD)/bzImage-debug --initramfs $(ROOTFS) \
		--timeout 2400 --logs $(BUILD)/logs-debug $(DEBUG_BOOTS)

demo: kernel rootfs
	@vm/run --kernel $(BUILD)/bzImage --initramfs $(ROOTFS) \
		--append "$(DEMO_APPEND)" --log $(BUILD)/logs/demo.log -- /tools/demo

# Memory cgroup charges of sk storage, dynamic and inline, side by side.
memcg: kernel rootfs
	@mkdir -p $(BUILD)/memcg
	@set -o pipefail; vm/run --kernel $(BUILD)/bzImage --initramfs $(ROOTFS) \
		--append "$(DEMO_APPEND)" --log $(BUILD)/logs/memcg.log \
		-- /tools/sk-memcg-compare | tee $(BUILD)/memcg/table.txt

patches:
	@vm/export-series $(TREE)

checkpatch: tree
	@cd $(TREE) && PATH=/usr/bin:$$PATH ./scripts/checkpatch.pl --strict --quiet \
		$(addprefix $(CURDIR)/,$(PATCHES)) && echo "checkpatch: clean"

# sparse on what the series touches, against the same files unpatched.
SPARSE_OBJS	:= net/core/bpf_sk_inline.o net/core/bpf_sk_storage.o \
		   net/core/sock.o net/core/sysctl_net_core.o

sparse: tree $(OBJ)/.config
	@JOBS=$(JOBS) vm/sparse-check $(TREE) $(OBJ) $(BUILD)/sparse $(SPARSE_OBJS)

# BISECT_FROM=<commit> checks only the commits after it.
bisect-build: tree $(OBJ)/.config
	@JOBS=$(JOBS) vm/bisect-build $(TREE) $(BUILD)/bisect $(OBJ)/.config $(BISECT_FROM)

clean:
	rm -rf $(OBJ) $(KSFT_INSTALL) $(ROOTFS) $(BUILD)/bzImage $(BUILD)/logs

distclean:
	rm -rf $(BUILD)
