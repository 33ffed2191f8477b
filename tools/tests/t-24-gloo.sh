#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 420
#
# A CPU collective library on mroce (issue 14): Gloo (Debian's libgloo,
# the collectives PyTorch's gloo backend runs) with its ibverbs
# transport.  Three ranks, two in h1 on mroce1 (their pair is a QP to
# the same device) and one in h2 on mroce2, meet through a file store,
# connect a full mesh of RC QPs and run, for each of four sizes (1000,
# 64 Ki, 256 Ki and 1 Mi floats: 4 KB to 4 MiB per rank), 10 times each,
# a ring allreduce and a halving-doubling allreduce, checked element by
# element, a broadcast and a barrier (tools/tests/src/gloo_allreduce.cc).
# Every rank must exit 0; the median times and bus bandwidths are logged
# as RESULT lines.
#
# Gloo gives its QPs timeout 14 and retry_cnt 7 (a 0.54 s retry budget)
# and sends as soon as its side of a pair is in RTS.  modify_qp(RTR)
# resolves the peer's MAC (ib_core, ARP): with a cold neighbour table that
# took about a second under TCG, so the first rank's SEND ran out of
# retries before its peer was in RTR (RETRY_EXC_ERR; then its peer's
# packets found no QP).  The neighbours are resolved before the ranks
# start, as on a cluster whose hosts have talked before.
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

PROG=$MROCE_TOP/tools/tests/src/gloo_allreduce
[ -x "$PROG" ] || fail "$PROG not built (make tools)"
setup_rdma_pair
[ "$RDMA_TRANSPORT" = mroce ] || fail "t-24 needs two namespaces (mroce)"

COUNT=${MROCE_GLOO_COUNT:-1000,65536,262144,1048576}
ITERS=${MROCE_GLOO_ITERS:-10}
STORE=$(mktemp -d /tmp/gloo-store.XXXXXX)
require "h1 and h2 know each other's MAC" in_h1 ping -c 1 -W 5 "$ADDR_C"
in_h2 ping -c 1 -W 5 "$ADDR_S" >/dev/null
on_exit "rm -rf $STORE"

# rank NS DEV GID RANK: one rank in the background, output in RDMA_OUTDIR
pids=()
rank() {
	ip netns exec "$1" timeout 300 "$PROG" "$4" 3 "$STORE" "$2" "$3" \
		"$COUNT" "$ITERS" >"$RDMA_OUTDIR/rank$4.log" 2>&1 &
	pids+=($!)
}
rank h1 "$DEV_S" "$GID_S" 0
rank h2 "$DEV_C" "$GID_C" 1
rank h1 "$DEV_S" "$GID_S" 2
for r in 0 1 2; do
	rc=0
	wait "${pids[$r]}" || rc=$?
	sed "s/^/# rank $r: /" "$RDMA_OUTDIR/rank$r.log"
	check_eq "gloo rank $r: ring and halving-doubling allreduce, broadcast, barrier ($COUNT floats x $ITERS)" \
		0 "$rc"
	check_match "gloo rank $r: every element right" \
		"rank $r: 0 wrong elements" "$(cat "$RDMA_OUTDIR/rank$r.log")"
done
grep -h "median" "$RDMA_OUTDIR/rank0.log" | sed 's/^gloo_allreduce: /RESULT gloo /' |
	while read -r l; do log "$l"; done
