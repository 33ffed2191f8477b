#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
#
# Fast-registration MRs as kernel storage ULPs (NVMe-oF, NFS/RDMA, iSER)
# use them (issue 14): tools/kulp/mroce_kfrmr.ko, loaded with dev=mroce1,
# connects two RC QPs of mroce1 to each other; A registers four separate
# pages from an offset with ib_alloc_mr(IB_MR_TYPE_MEM_REG), ib_map_mr_sg()
# and IB_WR_REG_MR, and B writes, reads and adds into them through the
# rkey.  It checks the refusals too: no access before the registration,
# after IB_WR_LOCAL_INV or a SEND_WITH_INV, with the key of an earlier
# registration, past the end or without the access granted; no
# registration over a valid one; a SEND_WITH_INV reports the rkey it
# invalidated (IB_WC_WITH_INVALIDATE), and one of an rkey that is not valid
# fails the connection.  insmod succeeds only when every check passed.
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

need_cmd rdma dmesg ibv_devinfo
# MROCE_KULP_DIR: the modules built for another kernel (the debug lane)
KFRMR=${MROCE_KULP_DIR:-$MROCE_TOP/tools/kulp}/mroce_kfrmr.ko
[ -f "$KFRMR" ] || fail "$KFRMR not built (make tools)"

export RDMAV_DRIVERS=$MROCE_TOP/tools/libmroce/libmroce

kfrmr_loaded() { [ -d /sys/module/mroce_kfrmr ]; }

load_mroce
on_exit 'topo_clean; unload_mroce'
topo_pair
require "mroce1 on veth1" in_h1 rdma link add mroce1 type mroce netdev veth1
on_exit 'kfrmr_loaded && rmmod mroce_kfrmr'
sleep 0.5

# what a ULP reads before it uses fast registration
attrs=$(in_h1 ibv_devinfo -v -d mroce1)
check_match "device caps: MEM_MGT_EXTENSIONS" "MEM_MGT_EXTENSIONS" "$attrs"

gidx=$(gid_index mroce1 0000:0000:0000:0000:0000:ffff:c000:0201)
require "IPv4 GID" test -n "$gidx"

c0="$(counter mroce1 fast_reg) $(counter mroce1 local_inv) $(counter mroce1 rx_remote_inv)"
before=$(dmesg | wc -l)
check "insmod mroce_kfrmr: every check passes" \
	timeout 100 insmod "$KFRMR" dev=mroce1 gid_index="$gidx"
out=$(dmesg | tail -n +$((before + 1)) | grep 'mroce_kfrmr: ')
printf '%s\n' "$out"
check_fail "no check failed" grep -q 'mroce_kfrmr: FAIL' <<<"$out"
check_match "the verdict counts every check" \
	"mroce_kfrmr: mroce1: ([0-9]+) of \\1 fast-registration checks passed" \
	"$out"
n=$(sed -n 's/.*mroce_kfrmr: mroce1: \([0-9]*\) of.*/\1/p' <<<"$out")
check "all 25 checks ran (got ${n:-none})" test "${n:-0}" -ge 25
# three registrations succeed (the fourth, over a valid one, fails),
# one LOCAL_INV and one SEND_WITH_INV do
c1="$(counter mroce1 fast_reg) $(counter mroce1 local_inv) $(counter mroce1 rx_remote_inv)"
read -r r0 l0 i0 <<<"$c0"
read -r r1 l1 i1 <<<"$c1"
check_eq "counters fast_reg, local_inv, rx_remote_inv moved by" "3 1 1" \
	"$((r1 - r0)) $((l1 - l0)) $((i1 - i0))"
if kfrmr_loaded; then
	check "rmmod" rmmod mroce_kfrmr
fi
