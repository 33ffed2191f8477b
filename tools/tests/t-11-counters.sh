#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 200
#
# The device counters are the spec's: the names in the "Device counters"
# table of Documentation/metaroce-spec.rst (normative) are exactly the
# hw counters `rdma statistic show` lists for an mroce device, in the same
# order, no more and no fewer.  Then a pingpong shows the acknowledgment
# counters count on both ends.
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

need_cmd rdma ibv_rc_pingpong awk
SPEC=$MROCE_TOP/Documentation/metaroce-spec.rst

# The first column of the table in the "Device counters" section: every
# ``name`` in a cell that starts with "   * - " up to the next "     - ".
spec_counters() {
	awk '
		/^Device counters$/ { sec = 1; next }
		sec && /^Per-QP statistics$/ { exit }
		!sec { next }
		/^   \* - / { col = 1; hdr = (n++ == 0) }
		/^     - / { col = 2 }
		col == 1 && !hdr {
			line = $0
			while (match(line, /``[a-z][a-z0-9_]*``/)) {
				print substr(line, RSTART + 2, RLENGTH - 4)
				line = substr(line, RSTART + RLENGTH)
			}
		}
	' "$SPEC"
}

setup_rdma_pair

spec=$(spec_counters)
dev=$(rdma statistic show link "$DEV_S/1" | awk '{
	for (i = 3; i < NF; i += 2) print $i }')
log "spec: $(echo "$spec" | wc -l) counters, $DEV_S: $(echo "$dev" | wc -l)"
check "the spec's table lists counters" test "$(echo "$spec" | wc -l)" -gt 40
only_spec=$(comm -23 <(sort <<<"$spec") <(sort <<<"$dev"))
only_dev=$(comm -13 <(sort <<<"$spec") <(sort <<<"$dev"))
check_eq "every counter of the spec is exported" "" "$only_spec"
check_eq "no counter is exported that the spec does not name" "" "$only_dev"
check_eq "in the spec's order" "$spec" "$dev"

# the acknowledgment counters move
a_tx=$(counter "$DEV_S" tx_acks)
a_rx=$(counter "$DEV_C" rx_acks)
port=18600
run_pair counters-pingpong "$port" 60 \
	ibv_rc_pingpong -d "$DEV_S" -g "$GID_S" -p "$port" -s 4096 -n 50 -- \
	ibv_rc_pingpong -d "$DEV_C" -g "$GID_C" -p "$port" -s 4096 -n 50 "$ADDR_S"
pair_ok "ibv_rc_pingpong 4 KiB x 50"
check "server sent ACKs (tx_acks)" \
	test "$(counter "$DEV_S" tx_acks)" -gt "$a_tx"
check "client received ACKs (rx_acks)" \
	test "$(counter "$DEV_C" rx_acks)" -gt "$a_rx"
check_eq "no ACK dropped as out of range" 0 \
	"$(( $(counter "$DEV_S" rx_drop_ack_range) + $(counter "$DEV_C" rx_drop_ack_range) ))"
