#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 400
#
# The device counters are the spec's: the names in the "Device counters"
# table of Documentation/metaroce-spec.rst (normative) are exactly the
# hw counters `rdma statistic show` lists for an mroce device, in the same
# order, no more and no fewer.  Then a pingpong shows the acknowledgment
# counters count on both ends, and (mroce) that a connection reuses its
# cached route: a few route lookups for hundreds of packets, again after
# a route change invalidates the cache, and one lookup per packet once
# the namespace hashes multipath routes on the UDP ports.
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

need_cmd rdma ibv_rc_pingpong awk
SPEC=$MROCE_TOP/Documentation/metaroce-spec.rst

# The first column of the table in the "Device counters" section: every
# ``name`` in a cell that starts with "   * - " up to the next "     - ".
spec_counters() {
	awk '
		/^Device counters$/ { sec = 1; next }
		sec && /^Per-QP statistics$/ { exit }
		!sec { next }
		/^   \* - / { col = 1; hdr = (n++ == 0) }
		/^     - / { col = 2 }
		col == 1 && !hdr {
			line = $0
			while (match(line, /``[a-z][a-z0-9_]*``/)) {
				print substr(line, RSTART + 2, RLENGTH - 4)
				line = substr(line, RSTART + RLENGTH)
			}
		}
	' "$SPEC"
}

setup_rdma_pair

spec=$(spec_counters)
dev=$(rdma statistic show link "$DEV_S/1" | awk '{
	for (i = 3; i < NF; i += 2) print $i }')
log "spec: $(echo "$spec" | wc -l) counters, $DEV_S: $(echo "$dev" | wc -l)"
check "the spec's table lists counters" test "$(echo "$spec" | wc -l)" -gt 40
only_spec=$(comm -23 <(sort <<<"$spec") <(sort <<<"$dev"))
only_dev=$(comm -13 <(sort <<<"$spec") <(sort <<<"$dev"))
check_eq "every counter of the spec is exported" "" "$only_spec"
check_eq "no counter is exported that the spec does not name" "" "$only_dev"
check_eq "in the spec's order" "$spec" "$dev"

# pingpong NAME PORT: 50 x 4 KiB; sets PKTS and LOOKUPS, what the
# client's device sent and how many route lookups that took (mroce)
pingpong() {
	local p0 l0

	if [ "$RDMA_TRANSPORT" = mroce ]; then
		p0=$(counter "$DEV_C" tx_pkts)
		l0=$(counter "$DEV_C" tx_route_lookups)
	fi
	run_pair "$1" "$2" 60 \
		ibv_rc_pingpong -d "$DEV_S" -g "$GID_S" -p "$2" -s 4096 -n 50 -- \
		ibv_rc_pingpong -d "$DEV_C" -g "$GID_C" -p "$2" -s 4096 -n 50 "$ADDR_S"
	pair_ok "$1: ibv_rc_pingpong 4 KiB x 50"
	if [ "$RDMA_TRANSPORT" = mroce ]; then
		PKTS=$(( $(counter "$DEV_C" tx_pkts) - p0 ))
		LOOKUPS=$(( $(counter "$DEV_C" tx_route_lookups) - l0 ))
		log "$1: $DEV_C sent $PKTS packets with $LOOKUPS route lookups"
	fi
}

# the acknowledgment counters move
a_tx=$(counter "$DEV_S" tx_acks)
a_rx=$(counter "$DEV_C" rx_acks)
pingpong counters-pingpong 18600
check "server sent ACKs (tx_acks)" \
	test "$(counter "$DEV_S" tx_acks)" -gt "$a_tx"
check "client received ACKs (rx_acks)" \
	test "$(counter "$DEV_C" rx_acks)" -gt "$a_rx"
check_eq "no ACK dropped as out of range" 0 \
	"$(( $(counter "$DEV_S" rx_drop_ack_range) + $(counter "$DEV_C" rx_drop_ack_range) ))"

[ "$RDMA_TRANSPORT" = mroce ] || exit 0
# The route cache (each RC QP's, the soft provider's): the first packet on
# each CPU looks the route up, the rest reuse it.  Anything that bumps the
# namespace's route generation (a carrier or address event the fresh
# topology still delivers, seen in CI: 6 lookups for 254 packets) costs
# another lookup per CPU, so the bound is a share of the packets: a lookup
# per packet (no cache) would be PKTS.
check "the pingpong sent packets" test "$PKTS" -ge 100
check "a route lookup for the first packets ($LOOKUPS)" test "$LOOKUPS" -ge 1
check "the cached route serves 9 packets in 10 ($LOOKUPS lookups for $PKTS packets)" \
	test "$((LOOKUPS * 10))" -le "$PKTS"
# A route change invalidates the cached routes of the namespace, also
# under traffic: mid-transfer the server's address is routed through a
# gateway that does not answer ARP, for a second.  Packets the QP sends
# then must stop reaching the server (a stale cache would go on sending
# them straight to it), and resume, on a new lookup, once the route goes.
need_cmd ib_write_bw
in_server timeout 120 ib_write_bw -d "$DEV_S" -x "$GID_S" -F -p 18603 \
	-u 18 -s 1048576 -D 8 >"$RDMA_OUTDIR/route.server" 2>&1 &
srv=$!
wait_listen 18603
l0=$(counter "$DEV_C" tx_route_lookups)
t0=$(counter "$DEV_C" tx_pkts)
in_client timeout 120 ib_write_bw -d "$DEV_C" -x "$GID_C" -F -p 18603 \
	-u 18 -s 1048576 -D 8 "$ADDR_S" >"$RDMA_OUTDIR/route.client" 2>&1 &
cli=$!
while kill -0 $cli 2>/dev/null &&
      [ $(( $(counter "$DEV_C" tx_pkts) - t0 )) -lt 2000 ]; do
	sleep 0.05
done
l1=$(counter "$DEV_C" tx_route_lookups)
require "route $ADDR_S through a dead gateway in $CLIENT_NS" \
	in_client ip route add "$ADDR_S/32" via 192.0.2.99 dev veth2 onlink
sleep 0.3
r0=$(counter "$DEV_S" rx_pkts)
s0=$(counter "$DEV_C" tx_pkts)
sleep 1
r1=$(counter "$DEV_S" rx_pkts)
s1=$(counter "$DEV_C" tx_pkts)
in_client ip route del "$ADDR_S/32" via 192.0.2.99 dev veth2 onlink
wait $cli
crc=$?
wait $srv
src=$?
sed 's/^/  client| /' "$RDMA_OUTDIR/route.client"
l2=$(counter "$DEV_C" tx_route_lookups)
log "route change: $(( s1 - s0 )) packets sent and $(( r1 - r0 )) received in the second of the dead gateway; lookups $((l1 - l0)) before, $((l2 - l1)) after the change"
check_eq "ib_write_bw 1 MiB for 8 s across the route change (client, server)" \
	"0 0" "$crc $src"
check "the QP kept sending while its route was dead ($(( s1 - s0 )) packets)" \
	test $(( s1 - s0 )) -ge 1
check "packets stopped reaching the server on the route change ($(( r1 - r0 )))" \
	test $(( r1 - r0 )) -le 10
check "the route was looked up again ($(( l2 - l1 )) lookups)" \
	test $(( l2 - l1 )) -ge 2
# Multipath routes hashed on the UDP ports (policy 1): each path's source
# port may leave by another nexthop, so every packet is looked up.
require "fib_multipath_hash_policy 1 in $CLIENT_NS" \
	in_client sysctl -qw net.ipv4.fib_multipath_hash_policy=1
pingpong counters-l4-hash 18602
check "with an L4 multipath hash every packet is looked up ($LOOKUPS for $PKTS)" \
	test "$LOOKUPS" -ge "$PKTS"
