#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 180
#
# A kernel ULP may post work requests from inside its completion handler
# (issue 12 point 12).  tools/kulp/mroce_kulp.ko, loaded with dev=mroce1,
# connects two RC QPs of mroce1 to each other and plays a ping-pong of
# SENDs in which every receive completion's raw comp_handler (ib_create_cq,
# as old-style ULPs use it) polls the CQ, checks the message's sequence
# number and pattern, calls ib_post_recv and ib_post_send, and re-arms the
# CQ.  Userspace verbs never run a comp_handler in the kernel, so no other
# test covers this.  Until commit 550cb7e mroce called the handler with the
# posting QP's sq.lock or rq.lock held: the first post from the handler
# spun on that lock forever (a soft lockup, a hung guest).  Now the handler
# runs from a per-CQ tasklet (mroce_cq.c).  insmod succeeds only when all
# iterations completed with the right status and data; it fails with
# ETIMEDOUT on a stall, EIO on a bad completion, ENODEV for a wrong dev=.
# Runs over the IPv4 GID (20000 small SENDs) and the IPv6 GID (2000 SENDs
# of 4 KiB, four packets each at MTU 1024).
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

need_cmd rdma dmesg
# MROCE_KULP_DIR: the modules built for another kernel (the debug lane)
KULP=${MROCE_KULP_DIR:-$MROCE_TOP/tools/kulp}/mroce_kulp.ko
[ -f "$KULP" ] || fail "$KULP not built (make tools)"

kulp_loaded() { [ -d /sys/module/mroce_kulp ]; }

# kulp_run DESC ITERS PARAM...: insmod mroce_kulp with PARAMs, check the
# kernel's one-line verdict, rmmod it
kulp_run() {
	local desc=$1 iters=$2 before out
	shift 2
	before=$(dmesg | wc -l)
	check "$desc: insmod succeeds" timeout 150 insmod "$KULP" "$@"
	out=$(dmesg | tail -n +$((before + 1)) | grep 'mroce_kulp: ')
	printf '%s\n' "$out"
	check_match "$desc: all $iters SENDs posted from the handler" \
		"mroce_kulp: mroce1: $iters of $iters SENDs .* posted from the completion handler and verified" \
		"$out"
	if kulp_loaded; then
		check "$desc: rmmod" rmmod mroce_kulp
	fi
}

load_mroce
on_exit 'topo_clean; unload_mroce'
topo_pair
require "mroce1 on veth1" in_h1 rdma link add mroce1 type mroce netdev veth1
on_exit 'kulp_loaded && rmmod mroce_kulp'
sleep 0.5
g4=$(gid_index mroce1 0000:0000:0000:0000:0000:ffff:c000:0201)
g6=$(gid_index mroce1 2001:0db8:0000:0000:0000:0000:0000:0001)
require "IPv4 GID" test -n "$g4"
require "IPv6 GID" test -n "$g6"

# a wrong device name fails cleanly and leaves nothing loaded
check_fail "insmod dev=nosuchdev fails" insmod "$KULP" dev=nosuchdev
check_match "it says ENODEV" "mroce_kulp: no ib device nosuchdev" "$(dmesg | tail -n 20)"
check_fail "nothing stays loaded" kulp_loaded

kulp_run "IPv4 GID $g4" 20000 dev=mroce1 gid_index="$g4" iters=20000
kulp_run "IPv6 GID $g6, 4 KiB" 2000 dev=mroce1 gid_index="$g6" iters=2000 \
	size=4096
