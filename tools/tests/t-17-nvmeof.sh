#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 420
#
# NVMe over Fabrics on mroce, with the kernel's own target and host and
# clients nobody here wrote (issue 14): nvmet-rdma exports a RAM disk
# (brd), nvme-rdma connects to it through `nvme connect -t rdma` (nvme-cli),
# and fio writes and verifies it (crc32c, mixed block sizes, queue depth
# 16).  nvme-rdma registers every I/O buffer with a fast-registration MR
# and nvmet-rdma hands it back with SEND_WITH_INV, so this is the real-use
# test of IB_WR_REG_MR, remote invalidation and the RDMA READ/WRITE that
# the target's rdma_rw does through the host's rkeys.
#
# In 6.1 nvme-rdma and nvmet-rdma create their rdma_cm IDs in the initial
# network namespace, so both ends run there, on one mroce device whose
# netdev (one end of a veth pair) holds 203.0.113.1: the host connects to
# the target through the device's own address, which mroce serves as
# loopback (as rdma_rxe serves blktests' nvme/rdma setup).
#
# Then: disconnect and reconnect, and the data written before is still
# there (verified again); read throughput at queue depth 16; and the target
# port removed under I/O: the host's controller, with a short
# ctrl_loss_tmo, fails the outstanding I/O and gives up cleanly (no hang,
# no kernel warning), and the host disconnects.
#
# Last, nvmet-rdma again with use_srq=1: the target posts its command
# buffers to shared receive queues (ib_create_srq, ib_post_srq_recv) that
# all its queue pairs draw from, and the host's writes verify through it.
#
# MROCE_NVMF_SIZE (MiB, default 64) sets how much fio writes and verifies.
# MROCE_NVMF_LINK=rxe runs the same scenario on rdma_rxe instead, for a
# side-by-side figure (not a benchmark: the same guest, one run).
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

need_cmd nvme fio rdma python3
need_module configfs nvmet nvmet-rdma nvme-rdma brd

SIZE=${MROCE_NVMF_SIZE:-64}
NQN=mroce-t17
CFS=/sys/kernel/config/nvmet
SUB=$CFS/subsystems/$NQN
PORT=$CFS/ports/1
ADDR=203.0.113.1
OUT=$MROCE_RESULTS/$TEST_NAME
mkdir -p "$OUT"

# the RAM disk: 128 MiB, /dev/ram0 (brd was loaded by need_module with
# its default size; reload it with ours when nothing uses it)
rmmod brd 2>/dev/null
modprobe brd rd_nr=1 rd_size=$((128 * 1024)) || fail "modprobe brd"
require "RAM disk /dev/ram0" test -b /dev/ram0
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config

# nvmf_dev: the block device of our subsystem's namespace, or nothing.
# Its sysfs parent is the controller (or, with native multipath, the
# subsystem), which names the subsystem NQN.  A multipath path device
# (nvmeXcYnZ) has no device node: skip it.
nvmf_dev() {
	local b p
	for b in /sys/block/nvme*; do
		[ -b "/dev/${b##*/}" ] || continue
		p=$(dirname "$(readlink -f "$b")")
		if [ "$(cat "$p/subsysnqn" 2>/dev/null)" = "$NQN" ]; then
			echo "/dev/${b##*/}"
			return 0
		fi
	done
	return 1
}

nvmf_connect() {	# nvmf_connect [nvme connect options]
	nvme connect -t rdma -a "$ADDR" -s 4420 -n "$NQN" "$@" || return 1
	for _ in $(seq 1 50); do
		DEV=$(nvmf_dev) && [ -b "$DEV" ] && return 0
		sleep 0.2
	done
	return 1
}

target_up() {
	mkdir -p "$SUB" && echo 1 > "$SUB/attr_allow_any_host" &&
	mkdir -p "$SUB/namespaces/1" &&
	echo -n /dev/ram0 > "$SUB/namespaces/1/device_path" &&
	echo 1 > "$SUB/namespaces/1/enable" &&
	mkdir -p "$PORT" && echo rdma > "$PORT/addr_trtype" &&
	echo ipv4 > "$PORT/addr_adrfam" && echo "$ADDR" > "$PORT/addr_traddr" &&
	echo 4420 > "$PORT/addr_trsvcid" &&
	ln -s "$SUB" "$PORT/subsystems/$NQN"
}

target_down() {
	rm -f "$PORT/subsystems/$NQN" 2>/dev/null
	rmdir "$PORT" 2>/dev/null
	[ -d "$SUB/namespaces/1" ] && echo 0 > "$SUB/namespaces/1/enable"
	rmdir "$SUB/namespaces/1" 2>/dev/null
	rmdir "$SUB" 2>/dev/null
	true
}

# fio_job NAME ARGS...: run fio with JSON output into $OUT/NAME.json
fio_job() {
	local name=$1
	shift
	fio --name="$name" --filename="$DEV" --direct=1 --ioengine=libaio \
		--output-format=json --output="$OUT/$name.json" "$@"
}

# fio_figure NAME: "read|write IOPS, MiB/s, p99 completion latency"
fio_figure() {
	python3 - "$OUT/$1.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
out = []
for d in ("write", "read"):
    s = j[d]
    if not s["io_bytes"]:
        continue
    p = s.get("clat_ns", {}).get("percentile", {})
    p99 = p.get("99.000000", 0) / 1000
    out.append("%s %.0f IOPS %.1f MiB/s p99 %.0f us" %
               (d, s["iops"], s["bw_bytes"] / 2**20, p99))
print("; ".join(out), "errors", j["error"])
EOF
}

LINK=${MROCE_NVMF_LINK:-mroce}
if [ "$LINK" = rxe ]; then
	need_module rdma_rxe
	on_exit 'rmmod brd 2>/dev/null'
else
	load_mroce
	on_exit 'unload_mroce; rmmod brd 2>/dev/null'
fi
ip link add nvt0 type veth peer name nvt1 || fail "veth pair"
on_exit 'ip link del nvt0 2>/dev/null'
ip addr add "$ADDR/24" dev nvt0
ip link set nvt0 up
ip link set nvt1 up
require "$LINK device mroce-nv on nvt0" rdma link add mroce-nv type "$LINK" netdev nvt0
on_exit 'rdma link delete mroce-nv 2>/dev/null'
on_exit 'target_down'
on_exit "nvme disconnect -n $NQN >/dev/null 2>&1"
sleep 0.5

require "nvmet-rdma port on $ADDR:4420" target_up
require "nvme connect -t rdma -a $ADDR" nvmf_connect
log "namespace: $DEV ($(blockdev --getsize64 "$DEV") bytes)"
ctrl=$(for c in /sys/class/nvme/nvme*; do
	[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$NQN" ] && echo "${c##*/}"; done)
check_match "the controller's transport is rdma" "^rdma$" \
	"$(cat /sys/class/nvme/"$ctrl"/transport 2>/dev/null)"
# nvme-rdma makes one I/O queue per CPU, but no more than the device's
# completion vectors: with num_comp_vectors 1 (before 2026-12-05) it had
# one I/O queue whatever the CPUs, and blktests' nvme/048 failed.
check_eq "one I/O queue per CPU (queue_count = admin + $(nproc))" \
	$(( $(nproc) + 1 )) \
	"$(cat /sys/class/nvme-fabrics/ctl/"$ctrl"/queue_count 2>/dev/null)"

c_reg0=$(counter mroce-nv fast_reg)
c_inv0=$(counter mroce-nv rx_remote_inv)

# 1. write and verify: mixed sizes, queue depth 16
check "fio: ${SIZE} MiB random writes 4k-128k, qd 16, crc32c verify" \
	fio_job write-verify --rw=randwrite --bsrange=4k-128k --iodepth=16 \
	--size="${SIZE}M" --verify=crc32c --verify_fatal=1 \
	--do_verify=1 --randseed=1701
log "write-verify: $(fio_figure write-verify)"

# nvme-rdma registers the data buffers of its I/O (IB_WR_REG_MR) and asks
# the target to invalidate them with its response (SEND_WITH_INV)
if [ "$LINK" = mroce ]; then
	c_reg1=$(counter mroce-nv fast_reg)
	c_inv1=$(counter mroce-nv rx_remote_inv)
	check "the host registered its buffers (fast_reg $c_reg0 -> $c_reg1)" \
		test "$((c_reg1 - c_reg0))" -gt 100
	check "the target invalidated them remotely (rx_remote_inv $c_inv0 -> $c_inv1)" \
		test "$((c_inv1 - c_inv0))" -gt 100
fi

# 2. read throughput, 128 KiB at qd 16, and 4 KiB random at qd 16
check "fio: sequential 128 KiB reads, qd 16" \
	fio_job read-128k --rw=read --bs=128k --iodepth=16 --size="${SIZE}M"
log "read-128k: $(fio_figure read-128k)"
check "fio: random 4 KiB reads, qd 16, 5 s" \
	fio_job read-4k --rw=randread --bs=4k --iodepth=16 --size="${SIZE}M" \
	--time_based --runtime=5
log "read-4k: $(fio_figure read-4k)"

# 3. disconnect, reconnect: the data is still there and still verifies
check "nvme disconnect" nvme disconnect -n "$NQN"
require "nvme connect again" nvmf_connect
check "fio: the data written before the reconnect verifies" \
	fio_job reverify --rw=randwrite --bsrange=4k-128k --iodepth=16 \
	--size="${SIZE}M" --verify=crc32c --verify_fatal=1 \
	--verify_only --randseed=1701
check "nvme disconnect" nvme disconnect -n "$NQN"

# 4. the target port goes away under I/O
require "nvme connect with ctrl_loss_tmo 4 s" \
	nvmf_connect --ctrl-loss-tmo=4 --reconnect-delay=1
before=$(dmesg | wc -l)
fio_job port-gone --rw=randwrite --bs=64k --iodepth=16 --size="${SIZE}M" \
	--time_based --runtime=60 >/dev/null 2>&1 &
fio_pid=$!
sleep 3
log "removing the target port under I/O"
rm -f "$PORT/subsystems/$NQN"
rmdir "$PORT"
t0=$(date +%s)
for _ in $(seq 1 60); do
	kill -0 "$fio_pid" 2>/dev/null || break
	sleep 1
done
t1=$(date +%s)
if kill -0 "$fio_pid" 2>/dev/null; then
	check "fio ends once the host gives the controller up" false
	kill -9 "$fio_pid"
else
	check "fio ends once the host gives the controller up ($((t1 - t0)) s)" true
fi
wait "$fio_pid" 2>/dev/null
nvme disconnect -n "$NQN" >/dev/null 2>&1
sleep 1
check_fail "the host has no controller of $NQN left" nvmf_dev
trouble=$(dmesg | tail -n +$((before + 1)) |
	grep -E 'WARNING:|BUG:|Oops|general protection|INFO: task .* blocked' || true)
check_eq "no kernel warning, oops or hung task while the port went away" "" \
	"$trouble"

# 5. the target on shared receive queues (nvmet_rdma use_srq=1)
target_down
if rmmod nvmet_rdma 2>/dev/null && modprobe nvmet_rdma use_srq=1; then
	check_match "nvmet_rdma use_srq=1" "^Y$" \
		"$(cat /sys/module/nvmet_rdma/parameters/use_srq)"
	require "nvmet-rdma port on $ADDR:4420 (SRQ)" target_up
	require "nvme connect to the SRQ target" nvmf_connect
	res=$(rdma resource show 2>/dev/null | grep -w mroce-nv)
	log "resources: $res"
	check "the target created SRQs ($res)" \
		test "$(printf '%s\n' "$res" | sed -n 's/.* srq \([0-9]*\).*/\1/p')" -gt 0
	check "fio: 16 MiB random writes 4k-128k, qd 16, crc32c verify, SRQ target" \
		fio_job srq-verify --rw=randwrite --bsrange=4k-128k --iodepth=16 \
		--size=16M --verify=crc32c --verify_fatal=1 --do_verify=1 \
		--randseed=1702
	log "srq-verify: $(fio_figure srq-verify)"
	check "nvme disconnect (SRQ target)" nvme disconnect -n "$NQN"
	target_down
	rmmod nvmet_rdma
else
	check "nvmet_rdma reloaded with use_srq=1" false
fi
