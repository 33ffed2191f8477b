#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The provider's own end-to-end suite (tools/libmroce/tests/guest_dp.sh):
# dp_smoke between two devices (every opcode, CQ events and resize, ring
# wrap with 2000 pipelined SENDs, refused verbs, access errors and flush),
# mw_smoke (memory windows, type 1 and type 2B) and ibv_rc_pingpong
# between h1 and h2.
exec "$(dirname "$0")/../libmroce/tests/guest_dp.sh" 2000
