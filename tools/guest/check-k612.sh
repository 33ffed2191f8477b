#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# check-k612.sh - the 6.12 lane ("make check-612", check.sh stage k612):
# mroce built against Debian's 6.12 LTS kernel and the guest tests run on
# it, while everything else (the default build, the other lanes) stays
# on the distribution's 6.1.
#
# usage: tools/guest/check-k612.sh [--build-only|--run-only] [TEST...]
#   default: the subset in MROCE_K612_TESTS; "all" runs every test.
#   make check's stage k612 names its own, shorter subset
#   (MROCE_K612_CI_TESTS in tools/check.sh).
#   --build-only: steps 1 and 2; --run-only: step 3 with the modules an
#   earlier --build-only left (when the guest is shared: build first,
#   then hold /work/guest.lock for the run alone)
#
#   1. tools/kdir.sh with MROCE_KVER (default 6.12: the release Debian's
#      linux-headers-6.12-amd64 metapackage points at; no ABI number is
#      written down anywhere) gives the headers;
#   2. mroce.ko built against them with W=1 and sparse (C=1) in a copy of
#      the sources under build/k612-module/, tools/kulp's modules
#      under build/k612-kulp/ and the test offload provider under
#      build/k612-module/tools/xport-test/ (the objects in the tree stay
#      the 6.1 ones);
#      any warning fails the lane;
#   3. tools/guest/mroce-vm boots that release's /boot/vmlinuz and its
#      /lib/modules (linux-image-6.12-amd64; the initramfs is built for it
#      and cached) and runs tools/tests/run-guest-tests.sh with MROCE_KO
#      MROCE_KULP_DIR and MROCE_XTEST_KO pointing at the modules of step 2.
#
#   MROCE_KVER            kernel series or release (default 6.12)
#   MROCE_K612_TESTS      tests run by default (see below)
#   MROCE_K612_VM_TIMEOUT seconds for the whole guest run (default 2400)
# Results: build/results-k612/ (test logs, guest-tests.tap, dmesg.log).
# Exit status: non-zero when the module does not build cleanly, the
# kernel is not installed, or any test failed.
set -uo pipefail
unset ARCH SUBARCH CROSS_COMPILE W C O M KBUILD_OUTPUT KBUILD_EXTMOD \
	MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
ME=check-k612
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
TOP=$(cd "$HERE/../.." && pwd -P)
cd "$TOP" || exit 1

die() { echo "$ME: $*" >&2; exit 1; }

# The named subset: make check's (MROCE_K612_CI_TESTS in tools/check.sh:
# device and namespace lifetime, counters, disassociation, the kernel
# ULPs and FRMR, the provider, pingpong, perftest and rdma_cm, loopback,
# retry), with the harness's own sanity test, and what the debug lane
# picks for races and hostile input: data integrity (t-22), flush
# against destroy (t-42), hostile rings and verbs (t-61).
: "${MROCE_K612_TESTS=t-00-guest-sanity t-10-device t-11-counters t-12-disassociate t-14-kulp t-15-provider t-16-frmr t-20-rc-pingpong t-21-perftest t-22-verify t-30-loopback t-41-retry t-42-flush-race t-61-verbsfuzz}"
build_only=0
run_only=0
case ${1:-} in
--build-only) build_only=1; shift ;;
--run-only) run_only=1; shift ;;
esac
tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
	read -ra tests <<<"$MROCE_K612_TESTS"
fi
# "all" (argument or MROCE_K612_TESTS): run-guest-tests.sh with no names
[ "${tests[*]}" != all ] || tests=()

export MROCE_KVER=${MROCE_KVER:-6.12}
t0=$(date +%s)
kdir=$("$TOP/tools/kdir.sh") ||
	die "no headers for $MROCE_KVER (apt-get install linux-headers-6.12-amd64 linux-image-6.12-amd64)"
kver=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' "$kdir/include/generated/utsrelease.h")
[ -n "$kver" ] || die "cannot read the release of $kdir"
if [ ! -r "/boot/vmlinuz-$kver" ] || [ ! -f "/lib/modules/$kver/modules.dep" ]; then
	die "$kver has headers but no /boot/vmlinuz-$kver or modules (apt-get install linux-image-6.12-amd64)"
fi
echo "$ME: kernel $kver ($kdir)"

# shellcheck source=tools/kbuild-copy.sh
. "$TOP/tools/kbuild-copy.sh"
# build DIR NAME [MAKE_ARG...]: make modules in DIR with W=1 C=1, fail on
# any warning (build_modules' helper)
# shellcheck disable=SC2317  # run by mroce_build_once
build() {
	local dir=$1 name=$2

	shift 2
	mroce_kbuild "$kdir" "$kver" "$dir" "$name" W=1 C=1 CONFIG_RDMA_MROCE=m "$@"
}

mod=drivers/infiniband/sw/mroce
copy=$TOP/build/k612-module
ko=$copy/$mod/mroce.ko
kulp=$TOP/build/k612-kulp
xtest=$copy/tools/xport-test

# shellcheck disable=SC2317  # run by mroce_build_once
build_modules() {
	command -v sparse >/dev/null || die "sparse not installed (apt-get install sparse)"
	rm -rf "$copy" "$kulp"
	mroce_copy_sources "$TOP" "$mod" "$copy" ||
		die "cannot copy the sources to $copy"
	build "$copy" mroce
	[ -f "$ko" ] || die "no $ko"
	{ mkdir -p "$kulp" && cp tools/kulp/Kbuild tools/kulp/*.c "$kulp/"; } ||
		die "cannot copy tools/kulp to $kulp"
	build "$kulp" tools/kulp
	# the test offload provider, in the copy (its Kbuild finds the
	# driver's headers two levels up), against the copy's exports
	{ mkdir -p "$xtest" &&
		cp tools/xport-test/Kbuild tools/xport-test/*.c "$xtest/"; } ||
		die "cannot copy tools/xport-test to $xtest"
	build "$xtest" tools/xport-test KBUILD_EXTRA_SYMBOLS="$copy/Module.symvers"
	echo "$ME: mroce.ko, tools/kulp and tools/xport-test built against" \
		"$kver, W=1 C=1 clean, in $(($(date +%s) - t0))s"
}

# Built once per content of the sources (as check-debug.sh does):
# "make check" runs --build-only in the background and the stage then
# finds the modules up to date, unless a source changed in between.
if [ "$run_only" = 0 ]; then
	mroce_build_once k612-modules "the modules for $kver" build_modules \
		"$kver" "$kdir" -- "$ko" "$kulp/mroce_kulp.ko" "$xtest/mroce_xtest.ko"
elif [ ! -f "$ko" ] || [ ! -f "$kulp/mroce_kulp.ko" ] ||
	[ ! -f "$xtest/mroce_xtest.ko" ]; then
	die "--run-only: no modules in $copy and $kulp (run --build-only first)"
elif ! modinfo -F vermagic "$ko" | grep -q "^$kver "; then
	die "--run-only: $ko is not built for $kver"
fi
[ "$build_only" = 0 ] || exit 0

results=$TOP/build/results-k612
rm -rf "$results"
mkdir -p "$results"
t1=$(date +%s)
MROCE_KO=$ko MROCE_KULP_DIR=$kulp MROCE_XTEST_KO=$xtest/mroce_xtest.ko \
	"$HERE/mroce-vm" --batch --timeout "${MROCE_K612_VM_TIMEOUT:-2400}" \
	--results "$results" -- tools/tests/run-guest-tests.sh "${tests[@]}"
rc=$?
echo "$ME: guest tests on $kver: exit $rc after $(($(date +%s) - t1))s" \
	"(results: ${results#"$TOP"/})"
exit $rc
