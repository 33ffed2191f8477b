#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 600
#
# Multipath on the spine-leaf fabric (tools/guest/fabric.sh: 4 hosts, 2
# leaves, 4 spines, ECMP hashing on UDP ports).  One RC connection h1 ->
# h3 (across the spines) moves mroce-verify's data:
#  - its packets use every spine (per-spine interface counters);
#  - one spine link is black-holed mid-transfer (no route change): the
#    transfer still completes with every byte verified, the sender
#    declares paths dead (path_dead) and moves their traffic to the
#    others, and no application-visible error occurs;
#  - dead paths come back through probes (path_revived) while the link
#    is still cut: a path's probes carry a new source port after three
#    unanswered ones, which ECMP hashes onto a live spine;
#  - after the link is restored, spine2 carries requests to leaf1 again.
# (Each mroce-verify run is a new connection with a new path table, so a
# path that died in one run cannot be revived in the next: deaths and
# revivals are counted over the runs with the link cut.  The run that is
# cut mid-transfer may recover its losses through SACK and tail probes on
# the other paths before any path's RTO, and end with no death: seen once
# in CI, path_dead 0 -> 0 there and 0 -> 12 over both runs.)
. "$(dirname "$0")/lib.sh"
# shellcheck source=tools/tests/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"
# shellcheck source=tools/guest/fabric.sh
. "$MROCE_TOP/tools/guest/fabric.sh"

need_cmd rdma tc
export RDMAV_DRIVERS=$MROCE_TOP/tools/libmroce/libmroce
V=$MROCE_TOP/tools/mroce-verify/mroce-verify
[ -x "$V" ] || fail "$V not built (make tools)"
PATHS=${MROCE_MP_PATHS:-32}

load_mroce
on_exit 'fabric_clean; topo_clean; unload_mroce'
# 32 source ports: with a random ECMP hash every spine gets some
echo "$PATHS" >/sys/module/mroce/parameters/paths ||
	fail "cannot set paths=$PATHS"
require "fabric built" fabric_build
require "mroce1 on h1" fabric_exec h1 rdma link add mroce1 type mroce netdev veth1
require "mroce3 on h3" fabric_exec h3 rdma link add mroce3 type mroce netdev veth3
sleep 0.5
gidx=$(gid_index mroce1 192.0.2.1)
require "IPv4 GID of mroce1" test -n "$gidx"

spines() { fabric_stats | awk '{print $2}' | tr '\n' ' '; }

# verify NAME ITERS [PACKETS_TO_CUT]: mroce-verify h3 -> h1; with a third
# argument, black-hole leaf1:up2 once mroce3 has sent that many packets in
# the run (by progress, not by time: a fast host finishes 96 iterations in
# under 3 s, and a cut after a fixed 2 s came in the run's last packets)
verify() {
	local name=$1 iters=$2 cut=${3:-} srv cli rc
	fabric_exec h1 taskset -c 0 timeout 400 "$V" -d mroce1 -g "$gidx" \
		--server -n "$iters" --seed 11 --ops all,-errors \
		>"/tmp/$name.server" 2>&1 &
	srv=$!
	topo_wait_listen h1 18710	# mroce-verify's default port
	fabric_exec h3 taskset -c 1 timeout 400 "$V" -d mroce3 -g "$gidx" \
		--client 192.0.2.1 -n "$iters" --seed 11 --ops all,-errors \
		>"/tmp/$name.client" 2>&1 &
	cli=$!
	if [ -n "$cut" ]; then
		t0=$(counter mroce3 tx_pkts)
		for _ in $(seq 400); do
			[ $(( $(counter mroce3 tx_pkts) - t0 )) -ge "$cut" ] && break
			sleep 0.05
		done
		log "cutting leaf1:up2 after $(( $(counter mroce3 tx_pkts) - t0 )) packets (black hole, routes unchanged)"
		fabric_cut leaf1:up2
	fi
	wait $cli
	rc=$?
	wait $srv
	rc=$((rc + $?))
	tail -n 2 "/tmp/$name.client"
	[ "$rc" = 0 ] || grep -h "MISMATCH\|FAIL" "/tmp/$name.client" \
		"/tmp/$name.server" | head -n 20
	return "$rc"
}

# 1. all spines carry the connection
read -ra before <<<"$(spines)"
check "all spines: every byte verified" verify spread 24
read -ra after <<<"$(spines)"
total=0
for s in 0 1 2 3; do
	d[s]=$(( after[s] - before[s] ))
	total=$(( total + d[s] ))
done
log "packets per spine: ${d[*]} (total $total)"
for s in 0 1 2 3; do
	check "spine$((s + 1)) carried >= 5% of the packets (${d[$s]} of $total)" \
		test $(( d[s] * 20 )) -ge "$total"
done

# 2. a spine link black-holed mid-transfer
dead0=$(counter mroce3 path_dead)
rev0=$(counter mroce3 path_revived)
check "spine link cut mid-transfer: every byte verified, no error" \
	verify cut 96 1500
log "path_dead $dead0 -> $(counter mroce3 path_dead) in the run cut mid-transfer"
read -ra mid <<<"$(spines)"
sleep 1
check "traffic continues without spine2's leaf1 link" verify after 8
read -ra end <<<"$(spines)"
dropped=$(( $(fabric_drops leaf1:up2) + $(fabric_drops spine2:down1) ))
log "the cut dropped $dropped packets"
check "the cut black-holed packets" test "$dropped" -gt 0
log "spine2 packets during the last run: $(( end[1] - mid[1] ))" \
    "(only the other leaf's uplink, from ACKs/responses)"

# 3. probes brought dead paths back while the link was cut; restored,
# spine2 carries h3's requests to leaf1 again
rev1=$(counter mroce3 path_revived)
dead1=$(counter mroce3 path_dead)
log "path_dead $dead0 -> $dead1 and path_revived" \
    "$rev0 -> $rev1 over the runs with the cut, tx_probes $(counter mroce3 tx_probes)"
check "paths through the cut were declared dead" test "$dead1" -gt "$dead0"
check "dead paths were revived by probes (new source ports)" \
	test "$rev1" -gt "$rev0"
fabric_restore leaf1:up2
down1() { fabric_stats all | awk '$1 == "spine2:down1" { print $3 }'; }
d0=$(down1)
check "after restore: every byte verified" verify restored 8
d1=$(down1)
log "spine2 -> leaf1 packets during the restored run: $((d1 - d0))"
check "after restore: spine2 carries packets to leaf1 again" \
	test "$((d1 - d0))" -gt 0
rdma statistic show link mroce3/1
