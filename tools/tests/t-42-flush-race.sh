#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 400
#
# Work requests racing the move to ERR, and the QP state at a fatal error
# completion (spec: "QP state machine and completion status"), with
# tools/tests/src/qp_flush_race: two RC QPs of the server's device, A
# sending to B, in h1.
#
#   flush  a thread keeps 3840 WRs outstanding on A, posts 8 more while
#          the kernel flushes them after ibv_modify_qp to ERR: every WR
#          completes exactly once, in order, successful or
#          IBV_WC_WR_FLUSH_ERR (none lost between the kernel's read of the
#          ring's producer index and its doorbell request); 45 rounds:
#          WRITEs to a B that never answers (in INIT), receives, WRITEs
#          to a live B, and, with the ring full (4096 WRs), WRITEs to the
#          silent B and receives, in turn.  Full ring: a WR posted right
#          after a flush completion is polled finds that slot free (no
#          ENOMEM while the kernel is still flushing the rest)
#   fatal  a WRITE with a bad rkey (IBV_WC_REM_ACCESS_ERR at A) or a SEND
#          longer than B's receive (IBV_WC_LOC_LEN_ERR at B,
#          IBV_WC_REM_INV_REQ_ERR at A), posted on CPU 0: ibv_query_qp
#          on CPU 1, right after the error completion is polled, says
#          ERR; 400 rounds (about 2 s)
#   one    8 WRITEs in one post: the first fails (bad rkey: REM_ACCESS_ERR;
#          or B silent and a 8 ms retry budget: RETRY_EXC_ERR), the
#          second has a bad lkey (a local error the kernel finds when it
#          fetches it, before the first fails): exactly one error
#          completion, the first's, then only IBV_WC_WR_FLUSH_ERR; 20
#          rounds
# Also: the kernel logged no warning.
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

PROG=$MROCE_TOP/tools/tests/src/qp_flush_race
[ -x "$PROG" ] || fail "$PROG not built (make tools)"
need_cmd timeout
k0=$(dmesg | wc -l)
setup_rdma_pair
ROUNDS=${MROCE_FLUSH_RACE_ROUNDS:-45}
FATAL_ROUNDS=${MROCE_FLUSH_RACE_FATAL_ROUNDS:-400}

out=$RDMA_OUTDIR/qp_flush_race.log
echo "+ [in ${SERVER_NS:-the root namespace}] $PROG $DEV_S $GID_S $ROUNDS $FATAL_ROUNDS"
in_server timeout -k 5 360 "$PROG" "$DEV_S" "$GID_S" "$ROUNDS" "$FATAL_ROUNDS" \
	>"$out" 2>&1
rc=$?
sed 's/^/  | /' "$out"
grep -E '^(flush|fatal|one): ' "$out" | sed 's/^/# RESULT /'
flush=$(grep '^flush: ' "$out")
fatal=$(grep '^fatal: ' "$out")
one=$(grep '^one: ' "$out")
check "qp_flush_race ran to the end (exit $rc)" test -n "$one" -a "$rc" -le 1
check_match "flush: no WR lost or completed twice, every round" \
	'lost or wrong: 0 \(SQ, silent peer\) 0 \(RQ\) 0 \(SQ, live peer\) 0 \(SQ, full\) 0 \(RQ, full\);' \
	"$flush"
check_match "flush: WRs were posted while the kernel flushed" \
	'; [1-9][0-9]* WRs posted while the kernel flushed' "$flush"
check_match "flush: a full ring has room as soon as a flush completion is polled" \
	'; 0 refused \(ENOMEM\) right after a flush completion' "$flush"
check_match "fatal: the QP was in ERR at every error completion" \
	' 0 error completions polled before the QP read ERR' "$fatal"
check_match "one: one error completion, then only flushes, every round" \
	' 0 with another completion than one error' "$one"
check "qp_flush_race: no other failure" test "$rc" = 0

kern=$(dmesg | tail -n +$((k0 + 1)))
check_fail "no kernel warning, BUG or oops" \
	grep -E 'WARNING:|BUG:|Oops|refcount_t|UBSAN|general protection|Call Trace' \
	<<<"$kern"
