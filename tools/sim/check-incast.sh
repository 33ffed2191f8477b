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
#
# The DCTCP baseline (cc=dctcp, ns-3's TcpDctcp) must finish every flow
# with none under a quarter of the fair share, its segments marked (ECT)
# and no connection given up; ns-3's own TCP defaults, as the control,
# must starve a flow.
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

# shellcheck source=tools/sim/tap.sh
. "$(dirname "$0")/tap.sh"

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

# The DCTCP baseline in the same incast: every flow finishes, none
# starves, no connection gives up.  Its control runs ns-3 3.37's defaults
# as the baseline had them (200 ms delayed ACKs against a 5 ms RTO, no
# ssthresh floor): flows crawl at one segment per RTO, and the check must
# see it.
dctcp=$(run cc=dctcp) || exit 1
echo "# dctcp: $(val "$dctcp" flows_done) of $(val "$dctcp" flows) flows," \
	"FCT p99 $(val "$dctcp" fct_p99_us) us, Jain $(val "$dctcp" incast_jain)," \
	"goodput min $(val "$dctcp" incast_goodput_min_gbps) Gbit/s," \
	"$(val "$dctcp" rto_expiries) RTOs, receiver port max $(val "$dctcp" bottleneck_q_depth_max_pkts)"
check "dctcp: all $N flows finish" "$(val "$dctcp" flows_done) == $N"
check "dctcp: no flow starves (min $(val "$dctcp" incast_goodput_min_gbps) Gbit/s >= 1/4 of $LINE_GBPS/$N)" \
	"$(val "$dctcp" incast_goodput_min_gbps) >= $LINE_GBPS / $N / 4"
check "dctcp: its segments are ECN-capable: the port marked ($(val "$dctcp" bottleneck_q_marks_total) marks)" \
	"$(val "$dctcp" bottleneck_q_marks_total) > 0"
check "dctcp: no connection gave up ($(val "$dctcp" tcp_aborted))" \
	"$(val "$dctcp" tcp_aborted) == 0"

old=$(run cc=dctcp tcp_delack=2 tcp_min_rto_us=5000 tcp_conn_timeout_us=5000 \
	tcp_ts=1 tcp_ssthresh_floor=0 tcp_data_retries=6) || exit 1
echo "# control, dctcp as ns-3's defaults: $(val "$old" flows_done) of $N flows," \
	"goodput min $(val "$old" incast_goodput_min_gbps) Gbit/s, $(val "$old" rto_expiries) RTOs"
check "control: ns-3's delayed ACKs starve a flow, and the check sees it" \
	"$(val "$old" flows_done) < $N || $(val "$old" incast_goodput_min_gbps) < $LINE_GBPS / $N / 4"

tap_end
