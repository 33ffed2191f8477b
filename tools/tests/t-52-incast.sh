#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 600
#
# Incast 3 -> 1 on the spine-leaf fabric with the "metaroce" congestion
# control: h1, h2 and h4 each write to h3 (ib_write_bw 64 KiB, run at the
# same time) through leaf2's port toward h3, rate-limited with ECN marking
# (tbf + fq_codel ce_threshold).  Checks: all three transfers complete,
# the bottleneck marks (ECN) and the receiver sees CE, the senders back
# off so the bottleneck's drops stop after the start, and the shares are
# fair (Jain's index).  Prints the same run with cc "none" for reference.
. "$(dirname "$0")/lib.sh"
# shellcheck source=tools/tests/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"
# shellcheck source=tools/guest/fabric.sh
. "$MROCE_TOP/tools/guest/fabric.sh"

need_cmd rdma tc ib_write_bw
export RDMAV_DRIVERS=$MROCE_TOP/tools/libmroce/libmroce
RATE=${MROCE_INCAST_RATE:-30mbit}
DUR=${MROCE_INCAST_DURATION:-10}
SENDERS="1 2 4"

qdisc_drops() {	# packets the bottleneck qdiscs dropped
	fabric_exec leaf2 tc -s qdisc show dev h3 |
		sed -n 's/.*dropped \([0-9]*\).*/\1/p' | awk '{ n += $1 } END { print n + 0 }'
}
backlog() {	# packets queued at the bottleneck now
	fabric_exec leaf2 tc -s qdisc show dev h3 |
		sed -n 's/.*backlog [0-9]*[KMG]*b \([0-9]*\)p.*/\1/p' |
		awk '{ n += $1 } END { print n + 0 }'
}

# incast CC: one run; sets BW[i] (MB/s), D_EARLY, D_LATE, JAIN, CE
incast() {
	local cc=$1 i port pids=() d0 d1 d2
	unload_mroce
	load_mroce
	# devices take the algorithm named when they are created
	echo "$cc" >/sys/module/mroce/parameters/cc_algo || fail "cc_algo=$cc"
	fabric_clean
	fabric_build || fail "fabric build"
	fabric_shape leaf2:h3 "$RATE" 1ms || fail "shape"
	for i in 1 2 3 4; do
		fabric_exec h$i rdma link add mroce$i type mroce netdev veth$i ||
			fail "mroce$i"
	done
	sleep 0.5
	check "cc $cc: mroce1 was created with it" \
		sh -c "dmesg | grep -q 'mroce1: added on veth1 (.*cc $cc)'"
	for i in $SENDERS; do
		port=$((18500 + i))
		fabric_exec h3 timeout $((DUR + 60)) ib_write_bw -d mroce3 \
			-x "$(gid_index mroce3 192.0.2.3)" -s 65536 -D "$DUR" -p "$port" -F \
			>"/tmp/incast-$cc-srv$i" 2>&1 &
	done
	sleep 2
	d0=$(qdisc_drops)
	m0=$(fabric_marks leaf2:h3)
	for i in $SENDERS; do
		port=$((18500 + i))
		fabric_exec h$i timeout $((DUR + 60)) ib_write_bw -d mroce$i \
			-x "$(gid_index mroce$i 192.0.2.$i)" -s 65536 -D "$DUR" -p "$port" -F \
			192.0.2.3 >"/tmp/incast-$cc-cli$i" 2>&1 &
		pids+=($!)
	done
	sleep 3
	d1=$(qdisc_drops)
	m1=$(fabric_marks leaf2:h3)
	# the queue over the rest of the run, sampled
	QSUM=0
	for i in 1 2 3 4 5 6 7 8; do
		QSUM=$((QSUM + $(backlog)))
		sleep 0.5
	done
	QAVG=$((QSUM / 8))
	RES=$(rdma resource show qp -dd 2>&1)
	CWND=$(echo "$RES" | grep -Eo 'cwnd_pkts [0-9]+' | head -n 1)
	RATE_NOW=$(echo "$RES" | grep -Eo 'rate_mbps [0-9]+' | head -n 1)
	OK=0
	for i in "${pids[@]}"; do
		wait "$i" && OK=$((OK + 1))
	done
	wait
	d2=$(qdisc_drops)
	m2=$(fabric_marks leaf2:h3)
	M_EARLY=$((m1 - m0))
	M_LATE=$((m2 - m1))
	D_EARLY=$((d1 - d0))
	D_LATE=$((d2 - d1))
	CE=$(counter mroce3 rx_ce_pkts)
	for i in $SENDERS; do
		BW[$i]=$(awk '$1 == 65536 { print $4 }' "/tmp/incast-$cc-cli$i")
		BW[$i]=${BW[$i]:-0}
	done
	JAIN=$(echo "${BW[1]} ${BW[2]} ${BW[4]}" | awk '{
		s = $1 + $2 + $3; q = $1 * $1 + $2 * $2 + $3 * $3
		printf "%.3f", (q > 0 ? s * s / (3 * q) : 0) }')
	SUM=$(echo "${BW[1]} ${BW[2]} ${BW[4]}" | awk '{ printf "%.2f", $1 + $2 + $3 }')
	log "cc $cc, bottleneck $RATE: MB/s ${BW[1]} ${BW[2]} ${BW[4]} (sum $SUM)," \
	    "Jain $JAIN, bottleneck drops first 3 s $D_EARLY, later $D_LATE," \
	    "ECN marks first 3 s $M_EARLY, later $M_LATE, CE-marked arrivals $CE," \
	    "bottleneck queue $QAVG packets on average, h1 ${CWND:-cwnd ?}" \
	    "${RATE_NOW:-rate ?}"
}

on_exit 'fabric_clean; topo_clean; unload_mroce'

incast none
NONE="MB/s ${BW[1]} ${BW[2]} ${BW[4]} (sum $SUM), Jain $JAIN, drops $D_EARLY/$D_LATE, marks $M_EARLY/$M_LATE"
NONE_MLATE=$M_LATE
NONE_Q=$QAVG

incast metaroce
check_eq "metaroce: all three transfers completed" 3 "$OK"
check "metaroce: the bottleneck marked and the receiver saw CE ($CE)" \
	test "$CE" -gt 0
check "metaroce: fair shares (Jain $JAIN >= 0.9)" \
	awk -v j="$JAIN" 'BEGIN { exit !(j >= 0.9) }'
check "metaroce: drops stop after the start ($D_LATE later vs $D_EARLY in the first 3 s)" \
	test "$D_LATE" -le $(( D_EARLY / 4 + 10 ))
check "metaroce: a short bottleneck queue ($QAVG packets on average, cc none: $NONE_Q)" \
	test $(( QAVG * 2 )) -le "$NONE_Q"
# RATE in Mbit/s; the senders must not starve the link
check "metaroce: the link stays busy (sum $SUM MB/s >= 40% of $RATE)" \
	awk -v s="$SUM" -v r="${RATE%mbit}" 'BEGIN { exit !(s >= 0.4 * r / 8) }'
check "metaroce: the receiver sent rate hints ($(counter mroce3 tx_rate_hints))" \
	test "$(counter mroce3 tx_rate_hints)" -gt 0
log "reference, cc none: $NONE"
