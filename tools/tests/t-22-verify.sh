#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 540
#
# Data integrity with tools/mroce-verify: server in h1 on mroce1, client in
# h2 on mroce2, fixed seeds, a few MB.  Three runs:
#   data    every opcode (SEND, SEND_WITH_IMM, RDMA_WRITE,
#           RDMA_WRITE_WITH_IMM incl. zero-length into a receive without
#           SGEs, RDMA_READ incl. 0 and 1 byte, CMP_AND_SWP, FETCH_AND_ADD),
#           sizes 0..256 KiB, multiple SGEs at odd offsets, inline, RNR,
#           NCCL-style WRITE chains with a 1-byte READ flush, solicited
#           events; busy polling
#   events  the same with CQ events (ibv_req_notify_cq + ibv_get_cq_event)
#   errors  remote access violations on fresh QP pairs, of an MR (C12) or
#           of the responder QP's qp_access_flags (C9, zero lengths too):
#           expected error completion, remote memory unchanged, no receive
#           completed, later WRs flushed
# Every byte received, every guard byte around it, every completion and
# every atomic result is checked by mroce-verify itself; here: both sides
# exit 0, their summaries agree, each phase reports ok.  On mroce the
# runs are --strict (IBA/MetaRoCE error codes exactly); rdma_rxe
# (MROCE_TEST_TRANSPORT=rxe) deviates in two error cases, which
# mroce-verify then prints as DEVIATION lines and tolerates.
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

V=$MROCE_TOP/tools/mroce-verify/mroce-verify
[ -x "$V" ] ||
	fail "$V not found: build it on the host first (make tools, or make -C tools/mroce-verify)"
need_cmd timeout ss
setup_rdma_pair

strict=()
[ "$RDMA_TRANSPORT" = mroce ] && strict=(--strict)
port=18710
SUMMARY_RE='^mroce-verify: ([0-9]+) messages, ([0-9]+) bytes verified, ([0-9]+) errors provoked as expected'

# verify NAME "PHASES" CLIENT_ARGS...: run a pair; sets V_MSGS V_BYTES
# V_ERRS from the client's summary
verify() {
	local name=$1 phases=$2 side f sum ssum csum ph line
	shift 2
	V_MSGS='' V_BYTES='' V_ERRS=''
	port=$((port + 1))
	run_pair "$name" "$port" 300 \
		"$V" -d "$DEV_S" -g "$GID_S" --server -p "$port" -- \
		"$V" -d "$DEV_C" -g "$GID_C" --client "$ADDR_S" -p "$port" \
			--timeout 30 "${strict[@]}" "$@"
	pair_ok "mroce-verify $name ($*)" || return 1
	for side in server client; do
		f=$SRV_OUT
		[ "$side" = client ] && f=$CLI_OUT
		sum=$(grep -E "$SUMMARY_RE" "$f" | sed 's/ (.*//')
		check_match "$name: $side printed the summary" "$SUMMARY_RE" "$sum"
		[ "$side" = server ] && ssum=$sum || csum=$sum
	done
	check_eq "$name: both sides' summaries agree" "$ssum" "$csum"
	for ph in $phases; do
		line=$(grep -E "^mroce-verify: phase $ph: " "$CLI_OUT" | tail -n 1)
		check_match "$name: phase $ph ok" ": ok$" "${line:-phase $ph did not run}"
	done
	check_eq "$name: no MISMATCH reported" "" \
		"$(grep -h MISMATCH "$SRV_OUT" "$CLI_OUT")"
	grep -h ": DEVIATION: " "$SRV_OUT" "$CLI_OUT" | sed "s/^/# tolerated: /"
	read -r V_MSGS V_BYTES V_ERRS < <(sed -En "s/$SUMMARY_RE.*/\\1 \\2 \\3/p" "$CLI_OUT")
	log "RESULT mroce-verify $name: $V_MSGS messages, $V_BYTES bytes verified, $V_ERRS errors provoked as expected, ${PAIR_SECS}s"
}

DATA_PHASES="basic random chain atomic solicited"

verify data "$DATA_PHASES" --seed 20261129 --iters 48 --ops all,-errors
check "data: a few MB verified (>= 2000000 bytes: $V_BYTES)" \
	test "${V_BYTES:-0}" -ge 2000000

verify events "$DATA_PHASES" --seed 7 --iters 24 --events --ops all,-errors
ev=$(sed -n 's/^mroce-verify: \([0-9]*\) CQ events.*/\1/p' "$CLI_OUT")
check "events: the client slept on CQ events (${ev:-none})" test "${ev:-0}" -gt 0

verify errors "errors" --seed 3 --ops errors
# 6 MR access violations (C12) and, for a QP that does not enable the
# operation (C9), a WRITE, a zero-length WRITE_WITH_IMM, a READ, a
# zero-length READ and an atomic: 11 per direction
check "errors: at least the 11 access violations per direction were provoked (${V_ERRS:-none})" \
	test "${V_ERRS:-0}" -ge 22
