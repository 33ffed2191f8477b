#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
#
# The debug lane's self-test (tools/guest/check-debug.sh --selftest), run
# by run-guest-tests.sh with MROCE_KO pointing at the self-test module
# (debug-selftest/selftest.c).  This script itself passes: the harness must
# fail it for the kernel reports and the leaks the module causes.
. "$MROCE_TOP/tools/tests/lib.sh"

# shellcheck disable=SC2119 # no module parameters
load_mroce
# kmemleak reports only objects older than 5 s
sleep 6
check "rmmod the self-test module" unload_mroce
