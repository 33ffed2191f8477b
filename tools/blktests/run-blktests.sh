#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# blktests' nvme (NVMET_TRTYPES=rdma) and srp suites on a soft RDMA
# driver, in a test guest:
#
#   tools/blktests/run-blktests.sh [-t mroce|rxe|siw] [TEST...]
#
# blktests binds its soft RDMA driver itself (start_soft_rdma: every
# netdev with a carrier), and knows siw and rdma_rxe only; the patch in
# this folder (0001-*.patch, written for upstream) adds SOFT_RDMA=<type>
# for any driver whose link type and module share a name.
#
# On the host: blktests cloned from BLKTESTS_SRC (a git repository;
# default: the mirror the search tool's fetch makes) into build/blktests,
# patched and built (gcc under TCG would take minutes).  In the guest: that
# tree copied to /root/blktests (the project tree is read-only there), a
# veth pair in the initial namespace (nvme-rdma and nvmet-rdma bind there
# in 6.1) holding 192.0.2.11 and 192.0.2.12, mroce.ko installed below
# /lib/modules/<ver>/kernel/ (blktests' _have_module looks nowhere else)
# and depmod run (1-2.5 min under TCG), then ./check on TEST... (default
# "nvme srp") with blktests' config:
#   NVMET_TRTYPES=rdma  SOFT_RDMA=<type>
#   TIMEOUT=$BLKTESTS_FIO_TIMEOUT (60): fio runtime of the timed tests
#   NVMET_BLKDEV_TYPES=$BLKTESTS_BLKDEV_TYPES (device; "device file": both)
#   NVME_IMG_SIZE=$BLKTESTS_IMG_SIZE (350m)
# Results: build/results/blktests-<type>[-$BLKTESTS_TAG]/: check.log,
# summary.txt (one line per test, then the passed/failed/not-run counts),
# dmesg.log, and blktests' per-test logs in results/ (written as the run
# goes, so a run ended by BLKTESTS_TIMEOUT, default 5400 s, keeps them).
# Findings: Documentation/blktests.rst.
#
# Not part of make check: nvme or srp alone takes 15-30 minutes under TCG
# on two shared cores, and CI has no copy of blktests (no internet).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd -P)
TOP=$(cd "$HERE/../.." && pwd -P)
TYPE=mroce
if [ "${1:-}" = -t ]; then
	TYPE=$2
	shift 2
fi
SRC=${BLKTESTS_SRC:-/work/.mirror/linux-blktests+blktests/repo}

if [ "${1:-}" != --guest ]; then
	[ -d "$SRC" ] || { echo "run-blktests: no blktests at $SRC (BLKTESTS_SRC)" >&2; exit 2; }
	[ "$TYPE" != mroce ] || [ -f "$TOP/drivers/infiniband/sw/mroce/mroce.ko" ] ||
		{ echo "run-blktests: build mroce.ko first (make modules)" >&2; exit 2; }
	mkdir -p "$TOP/build/results"
	# Clone, patch and build on the host (gcc under TCG takes minutes);
	# the guest copies the built tree (its view of the project is
	# read-only, and ./check writes into the blktests folder).
	BT=$TOP/build/blktests
	rm -rf "$BT"
	git clone -q "$SRC" "$BT"
	git -C "$BT" apply "$HERE"/0001-*.patch
	make -s -C "$BT" >"$TOP/build/blktests.build.log" 2>&1 ||
		echo "run-blktests: blktests build failed: build/blktests.build.log" >&2
	echo "run-blktests: blktests $(git -C "$BT" log -1 --format='%h %s')"
	exec "$TOP/tools/guest/mroce-vm" --timeout "${BLKTESTS_TIMEOUT:-5400}" \
		--env BLKTESTS_TYPE="$TYPE" --env BLKTESTS_TAG="${BLKTESTS_TAG:-}" \
		--env BLKTESTS_FIO_TIMEOUT="${BLKTESTS_FIO_TIMEOUT:-}" \
		--env BLKTESTS_BLKDEV_TYPES="${BLKTESTS_BLKDEV_TYPES:-}" \
		--env BLKTESTS_IMG_SIZE="${BLKTESTS_IMG_SIZE:-}" \
		-- "$HERE/run-blktests.sh" --guest "$@"
fi
shift
TYPE=${BLKTESTS_TYPE:-$TYPE}
TESTS=("$@")
[ ${#TESTS[@]} -gt 0 ] || TESTS=(nvme srp)
# the project tree is read-only in the guest; build/results is /results
OUT=${MROCE_RESULTS:-$TOP/build/results}/blktests-$TYPE${BLKTESTS_TAG:+-$BLKTESTS_TAG}
rm -rf "$OUT"
mkdir -p "$OUT"
say() { echo "run-blktests: [$(cut -d" " -f1 /proc/uptime)s] $*"; }

BT=/root/blktests
rm -rf "$BT"
cp -a "$TOP/build/blktests" "$BT"
say "blktests copied to $BT"

if [ "$TYPE" = mroce ]; then
	for m in ib_core ib_uverbs rdma_cm udp_tunnel ip6_udp_tunnel; do
		modprobe "$m"
	done
	# Under kernel/, not extra/: blktests' _have_module looks for the
	# .ko file below /lib/modules/$(uname -r)/kernel only.
	kmod_dir=/lib/modules/$(uname -r)/kernel/drivers/infiniband/sw/mroce
	mkdir -p "$kmod_dir"
	cp "$TOP/drivers/infiniband/sw/mroce/mroce.ko" "$kmod_dir/"
	depmod -a
	say "mroce.ko installed"
fi
# The test guest has no systemd-tmpfiles to make /dev/loop-control at
# boot, so nothing autoloads loop: losetup, which nvmet's device-backed
# namespaces use, found no loop device (nvme/047, nvme/051 failed)
modprobe loop
ip link add bt0 type veth peer name bt1
ip addr add 192.0.2.11/24 dev bt0
ip addr add 192.0.2.12/24 dev bt1
ip link set bt0 up
ip link set bt1 up

# TIMEOUT: the fio runtime of blktests' timed tests (nvme/010 writes and
# verifies the whole 1 GiB namespace otherwise: tens of minutes under TCG).
# NVMET_BLKDEV_TYPES: blktests runs each nvmet test on a block device and
# on a file; "device" alone halves the run.  NVME_IMG_SIZE: 350m, the
# largest size a test requires (nvme/012).
cat > "$BT/config" <<EOF
NVMET_TRTYPES=rdma
SOFT_RDMA=$TYPE
TIMEOUT=${BLKTESTS_FIO_TIMEOUT:-60}
NVMET_BLKDEV_TYPES="${BLKTESTS_BLKDEV_TYPES:-device}"
NVME_IMG_SIZE=${BLKTESTS_IMG_SIZE:-350m}
EOF
say "SOFT_RDMA=$TYPE ./check ${TESTS[*]}"
# -o: the per-test logs go straight to /results, so a run ended by
# --timeout keeps those of the tests that finished.
(cd "$BT" && ./check -o "$OUT/results" "${TESTS[@]}") 2>&1 |
	tee "$OUT/check.log" || true
dmesg >"$OUT/dmesg.log" 2>&1 || true

# "nvme/003 (...)   [passed]", "[failed]", "[not run]"
pass=$(grep -c '\[passed\]' "$OUT/check.log" || true)
fail=$(grep -c '\[failed\]' "$OUT/check.log" || true)
skip=$(grep -c '\[not run\]' "$OUT/check.log" || true)
grep -E '\[(passed|failed|not run)\]' "$OUT/check.log" |
	sed 's/\x1b\[[0-9;]*m//g' > "$OUT/summary.txt" || true
say "$TYPE: $pass passed, $fail failed, $skip not run (${TESTS[*]})"
echo "$TYPE ${TESTS[*]}: $pass passed, $fail failed, $skip not run" >> "$OUT/summary.txt"
