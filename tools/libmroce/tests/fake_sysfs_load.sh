#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# fake_sysfs_load.sh [LIBMROCE_DIR] - check, without an mroce kernel module,
# that the stock libibverbs loads libmroce and matches a device with it.
#
# When the kernel has no RDMA netlink, libibverbs discovers devices through
# sysfs, whose root can be moved with SYSFS_PATH.  This script builds a fake
# sysfs tree describing one uverbs device "mroce0" and, in a private mount
# namespace, replaces /dev with a tmpfs holding /dev/infiniband/uverbs0 (a
# copy of the null device) and /etc/libibverbs.d with an empty directory, so
# only the provider named in RDMAV_DRIVERS is loaded.  Then:
#
#   1. ibv_devices lists mroce0          (load, register, name match,
#                                         uverbs ABI range, alloc_device)
#   2. without RDMAV_DRIVERS it does not (control)
#   3. a device with another uverbs ABI version is refused by our
#      match_{min,max}_abi_version, with libibverbs naming our provider
#   4. a device not named mroce* is not claimed
#   5. ibv_devinfo on mroce0 reaches alloc_context: GET_CONTEXT "succeeds"
#      through write() on the null device with an all-zero response, and
#      the provider rejects the missing mroce ABI version (real context
#      init/uninit code paths of libibverbs)
#
# Needs root (mount namespace); prints SKIP and exits 0 where that is not
# possible, or where the host has RDMA netlink (discovery then ignores
# SYSFS_PATH).
set -u

dir=${1:-$(cd "$(dirname "$0")/.." && pwd)}
dir=$(cd "$dir" && pwd)
provider=$dir/libmroce

if [ "${MROCE_FAKE_SYSFS_INNER:-}" != 1 ]; then
	[ -e "$provider-rdmav34.so" ] ||
		{ echo "fake_sysfs_load: FAIL: $provider-rdmav34.so not built"; exit 1; }
	for t in ibv_devices ibv_devinfo unshare mount mknod; do
		command -v "$t" >/dev/null 2>&1 ||
			{ echo "fake_sysfs_load: SKIP: $t not found"; exit 0; }
	done
	if [ "$(id -u)" != 0 ]; then
		echo "fake_sysfs_load: SKIP: needs root for a mount namespace"
		exit 0
	fi
	if [ -d /sys/class/infiniband ] || rdma dev >/dev/null 2>&1; then
		echo "fake_sysfs_load: SKIP: host has RDMA netlink; SYSFS_PATH would be ignored"
		exit 0
	fi
	if ! unshare --mount --propagation private true 2>/dev/null; then
		echo "fake_sysfs_load: SKIP: cannot create a mount namespace"
		exit 0
	fi
	MROCE_FAKE_SYSFS_INNER=1 exec unshare --mount --propagation private \
		sh "$0" "$dir"
fi

# ---- inside the private mount namespace ---------------------------------
tmp=$(mktemp -d /tmp/mroce-fake-sysfs.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
sys=$tmp/sys
pass=0
fail=0

ok() { echo "ok   - $*"; pass=$((pass + 1)); }
bad() { echo "FAIL - $*"; fail=$((fail + 1)); }

# make_dev IBDEV UVERBS_ABI: one uverbs device, uverbs0, for IBDEV
make_dev() {
	rm -rf "$sys"
	mkdir -p "$sys/class/infiniband_verbs/uverbs0" "$sys/class/infiniband/$1"
	echo 6 >"$sys/class/infiniband_verbs/abi_version"
	echo "$1" >"$sys/class/infiniband_verbs/uverbs0/ibdev"
	echo 1:3 >"$sys/class/infiniband_verbs/uverbs0/dev"
	echo "$2" >"$sys/class/infiniband_verbs/uverbs0/abi_version"
	echo "1: CA" >"$sys/class/infiniband/$1/node_type"
	echo "0200:00ff:fe00:0001" >"$sys/class/infiniband/$1/node_guid"
}

mkdir "$tmp/empty-conf"
mount --bind "$tmp/empty-conf" /etc/libibverbs.d || { bad "bind mount /etc/libibverbs.d"; exit 1; }
mount -t tmpfs tmpfs /dev || { bad "mount tmpfs on /dev"; exit 1; }
if ! { mknod /dev/null c 1 3 && mkdir /dev/infiniband &&
	mknod /dev/infiniband/uverbs0 c 1 3; }; then
	bad "create fake /dev nodes"
	exit 1
fi

run() {	# run OUTFILE CMD... with the fake sysfs; stdout+stderr to OUTFILE
	out=$1
	shift
	env SYSFS_PATH="$sys" IBV_SHOW_WARNINGS=1 "$@" </dev/null >"$out" 2>&1
}

# 1. loaded and matched
make_dev mroce0 1
run "$tmp/1" env RDMAV_DRIVERS="$provider" ibv_devices
if grep -q '^[[:space:]]*mroce0[[:space:]]' "$tmp/1" &&
   ! grep -q 'Warning' "$tmp/1"; then
	ok "ibv_devices lists mroce0 through RDMAV_DRIVERS=$provider"
else
	bad "ibv_devices did not list mroce0 cleanly:"; sed 's/^/     /' "$tmp/1"
fi

# 2. control: no provider, no device
run "$tmp/2" ibv_devices
if grep -q 'no userspace device-specific driver found for mroce0' "$tmp/2"; then
	ok "without RDMAV_DRIVERS mroce0 has no provider (control)"
else
	bad "control run unexpected:"; sed 's/^/     /' "$tmp/2"
fi

# 3. uverbs ABI version outside match_{min,max}_abi_version
make_dev mroce0 2
run "$tmp/3" env RDMAV_DRIVERS="$provider" ibv_devices
if grep -q 'Driver mroce does not support the kernel ABI of 2 (supports 1 to 1)' "$tmp/3"; then
	ok "uverbs ABI 2 refused by provider 'mroce' (supports 1 to 1)"
else
	bad "ABI range check unexpected:"; sed 's/^/     /' "$tmp/3"
fi

# 4. other device names are not claimed
make_dev rxe0 1
run "$tmp/4" env RDMAV_DRIVERS="$provider" ibv_devices
if grep -q 'no userspace device-specific driver found for rxe0' "$tmp/4"; then
	ok "device rxe0 is not claimed"
else
	bad "rxe0 run unexpected:"; sed 's/^/     /' "$tmp/4"
fi

# 5. alloc_context path up to the mroce ABI check
make_dev mroce0 1
run "$tmp/5" env RDMAV_DRIVERS="$provider" ibv_devinfo -d mroce0
if grep -q 'libmroce: mroce0: kernel driver speaks mroce ABI 0, this provider needs 1' "$tmp/5"; then
	ok "alloc_context ran and rejected a GET_CONTEXT response without mroce ABI version"
else
	bad "ibv_devinfo run unexpected:"; sed 's/^/     /' "$tmp/5"
fi

echo "fake_sysfs_load: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
