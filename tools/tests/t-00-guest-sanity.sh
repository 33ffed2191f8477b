#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 180
#
# The harness itself: the guest is isolated (lo only), topo.sh builds a
# working pair and star, the RDMA modules load, netem can be attached.
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

need_cmd ip ping tc modprobe

# ---- isolation: nothing but lo before any topology exists
check_eq "no topology before the test" "" "$(topo_hosts)"
check_eq "root namespace has only lo" "lo" \
	"$(ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | sort | tr '\n' ' ' | sed 's/ $//')"
check_eq "no default route" "" "$(ip route show default; ip -6 route show default)"

# ---- the writable bits the tests rely on
check "/run/netns is writable" sh -c 'mkdir -p /run/netns && touch /run/netns/.w && rm /run/netns/.w'
check "/etc/netns is writable" sh -c 'mkdir -p /etc/netns/x && rmdir /etc/netns/x'
check "/results is writable" sh -c "touch '$MROCE_RESULTS/.w' && rm '$MROCE_RESULTS/.w'"
check "project tree is visible" test -f "$MROCE_TOP/tools/guest/topo.sh"

# ---- pair
require "topo.sh pair" "$MROCE_TOP/tools/guest/topo.sh" pair
check_eq "hosts h1 h2" "h1 h2" "$(topo_hosts | tr '\n' ' ' | sed 's/ $//')"
check "h1 has 192.0.2.1 on veth1" sh -c "ip -n h1 -4 addr show dev veth1 | grep -q 'inet 192.0.2.1/24'"
check "h2 has 2001:db8::2 on veth2" sh -c "ip -n h2 -6 addr show dev veth2 | grep -q 'inet6 2001:db8::2/64'"
check "lo is up in h1" sh -c "ip -n h1 link show lo | grep -q 'UP'"
check "IPv6 address is not tentative" sh -c "! ip -n h1 -6 addr show dev veth1 | grep -q tentative"
check "ping 192.0.2.2 from h1" in_h1 ping -c 1 -W 5 192.0.2.2
check "ping -6 2001:db8::2 from h1" in_h1 ping -6 -c 1 -W 5 2001:db8::2
check "ping 192.0.2.1 from h2" in_h2 ping -c 1 -W 5 192.0.2.1
check "topo.sh exec" "$MROCE_TOP/tools/guest/topo.sh" exec h2 true

# ---- netem on a veth, in h1
check "tc qdisc add dev veth1 root netem loss 1% (h1)" \
	in_h1 tc qdisc add dev veth1 root netem loss 1%
check "netem is installed" sh -c "ip netns exec h1 tc qdisc show dev veth1 | grep -q netem"

# ---- RDMA modules
check "modprobe ib_core" modprobe ib_core
check "modprobe ib_uverbs" modprobe ib_uverbs
check "modprobe rdma_rxe" modprobe rdma_rxe
if command -v rdma >/dev/null 2>&1; then
	check "rxe on veth1 in h1" in_h1 rdma link add mrtest0 type rxe netdev veth1
	check "uverbs device node appears" sh -c 'ls /dev/infiniband/uverbs* >/dev/null'
	check "rdma link delete" in_h1 rdma link delete mrtest0
fi

# ---- star
require "topo.sh star 3" "$MROCE_TOP/tools/guest/topo.sh" star 3
check_eq "hosts h1 h2 h3" "h1 h2 h3" "$(topo_hosts | tr '\n' ' ' | sed 's/ $//')"
check "ping h3 from h1 through br0" in_h1 ping -c 1 -W 5 192.0.2.3
check "ping -6 h2 from h3 through br0" topo_exec h3 ping -6 -c 1 -W 5 2001:db8::2

# ---- clean
check "topo.sh clean" "$MROCE_TOP/tools/guest/topo.sh" clean
check_eq "no hosts after clean" "" "$(ip netns list)"
