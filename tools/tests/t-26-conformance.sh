#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 600
#
# The MetaRoCE conformance suite (tools/conformance, issue 15) against
# mroce: mr-agent drives mroce1 in h1 through libibverbs on the tester's
# command; the tester, in h2 with no MetaRoCE device, speaks MetaRoCE to
# it from its own encoder over UDP (192.0.2.2, and 192.0.2.3 for the
# source-address check) and sniffs the answers on veth2.  Every case is a
# check of this test (one TAP line each, citing its rule IDs), then:
#   - the suite again with --break on three cases, whose key expectation
#     is inverted: each must fail (the cases look at what the device did),
#     and print its exchange decoded by the Wireshark dissector (tshark
#     with tools/wireshark/metaroce.lua), the pcaps kept in the results;
#   - the coverage table (rules with and without a case) is in the log.
# Environment: MROCE_CONF_CASES (comma list, default all).
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

C=$MROCE_TOP/tools/conformance
A=$C/mr-agent
[ -x "$A" ] || fail "$A not found: build it on the host first (make tools)"
need_cmd python3 rdma ip tshark
export RDMAV_DRIVERS=$MROCE_TOP/tools/libmroce/libmroce
[ -f "$RDMAV_DRIVERS-rdmav34.so" ] || fail "provider not built (make provider)"

# shellcheck disable=SC2119  # no module parameters
load_mroce
on_exit 'topo_clean; unload_mroce'
require "two hosts" topo_pair
require "add mroce1 on veth1 in h1" in_h1 rdma link add mroce1 type mroce netdev veth1
require "a second tester address" in_h2 ip addr add 192.0.2.3/24 dev veth2
require "h2 reaches h1" in_h2 ping -c 1 -W 2 192.0.2.1

OUT=$MROCE_RESULTS/$TEST_NAME
mkdir -p "$OUT" 2>/dev/null && [ -w "$OUT" ] || OUT=$(mktemp -d /tmp/"$TEST_NAME".XXXXXX)

# run_suite LOG [ARGS...]: agent in h1, tester in h2
run_suite() {
	local log=$1 apid rc
	shift
	in_h1 "$A" -a 192.0.2.1 -p 18515 -1 >"$log.agent" 2>&1 &
	apid=$!
	in_h2 timeout -k 5 400 python3 "$C/mrconform.py" --agent 192.0.2.1:18515 \
		--dev mroce1 --impl 192.0.2.1 --local 192.0.2.2 --alt 192.0.2.3 \
		--iface veth2 "$@" >"$log" 2>&1
	rc=$?
	wait "$apid"
	return $rc
}

cases=()
[ -n "${MROCE_CONF_CASES:-}" ] && cases=(--cases "$MROCE_CONF_CASES")
start=$(date +%s)
run_suite "$OUT/suite.log" "${cases[@]}"
rc=$?
log "suite exit $rc, $(($(date +%s) - start)) s"
cat "$OUT/suite.log"
while read -r line; do
	case "$line" in
	"ok "*"# SKIP"*) log "SKIPPED (neither passed nor failed): ${line#ok * - }" ;;
	"ok "*) _t_pass "${line#ok * - }" ;;
	"not ok "*"# TODO"*) log "known disagreement: ${line#not ok * - }" ;;
	"not ok "*) _t_fail "${line#not ok * - }" ;;
	esac
done <"$OUT/suite.log"
check_match "the suite closed with its count" '^[0-9]+ passed, [0-9]+ failed' \
	"$(tail -n 1 "$OUT/suite.log")"
log "RESULT $(tail -n 1 "$OUT/suite.log"); $(grep '^# coverage:' "$OUT/suite.log")"

# the cases must be able to fail
if [ -z "${MROCE_CONF_CASES:-}" ]; then
	brk=p2-version,dup-send-reacked-not-redelivered,sack-reports-exactly-what-arrived
	mkdir -p "$OUT/broken-pcap"
	run_suite "$OUT/broken.log" --cases "$brk" --break "$brk" \
		--pcap-dir "$OUT/broken-pcap"
	sed 's/^/  broken| /' "$OUT/broken.log" | grep -E 'ok [0-9]|passed'
	check_eq "three broken expectations, three failures" "0 passed, 3 failed" \
		"$(tail -n 1 "$OUT/broken.log")"
	check_eq "each failure prints its exchange, decoded by metaroce.lua" 3 \
		"$(grep -c '^# exchange: [0-9]* packets, decoded by metaroce.lua' "$OUT/broken.log")"
	check "the decoded exchanges show MetaRoCE packets both ways" sh -c \
		"grep -q '^#  .*192.0.2.2 → 192.0.2.1 *MetaRoCE' '$OUT/broken.log' &&
		 grep -q '^#  .*192.0.2.1 → 192.0.2.2 *MetaRoCE' '$OUT/broken.log'"
	check "p2-version's exchange shows the version-2 packet it sent" \
		grep -q '^#  .*MetaRoCE version 2' "$OUT/broken.log"
	check "the exchanges are kept as pcaps" \
		test "$(find "$OUT/broken-pcap" -name '*.pcap' | wc -l)" = 3
fi
