#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# QPs whose peer is on the same device: a QP connected to itself (NCCL's
# GPU flush reads through one) and two QPs of one device, over IPv4 and
# over IPv6 GIDs.
. "$(dirname "$0")/lib.sh"

need_cmd rdma
export RDMAV_DRIVERS=$MROCE_TOP/tools/libmroce/libmroce
PROG=$MROCE_TOP/tools/tests/src/loopback_qp
[ -x "$PROG" ] || fail "$PROG not built (make tools)"

gid_index() {	# gid_index DEV GID
	local f
	for f in /sys/class/infiniband/"$1"/ports/1/gids/*; do
		[ "$(cat "$f")" = "$2" ] && { echo "${f##*/}"; return 0; }
	done
	return 1
}

load_mroce
on_exit 'topo_clean; unload_mroce'
topo_pair
require "mroce1 on veth1" in_h1 rdma link add mroce1 type mroce netdev veth1
sleep 0.5
g4=$(gid_index mroce1 0000:0000:0000:0000:0000:ffff:c000:0201)
g6=$(gid_index mroce1 2001:0db8:0000:0000:0000:0000:0000:0001)
require "IPv4 GID" test -n "$g4"
require "IPv6 GID" test -n "$g6"
check "loopback QPs over the IPv4 GID" in_h1 timeout 60 "$PROG" mroce1 "$g4"
check "loopback QPs over the IPv6 GID" in_h1 timeout 60 "$PROG" mroce1 "$g6"
stats=$(rdma statistic show link mroce1/1)
echo "$stats"
check_match "no packet was dropped as malformed" \
	'rx_drop_short 0 rx_drop_version 0 rx_drop_opcode 0 rx_drop_hdr_len 0 rx_drop_reserved 0 rx_drop_flags 0' \
	"$stats"
