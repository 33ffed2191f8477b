#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The verbs fuzzer, tools/fuzz/mroce-verbsfuzz: what a local user can do
# to the driver through the verbs and the rings it maps.  mroce1 (veth1
# in h1) and mroce2 (veth2 in h2), both opened by the fuzzer (rdma
# devices are shared between namespaces), which runs in the root namespace
# inside a memory cgroup of its own (under ip netns exec /sys would be
# another sysfs, without the cgroup tree).  Every case is a check of its
# own ("verbsfuzz CASE"); they are listed by
#	tools/fuzz/mroce-verbsfuzz --list
# and documented in tools/fuzz/README.md.  In short:
#   bad-args, cur-state*, wrap-*, edge-*   every bad argument refused
#       with an errno; a cur_qp_state that is not true refused; WRs at the
#       end of the 64-bit address space complete with their own error
#   ring-*      every field of send and receive WQEs, the producer
#       indexes and a CQ's consumer index set to boundary and random
#       values, written straight into the mapped rings
#   random      random valid and invalid verb sequences (seeded)
#   destroy-race, kill, dereg-*, cq-overflow-*   destroy under traffic,
#       SIGKILL in the middle of a transfer, dereg_mr bounded in time
#       while a WQE holds the MR, CQ overflow: IBV_EVENT_CQ_ERR and the
#       QP in ERR
#   scale-*     QPs connected in pairs (a WRITE each, verified) and QP
#       create/destroy cycles: kernel memory per QP, time, leaks, memory
#       cgroup charge (short run 256 QPs / 300 cycles; the issue's 4096 /
#       10 000 with MROCE_FUZZ_SCALE_QPS / _CYCLES)
# The dangerous cases (ring-sq-nsge-9 ... ring-sq-random: issue 12 #1,
# today they corrupt the kernel heap) run last, each in a process of its
# own, so that the log says which one took the kernel down.
#
# A case passes when the fuzzer says so (every bad call refused with an
# errno, no verb hung, no wrong completion) and the kernel logged no
# report while it ran; the test also wants the fuzzer to finish and the
# module to unload afterwards.
#
# Environment (the defaults are the short run of make check):
#   MROCE_FUZZ_SECONDS       time budget of each time-bounded case (4)
#   MROCE_FUZZ_SEED          seed (default: random, printed)
#   MROCE_FUZZ_CASES         cases to run (default: "safe danger")
#   MROCE_FUZZ_DANGER=0      leave the dangerous cases out
#   MROCE_FUZZ_SCALE_QPS     QPs of scale-qps (256; the issue asks 4096)
#   MROCE_FUZZ_SCALE_CYCLES  cycles of scale-cycles (300; the issue asks 10000)
# A long run, e.g.:
#   MROCE_TEST_TIMEOUT=4000 MROCE_FUZZ_SECONDS=300 \
#	MROCE_FUZZ_SCALE_QPS=4096 MROCE_FUZZ_SCALE_CYCLES=10000 \
#	tools/guest/mroce-vm --timeout 4200 -- \
#	tools/tests/run-guest-tests.sh t-61-verbsfuzz
# (this test has no "# timeout:" line, so MROCE_TEST_TIMEOUT sets it;
# without it 300 s).
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

FUZZ=$MROCE_TOP/tools/fuzz/mroce-verbsfuzz
[ -x "$FUZZ" ] || fail "$FUZZ not built (make tools)"
need_cmd timeout
SECONDS_PER=${MROCE_FUZZ_SECONDS:-2}
SEED=${MROCE_FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
CASES=${MROCE_FUZZ_CASES:-safe danger}
QPS=${MROCE_FUZZ_SCALE_QPS:-256}
CYCLES=${MROCE_FUZZ_SCALE_CYCLES:-300}
[ "${MROCE_FUZZ_DANGER:-1}" = 0 ] && CASES=${CASES//danger/}

setup_rdma_pair

# a memory cgroup for the fuzzer (scale-memcg reads its charge)
CG=/sys/fs/cgroup/mroce-verbsfuzz
if [ -w /sys/fs/cgroup/cgroup.subtree_control ]; then
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
	mkdir -p "$CG" 2>/dev/null
	on_exit "rmdir $CG 2>/dev/null"
fi
[ -e "$CG/cgroup.procs" ] || CG=

# The cases in order: the safe ones in one process, each dangerous one in
# its own.  A run that ends without a verdict for a case (the fuzzer died,
# or its watchdog gave up on a verb that never returned) fails that case
# and the rest run in a new process.
mapfile -t SAFE < <("$FUZZ" --list | awk '!/\[danger\]/ { print $1 }')
mapfile -t DANGER < <("$FUZZ" --list | awk '/\[danger\]/ { print $1 }')
want=()
for c in $CASES; do
	case $c in
	safe) want+=("${SAFE[@]}") ;;
	danger) want+=("${DANGER[@]}") ;;
	*) want+=("$c") ;;
	esac
done
log "seed $SEED, ${SECONDS_PER} s per time-bounded case, scale $QPS QPs / $CYCLES cycles, cases: ${want[*]}"

is_danger() {
	local d
	for d in "${DANGER[@]}"; do [ "$d" = "$1" ] && return 0; done
	return 1
}

run=0
declare -A verdict=()
run_fuzz() {	# run_fuzz CASE...: one fuzzer process; sets verdict[]
	local out rc c line name why
	run=$((run + 1))
	out=$RDMA_OUTDIR/verbsfuzz-$run.log
	echo "+ [${CG:+cgroup $CG}] $FUZZ --dev1 $DEV_S --gid1 $GID_S --dev2 $DEV_C --gid2 $GID_C --seed $SEED --seconds $SECONDS_PER ... $*"
	# shellcheck disable=SC2016  # expanded by that sh
	timeout -k 10 "$(( 240 + 12 * SECONDS_PER * $# ))" \
		sh -c 'if [ -n "$1" ]; then echo $$ >"$1/cgroup.procs"; fi; shift; exec "$@"' \
		sh "$CG" "$FUZZ" --dev1 "$DEV_S" --gid1 "$GID_S" \
		--dev2 "$DEV_C" --gid2 "$GID_C" --seed "$SEED" \
		--seconds "$SECONDS_PER" --scale-qps "$QPS" \
		--scale-cycles "$CYCLES" "$@" 2>&1 | tee "$out" | sed 's/^/  | /'
	# streamed: if a case takes the kernel down, the log has what came before
	rc=${PIPESTATUS[0]}
	while IFS= read -r line; do
		case $line in
		"ok "*) name=${line#ok * - }; verdict[${name%% *}]=ok ;;
		"not ok "*)
			name=${line#not ok * - }
			why=${name#* # }
			verdict[${name%% *}]="FAIL: $why" ;;
		esac
	done <"$out"
	grep -E '^# (RESULT|verbsfuzz:)' "$out" | sed 's/^# /# RESULT /;s/RESULT RESULT/RESULT/'
	for c in "$@"; do
		if [ -z "${verdict[$c]:-}" ]; then
			verdict[$c]="FAIL: no verdict: the fuzzer ended (exit $rc) in this case"
			break
		fi
	done
	return "$rc"
}

todo=("${want[@]}")
while [ ${#todo[@]} -gt 0 ]; do
	batch=()
	for c in "${todo[@]}"; do
		if is_danger "$c"; then
			[ ${#batch[@]} -eq 0 ] && batch=("$c")
			break
		fi
		batch+=("$c")
	done
	run_fuzz "${batch[@]}"
	rest=()
	for c in "${todo[@]}"; do
		[ -n "${verdict[$c]:-}" ] || rest+=("$c")
	done
	if [ ${#rest[@]} -ge ${#todo[@]} ]; then
		verdict[${todo[0]}]="FAIL: the fuzzer did not run it"
		rest=("${todo[@]:1}")
	fi
	todo=("${rest[@]}")
done

nfail=0
for c in "${want[@]}"; do
	v=${verdict[$c]:-FAIL: not run}
	echo "# RESULT verbsfuzz $c: $v"
	[ "$v" = ok ] || nfail=$((nfail + 1))
	check_eq "verbsfuzz $c" ok "$v"
done
log "$nfail of ${#want[@]} cases failed (seed $SEED)"

# nothing of the fuzzer is left, the module unloads
sleep 1
left=$(pgrep -f "$FUZZ")
if [ -n "$left" ]; then
	for p in $left; do
		log "left over: process $p ($(cut -d' ' -f3 "/proc/$p/stat" 2>/dev/null)), kernel stacks:"
		for t in /proc/"$p"/task/*; do
			sed "s|^|#   ${t##*/}: |" "$t/stack" 2>/dev/null
		done
	done
	# a process stuck in the kernel holds the devices: deleting them
	# or unloading the module would hang as well
	fail "fuzzer processes are stuck in the kernel: $left"
fi
for d in "$DEV_S" "$DEV_C"; do
	check "rdma link delete $d" timeout 30 rdma link delete "$d"
done
check "the mroce module unloads after the fuzzer" timeout 30 rmmod mroce
