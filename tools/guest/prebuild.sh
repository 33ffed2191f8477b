#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# prebuild.sh - what the later stages of "make check" build, built ahead
# in the background while the first stages run (tools/check.sh starts
# it at nice 19): the debug kernel and the modules for it
# (check-debug.sh --build-only), the modules for Debian's 6.12 kernel
# (check-k612.sh --build-only).
#
# usage: tools/guest/prebuild.sh LANE...      (LANE: debug, k612)
#
# A lane that fails here is only logged: its stage builds again and
# reports the failure where it belongs.  Each lane records the digest of
# the sources it built, so a stage whose sources changed since rebuilds.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)

for lane in "$@"; do
	t0=$(date +%s)
	case $lane in
	debug)	"$HERE/check-debug.sh" --build-only ;;
	k612)	"$HERE/check-k612.sh" --build-only ;;
	*)	echo "prebuild: unknown lane $lane" >&2; continue ;;
	esac
	echo "prebuild: $lane: exit $? after $(($(date +%s) - t0)) s"
done
