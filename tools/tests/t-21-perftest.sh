#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 420
#
# perftest over the RC data path: ib_write_bw, ib_read_bw and ib_send_bw
# with 8 B, 4 KiB and 64 KiB messages, ib_atomic_bw (FETCH_AND_ADD and
# CMP_AND_SWAP, 8 B), then ib_write_lat, ib_send_lat and ib_read_lat
# (8 B), 32 MiB READs (more READ requests than the window holds), and
# ib_send_bw/ib_send_lat over UD (-c UD) and ib_send_bw with an SRQ
# (--use-srq); then (mroce) 5 s of ib_write_lat with a 400 ms reachable
# time, during which neither neighbour entry may be probed.  Server in h1 on mroce1, client in h2 on mroce2, RoCE v2 GID of
# the IPv4 address (-x), perftest's TCP exchange over 192.0.2.1, small
# iteration counts (the guest is TCG-emulated).  Both sides must exit 0
# and the client must print a results line for the size and iterations
# asked; bandwidth, message rate and latency are logged as RESULT lines.
# MROCE_TEST_TRANSPORT=rxe runs the same against rdma_rxe.
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

need_cmd ib_write_bw ib_read_bw ib_send_bw ib_atomic_bw ib_write_lat \
	ib_send_lat ib_read_lat timeout ss
setup_rdma_pair

port=18530

# results FILE: perftest's results line (the first numeric line after the
# "#bytes" header), leading blanks removed
results() {
	awk '/#bytes/ { hdr = 1; next }
	     hdr && $1 ~ /^[0-9]+$/ { sub(/^[ \t]+/, ""); print; exit }' "$1"
}

# perf TOOL SIZE ITERS [EXTRA_ARGS...]
perf() {
	local tool=$1 size=$2 iters=$3 what line name try
	shift 3
	what="$tool${*:+ $*} -s $size -n $iters"
	name=$tool-$size
	[ $# -gt 0 ] && name=$name-${*: -1}
	# perftest times its run in CPU cycles, at a clock rate it measures
	# against gettimeofday() first; when that fit's r^2 is below 0.9 (a
	# TCG guest's clocks jitter) it says "Correlation coefficient r^2"
	# and prints 0 for every rate.  Such a run is no measurement: it
	# goes again, up to twice (each run still checked in full)
	for try in 1 2 3; do
		port=$((port + 1))
		run_pair "$name" "$port" 120 \
			"$tool" -d "$DEV_S" -x "$GID_S" -F -p "$port" \
				-s "$size" -n "$iters" "$@" -- \
			"$tool" -d "$DEV_C" -x "$GID_C" -F -p "$port" \
				-s "$size" -n "$iters" "$@" "$ADDR_S"
		pair_ok "$what" || return 1
		grep -q 'Correlation coefficient r^2' "$CLI_OUT" || break
		log "$what: perftest could not measure the clock rate (run $try)"
	done
	line=$(results "$CLI_OUT")
	check_match "$what: client results line for $size B x $iters" \
		"^${size}[[:space:]]+${iters}[[:space:]]" "$line" || return 1
	# shellcheck disable=SC2086  # split the results line into fields
	set -- $line
	case "$tool" in
	*_bw)
		# #bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]
		# the message rate: 8-byte messages on a slow (debug) kernel
		# average 0.00 MB/s at the two decimals perftest prints
		check_match "$what: message rate is a positive number" \
			'^[0-9]*\.?[0-9]*[1-9][0-9]*\.?[0-9]*$' "$5"
		log "RESULT $what: BW peak $3 MB/s, average $4 MB/s, msg rate $5 Mpps"
		;;
	*_lat)
		# #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
		check_match "$what: typical latency is a number" \
			'^[0-9]+(\.[0-9]+)?$' "$5"
		log "RESULT $what: latency min $3 us, typical $5 us, avg $6 us, max $4 us, stdev $7 us, 99% $8 us, 99.9% $9 us"
		;;
	esac
}

for t in ib_write_bw ib_read_bw ib_send_bw; do
	perf "$t" 8 200
	perf "$t" 4096 200
	perf "$t" 65536 50
	# 1 MiB: 1024 packets, four times the 256-packet window
	perf "$t" 1048576 8
done
# 32 MiB READs: 512 READ requests of 64 PMTUs (path MTU 1024) each, more
# than the 256-PSN window holds at once; perftest keeps several READs
# outstanding on the QP, so their chunk bitmaps share the window
perf ib_read_bw 33554432 5	# perftest: -n >= 5
perf ib_atomic_bw 8 200 -A FETCH_AND_ADD
perf ib_atomic_bw 8 200 -A CMP_AND_SWAP
perf ib_write_lat 8 100
perf ib_send_lat 8 100
perf ib_read_lat 8 100
# UD from userspace (datagrams up to the 1024-byte port MTU) and RC on a
# shared receive queue
perf ib_send_bw 1024 200 -c UD
perf ib_send_lat 8 100 -c UD
perf ib_send_bw 4096 200 --use-srq

# Neighbour confirmation (mroce): an ACK that acknowledges progress proves
# the peer gets our packets, so the requester's next packet confirms the
# neighbour entry it leaves by, as TCP does.  With a short reachable time,
# 5 s of ib_write_lat (both ends requesters) must not take either entry
# through PROBE (unicast ARP).  Without confirmation (the control
# connection idle meanwhile) the server's entry went REACHABLE -> DELAY ->
# PROBE within those 5 s.
if [ "$RDMA_TRANSPORT" = mroce ]; then
	nd_s=$(rdma link show "$DEV_S/1" | sed -n 's/.* netdev \([^ ]*\).*/\1/p')
	nd_c=$(rdma link show "$DEV_C/1" | sed -n 's/.* netdev \([^ ]*\).*/\1/p')
	mon=$(mktemp -d)
	mpids=()
	for side in server client; do
		nd=$nd_s run=in_server
		[ $side = client ] && nd=$nd_c run=in_client
		$run sysctl -qw "net.ipv4.neigh.$nd.base_reachable_time_ms=400" \
			"net.ipv4.neigh.$nd.delay_first_probe_time=1"
		$run timeout 40 ip monitor neigh >"$mon/$side" 2>&1 &
		mpids+=($!)
	done
	port=$((port + 1))
	run_pair ib_write_lat-neigh "$port" 60 \
		ib_write_lat -d "$DEV_S" -x "$GID_S" -F -p "$port" -s 8 -D 5 -- \
		ib_write_lat -d "$DEV_C" -x "$GID_C" -F -p "$port" -s 8 -D 5 \
			"$ADDR_S"
	pair_ok "ib_write_lat -D 5 with a 400 ms reachable time"
	pkill -f "ip monitor neigh" || true
	wait "${mpids[@]}" 2>/dev/null || true
	for side in server client; do
		n=$(grep -c ' PROBE' "$mon/$side")
		log "ip monitor neigh, $side: $(wc -l <"$mon/$side") events, $n PROBE"
		check_eq "$side: the peer's neighbour entry was never probed" 0 "$n"
	done
	rm -rf "$mon"
fi
