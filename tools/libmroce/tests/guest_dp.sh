#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# guest_dp.sh [COUNT] - end-to-end data path of libmroce + mroce.ko, run
# INSIDE the test guest:
#
#   make -C tools/libmroce && make modules
#   tools/guest/mroce-vm -- tools/libmroce/tests/guest_dp.sh
#
# Loads mroce ($MROCE_KO), makes h1/h2 (topo_pair) with mroce1 on veth1
# and mroce2 on veth2, then runs tests/dp_smoke and tests/mw_smoke (memory
# windows) between the two devices, and ibv_rc_pingpong (server in h1,
# client in h2) over the RoCE v2 GIDs ::ffff:192.0.2.1 / ::ffff:192.0.2.2.
# Prints the mroce counters and the kernel log at the end.  Uses
# tools/tests/lib.sh for the bookkeeping.
#
# RDMAV_DRIVERS (mroce-vm passes it in) names another build of the
# provider, e.g. one built inside an rdma-core tree as providers/mroce
# (Documentation/kernels-rdma-core.rst): .../build/lib/libmroce; the test
# checks that ibv_devinfo loads exactly that file.
. "$(dirname "$0")/../../tests/lib.sh"

need_cmd rdma ibv_rc_pingpong setpriv
export RDMAV_DRIVERS=${RDMAV_DRIVERS:-$MROCE_TOP/tools/libmroce/libmroce}
SYS=/sys/class/infiniband
HERE=$MROCE_TOP/tools/libmroce/tests
COUNT=${1:-1000}

gid_index() {	# gid_index DEV GID -> index of GID in DEV's table
	local f
	for f in "$SYS/$1"/ports/1/gids/*; do
		[ "$(cat "$f")" = "$2" ] && { echo "${f##*/}"; return 0; }
	done
	return 1
}

dmesg -C
load_mroce
on_exit 'topo_clean; unload_mroce; echo "# dmesg:"; dmesg | tail -n 60'
topo_pair
require "mroce1 on veth1" in_h1 rdma link add mroce1 type mroce netdev veth1
require "mroce2 on veth2" in_h2 rdma link add mroce2 type mroce netdev veth2

g1=$(gid_index mroce1 0000:0000:0000:0000:0000:ffff:c000:0201)
g2=$(gid_index mroce2 0000:0000:0000:0000:0000:ffff:c000:0202)
check "GID ::ffff:192.0.2.1 on mroce1 (index $g1)" test -n "$g1"
check "GID ::ffff:192.0.2.2 on mroce2 (index $g2)" test -n "$g2"
# the dynamic loader names every library it opens: the provider must be
# the one RDMAV_DRIVERS names
init=$(in_h1 env LD_DEBUG=files ibv_devinfo -d mroce1 2>&1 |
	grep -E 'calling init: .*libmroce' | head -n 1)
check_match "ibv_devinfo -d mroce1 loads $RDMAV_DRIVERS-rdmav*.so" \
	"calling init: $RDMAV_DRIVERS-rdmav[0-9]+\.so\$" "$init"

check "dp_smoke mroce1 mroce2" timeout 120 "$HERE/dp_smoke" mroce1 mroce2 "$COUNT"
check "mw_smoke mroce1 mroce2 (memory windows)" timeout 300 "$HERE/mw_smoke" mroce1 mroce2
# the UD section again without CAP_NET_RAW: a controlled Q_Key is refused
check "dp_smoke UD without CAP_NET_RAW" timeout 60 \
	setpriv --bounding-set=-net_raw --inh-caps=-net_raw \
	"$HERE/dp_smoke" mroce1 mroce2 1 ud

# ibv_rc_pingpong: server in h1, client in h2 (TCP for the exchange).
log "ibv_rc_pingpong -d mroce1 -g $g1 (server, h1)"
in_h1 timeout 60 ibv_rc_pingpong -d mroce1 -g "$g1" -n 100 \
	>/tmp/pp_server.log 2>&1 &
srv=$!
topo_wait_listen h1 18515	# up to 20 s: a loaded TCG guest is slow
check "ibv_rc_pingpong client (h2) -> 192.0.2.1" \
	in_h2 timeout 60 ibv_rc_pingpong -d mroce2 -g "$g2" -n 100 192.0.2.1
check "ibv_rc_pingpong server (h1)" wait $srv
log "server output:"
sed 's/^/#   /' /tmp/pp_server.log

log "inline + events: ibv_rc_pingpong -e -s 64"
in_h1 timeout 60 ibv_rc_pingpong -d mroce1 -g "$g1" -n 50 -e -s 64 \
	>/tmp/pp_server2.log 2>&1 &
srv=$!
topo_wait_listen h1 18515
check "ibv_rc_pingpong -e (completion events) client" \
	in_h2 timeout 60 ibv_rc_pingpong -d mroce2 -g "$g2" -n 50 -e -s 64 192.0.2.1
check "ibv_rc_pingpong -e server" wait $srv
sed 's/^/#   /' /tmp/pp_server2.log

rdma statistic show link mroce1/1
rdma statistic show link mroce2/1
