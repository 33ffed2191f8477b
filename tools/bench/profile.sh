#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# profile.sh - where mroce's CPU goes, for issue 13: perf profiles of the
# whole guest while perftest runs between netns h1 and h2 over veth.
#
#   make profile [PROFILE_SCENARIOS="write_bw_64k send_bw_64 write_lat_8"]
#
# Host side (no argument): boots the test guest (tools/guest/mroce-vm) and
# runs itself inside with --guest.  Guest side: one veth pair
# (tools/guest/topo.sh), mroce1 in h1 (server, CPU 0), mroce2 in h2
# (client, CPU 1); per scenario `perf record -a -g` (cpu-clock: under TCG
# there is no PMU) over perftest's measured window, then a flat profile
# (self time by symbol) and the same split by CPU, so sender (CPU 1) and
# receiver (CPU 0) read apart, and each CPU's user/system/softirq/idle
# split from /proc/stat over the same window.  Under TCG (no KVM) the
# cpu-clock samples land mostly in the idle loop: the timer interrupt is
# taken at the next translation-block boundary, so read the /proc/stat
# split first and the symbols only for where busy time goes.  Results:
# build/results/profile/NAME.txt, the perftest output next to it.
#
# Scenarios:
#   write_bw_64k  ib_write_bw -s 65536 (bulk)
#   send_bw_64    ib_send_bw -s 64 (message rate)
#   write_lat_8   ib_write_lat -s 8 (latency)
#
# Environment: PROFILE_CC (the module's cc_algo, default its own default),
# PROFILE_SECONDS (perftest -D, default 6), PROFILE_TOP
# (symbols shown, default 40).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
TOP=$(cd "$HERE/../.." && pwd -P)
SCEN=${PROFILE_SCENARIOS:-write_bw_64k send_bw_64 write_lat_8}
SECS=${PROFILE_SECONDS:-6}
NTOP=${PROFILE_TOP:-40}
CC=${PROFILE_CC:-}

if [ "${1:-}" != --guest ]; then
	[ -f "$TOP/drivers/infiniband/sw/mroce/mroce.ko" ] ||
		{ echo "profile.sh: build first (make)" >&2; exit 2; }
	mkdir -p "$TOP/build/results"
	exec "$TOP/tools/guest/mroce-vm" --env PROFILE_SCENARIOS="$SCEN" \
		--env PROFILE_SECONDS="$SECS" --env PROFILE_TOP="$NTOP" \
		--env PROFILE_CC="$CC" \
		-- "$HERE/profile.sh" --guest
fi

[ "${MROCE_IN_GUEST:-0}" = 1 ] || { echo "profile.sh: --guest runs only in the test guest" >&2; exit 2; }
OUT=${MROCE_RESULTS:-/results}/profile
mkdir -p "$OUT"
export RDMAV_DRIVERS=$TOP/tools/libmroce/libmroce
say() { echo "profile: $*"; }

for m in ib_core ib_uverbs udp_tunnel ip6_udp_tunnel; do
	modprobe "$m"
done
insmod "$TOP/drivers/infiniband/sw/mroce/mroce.ko" ${CC:+"cc_algo=$CC"}
# shellcheck source=../guest/topo.sh
. "$TOP/tools/guest/topo.sh"
topo_pair
ip netns exec h1 rdma link add mroce1 type mroce netdev veth1
ip netns exec h2 rdma link add mroce2 type mroce netdev veth2
sleep 0.5
# perf reads module symbols from /proc/kallsyms
echo 0 >/proc/sys/kernel/kptr_restrict
echo -1 >/proc/sys/kernel/perf_event_paranoid

run() {	# NAME TOOL ARGS...: perftest server in h1, client in h2, profiled
	local name=$1 tool=$2 g1 g2 spid ppid
	shift 2
	g1=$(topo_gid4 mroce1 192.0.2.1)
	g2=$(topo_gid4 mroce2 192.0.2.2)
	if [ -z "$g1" ] || [ -z "$g2" ]; then
		say "no IPv4 GIDs"
		exit 1
	fi
	ip netns exec h1 taskset -c 0 "$tool" -d mroce1 -x "$g1" -F "$@" \
		>"$OUT/$name.server" 2>&1 &
	spid=$!
	topo_wait_listen h1 18515
	ip netns exec h2 taskset -c 1 "$tool" -d mroce2 -x "$g2" -F "$@" \
		192.0.2.1 >"$OUT/$name.client" 2>&1 &
	ppid=$!
	sleep 1.5	# connection set up, warm-up margin
	grep '^cpu[0-9]' /proc/stat >"$OUT/$name.stat0"
	perf record -q -a -g -e cpu-clock -F 999 -o "$OUT/$name.data" \
		-- sleep $((SECS - 3)) >/dev/null 2>&1 || true
	grep '^cpu[0-9]' /proc/stat >"$OUT/$name.stat1"
	wait "$ppid" || say "$name: client exit $?"
	wait "$spid" || say "$name: server exit $?"
	{
		echo "# $name: $tool $*, mroce (cc ${CC:-default}) over veth, server CPU 0 (h1), client CPU 1 (h2)"
		echo "# perftest (client):"
		grep -E '^ *[0-9]' "$OUT/$name.client" | sed 's/^/#   /' || true
		echo "# CPU time in the window, /proc/stat (percent of each CPU):"
		paste "$OUT/$name.stat0" "$OUT/$name.stat1" | awk '{
			n = (NF - 2) / 2
			t = 0
			for (i = 2; i <= n + 1; i++) { d[i] = $(i + n + 1) - $i; t += d[i] }
			if (t <= 0) t = 1
			printf "#   %s user %.0f%% system %.0f%% softirq %.0f%% irq %.0f%% idle %.0f%%\n",
				$1, 100 * (d[2] + d[3]) / t, 100 * d[4] / t,
				100 * d[8] / t, 100 * d[7] / t, 100 * (d[5] + d[6]) / t
		}'
		echo "# self time by symbol, whole guest:"
		perf report -i "$OUT/$name.data" --stdio --no-children \
			--sort sym -g none --percent-limit 0.5 2>/dev/null |
			grep -v '^$' | head -n "$NTOP"
		for c in 0 1; do
			echo "# self time by symbol, CPU $c ($([ $c = 0 ] && echo server || echo client)):"
			perf report -i "$OUT/$name.data" --stdio --no-children \
				--cpu "$c" --sort sym -g none --percent-limit 1 \
				2>/dev/null | grep -v '^[#]' | grep -v '^$' |
				head -n "$NTOP"
		done
		echo "# self time by module (dso):"
		perf report -i "$OUT/$name.data" --stdio --no-children \
			--sort dso -g none 2>/dev/null | grep -v '^[#]' |
			grep -v '^$' | head -n 15
	} >"$OUT/$name.txt"
	rm -f "$OUT/$name.data.old"
	say "$name: $OUT/$name.txt"
}

for s in $SCEN; do
	case "$s" in
	write_bw_64k) run "$s" ib_write_bw -s 65536 -D "$SECS" ;;
	send_bw_64) run "$s" ib_send_bw -s 64 -D "$SECS" ;;
	write_lat_8) run "$s" ib_write_lat -s 8 -D "$SECS" ;;
	*) say "unknown scenario $s"; exit 2 ;;
	esac
done
