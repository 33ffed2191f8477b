# SPDX-License-Identifier: GPL-2.0-only
#
# mroce top-level build.
#
#   make            kernel module (against KDIR), rdma-core provider, tools
#                   (tools/kulp/mroce_kulp.ko, a kernel ULP, included) and
#                   tools/xport-test/mroce_xtest.ko (a test offload
#                   provider, linked against the module's Module.symvers)
#   make check      lint + KUnit + guest tests, a subset on 6.12 too
#                   (what CI runs; tools/check.sh)
#   make check-install  t-70-install: the packages installed in a guest
#   make check-debug  the guest tests on a KASAN/lockdep/kmemleak/UBSAN
#                   kernel built from linux-source-6.1 (cached), fails on
#                   any kernel report; DEBUG_TESTS="t-20-rc-pingpong ..."
#                   picks tests
#   make conformance  the MetaRoCE conformance suite against mroce in the
#                   guest (tools/conformance, t-26-conformance): TAP, a
#                   closing "N passed, N failed" and rule coverage
#   make check-612  the 6.12 lane (tools/guest/check-k612.sh): mroce and
#                   tools/kulp built W=1 C=1 against Debian's 6.12 LTS
#                   headers (MROCE_KVER, default 6.12), a named subset of
#                   the guest tests on a 6.12 guest; K612_TESTS="all" or
#                   "t-20-rc-pingpong ..." picks tests
#   make demo       boot the test guest, make two hosts, add mroce devices
#   make bench      mroce vs rdma_rxe vs kernel TCP/UDP (tools/bench)
#   make profile    where mroce's CPU goes: perf or function_graph (tools/bench/profile.sh)
#   make trace-lat  ftrace of a perftest round trip (tools/bench/trace-lat.sh)
#   make sim        the cluster-scale simulator (tools/sim): the driver's
#                   protocol code on ns-3, a bounded scenario set -> a
#                   table, CSV and PNG plots in tools/sim/out;
#                   LIST=scenarios/large-1024.list for 1024 hosts
#   make deb        Debian packages into build/deb (tools/deb.sh):
#                   mroce-dkms, mroce-provider, mroce-tools; lintian
#
# KDIR comes from tools/kdir.sh: the running kernel's build dir, else the
# kernel Debian's linux-headers-amd64 points at (6.1 on bookworm);
# MROCE_KVER=6.12 (a series or a full release) picks another installed
# one.  W=1 and C=1 pass through to kbuild.

KDIR ?= $(shell $(CURDIR)/tools/kdir.sh)
GUEST := $(CURDIR)/tools/guest/mroce-vm

.PHONY: all modules provider tools xport-test conformance deb check check-install check-debug check-612 lint kunit guest-test demo bench profile trace-lat sim clean

all: modules provider tools xport-test

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) CONFIG_RDMA_MROCE=m modules

provider:
	$(MAKE) -C tools/libmroce

tools: provider
	$(MAKE) -C tools/tests/src
	$(MAKE) -C tools/mroce-verify
	$(MAKE) -C tools/fuzz
	$(MAKE) -C tools/conformance
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tools/kulp modules

# the test offload provider calls mroce.ko's exports: after the module
xport-test: modules
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tools/xport-test \
		KBUILD_EXTRA_SYMBOLS=$(CURDIR)/Module.symvers modules

# the packages first: t-70-install installs them in the guest
check: all deb
	$(CURDIR)/tools/check.sh

# t-70-install alone: packages installed in a guest, DKMS, autoload
check-install: all deb
	MROCE_CHECK_STAGES=install $(CURDIR)/tools/check.sh

check-debug: provider tools
	$(CURDIR)/tools/guest/check-debug.sh $(DEBUG_TESTS)

# the userspace is the same for both kernels; the modules are built for
# 6.12 in copies under build/ (the tree's stay built for KDIR)
check-612: provider tools
	$(CURDIR)/tools/guest/check-k612.sh $(K612_TESTS)

deb:
	$(CURDIR)/tools/deb.sh

lint:
	$(CURDIR)/tools/lint.sh

kunit:
	$(CURDIR)/kunit/run-kunit.sh

guest-test: all
	$(GUEST) -- tools/tests/run-guest-tests.sh

conformance: all
	tools/conformance/rules.py --check
	$(GUEST) --timeout 900 -- tools/tests/run-guest-tests.sh t-26-conformance

demo: all
	$(GUEST) -- tools/demo.sh

sim:
	$(MAKE) -C tools/sim sim $(if $(LIST),LIST=$(LIST))

bench: all
	$(CURDIR)/tools/bench/run-bench.sh

profile: all
	$(CURDIR)/tools/bench/profile.sh

trace-lat: all
	$(CURDIR)/tools/bench/trace-lat.sh

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C tools/libmroce clean
	$(MAKE) -C tools/tests/src clean
	$(MAKE) -C tools/mroce-verify clean
	$(MAKE) -C tools/fuzz clean
	$(MAKE) -C tools/conformance clean
	$(MAKE) -C tools/sim clean
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tools/kulp clean
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tools/xport-test clean
