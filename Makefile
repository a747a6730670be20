# SPDX-License-Identifier: GPL-2.0
#
# npuipc top-level build.
#   make          build npuipc.ko (against the installed kernel headers) and
#                 all userspace: libnpuipc, tests, tools
#   make demo     install what is missing, boot a VM, load npuipc, list devices
#   make check    install what is missing, build, run every test (host + VM)
#   make bench    build, then run the benchmarks in a VM
#   make check-debug  the VM suites, stress and fuzzer on a KASAN, lockdep,
#                 kmemleak and failslab kernel (built once, ~26 min, cached)
#   make setup    install the Debian packages the build and the VM need
#   make install  install libnpuipc, headers, npuipc.pc, the CMake package,
#                 the CANN-compatible root, tools and man pages under
#                 $(DESTDIR)$(PREFIX) (PREFIX default /usr/local);
#                 make uninstall removes exactly that
#   make dkms-install / dkms-uninstall  the module through DKMS for every
#                 installed kernel with headers (KVER=... for some only)
#   make kernels  npuipc.ko for each kernel of kernel/kernels.conf (W=1), each
#                 in build/kernels/KVER/, unpacking a kernel the system lacks
#                 into /var/cache/npuipc/kernels (make check and make bench)
#
# KVER/KDIR select the kernel of `make` (default: see kernel/Makefile); BUILD
# the build directory (anywhere the host can see; the VM sees it too).

BUILD ?= $(CURDIR)/build
PREFIX ?= /usr/local
CMAKE_BUILD_TYPE ?= RelWithDebInfo
include kernel/kernels.conf
# 6.1's: tests/kselftest/npuipc_harness.h builds on that harness.
LINUX_SOURCE_TARBALL ?= $(NPUIPC_LINUX_SOURCE)
KSFT_DIR := $(BUILD)/kselftest
KSFT_HEADERS := $(KSFT_DIR)/kselftest_harness.h $(KSFT_DIR)/kselftest.h $(KSFT_DIR)/vgem_drm.h

all: module userspace

module: warn-module
	$(MAKE) -C kernel

# The harness self-test's module that warns on load (tests/vm/warn_module),
# for the kernel its guest boots.
warn-module:
	$(MAKE) -C kernel KVER=$(NPUIPC_KVER) EXTMOD=$(CURDIR)/tests/vm/warn_module

# The kernels make check and make bench boot, each module built with W=1
# (and the Kbuild's -Werror) in a directory of its own.
kernels: setup
	tools/kernels fetch
	BUILD=$(BUILD) W=1 tools/kernels build $(NPUIPC_KVER)
	BUILD=$(BUILD) W=1 tools/kernels build $(NPUIPC_KVER_NEWER)

# kselftest_harness.h comes from Debian's linux-source package at build time;
# it is not copied into this tree. So does vgem's uapi header (not in
# linux-libc-dev), for the tests that make vgem fences.
$(KSFT_HEADERS): $(LINUX_SOURCE_TARBALL)
	@test -f "$(LINUX_SOURCE_TARBALL)" || { echo "$(LINUX_SOURCE_TARBALL) not found: run 'make setup'" >&2; exit 1; }
	mkdir -p $(KSFT_DIR)
	tar -xJf $(LINUX_SOURCE_TARBALL) -C $(KSFT_DIR) --strip-components=4 --wildcards \
		'*/tools/testing/selftests/kselftest_harness.h' '*/tools/testing/selftests/kselftest.h' \
		'*/include/uapi/drm/vgem_drm.h'
	touch $(KSFT_HEADERS)

userspace: $(KSFT_HEADERS)
	cmake -S . -B $(BUILD)/cmake -DCMAKE_BUILD_TYPE=$(CMAKE_BUILD_TYPE) -DCMAKE_INSTALL_PREFIX=$(PREFIX) -DKSELFTEST_DIR=$(KSFT_DIR) > /dev/null
	cmake --build $(BUILD)/cmake -j2

setup:
	tools/setup

demo: setup all
	tools/demo

# The modules it boots are those of `kernels` (the first kernel's doubles
# as the harness's): the in-tree build would be a second one for 6.1.
check: setup userspace warn-module kernels
	BUILD=$(BUILD) tools/check

setup-debug:
	tools/setup --debug

check-debug: setup-debug all
	tools/check-debug

bench: all kernels
	BUILD=$(BUILD) tools/bench

install: userspace
	tools/install install $(BUILD)/cmake

uninstall:
	tools/install uninstall $(PREFIX)

dkms-install:
	tools/dkms install $(KVER)

dkms-uninstall:
	tools/dkms uninstall

clean:
	$(MAKE) -C kernel clean
	$(MAKE) -C kernel EXTMOD=$(CURDIR)/tests/vm/warn_module clean
	rm -rf $(BUILD)

.PHONY: all module warn-module kernels userspace setup setup-debug demo check check-debug bench install uninstall \
	dkms-install dkms-uninstall clean
