#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 300
#
# The verbs retry budget when the peer goes away (spec: "Verbs timeout,
# retry_cnt and rnr_retry", "QP state machine and completion status"),
# with tools/tests/src/qp_retry: server in h1 on mroce1, client (the
# requester) in h2 on mroce2, a TCP control connection between them.
#
#   flush     a SEND the server has no receive for (RNR NAKed, retried
#             forever) and 16 WRITEs behind it outstanding: the client
#             moves its QP to ERR with ibv_modify_qp; they, 4 WRITEs
#             posted in ERR and 4 receives complete IBV_WC_WR_FLUSH_ERR
#             in order
#   retry     the client streams 64 KiB RDMA_WRITEs (16 outstanding); the
#             server's netdev (veth1) goes down: the oldest WRITE
#             completes IBV_WC_RETRY_EXC_ERR, the rest is flushed, the QP
#             is in ERR (ibv_query_qp says so as soon as the error
#             completion is polled).  Not earlier than the budget
#             T x (retry_cnt + 1) (T = 4.096 us x 2^timeout) after the
#             last progress, not later than budget + RTO_max (200 ms) +
#             1 s of slack after the last completion; timeout 17 with
#             retry_cnt 1 and 3
#             (budgets 1074 and 2147 ms)
#   idle      the same for a QP that was idle for longer than its budget
#             and then posts one WRITE into the dead link: the budget runs
#             from the post, not from the last ACK long ago
#   infinite  timeout 0: the link is down for 3 s, no error completion,
#             the 16 stalled (1 KiB) WRITEs complete after it and their
#             data is right
# After flush, retry and idle, with the link back, both QPs go RESET ->
# INIT -> RTR -> RTS with new PSNs and carry WRITEs, a SEND_WITH_IMM and
# a WRITE_WITH_IMM whose bytes are verified.  Also: the client's
# rto_expired, tx_retx_pkts, rx_naks_rnr counters grew where they should,
# and the kernel logged no warning.  The measurements are the
# "# RESULT" lines ("retry_exc_after_ms=...").
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

PROG=$MROCE_TOP/tools/tests/src/qp_retry
[ -x "$PROG" ] || fail "$PROG not built (make tools)"
need_cmd timeout
[ "$RDMA_TRANSPORT" = mroce ] ||
	skip "needs a peer on another netdev (mroce only: rxe here is one device talking to itself)"
k0=$(dmesg | wc -l)
setup_rdma_pair
SRV_IF=veth1	# the server's netdev, in $SERVER_NS
port=18740
LINK_DOWN=0

srv_link() {	# link up|down: the server's netdev
	echo "+ ip -n $SERVER_NS link set $SRV_IF $1"
	ip -n "$SERVER_NS" link set "$SRV_IF" "$1"
	if [ "$1" = down ]; then LINK_DOWN=1; else LINK_DOWN=0; fi
}
# shellcheck disable=SC2016  # evaluated at exit
on_exit '[ "$LINK_DOWN" = 1 ] && srv_link up'

# snap ARRAY: the client device's counters into the associative ARRAY
# (one rdma call: they are slow under TCG)
snap() {
	local -n _s=$1
	local w k=
	for w in $(rdma statistic show link "$DEV_C/1"); do
		if [ -n "$k" ]; then _s["$k"]=$w k=; else k=$w; fi
	done
}

# wait_line FD REGEX SECS PID: read the lines of a file that PID is
# writing, from FD, until one matches REGEX; fail after SECS or once PID
# has exited without printing it
wait_line() {
	local fd=$1 re=$2 end=$((SECONDS + $3)) pid=$4 l alive
	while [ "$SECONDS" -lt "$end" ]; do
		alive=0
		kill -0 "$pid" 2>/dev/null && alive=1
		while IFS= read -r l <&"$fd"; do
			l=$_wl_part$l _wl_part=
			[[ $l =~ $re ]] && return 0
		done
		_wl_part+=$l	# a line still being written
		[ "$alive" = 1 ] || return 1
		sleep 0.05
	done
	return 1
}

# scenario NAME DOWN_ON UP_ON CLIENT_ARGS...: run a server and a client;
# take the server's netdev down once the client prints a line matching
# DOWN_ON (empty: never), up again once it prints UP_ON, or, for +SECS,
# SECS seconds after it went down.  Sets SRV_RC CLI_RC SRV_OUT CLI_OUT
# (for pair_ok) and the deltas D_RTO D_RETX D_RNR of the client's
# counters.
scenario() {
	local name=$1 down_on=$2 up_on=$3 spid cpid sfd cfd t0=$SECONDS
	local -A c0 c1
	shift 3
	port=$((port + 1))
	_rdma_run=$((_rdma_run + 1))
	SRV_OUT=$RDMA_OUTDIR/$(printf %02d $_rdma_run)-$name.server.log
	CLI_OUT=$RDMA_OUTDIR/$(printf %02d $_rdma_run)-$name.client.log
	: >"$SRV_OUT"
	: >"$CLI_OUT"
	exec {sfd}<"$SRV_OUT" {cfd}<"$CLI_OUT"
	_wl_part=
	snap c0
	echo "+ [server in $SERVER_NS] $PROG server $DEV_S $GID_S $port"
	echo "+ [client in $CLIENT_NS] $PROG client $DEV_C $GID_C $ADDR_S $port $*"
	# $! must be timeout(1) itself, so that a SIGTERM reaches the server
	ip netns exec "$SERVER_NS" timeout -k 5 90 \
		"$PROG" server "$DEV_S" "$GID_S" "$port" >"$SRV_OUT" 2>&1 </dev/null &
	spid=$!
	if ! wait_line "$sfd" "listening on TCP port" 30 "$spid"; then
		echo "server did not listen on TCP port $port within 30 s" >"$CLI_OUT"
		CLI_RC=125
	else
		ip netns exec "$CLIENT_NS" timeout -k 5 90 "$PROG" client \
			"$DEV_C" "$GID_C" "$ADDR_S" "$port" "$@" \
			>"$CLI_OUT" 2>&1 </dev/null &
		cpid=$!
		_wl_part=
		if [ -n "$down_on" ] && wait_line "$cfd" "$down_on" 80 "$cpid"; then
			srv_link down
			case $up_on in
			+*) sleep "${up_on#+}" ;;
			*) wait_line "$cfd" "$up_on" 80 "$cpid" ;;
			esac
			srv_link up
		fi
		wait "$cpid"
		CLI_RC=$?
	fi
	exec {sfd}<&- {cfd}<&-
	[ "$LINK_DOWN" = 1 ] && srv_link up
	for _ in $(seq 50); do
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.2
	done
	kill -TERM "$spid" 2>/dev/null
	wait "$spid"
	SRV_RC=$?
	sed 's/^/  server| /' "$SRV_OUT"
	sed 's/^/  client| /' "$CLI_OUT"
	grep -h ': note: ' "$SRV_OUT" "$CLI_OUT" | sed "s/^/# NOTE $name: /"
	snap c1
	D_RTO=$((c1[rto_expired] - c0[rto_expired]))
	D_RETX=$((c1[tx_retx_pkts] + c1[tx_read_rereq] - c0[tx_retx_pkts] - c0[tx_read_rereq]))
	D_RNR=$((c1[rx_naks_rnr] - c0[rx_naks_rnr]))
	log "$name: server exit $SRV_RC, client exit $CLI_RC, $((SECONDS - t0)) s; client rto_expired +$D_RTO, tx_retx_pkts +$D_RETX, rx_naks_rnr +$D_RNR"
}

# measured NAME KEY: the client's "KEY=MS upper_bound_ms=U ...
# expected_min_ms=A expected_max_ms=B budget_ms=T" line: U >= A (U, from
# the post of the last WRITE that completed, bounds the driver's time
# without progress from above; A = T - 10 ms of jiffies rounding) and
# MS <= B (MS: from the last completion the client saw), and log it
measured() {
	local name=$1 key=$2 line v u lo hi b
	line=$(grep -E "^$key=" "$CLI_OUT" | tail -n 1)
	field() { sed -n "s/.*\<$1=\([0-9-]*\).*/\1/p" <<<"$line"; }
	v=$(field "$key") u=$(field upper_bound_ms) b=$(field budget_ms)
	lo=$(field expected_min_ms) hi=$(field expected_max_ms)
	if check "$name: RETRY_EXC_ERR measured" \
		test -n "$v" -a -n "$u" -a -n "$lo" -a -n "$hi" -a -n "$b"; then
		check "$name: not before the budget of $b ms: at most $u ms without progress, >= $lo" \
			test "$u" -ge "$lo"
		check "$name: not too late: $v ms after the last completion, <= $hi" \
			test "$v" -le "$hi"
	fi
	log "RESULT $name: $line"
}

# --- a QP moved to ERR by modify_qp flushes, then is reused -----------------
scenario flush "" "" --mode flush
pair_ok "flush: modify to ERR flushes every outstanding WR, then reset and reuse"
log "RESULT flush: $(grep '^flush_flushed' "$CLI_OUT")"
check "flush: the SEND was RNR NAKed while outstanding (rx_naks_rnr +$D_RNR)" \
	test "$D_RNR" -gt 0

# --- peer's netdev down: RETRY_EXC_ERR in time, then reset and reuse --------
for tr in 17:1 17:3; do
	t=${tr%:*} r=${tr#*:}
	scenario "retry-t$t-r$r" "^qp_retry client: streaming" \
		"^qp_retry client: waiting for the link" \
		--mode retry --timeout "$t" --retry "$r"
	pair_ok "retry timeout $t retry_cnt $r: RETRY_EXC_ERR, flushes, QP in ERR, reset and reuse with data verified"
	measured "retry timeout $t retry_cnt $r" retry_exc_after_ms
	check "retry timeout $t retry_cnt $r: the RTO fired (rto_expired +$D_RTO)" \
		test "$D_RTO" -gt 0
	check "retry timeout $t retry_cnt $r: packets were retransmitted (tx_retx_pkts +$D_RETX)" \
		test "$D_RETX" -gt 0
done

# --- the budget runs from the first outstanding WR, not from the last ACK
# of an idle QP: idle for longer than the budget, link down, one WRITE
scenario idle "^qp_retry client: idle" "^qp_retry client: waiting for the link" \
	--mode idle --timeout 17 --retry 1
pair_ok "idle QP, then a WRITE into the dead link: RETRY_EXC_ERR in time, reset and reuse"
measured "idle QP timeout 17 retry_cnt 1" retry_exc_after_post_ms

# --- timeout 0 waits forever ----------------------------------------------
# 1 KiB WRITEs, one packet each: the 16 packets lost in the outage are
# recovered one per RTO (no RACK yet), 64 KiB ones would take ~10 s
scenario infinite "^qp_retry client: streaming" +3 --mode infinite \
	--size 1024 --min-down-ms 2500
pair_ok "timeout 0: no error while the link is down for 3 s, data verified after"
log "RESULT infinite: $(grep '^stall_ms=' "$CLI_OUT")"
check "timeout 0: the RTO fired while the link was down (rto_expired +$D_RTO)" \
	test "$D_RTO" -gt 0

stats=$(rdma statistic show link "$DEV_C/1")
echo "$stats"
check_match "client's port went down and up (port_state_changes)" \
	'port_state_changes [1-9]' "$stats"
kern=$(dmesg | tail -n +$((k0 + 1)))
check_fail "no kernel warning, BUG or oops" \
	grep -E 'WARNING:|BUG:|Oops|refcount_t|UBSAN|general protection|Call Trace' \
	<<<"$kern"

