#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
#
# Per-tenant limits: the device's own limits (max_qp, max_mr, ...) are
# shared by every user of the device, so an operator caps each tenant with
# the rdma cgroup controller, which ib_core applies to every verbs object
# of every driver: hca_handle counts contexts (ibv_open_device),
# hca_object counts PDs, MRs, CQs, QPs, AHs, SRQs.  mroce must honour both
# like any RDMA device, release the charge when the process exits, and
# leave other cgroups alone.  Memory is charged to the caller's memory
# cgroup (accounted allocations): t-61's scale-memcg measures it.
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

export RDMAV_DRIVERS=$MROCE_TOP/tools/libmroce/libmroce
SMOKE=$MROCE_TOP/tools/libmroce/tests/pd_smoke	# opens DEV, allocates 100 PDs
[ -x "$SMOKE" ] || fail "$SMOKE not built (make tools)"
ROOT=/sys/fs/cgroup
[ -e "$ROOT/cgroup.subtree_control" ] || skip "no cgroup v2 hierarchy at $ROOT"
grep -qw rdma "$ROOT/cgroup.controllers" ||
	skip "the kernel has no rdma cgroup controller (CONFIG_CGROUP_RDMA)"

setup_rdma_pair
DEV=$DEV_S

echo +rdma >"$ROOT/cgroup.subtree_control" ||
	fail "cannot enable the rdma controller"
CG=$ROOT/mroce-limits
mkdir -p "$CG" || fail "cannot create $CG"
on_exit "rmdir $CG 2>/dev/null"

in_cg() {	# in_cg CMD...: run CMD in the tenant's cgroup
	# shellcheck disable=SC2016  # expanded by that sh
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$CG" "$@"
}

usage() {	# usage KEY: the tenant's current KEY on DEV (rdma.current), 0 if none
	awk -v d="$DEV" -v k="$1" '$1 == d {
		for (i = 2; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[1] == k) { v = kv[2]; found = 1 }
		}
	}
	END { print found ? v : 0 }' "$CG/rdma.current"
}

check "no limit: the tenant opens $DEV and allocates 100 PDs" \
	in_cg "$SMOKE" "$DEV"

echo "$DEV hca_handle=max hca_object=50" >"$CG/rdma.max" ||
	fail "cannot set rdma.max"
cat "$CG/rdma.max"
out=$(in_cg "$SMOKE" "$DEV" 2>&1)
rc=$?
echo "$out" | tail -n 5
check "hca_object=50: the tenant cannot allocate 100 PDs" test "$rc" != 0
check_match "refused with EAGAIN, the cgroup's errno" \
	'Resource temporarily unavailable|EAGAIN|errno 11' "$out"
check_eq "the charge is released with the process" 0 "$(usage hca_object)"
check "another cgroup is not limited" "$SMOKE" "$DEV"

echo "$DEV hca_handle=0 hca_object=max" >"$CG/rdma.max"
check_fail "hca_handle=0: the tenant cannot open $DEV" \
	in_cg ibv_devinfo -d "$DEV"
check "while the root cgroup can" ibv_devinfo -d "$DEV"

echo "$DEV hca_handle=max hca_object=max" >"$CG/rdma.max"
check "limits lifted: the tenant allocates 100 PDs again" \
	in_cg "$SMOKE" "$DEV"
check_eq "nothing left charged" 0 "$(usage hca_handle)"
