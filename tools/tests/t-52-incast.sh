#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 900
#
# Congestion control on the spine-leaf fabric, all devices created with
# the module's default algorithm (metaroce).
#
# Incast 3 -> 1: h1, h2 and h4 each write to h3 (ib_write_bw 64 KiB,
#    run at the same time) through leaf2's port toward h3, rate-limited
#    with ECN marking (tbf + fq_codel ce_threshold).  Once with the QPs'
#    default, metaroce, and once with cc "none" chosen per QP (MROCE_CC in
#    the clients' environment).  Checks: all three transfers complete, the
#    QPs run the algorithm they asked for (rdma resource), the bottleneck
#    marks and the receiver sees CE, drops stop after the start, the
#    queue stays short against "none", the link moves at least 3/4 of what
#    "none" moved in the same run, the shares are fair (Jain's index),
#    every path of a connection carries packets and has an RTT (pathN).
#    The bottleneck queue is sampled over the run and printed, with each
#    transfer's completion time.
. "$(dirname "$0")/lib.sh"
# shellcheck source=tools/tests/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"
# shellcheck source=tools/guest/fabric.sh
. "$MROCE_TOP/tools/guest/fabric.sh"

need_cmd rdma tc ib_write_bw
export RDMAV_DRIVERS=$MROCE_TOP/tools/libmroce/libmroce
RATE=${MROCE_INCAST_RATE:-30mbit}
ITER=${MROCE_INCAST_ITER:-120}	# 64 KiB writes per sender
SENDERS="1 2 4"

# sample_queue FILE: until killed, every ~0.2 s "T <seconds>" and the
# bottleneck's qdisc statistics (one process in leaf2, cheap under TCG)
sample_queue() {
	# shellcheck disable=SC2016  # expanded by the inner sh, each time
	fabric_exec leaf2 sh -c 'while :; do
		echo "T $(date +%s.%N)"; tc -s qdisc show dev h3; sleep 0.2
	done' >"$1" 2>&1
}

# queue_series FILE T0: one line per sample, "t backlog drops marks",
# t in seconds from T0; the AQM child (the last qdisc listed) counts
queue_series() {
	awk -v t0="$2" '
	function out() { if (t != "") printf "%.1f %d %d %d\n", t - t0, q, d, m }
	$1 == "T" { out(); t = $2; next }
	/dropped/ { for (i = 1; i < NF; i++) if ($i == "(dropped") { d = $(i + 1); sub(",", "", d) } }
	/backlog/ { for (i = 1; i < NF; i++) if ($i == "backlog") { q = $(i + 2); sub("p", "", q) } }
	/ce_mark|ecn_mark/ { for (i = 1; i < NF; i++) if ($i == "ce_mark" || $i == "ecn_mark") m = $(i + 1) }
	END { out() }' "$1"
}

# sample_qps FILE: until killed, "T <seconds>" and "rdma resource show qp
# -dd" every ~0.5 s: the receiver's QPs (rq-psn: goodput) and h1's
sample_qps() {
	local a b r
	while :; do
		a=$(date +%s.%N)
		r=$(rdma resource show qp -dd 2>/dev/null | grep ' type RC ')
		b=$(date +%s.%N)
		# the listing takes a while under TCG: stamp it with its middle
		echo "T $(echo "$a $b" | awk '{ printf "%.3f", ($1 + $2) / 2 }')"
		echo "$r"
		sleep 0.5
	done >"$1"
}

# rx_goodput FILE MTU: per receiving QP of mroce3, "lqpn MB/s", from its
# rq-psn (packets delivered in order, MTU bytes each) between the sample
# before it first moved and the last sample in which it moved
rx_goodput() {
	awk -v mtu="$2" '
	$1 == "T" { t = $2; next }
	# from RTR on: before it, rq-psn is not yet the connection PSN
	$2 ~ /^mroce3\// && / state (RTR|RTS) / {
		for (i = 1; i < NF; i++) {
			if ($i == "lqpn") q = $(i + 1)
			if ($i == "rq-psn") p = $(i + 1)
		}
		if (q in lp && p != lp[q]) {
			if (!(q in p0)) { p0[q] = lp[q]; t0[q] = lt[q] }
			p1[q] = p; t1[q] = t
		}
		lp[q] = p; lt[q] = t
	}
	END {
		for (q in p0) {
			d = (p1[q] - p0[q] + 16777216) % 16777216
			if (t1[q] > t0[q])
				printf "%s %.2f\n", q, d * mtu / (t1[q] - t0[q]) / 1e6
		}
	}' "$1"
}

# RES: the newest snapshot in FILE that lists h1's RC QP
last_h1_snapshot() {
	awk '$1 == "T" { if (cur ~ /link mroce1\/1 /) keep = cur; cur = ""; next }
	     { cur = cur $0 "\n" }
	     END { if (cur ~ /link mroce1\/1 /) keep = cur; printf "%s", keep }' "$1"
}

# path_lines: the pathN strings of h1's RC QP in $RES
path_lines() {
	echo "$RES" | grep -E '^link mroce1/1 .* type RC ' | head -n 1 |
		grep -Eo 'drv_path[0-9]+ sport [0-9]+ [a-z]+ w [0-9/]+ cwnd [0-9]+ inflight [0-9]+ srtt [0-9]+ tx [0-9]+'
}

# h1's QP: the value of drv_NAME
qp_field() {
	echo "$RES" | grep -E '^link mroce1/1 .* type RC ' | head -n 1 |
		grep -Eo "drv_$1 [^ ]+" | head -n 1 | cut -d' ' -f2
}

# incast TAG CC SENDERS: each of SENDERS writes ITER x 64 KiB to h3, all
# started together; CC "default" or a name for MROCE_CC.  Sets T_DONE[i]
# (completion time, s), GOODPUT (MB/s per receiving QP, NGP of them),
# SUM, JAIN, OK, QAVG (queue
# from 3 s on), QMAX, D_EARLY/D_LATE and M_EARLY/M_LATE (drops and marks
# in the first 3 s / later), QSERIES, CE, RES
incast() {
	local tag=$1 cc=$2 senders=$3 i port pids=() env=() t0 qpid rpid
	local qlog=$RESULTS/incast-$tag.q rlog=$RESULTS/incast-$tag.res
	[ "$cc" = default ] || env=(env MROCE_CC="$cc")
	for i in $senders; do
		port=$((18500 + i))
		fabric_exec h3 timeout 120 ib_write_bw -d mroce3 \
			-x "$(gid_index mroce3 192.0.2.3)" -s 65536 -n "$ITER" -p "$port" -F \
			>"$RESULTS/incast-$tag-srv$i" 2>&1 &
	done
	for i in $senders; do
		topo_wait_listen h3 $((18500 + i))
	done
	CE0=$(counter mroce3 rx_ce_pkts)
	: >"$rlog"
	sample_queue "$qlog" &
	qpid=$!
	sample_qps "$rlog" &
	rpid=$!
	t0=$(date +%s.%N)
	for i in $senders; do
		port=$((18500 + i))
		(
			fabric_exec "h$i" timeout 120 "${env[@]}" ib_write_bw -d "mroce$i" \
				-x "$(gid_index "mroce$i" "192.0.2.$i")" -s 65536 -n "$ITER" \
				-p "$port" -F 192.0.2.3 >"$RESULTS/incast-$tag-cli$i" 2>&1
			rc=$?
			echo "$(date +%s.%N) $rc" >"$RESULTS/incast-$tag-done$i"
			exit $rc
		) &
		pids+=($!)
	done
	OK=0
	for i in "${pids[@]}"; do
		wait "$i" && OK=$((OK + 1))
	done
	sleep 0.5
	kill "$qpid" "$rpid" 2>/dev/null
	wait
	RES=$(last_h1_snapshot "$rlog")
	CE=$(( $(counter mroce3 rx_ce_pkts) - CE0 ))
	QSERIES=$(queue_series "$qlog" "$t0")
	read -r QAVG QMAX D_EARLY D_LATE M_EARLY M_LATE <<<"$(echo "$QSERIES" | awk '
		NR == 1 { d0 = $3; m0 = $4 }
		$1 <= 3 { d3 = $3; m3 = $4 }
		$1 > 3 && $2 >= 0 { s += $2; n++ }
		$2 > mx { mx = $2 }
		{ d = $3; m = $4 }
		END { if (d3 == "") { d3 = d; m3 = m }
		      printf "%d %d %d %d %d %d\n", n ? s / n : 0, mx,
			d3 - d0, d - d3, m3 - m0, m - m3 }')"
	local bws=() dones=()
	for i in $senders; do
		T_DONE[i]=$(awk -v t0="$t0" '{ printf "%.2f", $1 - t0 }' "$RESULTS/incast-$tag-done$i")
		dones+=("${T_DONE[i]}")
	done
	# goodput at the receiver (perftest's own figure reads 0.00 now
	# and then under TCG: its clock calibration)
	mapfile -t bws < <(rx_goodput "$rlog" 1024 | awk '{ print $2 }')
	GOODPUT="${bws[*]}"
	NGP=${#bws[@]}
	JAIN=$(echo "${bws[*]}" | awk '{
		for (i = 1; i <= NF; i++) { s += $i; q += $i * $i }
		printf "%.3f", (q > 0 ? s * s / (NF * q) : 0) }')
	SUM=$(echo "${bws[*]}" | awk '{ for (i = 1; i <= NF; i++) s += $i; printf "%.2f", s }')
	log "$tag (cc $cc), bottleneck $RATE, $ITER x 64 KiB each: done after ${dones[*]} s (from the start of the clients, perftest start-up included)," \
	    "goodput at the receiver MB/s ${bws[*]} (sum $SUM), Jain $JAIN; bottleneck: drops first 3 s $D_EARLY," \
	    "later $D_LATE, ECN marks first 3 s $M_EARLY, later $M_LATE, queue after 3 s" \
	    "$QAVG packets on average (max $QMAX); CE-marked arrivals $CE;" \
	    "h1: cc $(qp_field cc), cwnd $(qp_field cwnd_pkts), rate $(qp_field rate_mbps) Mbit/s," \
	    "last rate hint $(qp_field rate_hint_mbps) Mbit/s," \
	    "srtt $(qp_field srtt_us) us, min_rtt $(qp_field min_rtt_us) us," \
	    "standing qdelay $(qp_field qdelay_us) us"
	log "$tag: bottleneck queue (packets) every ~0.2 s from the start:" \
	    "$(echo "$QSERIES" | awk '{ printf "%s ", $2 }')"
}

on_exit 'fabric_clean; topo_clean; unload_mroce'
RESULTS=$MROCE_RESULTS/t-52
mkdir -p "$RESULTS"

unload_mroce
load_mroce
fabric_clean
fabric_build || fail "fabric build"
for i in 1 2 3 4; do
	fabric_exec h$i rdma link add mroce$i type mroce netdev veth$i ||
		fail "mroce$i"
done
sleep 0.5
check "the devices take the module's default, metaroce" \
	sh -c "dmesg | grep -q 'mroce1: added on veth1 (.*cc metaroce)'"

# --- 1. incast through an ECN-marking port
fabric_shape leaf2:h3 "$RATE" 1ms || fail "shape"

incast ecn-none none "$SENDERS"
NONE="done after ${T_DONE[1]}/${T_DONE[2]}/${T_DONE[4]} s, MB/s $GOODPUT (sum $SUM), Jain $JAIN, queue $QAVG (max $QMAX), drops $D_EARLY/$D_LATE, marks $M_EARLY/$M_LATE"
NONE_Q=$QAVG
NONE_SUM=$SUM
check_eq "cc none: all three transfers completed" 3 "$OK"
check_eq "per-QP choice: h1's QP runs cc none (MROCE_CC=none)" none "$(qp_field cc)"

incast ecn-metaroce default "$SENDERS"
check_eq "metaroce: all three transfers completed" 3 "$OK"
check_eq "metaroce: goodput measured at the receiver for all three" 3 "$NGP"
check_eq "h1's QP runs the device default, metaroce" metaroce "$(qp_field cc)"
check "metaroce: the bottleneck marked and the receiver saw CE ($CE)" \
	test "$CE" -gt 0
check "metaroce: fair shares (Jain $JAIN >= 0.9)" \
	awk -v j="$JAIN" 'BEGIN { exit !(j >= 0.9) }'
check "metaroce: drops stop after the start ($D_LATE later vs $D_EARLY in the first 3 s)" \
	test "$D_LATE" -le $(( D_EARLY / 4 + 10 ))
check "metaroce: a short bottleneck queue ($QAVG packets on average, cc none: $NONE_Q)" \
	test $(( QAVG * 2 )) -le "$NONE_Q"
# The senders must not starve the link.  cc none keeps a standing queue,
# so the link never idles: what it moved in this run is what this host
# can move (under TCG, on a busy host, well below the 30 Mbit/s of the
# shaper: 1.6 MB/s has been seen).  metaroce must move 3/4 of it.
check "metaroce: the link stays busy (sum $SUM MB/s >= 75% of cc none's $NONE_SUM)" \
	awk -v s="$SUM" -v n="$NONE_SUM" 'BEGIN { exit !(s >= 0.75 * n) }'
check "metaroce: the receiver sent rate hints ($(counter mroce3 tx_rate_hints))" \
	test "$(counter mroce3 tx_rate_hints)" -gt 0
# per-path statistics of one connection: every path used and measured
PATHS=$(path_lines)
log "h1's paths:"
echo "#   ${PATHS//$'\n'/$'\n'#   }"
NP=$(qp_field paths_active)
check_match "h1's QP has 16 active paths" '^16$' "$NP"
check_eq "h1's QP lists all its paths" "${NP:-?}" "$(echo "$PATHS" | grep -c .)"
check "every path carried packets" \
	sh -c "echo '$PATHS' | awk 'NF && \$NF == 0 { exit 1 }'"
check "every path has an RTT (srtt > 0): echoes reach all paths" \
	sh -c "echo '$PATHS' | awk '{ for (i = 1; i < NF; i++) if (\$i == \"srtt\" && \$(i + 1) == 0) exit 1 }'"
check_match "h1's QP reports its standing queueing delay" '^[0-9]+$' "$(qp_field qdelay_us)"
AD=$(qp_field ack_delay_us)
check "h1's QP reports its delayed-ACK deadline, 100-400 us (${AD:-none})" \
	test "${AD:-0}" -ge 100 -a "${AD:-0}" -le 400
log "reference, cc none: $NONE"
