#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The mroce demo, run inside the test guest (make demo):
# two hosts h1 and h2 (network namespaces joined by a veth pair), one
# mroce device on each host's veth end, what rdma-core sees, and an
# ibv_rc_pingpong between the two hosts.
set -euo pipefail
top=$(dirname "$(dirname "$(readlink -f "$0")")")
export RDMAV_DRIVERS=$top/tools/libmroce/libmroce

say() { printf '\n### %s\n' "$*"; }

modprobe -a ib_core ib_uverbs udp_tunnel ip6_udp_tunnel
lsmod | grep -q '^mroce ' || insmod "$top/drivers/infiniband/sw/mroce/mroce.ko"
"$top/tools/guest/topo.sh" pair

say "h1: rdma link add mroce1 type mroce netdev veth1"
ip netns exec h1 rdma link add mroce1 type mroce netdev veth1
say "h2: rdma link add mroce2 type mroce netdev veth2"
ip netns exec h2 rdma link add mroce2 type mroce netdev veth2

say "rdma link show"
rdma link show
say "GIDs of mroce1 (RoCE v2, from veth1's addresses)"
# one grep over the 1024-entry table: a cat per entry is slow under TCG
port=/sys/class/infiniband/mroce1/ports/1
grep -v -x '0000:0000:0000:0000:0000:0000:0000:0000' "$port"/gids/* |
while IFS=: read -r f gid; do
	n=${f##*/}
	echo "  index $n  $gid  $(cat "$port/gid_attrs/types/$n") $(cat "$port/gid_attrs/ndevs/$n")"
done
say "ibv_devices"
ibv_devices
say "ibv_devinfo -v -d mroce1"
ibv_devinfo -v -d mroce1
say "ibv_rc_pingpong: server on mroce1 in h1, client on mroce2 in h2"
gidx=$(grep -l -x 0000:0000:0000:0000:0000:ffff:c000:0201 "$port"/gids/* | head -n 1)
gidx=${gidx##*/}
ip netns exec h1 timeout 60 ibv_rc_pingpong -d mroce1 -g "$gidx" -n 200 \
	>/tmp/pingpong-server.log 2>&1 &
# the client connects to the server's TCP port 18515: only once it listens
# (seconds after its start on a busy host)
if ! "$top/tools/guest/topo.sh" wait-listen h1 18515 30; then
	cat /tmp/pingpong-server.log >&2
	exit 1
fi
ip netns exec h2 timeout 60 ibv_rc_pingpong -d mroce2 -g "$gidx" -n 200 192.0.2.1
wait

say "UDP sockets of h1 (MetaRoCE port)"
ip netns exec h1 ss -uan
say "rdma statistic show link mroce1/1"
rdma statistic show link mroce1/1
