#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 600
#
# ibv_rc_pingpong (rdma-core) over the RC data path: server in h1 on
# mroce1, client in h2 on mroce2, RoCE v2 GID of the IPv4 address (-g),
# 1 B, 4 KiB and 64 KiB messages, busy polling and CQ events (-e), the
# received buffers validated (-c).  Both sides must exit 0 and report the
# bytes and iterations exchanged; -N posts through the extended QP's
# ibv_wr_* API.  Then ibv_srq_pingpong: 16 RC QPs on
# each side whose receives all come from one shared receive queue
# (polling and CQ events, buffers validated); and ibv_ud_pingpong: UD
# QPs and address handles created by the provider, datagrams of up to
# the port MTU behind their GRH; last, ibv_xsrq_pingpong's clean refusal
# (XRC is declined).  MROCE_TEST_TRANSPORT=rxe runs the same
# against rdma_rxe (one device talking to itself, see rdma-lib.sh).
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

need_cmd ibv_rc_pingpong ibv_srq_pingpong ibv_ud_pingpong timeout ss
setup_rdma_pair

port=18515

# pingpong SIZE ITERS [-e]
pingpong() {
	local size=$1 iters=$2 what side f want bl il
	local -a ev=()
	[ -n "${3:-}" ] && ev=("$3")
	case ${3:-} in
	-e) what="ibv_rc_pingpong $size B x $iters with CQ events (-e)" ;;
	-N) what="ibv_rc_pingpong $size B x $iters through ibv_create_qp_ex and ibv_wr_* (-N)" ;;
	*) what="ibv_rc_pingpong $size B x $iters" ;;
	esac
	port=$((port + 1))
	run_pair "pingpong-${size}B${3:+-${3#-}}" "$port" 90 \
		ibv_rc_pingpong -d "$DEV_S" -g "$GID_S" -p "$port" \
			-s "$size" -n "$iters" -c "${ev[@]}" -- \
		ibv_rc_pingpong -d "$DEV_C" -g "$GID_C" -p "$port" \
			-s "$size" -n "$iters" -c "${ev[@]}" "$ADDR_S"
	pair_ok "$what" || return 1
	# "<2 x size x iters> bytes in S seconds = R Mbit/sec"
	# "<iters> iters in S seconds = L usec/iter"
	want=$((2 * size * iters))
	for side in server client; do
		f=$SRV_OUT
		[ "$side" = client ] && f=$CLI_OUT
		bl=$(grep -E '^[0-9]+ bytes in ' "$f")
		il=$(grep -E '^[0-9]+ iters in ' "$f")
		check_match "$what: $side reports $want bytes" "^$want bytes in " "$bl"
		check_match "$what: $side reports $iters iters" "^$iters iters in " "$il"
		check_eq "$what: $side found no invalid data (-c)" "" \
			"$(grep -i 'invalid data' "$f")"
	done
	check_match "$what: client used the GID of $ADDR_C" \
		"local address: .*GID ::ffff:$ADDR_C" "$(cat "$CLI_OUT")"
	log "RESULT $what: $(sed -n 's/^[0-9]* bytes in \([0-9.]*\) seconds = \([0-9.]*\) Mbit\/sec.*/\1 s, \2 Mbit\/s/p' "$CLI_OUT"), $(sed -n 's/^[0-9]* iters in [0-9.]* seconds = \([0-9.]*\) usec\/iter.*/\1 usec\/iter/p' "$CLI_OUT")"
}

pingpong 1 500
pingpong 4096 200
pingpong 65536 50
pingpong 1 500 -e
pingpong 4096 200 -e
pingpong 65536 50 -e
pingpong 4096 200 -N

# xpingpong TOOL DESC SIZE ITERS [ARGS...]: ibv_srq_pingpong or
# ibv_ud_pingpong (DESC says what it exercises), received data validated
xpingpong() {
	local tool=$1 desc=$2 size=$3 iters=$4 what side f il n
	shift 4
	what="$tool $desc, $size B x $iters${*:+ $*}"
	port=$((port + 1))
	run_pair "${tool#ibv_}-${size}B${1:+-${1#-}}" "$port" 120 \
		"$tool" -d "$DEV_S" -g "$GID_S" -p "$port" -s "$size" \
			-n "$iters" -c "$@" -- \
		"$tool" -d "$DEV_C" -g "$GID_C" -p "$port" -s "$size" \
			-n "$iters" -c "$@" "$ADDR_S"
	pair_ok "$what" || return 1
	for side in server client; do
		f=$SRV_OUT
		[ "$side" = client ] && f=$CLI_OUT
		il=$(grep -E '^[0-9]+ iters in ' "$f")
		n=${il%% *}
		check "$what: $side reports $iters iterations (${n:-none})" \
			test "${n:-0}" -ge "$iters"
		check_eq "$what: $side found no invalid data (-c)" "" \
			"$(grep -i 'invalid data' "$f")"
	done
	log "RESULT $what: $(sed -n 's/^[0-9]* iters in [0-9.]* seconds = \([0-9.]*\) usec\/iter.*/\1 usec\/iter/p' "$CLI_OUT")"
}

# 16 QPs per side whose receives come from one SRQ
xpingpong ibv_srq_pingpong "16 QPs on an SRQ" 4096 200 -q 16
xpingpong ibv_srq_pingpong "16 QPs on an SRQ" 1 500 -q 16 -e
# UD datagrams (SIZE <= the port MTU, 1024)
xpingpong ibv_ud_pingpong "UD" 1024 500
xpingpong ibv_ud_pingpong "UD" 64 500 -e
# and over the IPv6 GIDs (the TCP exchange stays on IPv4)
if [ "$RDMA_TRANSPORT" = mroce ]; then
	# gid6 DEV GID: the index of GID (sysfs spelling) in DEV's table
	gid6() {
		grep -lx "$2" "$RDMA_SYS/$1"/ports/1/gids/* 2>/dev/null |
			head -1 | sed 's,.*/,,'
	}
	g6s=$(gid6 "$DEV_S" 2001:0db8:0000:0000:0000:0000:0000:0001)
	g6c=$(gid6 "$DEV_C" 2001:0db8:0000:0000:0000:0000:0000:0002)
	check "IPv6 GIDs of $DEV_S and $DEV_C (${g6s:-none}, ${g6c:-none})" \
		test -n "$g6s" -a -n "$g6c"
	GID_S=$g6s GID_C=$g6c xpingpong ibv_ud_pingpong "UD over IPv6" 1024 200
fi

# XRC is declined (Documentation/mroce.rst, "Verbs not offered"): the
# device does not advertise it, and ibv_xsrq_pingpong stops cleanly at
# ibv_open_xrcd with EOPNOTSUPP (95) instead of half-working
if [ "$RDMA_TRANSPORT" = mroce ]; then
	need_cmd ibv_xsrq_pingpong ibv_devinfo
	check_eq "$DEV_S advertises no XRC in its device_cap_flags" "" \
		"$(in_server ibv_devinfo -v -d "$DEV_S" | grep -w XRC)"
	xs=$(in_server timeout 30 ibv_xsrq_pingpong -d "$DEV_S" -g "$GID_S" \
		-p $((port + 1)) 2>&1)
	xrc=$?
	check_eq "ibv_xsrq_pingpong exits 1 at once ($(echo "$xs" | head -1))" \
		1 "$xrc"
	check_match "ibv_xsrq_pingpong: the XRC domain is refused with EOPNOTSUPP" \
		"Couldn't Open the XRC Domain 95" "$xs"
fi
