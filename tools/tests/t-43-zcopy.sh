#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 300
#
# Zero-copy transmit (module parameter zcopy_min): request payloads from
# user memory leave as fragments of the region's pages.
#
#   data      ibv_rc_pingpong 4 KiB x 50 with --chk (the receiver checks
#             every buffer): with zcopy_min 512 the client's request
#             packets all go zero-copy (tx_zcopy_pkts); with zcopy_min 0
#             none do, and the data is right both ways
#   read      ib_read_bw 64 KiB: the server's READ responses go
#             zero-copy (its tx_zcopy_pkts)
#   offloads  with scatter-gather, then checksum offload, turned off on
#             both veth ends (ethtool -K), the stack would linearize
#             fragments: request payloads and READ responses are copied
#             (no tx_zcopy_pkts), the data still checked; zero-copy again
#             once the offloads are back
#   lifetime  packets outlive their region: ib_write_bw's client is
#             killed (SIGKILL: its QPs, MRs and memory go at once) while
#             300 ms of its packets wait in a netem delay on its link.
#             Those packets still reach the server, whose QP places them,
#             reading the pages of the dead process: their page
#             references keep them.  Under the debug kernel (KASAN) a
#             page freed under a packet is a use-after-free report; the
#             runner fails a test whose kernel log has one.
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

[ "$RDMA_TRANSPORT" = mroce ] || skip "zero-copy transmit is mroce's"
need_cmd ibv_rc_pingpong ib_write_bw ib_read_bw tc ethtool
setup_rdma_pair
ZMIN=/sys/module/mroce/parameters/zcopy_min
on_exit "echo 512 >$ZMIN"

# pingpong NAME PORT: 50 x 4 KiB, checked; ZC and PKTS: the client's
# zero-copy packets and all its packets
pingpong() {
	local z0 p0

	z0=$(counter "$DEV_C" tx_zcopy_pkts)
	p0=$(counter "$DEV_C" tx_pkts)
	run_pair "$1" "$2" 60 \
		ibv_rc_pingpong -d "$DEV_S" -g "$GID_S" -p "$2" -s 4096 -n 50 -c -- \
		ibv_rc_pingpong -d "$DEV_C" -g "$GID_C" -p "$2" -s 4096 -n 50 -c "$ADDR_S"
	pair_ok "$1: ibv_rc_pingpong 4 KiB x 50, buffers checked"
	ZC=$(( $(counter "$DEV_C" tx_zcopy_pkts) - z0 ))
	PKTS=$(( $(counter "$DEV_C" tx_pkts) - p0 ))
	log "$1: $DEV_C sent $PKTS packets, $ZC of them zero-copy"
}

check_eq "zcopy_min defaults to 512" 512 "$(cat $ZMIN)"
pingpong zcopy 18700
# 50 SENDs of 4 KiB in 1388-byte large segments (the default seg=1 on a
# 1500-byte veth): 150 request packets (200 at the path MTU, 1024)
check "every request packet went zero-copy ($ZC)" test "$ZC" -ge 150
check "ACKs are not zero-copy ($ZC of $PKTS)" test "$ZC" -lt "$PKTS"

echo 0 >$ZMIN
pingpong copy 18701
check_eq "zcopy_min 0: every payload copied" 0 "$ZC"
echo 512 >$ZMIN

# READ responses: the responder's payloads go zero-copy too (20 READs of
# 64 KiB at path MTU 1024: 1280 responses from the server)
# readbw NAME PORT: ZS, the server's zero-copy packets
readbw() {
	local z0

	z0=$(counter "$DEV_S" tx_zcopy_pkts)
	run_pair "$1" "$2" 60 \
		ib_read_bw -d "$DEV_S" -x "$GID_S" -F -p "$2" -s 65536 -n 20 -- \
		ib_read_bw -d "$DEV_C" -x "$GID_C" -F -p "$2" -s 65536 -n 20 "$ADDR_S"
	pair_ok "$1: ib_read_bw 64 KiB x 20"
	ZS=$(( $(counter "$DEV_S" tx_zcopy_pkts) - z0 ))
}
readbw read 18704
check "READ responses went zero-copy ($ZS)" test "$ZS" -ge 1280

# netdevs that take no fragments as they are (a virtio NIC whose host
# offers no offloads): without scatter-gather, or without checksum
# offload, the stack linearizes a fragmented packet before the driver,
# so the payload is copied in the first place (mroce_pkt_frags_pay())
# (the debug lane, whose kernel runs KASAN, turns off scatter-gather
# only: the same copy, a third of the test's time)
port=18705
offs="sg tx"
[ "${MROCE_TEST_TIMEOUT_SCALE:-1}" -gt 1 ] && offs=sg
for off in $offs; do
	require "ethtool -K veth2 $off off (client)" \
		in_client ethtool -K veth2 "$off" off
	require "ethtool -K veth1 $off off (server)" \
		in_server ethtool -K veth1 "$off" off
	pingpong "$off-off" $port
	check_eq "$off off on the client's netdev: request payloads copied" 0 "$ZC"
	check "$off off: the client still sent its 150 request packets ($PKTS)" \
		test "$PKTS" -ge 150
	readbw "read-$off-off" $((port + 1))
	check_eq "$off off on the server's netdev: READ responses copied" 0 "$ZS"
	in_client ethtool -K veth2 sg on tx on
	in_server ethtool -K veth1 sg on tx on
	port=$((port + 2))
done
pingpong offloads-back 18709
check "offloads back: zero-copy again ($ZC)" test "$ZC" -ge 150

# lifetime
require "netem delay 300 ms on $CLIENT_NS's link" \
	in_client tc qdisc add dev veth2 root netem delay 300ms limit 100000
in_server timeout 60 ib_write_bw -d "$DEV_S" -x "$GID_S" -F -p 18702 \
	-s 65536 -D 20 >"$RDMA_OUTDIR/lifetime.server" 2>&1 &
srv=$!
wait_listen 18702
z0=$(counter "$DEV_C" tx_zcopy_pkts)
in_client timeout 60 ib_write_bw -d "$DEV_C" -x "$GID_C" -F -p 18702 \
	-s 65536 -D 20 "$ADDR_S" >"$RDMA_OUTDIR/lifetime.client" 2>&1 &
cli=$!
i=0
while [ $(( $(counter "$DEV_C" tx_zcopy_pkts) - z0 )) -lt 2000 ] && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
r0=$(counter "$DEV_S" rx_pkts)
# timeout(1)'s child is ib_write_bw; kill them both, now
pkill -KILL -P $cli
kill -KILL $cli 2>/dev/null
wait $cli 2>/dev/null
k=$(counter "$DEV_C" tx_pkts)
sleep 1.5
r1=$(counter "$DEV_S" rx_pkts)
log "lifetime: $(( $(counter "$DEV_C" tx_zcopy_pkts) - z0 )) zero-copy packets sent; the server received $((r1 - r0)) after the client was killed (client sent $k in all)"
check "the client sent 2000 zero-copy packets before it was killed" \
	test $(( $(counter "$DEV_C" tx_zcopy_pkts) - z0 )) -ge 2000
check "packets of the killed client still reached the server ($((r1 - r0)))" \
	test $((r1 - r0)) -ge 16
kill -TERM $srv 2>/dev/null
wait $srv 2>/dev/null
in_client tc qdisc del dev veth2 root
# the pages are released: a new pingpong works on memory reused since
pingpong after-kill 18703
check "zero-copy again after the kill ($ZC)" test "$ZC" -ge 150
