#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The mroce demo, run inside the test guest (make demo):
# two hosts h1 and h2 (network namespaces joined by a veth pair), one
# mroce device on each host's veth end, then what rdma-core sees.
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
for g in /sys/class/infiniband/mroce1/ports/1/gids/*; do
	gid=$(cat "$g")
	[ "$gid" = 0000:0000:0000:0000:0000:0000:0000:0000 ] && continue
	n=${g##*/}
	echo "  index $n  $gid  $(cat /sys/class/infiniband/mroce1/ports/1/gid_attrs/types/"$n") $(cat /sys/class/infiniband/mroce1/ports/1/gid_attrs/ndevs/"$n")"
done
say "ibv_devices"
ibv_devices
say "ibv_devinfo -v -d mroce1"
ibv_devinfo -v -d mroce1
say "UDP sockets of h1 (MetaRoCE port)"
ip netns exec h1 ss -uan
say "rdma statistic show link mroce1/1"
rdma statistic show link mroce1/1
