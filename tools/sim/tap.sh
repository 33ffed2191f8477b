# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# TAP helpers of the simulator's checks (check-incast.sh, check-t52.sh).
# The caller sets n=0 fails=0 and ends with tap_end.

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

# the plan line; the status: 0 if every check passed
tap_end() {
	echo "1..$n"
	[ "$fails" -eq 0 ]
}
