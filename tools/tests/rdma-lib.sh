# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# rdma-lib.sh - RDMA helpers for the guest data-path tests (t-2x).  Source
# it after lib.sh:
#
#	. "$(dirname "$0")/lib.sh"
#	. "$(dirname "$0")/rdma-lib.sh"
#
# Needs bash.  One switch, MROCE_TEST_TRANSPORT:
#   mroce (default)  hosts h1 and h2 (topo_pair), mroce1 on veth1 in h1
#                    (server, 192.0.2.1) and mroce2 on veth2 in h2 (client,
#                    192.0.2.2), provider from the build tree
#                    (RDMAV_DRIVERS=$MROCE_TOP/tools/libmroce/libmroce)
#   rxe              Debian's rdma_rxe for comparison, and to validate the
#                    tests themselves: 6.1's rxe works in the initial
#                    namespace only, so ONE device rxe0 on a veth (vr0,
#                    192.0.2.10) in the root namespace talks to itself;
#                    server and client both use it
#
# setup_rdma_pair does the above and exports:
#   RDMA_TRANSPORT   mroce or rxe
#   SERVER_NS        namespace of the server (empty: the root namespace)
#   CLIENT_NS        namespace of the client (empty: the root namespace)
#   DEV_S, DEV_C     server's and client's RDMA devices
#   GID_S, GID_C     their GID indexes of the IPv4-mapped RoCE v2 GID
#   ADDR_S, ADDR_C   their IPv4 addresses (the client connects to ADDR_S)
# and registers the cleanup with on_exit.
#
# Other helpers:
#   gid_index DEV IPV4      index of ::ffff:IPV4 (type RoCE v2) in DEV's
#                           port-1 GID table, waiting up to 5 s for it
#   in_server CMD... / in_client CMD...   run CMD in that side's namespace
#   wait_listen PORT [SEC [PID]]  wait until a TCP socket listens on
#                           PORT in the server's namespace (default 20 s;
#                           PID: the server's, read its /proc/PID/net;
#                           topo.sh's topo_wait_listen)
#   run_pair NAME PORT SEC SERVER_CMD... -- CLIENT_CMD...
#                           start SERVER_CMD in the server's namespace,
#                           wait for it to listen on PORT, run CLIENT_CMD
#                           in the client's namespace, both under
#                           timeout SEC; sets SRV_RC, CLI_RC, SRV_OUT,
#                           CLI_OUT (file names) and prints both outputs
#                           into the test log.  A server still running 5 s
#                           after its client failed is stopped (SIGTERM,
#                           exit 143) rather than left to time out
#   pair_ok DESC            check that both sides of the last run_pair
#                           exited 0; on failure explain it
#   rdma_diag               device state and counters, for failure logs
#   verify_pair NAME MAX SEED   mroce-verify SEND, WRITE and READ of 0 B ..
#                           MAX between the server and the client (60
#                           messages, every byte checked, both sides'
#                           summaries compared, phase basic ok, no
#                           MISMATCH); logs "RESULT NAME: ..."
#   pingpong_pair NAME SIZE ibv_rc_pingpong SIZE B x 50 with --chk
#   Both take their TCP port from RDMA_PORT (default 18700), one each.
#   malformed_drops         packets mroce1 and mroce2 dropped as malformed
#                           (the parser's rx_drop_* counters, no checksum,
#                           a foreign GSO buffer); every non-zero rx_drop_*
#                           counter goes to the log
#   dumpcap_start NS DEV FILTER PCAP SNAPLEN / dumpcap_stop
#                           capture on DEV in namespace NS into PCAP, and
#                           wait until it captures / end it (SIGINT)
#   wait_for_word DESC WORD FILE   wait up to 20 s for WORD in FILE (a
#                           background helper saying it is ready), then
#                           require it

RDMA_TRANSPORT=${MROCE_TEST_TRANSPORT:-mroce}
RDMA_SYS=/sys/class/infiniband
RDMA_OUTDIR=
_rdma_run=0

# gid_index DEV IPV4: one grep over the table (rxe has 1024 entries; a
# loop of cat would take minutes under TCG).
gid_index() {
	local dev=$1 ip=$2 gid f i n a b c d
	IFS=. read -r a b c d <<<"$ip"
	gid=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' \
		"$a" "$b" "$c" "$d")
	for n in $(seq 50); do
		# shellcheck disable=SC2013  # file names, no blanks
		for f in $(grep -slx "$gid" "$RDMA_SYS/$dev"/ports/1/gids/* 2>/dev/null); do
			i=${f##*/}
			if [ "$(cat "$RDMA_SYS/$dev/ports/1/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ]; then
				echo "$i"
				return 0
			fi
		done
		[ "$n" = 50 ] || sleep 0.1
	done
	return 1
}

in_ns() {	# in_ns NS CMD...: NS empty = the root namespace
	local ns=$1
	shift
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$@"
	else
		"$@"
	fi
}
in_server() { in_ns "$SERVER_NS" "$@"; }
in_client() { in_ns "$CLIENT_NS" "$@"; }

_rdma_setup_mroce() {
	need_cmd rdma ip
	load_mroce
	export RDMAV_DRIVERS=$MROCE_TOP/tools/libmroce/libmroce
	[ -f "$RDMAV_DRIVERS-rdmav34.so" ] ||
		fail "$RDMAV_DRIVERS-rdmav34.so not found: build the provider on the host first (make provider)"
	on_exit 'topo_clean; unload_mroce'
	topo_pair || fail "topo_pair failed"
	require "add mroce1 on veth1 in h1" \
		in_h1 rdma link add mroce1 type mroce netdev veth1
	require "add mroce2 on veth2 in h2" \
		in_h2 rdma link add mroce2 type mroce netdev veth2
	SERVER_NS=h1 CLIENT_NS=h2
	DEV_S=mroce1 DEV_C=mroce2
	ADDR_S=$(topo_ip4 1) ADDR_C=$(topo_ip4 2)
}

_rdma_setup_rxe() {
	need_cmd rdma ip
	[ -d /sys/module/rdma_rxe ] || on_exit 'modprobe -r rdma_rxe 2>/dev/null'
	need_module rdma_rxe
	on_exit 'rdma link delete rxe0 2>/dev/null; ip link del vr0 2>/dev/null'
	ip link set lo up
	require "veth vr0/vr1 in the root namespace" \
		ip link add vr0 type veth peer name vr1
	ip addr add 192.0.2.10/24 dev vr0
	ip link set vr0 up
	ip link set vr1 up
	require "add rxe0 on vr0" rdma link add rxe0 type rxe netdev vr0
	SERVER_NS='' CLIENT_NS=''
	DEV_S=rxe0 DEV_C=rxe0
	ADDR_S=192.0.2.10 ADDR_C=192.0.2.10
}

setup_rdma_pair() {
	case "$RDMA_TRANSPORT" in
	mroce) _rdma_setup_mroce ;;
	rxe) _rdma_setup_rxe ;;
	*) fail "MROCE_TEST_TRANSPORT must be mroce or rxe, not '$RDMA_TRANSPORT'" ;;
	esac
	GID_S=$(gid_index "$DEV_S" "$ADDR_S") ||
		fail "$DEV_S has no RoCE v2 GID ::ffff:$ADDR_S (see $RDMA_SYS/$DEV_S/ports/1/gids)"
	GID_C=$(gid_index "$DEV_C" "$ADDR_C") ||
		fail "$DEV_C has no RoCE v2 GID ::ffff:$ADDR_C"
	export RDMA_TRANSPORT SERVER_NS CLIENT_NS DEV_S DEV_C GID_S GID_C \
		ADDR_S ADDR_C
	RDMA_OUTDIR=$MROCE_RESULTS/$TEST_NAME
	mkdir -p "$RDMA_OUTDIR" 2>/dev/null && [ -w "$RDMA_OUTDIR" ] ||
		RDMA_OUTDIR=$(mktemp -d /tmp/"$TEST_NAME".XXXXXX)
	log "transport $RDMA_TRANSPORT: server $DEV_S GID[$GID_S] $ADDR_S in ${SERVER_NS:-the root namespace}, client $DEV_C GID[$GID_C] $ADDR_C in ${CLIENT_NS:-the root namespace}; outputs in $RDMA_OUTDIR"
}

wait_listen() {	# wait_listen PORT [SEC [PID]] (PID: the server's)
	topo_wait_listen "$SERVER_NS" "$1" "${2:-20}" "${3:-}"
}

# run_pair NAME PORT SEC SERVER_CMD... -- CLIENT_CMD...
run_pair() {
	local name=$1 port=$2 sec=$3 spid t0 t1 i
	local -a scmd=() ccmd=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		scmd+=("$1")
		shift
	done
	[ "${1:-}" = -- ] && shift
	ccmd=("$@")
	_rdma_run=$((_rdma_run + 1))
	i=$(printf '%02d' "$_rdma_run")
	SRV_OUT=$RDMA_OUTDIR/$i-$name.server.log
	CLI_OUT=$RDMA_OUTDIR/$i-$name.client.log
	echo "+ [server${SERVER_NS:+ in $SERVER_NS}] ${scmd[*]}"
	echo "+ [client${CLIENT_NS:+ in $CLIENT_NS}] ${ccmd[*]}"
	t0=$(date +%s.%N)
	# $! must be timeout(1) itself (ip netns exec execs it) so that a
	# SIGTERM reaches the server through it
	if [ -n "$SERVER_NS" ]; then
		ip netns exec "$SERVER_NS" timeout -k 5 "$sec" "${scmd[@]}" \
			>"$SRV_OUT" 2>&1 </dev/null &
	else
		timeout -k 5 "$sec" "${scmd[@]}" >"$SRV_OUT" 2>&1 </dev/null &
	fi
	spid=$!
	if wait_listen "$port" 20 "$spid"; then
		in_client timeout -k 5 "$sec" "${ccmd[@]}" >"$CLI_OUT" 2>&1 </dev/null
		CLI_RC=$?
	else
		echo "server did not listen on TCP port $port within 20 s" >"$CLI_OUT"
		CLI_RC=125
	fi
	if [ "$CLI_RC" != 0 ]; then	# a server may wait for its peer forever
		for i in $(seq 25); do
			kill -0 "$spid" 2>/dev/null || break
			sleep 0.2
		done
		kill -TERM "$spid" 2>/dev/null
	fi
	wait "$spid"
	SRV_RC=$?
	t1=$(date +%s.%N)
	PAIR_SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	sed 's/^/  server| /' "$SRV_OUT"
	sed 's/^/  client| /' "$CLI_OUT"
	log "$name: server exit $SRV_RC, client exit $CLI_RC, ${PAIR_SECS}s"
}

_rdma_why() {	# _rdma_why RC: words for an exit status
	case "$1" in
	0) echo "ok" ;;
	124|137) echo "timed out" ;;
	125) echo "not started" ;;
	143) echo "stopped after the client failed" ;;
	*) echo "exit $1" ;;
	esac
}

rdma_diag() {
	local d
	log "--- diagnostics ($RDMA_TRANSPORT)"
	rdma link show 2>&1 | sed 's/^/# /'
	for d in $(printf '%s\n' "$DEV_S" "$DEV_C" | sort -u); do
		[ -n "$d" ] || continue
		rdma statistic show link "$d/1" 2>&1 | sed 's/^/# /'
		rdma resource show qp link "$d/1" 2>&1 | head -n 20 | sed 's/^/# /'
	done
	dmesg | grep -iE 'mroce|rxe|infiniband|rdma|WARNING|BUG' | tail -n 20 |
		sed 's/^/# dmesg: /'
}

# pair_ok DESC: both sides of the last run_pair succeeded.
pair_ok() {
	local desc=$1 out
	check_eq "$desc" "server ok, client ok" \
		"server $(_rdma_why "$SRV_RC"), client $(_rdma_why "$CLI_RC")" &&
		return 0
	log "$desc: outputs above and in $RDMA_OUTDIR"
	out=$(cat "$SRV_OUT" "$CLI_OUT" 2>/dev/null)
	if printf '%s\n' "$out" | grep -Eqi "create (QP|CQ)|ibv_create_(qp|cq)|alloc(ate)? (PD|MR)|reg(ister)?_?mr|modify QP|ibv_modify_qp"; then
		log "$desc: failed while setting up verbs objects (QP/CQ/MR creation or QP state change) on $RDMA_TRANSPORT -- see the first error line above"
	elif [ "$CLI_RC" = 124 ]; then
		log "$desc: the client made no progress until its timeout: is the data path delivering packets and completions? (counters below)"
	fi
	[ "$RDMA_TRANSPORT" = mroce ] && rdma_diag
	return 1
}

RDMA_PORT=${RDMA_PORT:-18700}
_RDMA_VERIFY_RE='^mroce-verify: ([0-9]+) messages, ([0-9]+) bytes verified'

verify_pair() {	# verify_pair NAME MAX_SIZE SEED
	local name=$1 max=$2 seed=$3 ssum csum
	local v=$MROCE_TOP/tools/mroce-verify/mroce-verify
	RDMA_PORT=$((RDMA_PORT + 1))
	run_pair "$name" "$RDMA_PORT" 400 \
		"$v" -d "$DEV_S" -g "$GID_S" --server -p "$RDMA_PORT" -- \
		"$v" -d "$DEV_C" -g "$GID_C" --client "$ADDR_S" -p "$RDMA_PORT" \
			--timeout 60 --strict --seed "$seed" --iters 60 \
			--max-size "$max" --ops send,write,read
	pair_ok "mroce-verify $name: SEND, WRITE, READ of 0 B .. $max" || return 1
	# the summaries without their times
	ssum=$(grep -E "$_RDMA_VERIFY_RE" "$SRV_OUT" | sed 's/ (.*//')
	csum=$(grep -E "$_RDMA_VERIFY_RE" "$CLI_OUT" | sed 's/ (.*//')
	check_match "$name: the client verified messages" "$_RDMA_VERIFY_RE" "$csum"
	check_eq "$name: both sides' summaries agree" "$ssum" "$csum"
	check_match "$name: phase basic (1 byte .. $max) ok" ": ok$" \
		"$(grep -E '^mroce-verify: phase basic: ' "$CLI_OUT" | tail -n 1)"
	check_eq "$name: no MISMATCH reported" "" \
		"$(grep -h MISMATCH "$SRV_OUT" "$CLI_OUT")"
	log "RESULT $name: ${csum#mroce-verify: }, ${PAIR_SECS}s"
}

pingpong_pair() {	# pingpong_pair NAME SIZE
	RDMA_PORT=$((RDMA_PORT + 1))
	run_pair "$1" "$RDMA_PORT" 120 \
		ibv_rc_pingpong -d "$DEV_S" -g "$GID_S" -p "$RDMA_PORT" -s "$2" -n 50 -c -- \
		ibv_rc_pingpong -d "$DEV_C" -g "$GID_C" -p "$RDMA_PORT" -s "$2" -n 50 -c "$ADDR_S"
	pair_ok "$1: ibv_rc_pingpong $2 B x 50, buffers checked"
}

# The counters of drops a wrong cut or merge would produce; the connection
# checks (rx_drop_ack_range: a late ACK of an earlier QP with the same
# number) are not counted.
RX_MALFORMED='^rx_drop_(no_csum|gso|short|version|opcode|hdr_len|reserved|flags|path|field|length)$'
malformed_drops() {
	local d
	for d in mroce1 mroce2; do
		rdma statistic show link "$d/1" | tr ' ' '\n' | paste - - |
			awk -v d="$d" '$1 ~ /^rx_drop_/ && $2 { print d, $1, $2 }'
	done | tee >(sed 's/^/# rx drops: /' >&2) |
		awk -v re="$RX_MALFORMED" '$2 ~ re { s += $3 } END { print s + 0 }'
}

dumpcap_start() {	# dumpcap_start NS DEV FILTER PCAP SNAPLEN
	local log=$4.log
	rm -f "$4" "$log"
	# $! must be dumpcap itself (ip netns exec execs it): SIGINT ends it
	ip netns exec "$1" dumpcap -q -i "$2" -P -s "$5" -f "$3" -w "$4" \
		2>"$log" &
	_rdma_cap=$!
	on_exit "kill $_rdma_cap 2>/dev/null"
	wait_for_word "dumpcap is capturing on $2" Capturing "$log"
}

wait_for_word() {	# wait_for_word DESC WORD FILE: up to 20 s, then require
	for _ in $(seq 100); do
		grep -q "$2" "$3" && break
		sleep 0.2
	done
	require "$1" grep -q "$2" "$3"
}

# tap_start NS DEV MTU / tap_stop NAME: a plain AF_PACKET socket on DEV
# in NS that reads every 50 ms, so the stack hands it clones of the skbs
# mroce receives (GRO batches, whole GSO chunks) and they wait in its queue
# while mroce takes them apart (the shared case of mroce_gro_unchain());
# tap_stop sets TAPPED (frames read) and TAPBIG (those longer than MTU)
tap_start() {
	ip netns exec "$1" python3 -c '
import signal, socket, sys, time
dev, mtu = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
s.bind((dev, 0))
print("bound", file=sys.stderr, flush=True)
stop = []
signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
n = big = 0
while True:
    time.sleep(0.05)
    try:
        while True:
            f = s.recv(1 << 16, socket.MSG_DONTWAIT)
            n += 1
            big += len(f) > mtu + 14
    except BlockingIOError:
        pass
    if stop:
        break
print(n, big)
' "$2" "$3" >"$RDMA_OUTDIR/tap.out" 2>"$RDMA_OUTDIR/tap.err" &
	_rdma_tap=$!
	on_exit "kill $_rdma_tap 2>/dev/null"
	wait_for_word "the AF_PACKET socket on $2 is bound" bound "$RDMA_OUTDIR/tap.err"
}

tap_stop() {
	kill -TERM "$_rdma_tap"
	wait "$_rdma_tap"
	read -r TAPPED TAPBIG <"$RDMA_OUTDIR/tap.out"
	log "RESULT $1: the AF_PACKET socket read ${TAPPED:-?} frames, ${TAPBIG:-?} longer than the MTU"
}

dumpcap_stop() {
	sleep 1
	kill -INT "$_rdma_cap"
	wait "$_rdma_cap"
}
