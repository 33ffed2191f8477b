#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 1200
#
# Packet fuzzing (issue 12, "Fuzzing in the project" and "Seen from the
# wire"): tools/fuzz/mroce-pktfuzz, in an attacker namespace h3 on the
# same bridge as h1 and h2 (topo_star 3), sends malformed and forged
# MetaRoCE packets at mroce1 (h1, 192.0.2.1) and mroce2 (h2, 192.0.2.2),
# with its own address or spoofing the hosts', while tools/mroce-verify
# runs verified transfers between h1 and h2 (one run after the other,
# every byte checked).  One fuzzer case at a time (mroce-pktfuzz --list);
# each gets its own verdict line, and the test fails if any case fails:
#
#   ok N - CASE
#   not ok N - CASE # why
#
# A case is ok when all of these hold:
#   fuzzer    mroce-pktfuzz's own verdict: every counter the spec names
#             for what was sent moved by the predicted amount (P1..P12 by
#             the fuzzer's model of the spec, rx_drop_src_mismatch,
#             rx_drop_ack_range, rx_drop_resp_unexpected,
#             rx_drop_psn_window, tx_naks_inv_req ... by what was forged),
#             counters nothing else raises stayed put, and during "holds"
#             (the hosts' MetaRoCE traffic dropped at the bridge for
#             ~0.1 s, so nothing can be delivered) no requester counted
#             undelivered packets as delivered, no responder accepted a
#             forged request, no QP failed, no device answered
#   transfer  every mroce-verify run during the case ended intact or
#             failed with an error status (a completion with an error);
#             never MISMATCH (a WQE completed IBV_WC_SUCCESS but its data
#             is not at the peer), never a receiver waiting for data whose
#             send completed, never a stall without an error completion
#   kernel    no warning, BUG, oops, KASAN/UBSAN, lockup in dmesg
# The case control-valid-ack is the opposite check: an ACK forged from the
# right source (which no check can tell from the peer's) must make the
# hold oracle see "delivered" and some transfer fail; if none does, the
# oracle is blind and the other verdicts mean nothing.  The failure is
# silent loss when a forged ACK covers the end of a message (the send
# completes, the receive never does), and an error status when it ends
# inside one: the requester goes on from the forged snd_una, the peer's
# real ACKs are all below it (dropped, rx_drop_ack_range) and the
# requester runs out of retries.  Where the ACK lands is chance.  After the
# last case both devices are deleted and mroce must unload.
#
# Environment:
#   MROCE_FUZZ_SECONDS  fuzzing time of the whole run (default 48: about
#                       1.6 s per case, flood twice that).  Long runs need
#                       more than this file's timeout: run the script
#                       directly in the guest, e.g.
#                         tools/guest/mroce-vm --timeout 7200 -- env \
#                           MROCE_FUZZ_SECONDS=3600 tools/tests/t-60-pktfuzz.sh
#   MROCE_FUZZ_SEED     seed (default 20261201; the fuzzer derives each
#                       case's seed from it and the case name)
#   MROCE_FUZZ_CASES    comma list of cases (default: all)
# Logs: $MROCE_RESULTS/t-60-pktfuzz/CASE.{fuzz,runs,N.server,N.client}.log
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

F=$MROCE_TOP/tools/fuzz/mroce-pktfuzz
V=$MROCE_TOP/tools/mroce-verify/mroce-verify
for b in "$F" "$V"; do
	[ -x "$b" ] || fail "$b not found: build it on the host first (make tools)"
done
need_cmd rdma ip ss timeout
need_module sch_ingress cls_flower act_gact
export RDMAV_DRIVERS=$MROCE_TOP/tools/libmroce/libmroce
[ -f "$RDMAV_DRIVERS-rdmav34.so" ] || fail "provider not built (make provider)"

TOTAL=${MROCE_FUZZ_SECONDS:-48}
SEED=${MROCE_FUZZ_SEED:-20261201}
KERNEL_TROUBLE='(Call Trace:|BUG:|WARNING:|Oops|general protection fault|KASAN|UBSAN:|kernel BUG at|soft lockup|hung_task|blocked for more than|detected stall|refcount_t:|list_(add|del) corruption)'

OUT=$MROCE_RESULTS/$TEST_NAME
mkdir -p "$OUT" 2>/dev/null && [ -w "$OUT" ] || OUT=$(mktemp -d /tmp/"$TEST_NAME".XXXXXX)
rm -f "$OUT"/*.log "$OUT"/*.runs "$OUT"/stop

# shellcheck disable=SC2119  # no module parameters
load_mroce
on_exit 'ip netns exec sw tc qdisc del dev swp1 ingress 2>/dev/null; ip netns exec sw tc qdisc del dev swp2 ingress 2>/dev/null; topo_clean; unload_mroce'
require "three hosts on a bridge (h3: the attacker)" topo_star 3
require "add mroce1 on veth1 in h1" in_h1 rdma link add mroce1 type mroce netdev veth1
require "add mroce2 on veth2 in h2" in_h2 rdma link add mroce2 type mroce netdev veth2
GID1=$(gid_index mroce1 192.0.2.1) || fail "mroce1 has no GID ::ffff:192.0.2.1"
GID2=$(gid_index mroce2 192.0.2.2) || fail "mroce2 has no GID ::ffff:192.0.2.2"
# the attacker reaches both hosts
require "h3 reaches h1" ip netns exec h3 ping -c 1 -W 2 192.0.2.1
require "h3 reaches h2" ip netns exec h3 ping -c 1 -W 2 192.0.2.2
# The holds' ingress qdiscs exist for the whole test, made here before any
# traffic: the fuzzer makes them only when they are missing and then
# deletes them as it exits, once per case.  The first ingress qdisc of the
# system flips the static key ingress_needed_key, and each flip rewrites
# the branch in __netif_receive_skb_core (text_poke_bp: an int3 first)
# while both CPUs receive there.  Under TCG that hung the guest: both
# CPUs stuck exactly on that branch's address (soft lockup, stops 18 and
# 19), consistent with a stale translation of the int3 re-executed after
# the patch finished, which kprobe_int3_handler() then backs up over.
require "ingress qdisc on swp1" ip netns exec sw tc qdisc add dev swp1 ingress
require "ingress qdisc on swp2" ip netns exec sw tc qdisc add dev swp2 ingress
# room for bursts in the receive backlog (the flood, retransmission storms)
backlog=$(sysctl -n net.core.netdev_max_backlog)
on_exit "sysctl -qw net.core.netdev_max_backlog=$backlog"
sysctl -qw net.core.netdev_max_backlog=10000

mapfile -t CASES < <("$F" --list | awk '{ print $1 }')
if [ -n "${MROCE_FUZZ_CASES:-}" ]; then
	IFS=, read -r -a CASES <<<"$MROCE_FUZZ_CASES"
fi
[ ${#CASES[@]} -gt 0 ] || fail "no fuzzer cases"
PER=$(awk -v t="$TOTAL" -v n="${#CASES[@]}" 'BEGIN { p = t / (n + 1); printf "%.2f", p < 1 ? 1 : p }')
log "seed $SEED, ${#CASES[@]} cases, $PER s each (flood twice), $TOTAL s of fuzzing in all; logs in $OUT"

# mroce-verify options per case: what keeps the right kind of work in flight.
# A hold drops everything, so a case only finds its target when the request
# outstanding as the hold begins is of the right kind: atomic cases run
# atomics only, in long runs (--iters 1024), so that their holds fall in a
# transfer, not in the start of the next mroce-verify pair.  With
# "atomic,write" and 32 messages a run took 0.7 s of a 1.4 s case, and
# once (CI of 2c61a2d) no ATOMIC was outstanding in any of 13 holds.
# (Longer runs for the other groups coincided with send-wrong-rwqe and
# read-dup-flood failures in one CI run; they keep the default.)
verify_ops() {
	case "$1" in
	read-resp-*|read-dup-*) echo "--ops read" ;;
	atomic-resp-*) echo "--ops atomic --iters 1024" ;;
	ack-*|nak-*|req-*|write-*|send-*|control-*|silent-*)
		echo "--ops write,write_imm,send,send_imm" ;;
	*) echo "--ops all,-errors,-solicited,-rnr" ;;
	esac
}

PORT=19000
# verify_loop CASE: mroce-verify pairs, one after the other, until $OUT/stop
verify_loop() {
	local c=$1 i=0 spid src crc n tmo=8
	local -a ops
	read -r -a ops <<<"$(verify_ops "$c")"
	[ "$c" = control-valid-ack ] && tmo=6
	while [ ! -e "$OUT/stop" ]; do
		i=$((i + 1))
		PORT=$((PORT + 1))
		ip netns exec h1 timeout -k 5 120 "$V" -d mroce1 -g "$GID1" --server \
			-p "$PORT" >"$OUT/$c.$i.server.log" 2>&1 </dev/null &
		spid=$!
		topo_wait_listen h1 "$PORT" 10 "$spid"
		ip netns exec h2 timeout -k 5 120 "$V" -d mroce2 -g "$GID2" \
			--client 192.0.2.1 -p "$PORT" --seed $((SEED + i)) \
			--iters 32 --timeout "$tmo" --strict "${ops[@]}" \
			>"$OUT/$c.$i.client.log" 2>&1 </dev/null
		crc=$?
		if [ $crc != 0 ]; then
			for n in $(seq 50); do
				kill -0 "$spid" 2>/dev/null || break
				sleep 0.1
			done
			kill "$spid" 2>/dev/null
		fi
		wait "$spid"
		src=$?
		echo "$i $src $crc" >>"$OUT/$c.runs"
	done
}

# classify CASE RUN: intact, error-status STATUS, silent-loss WHY, stall WHY, other WHY
classify() {
	local s=$OUT/$1.$2.server.log c=$OUT/$1.$2.client.log st
	if grep -qh 'MISMATCH' "$s" "$c"; then
		echo "silent-loss $(grep -h -m1 'MISMATCH' "$s" "$c" | head -n 1 | cut -c1-160)"
	elif grep -qh "(the requester's completed)" "$s" "$c"; then
		echo "silent-loss receive completions missing although the requester's completed"
	elif st=$(grep -ohE 'completion with status [^(]+ \(' "$s" "$c" | head -n 1) && [ -n "$st" ]; then
		st=${st#completion with status }
		echo "error-status ${st% (}"
	elif grep -qh 'timeout:' "$s" "$c"; then
		echo "stall $(grep -h -m1 'timeout:' "$s" "$c" | head -n 1 | sed 's/.*FAIL: //' | cut -c1-160)"
	else
		echo "other $(grep -h -m1 'FAIL' "$s" "$c" | head -n 1 | sed 's/.*FAIL: //' | cut -c1-160)"
	fi
}

declare -A VERDICT WHY PKTS XFER MOVED
NUM=0
for c in "${CASES[@]}"; do
	NUM=$((NUM + 1))
	secs=$PER
	[ "$c" = flood ] && secs=$(awk -v p="$PER" 'BEGIN { printf "%.2f", 2 * p }')
	log "=== case $NUM: $c (${secs}s)"
	rm -f "$OUT/stop"
	k0=$(dmesg | wc -l)
	verify_loop "$c" &
	vpid=$!
	ip netns exec h3 "$F" --case "$c" --seed "$SEED" --seconds "$secs" \
		--dev mroce1=192.0.2.1,2001:db8::1@h1 \
		--dev mroce2=192.0.2.2,2001:db8::2@h2 \
		--hold sw:swp1,swp2 --sniff sw:swp1,swp2 \
		>"$OUT/$c.fuzz.log" 2>&1 </dev/null
	frc=$?
	touch "$OUT/stop"
	wait "$vpid"
	sed 's/^/  fuzz| /' "$OUT/$c.fuzz.log"

	why=()
	fv=$(sed -n "s/^mroce-pktfuzz: verdict $c: //p" "$OUT/$c.fuzz.log")
	if [ -z "$fv" ]; then
		why+=("fuzzer: no verdict (exit $frc): $(grep -m1 'error:' "$OUT/$c.fuzz.log")")
	elif [ "$fv" != ok ]; then
		why+=("fuzzer: ${fv#FAIL: }")
	fi

	# the verified transfers
	xfer=()
	runs=0
	seen=0
	while read -r i src crc; do
		[ -n "$i" ] || continue
		runs=$((runs + 1))
		if [ "$src" = 0 ] && [ "$crc" = 0 ]; then
			out=intact
		else
			out=$(classify "$c" "$i")
			log "$c: mroce-verify run $i (server exit $src, client exit $crc): $out"
			sed 's/^/  server| /' "$OUT/$c.$i.server.log" | tail -n 5
			sed 's/^/  client| /' "$OUT/$c.$i.client.log" | tail -n 5
		fi
		xfer+=("${out%% *}")
		case "$out" in
		intact) ;;
		error-status*) seen=$((seen + 1)) ;;
		silent-loss*) seen=$((seen + 1))
			[ "$c" = control-valid-ack ] || why+=("transfer run $i: $out") ;;
		*) [ "$c" = control-valid-ack ] || why+=("transfer run $i: $out") ;;
		esac
	done <"$OUT/$c.runs"
	[ $runs -gt 0 ] || why+=("no verified transfer ran")
	if [ "$c" = control-valid-ack ] && [ $seen = 0 ]; then
		why+=("control: no run failed although forged ACKs took effect: the end-to-end check is blind")
	fi

	trouble=$(dmesg | tail -n +$((k0 + 1)) | grep -E "$KERNEL_TROUBLE" | head -n 3)
	[ -z "$trouble" ] || why+=("kernel: $(echo "$trouble" | head -n 1 | sed 's/^\[[^]]*\] *//')")

	PKTS[$c]=$(sed -n "s/^mroce-pktfuzz: counts $c: packets=\([0-9]*\).*/\1/p" "$OUT/$c.fuzz.log")
	XFER[$c]=$(printf '%s\n' "${xfer[@]}" | sort | uniq -c | awk '{ printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1 }')
	MOVED[$c]=$(sed -n "s/^mroce-pktfuzz: counter $c: \([^ ]*\) \([^ ]*\) +\([1-9][0-9]*\) .*/\1 \2 +\3/p" \
		"$OUT/$c.fuzz.log" | paste -sd, - | sed 's/,/, /g')
	if [ ${#why[@]} = 0 ]; then
		VERDICT[$c]=ok
		WHY[$c]=
	else
		VERDICT[$c]="not ok"
		WHY[$c]=$(printf '%s; ' "${why[@]}")
		WHY[$c]=${WHY[$c]%; }
	fi
	check_eq "pktfuzz $c" "" "${WHY[$c]}"
	log "RESULT $c: ${VERDICT[$c]}, ${PKTS[$c]:-0} packets, transfers: ${XFER[$c]:-none}; counters moved: ${MOVED[$c]:-none}"
done

# the devices go away and the module unloads after all that
check "delete mroce1" in_h1 rdma link delete mroce1
check "delete mroce2" in_h2 rdma link delete mroce2
for n in $(seq 20); do
	rmmod mroce 2>/dev/null && break
	sleep 0.5
done
check "rmmod mroce after fuzzing" test ! -d /sys/module/mroce

echo "# ---- pktfuzz verdicts (seed $SEED, $TOTAL s of fuzzing) ----"
echo "1..$NUM"
NUM=0
for c in "${CASES[@]}"; do
	NUM=$((NUM + 1))
	if [ "${VERDICT[$c]}" = ok ]; then
		echo "ok $NUM - $c # ${PKTS[$c]:-0} packets; transfers ${XFER[$c]:-none}"
	else
		echo "not ok $NUM - $c # ${WHY[$c]}"
	fi
done
