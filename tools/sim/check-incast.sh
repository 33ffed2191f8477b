#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# check-incast.sh MROCE_SIM: the model end to end, 16 hosts, 8-to-1
# incast through one receiver port (scenarios/check-incast16.conf).
#
# metaroce must: finish every flow; share fairly (Jain's index of the
# flows' goodputs >= JAIN_MIN, no flow below a quarter of the fair
# share); keep the receiver's port short once the first round trip is
# over (no drops, at most half the buffer: the receiver's port, which
# mroce-sim reports as bottleneck_q).  cc none, run as the
# control, must break the queue bound: if it does not, the check cannot
# tell a working congestion control from none and fails.
set -u
SIM=${1:?usage: check-incast.sh MROCE_SIM}
DIR=$(dirname "$0")
CONF=$DIR/scenarios/check-incast16.conf
JAIN_MIN=0.8
BUFFER=100
N=8
LINE_GBPS=100
fails=0
n=0

# val OUTPUT KEY: the value of KEY in mroce-sim's output
val() {
	awk -v k="$2" '$1 == k { print $2 }' <<<"$1"
}

# check WHAT AWK-CONDITION: ok/not ok
check() {
	n=$((n + 1))
	if awk "BEGIN { exit !($2) }"; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"
		fails=$((fails + 1))
	fi
}

run() {
	"$SIM" "$CONF" "$@" || { echo "not ok - mroce-sim $*: exit $?"; exit 1; }
}

out=$(run) || exit 1
echo "# metaroce: $(val "$out" flows_done) of $(val "$out" flows) flows," \
	"FCT p99 $(val "$out" fct_p99_us) us, Jain $(val "$out" incast_jain)," \
	"goodput min $(val "$out" incast_goodput_min_gbps) Gbit/s," \
	"receiver port after 200 us max $(val "$out" bottleneck_q_depth_max_pkts) p99" \
	"$(val "$out" bottleneck_q_depth_p99_pkts), drops $(val "$out" bottleneck_q_drops), settled after" \
	"$(val "$out" incast_queue_settle_rtts) RTTs"
check "metaroce: all $N flows finish" "$(val "$out" flows_done) == $N"
check "metaroce: fair shares (Jain $(val "$out" incast_jain) >= $JAIN_MIN)" \
	"$(val "$out" incast_jain) >= $JAIN_MIN"
check "metaroce: no flow starves (min $(val "$out" incast_goodput_min_gbps) Gbit/s >= 1/4 of $LINE_GBPS/$N)" \
	"$(val "$out" incast_goodput_min_gbps) >= $LINE_GBPS / $N / 4"
check "metaroce: no drops after the first round trip ($(val "$out" bottleneck_q_drops))" \
	"$(val "$out" bottleneck_q_drops) == 0"
check "metaroce: queue bounded (max $(val "$out" bottleneck_q_depth_max_pkts) <= $BUFFER / 2 packets)" \
	"$(val "$out" bottleneck_q_depth_max_pkts) <= $BUFFER / 2"
check "metaroce: the port marked ECN ($(val "$out" bottleneck_q_marks_total) marks)" \
	"$(val "$out" bottleneck_q_marks_total) > 0"

none=$(run cc=none) || exit 1
echo "# control, cc none: queue max $(val "$none" bottleneck_q_depth_max_pkts)," \
	"drops $(val "$none" bottleneck_q_drops)"
check "control: cc none breaks the queue bound the check asserts" \
	"$(val "$none" bottleneck_q_depth_max_pkts) > $BUFFER / 2 || $(val "$none" bottleneck_q_drops) > 0"

echo "1..$n"
[ "$fails" -eq 0 ]
