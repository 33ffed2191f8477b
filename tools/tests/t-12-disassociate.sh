#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 200
#
# A device goes away while processes hold it open: netdev removal and
# namespace removal with a verbs program (ibv_rc_pingpong server: a
# context, PD, CQ, MR and QP with mmap'ed rings) waiting on each device.
# The devices must be gone within seconds anyway (the driver lets ib_core
# disassociate the processes' contexts), the processes must survive
# until they exit by themselves or are killed, and the module must
# unload.  Without disassociation the unregistration waits for the
# processes, and every later namespace teardown stalls behind it.
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

need_cmd ibv_rc_pingpong rdma ip
SYS=/sys/class/infiniband

wait_gone() {	# wait_gone DEV SECS
	local i
	for i in $(seq $(($2 * 10))); do
		[ -e "$SYS/$1" ] || return 0
		sleep 0.1
	done
	return 1
}

holder() {	# holder NS DEV GID PORT: a server that holds DEV open
	if [ -n "$1" ]; then
		ip netns exec "$1" ibv_rc_pingpong -d "$2" -g "$3" -p "$4" \
			>/dev/null 2>&1 </dev/null &
	else
		ibv_rc_pingpong -d "$2" -g "$3" -p "$4" \
			>/dev/null 2>&1 </dev/null &
	fi
	echo $!
}

setup_rdma_pair
p1=$(holder h1 "$DEV_S" "$GID_S" 18701)
p2=$(holder h2 "$DEV_C" "$GID_C" 18702)
on_exit "kill -9 $p1 $p2 2>/dev/null"
# both must really hold their device: a QP exists on each
for i in $(seq 50); do
	n=$(rdma resource show qp 2>/dev/null | grep -c "type RC")
	[ "$n" -ge 2 ] && break
	sleep 0.2
done
check "each holder has an RC QP on its device" test "$n" -ge 2

# netdev removal under an open context: both veth ends go
t0=$SECONDS
check "netdev removal returns" timeout 30 ip netns exec h1 ip link del veth1
check "$DEV_S gone within 15 s although a process holds it" \
	wait_gone "$DEV_S" 15
check "$DEV_C gone within 15 s (its veth peer went)" wait_gone "$DEV_C" 15
log "devices gone after $((SECONDS - t0)) s"
check "the holders are still alive (their device went, not they)" \
	kill -0 "$p1" "$p2"

# namespace removal under an open context
check "a fresh pair" topo_pair
require "add mroce3 in h1" in_h1 rdma link add mroce3 type mroce netdev veth1
g3=$(gid_index mroce3 "$(topo_ip4 1)")
# from the root namespace (devices are visible in every namespace): a
# process inside h1 would keep h1 alive after its name is gone
p3=$(holder "" mroce3 "$g3" 18703)
on_exit "kill -9 $p3 2>/dev/null"
sleep 2
check "namespace removal returns" timeout 30 ip netns del h1
check "mroce3 gone with its namespace although a process holds it" \
	wait_gone mroce3 15
# a stalled teardown would hold up the next one
check "another namespace comes and goes" \
	timeout 30 sh -c 'ip netns add t12 && ip netns del t12'
kill "$p1" "$p2" "$p3" 2>/dev/null
wait 2>/dev/null
check "the holders exited" sh -c "! kill -0 $p1 $p2 $p3 2>/dev/null"
