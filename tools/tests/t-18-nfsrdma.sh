#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 480
#
# NFS over RDMA on mroce (issue 14), with the kernel's server (nfsd with
# svcrdma listening on port 20049) and client (xprtrdma: mount -o rdma),
# and nfs-utils that nobody here wrote.  The client registers its buffers
# with fast-registration MRs (FRWR) and the server answers through
# rdma_rw and SEND_WITH_INV, as for NVMe-oF.
#
# NFSv4.2 exports a tmpfs; the client mounts it over RDMA, copies a file
# of MROCE_NFS_MIB (default 256) MiB of random data in, remounts (so that
# nothing comes from the client's cache) and compares the file read back
# over RDMA and the server's own copy with the source; then fio exercises
# the file system (several files, mixed sizes, random writes and reads,
# crc32c verification).  Both ends run in the initial namespace, on one
# mroce device's own address (6.1's svcrdma and xprtrdma, like the NVMe
# drivers, make their rdma_cm IDs there).  The server's lease and grace
# time are cut to 10 s so that the first OPEN does not wait 90 s.
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

need_cmd rpc.nfsd rpc.mountd exportfs mount.nfs rpcbind fio sha256sum
need_module nfsd rpcrdma nfsv4

MIB=${MROCE_NFS_MIB:-256}
ADDR=198.51.100.1
EXP=/srv/mroce-nfs
MNT=/mnt/mroce-nfs
SRC=/dev/shm/mroce-nfs-src
OUT=$MROCE_RESULTS/$TEST_NAME
mkdir -p "$OUT"

nfs_cleanup() {
	umount -f "$MNT" 2>/dev/null
	rpc.nfsd 0 2>/dev/null
	exportfs -ua 2>/dev/null
	pkill -x rpc.mountd 2>/dev/null
	pkill -x rpcbind 2>/dev/null
	umount "$EXP" 2>/dev/null
	umount /proc/fs/nfsd 2>/dev/null
	rm -f "$SRC"
}

before=$(dmesg | wc -l)
load_mroce
on_exit 'unload_mroce'
ip link add nfr0 type veth peer name nfr1 || fail "veth pair"
on_exit 'ip link del nfr0 2>/dev/null'
ip addr add "$ADDR/24" dev nfr0
ip link set nfr0 up
ip link set nfr1 up
require "mroce-nfs on nfr0" rdma link add mroce-nfs type mroce netdev nfr0
on_exit 'rdma link delete mroce-nfs 2>/dev/null'
on_exit 'nfs_cleanup'
sleep 0.5

# the server: an exported tmpfs, nfsd v4 only, RDMA on 20049.  The
# export is the NFSv4 root (fsid=0): the guest's own root is an overlay,
# which cannot be exported, so no pseudo-root path may lead through it.
mkdir -p "$EXP" "$MNT" /var/lib/nfs/v4recovery /run/rpcbind
require "tmpfs to export" mount -t tmpfs -o size=$((MIB + 96))M tmpfs "$EXP"
chmod 1777 "$EXP"
mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
echo "$EXP 198.51.100.0/24(rw,sync,no_subtree_check,no_root_squash,insecure,fsid=0)" >/etc/exports
rpcbind -w 2>/dev/null || rpcbind
require "rpc.mountd" rpc.mountd -N 2 -N 3
require "exportfs -ra" exportfs -ra
echo 10 > /proc/fs/nfsd/nfsv4leasetime
echo 10 > /proc/fs/nfsd/nfsv4gracetime 2>/dev/null
require "rpc.nfsd (v4 only, 4 threads)" rpc.nfsd -N 3 4
require "nfsd listens on rdma 20049" \
	sh -c 'echo "rdma 20049" > /proc/fs/nfsd/portlist'
check_match "portlist has rdma 20049" "rdma 20049" "$(cat /proc/fs/nfsd/portlist)"

# the client
require "mount -t nfs -o vers=4.2,proto=rdma,port=20049" \
	mount -t nfs -o vers=4.2,proto=rdma,port=20049 "$ADDR:/" "$MNT"
check_match "the mount's transport is rdma" "proto=rdma" \
	"$(grep " $MNT " /proc/mounts)"

require "a $MIB MiB file of random data" \
	dd if=/dev/urandom of="$SRC" bs=1M count="$MIB" status=none
want=$(sha256sum <"$SRC" | cut -d' ' -f1)
c_reg0=$(counter mroce-nfs fast_reg)
t0=$(date +%s%N)
check "copy $MIB MiB onto the NFS/RDMA mount" \
	dd if="$SRC" of="$MNT/big" bs=1M conv=fsync status=none
t1=$(date +%s%N)
log "write: $MIB MiB in $(((t1 - t0) / 1000000)) ms ($((MIB * 1000000000 / (t1 - t0 + 1))) MiB/s)"
check "umount" umount "$MNT"
echo 3 >/proc/sys/vm/drop_caches
require "mount again" \
	mount -t nfs -o vers=4.2,proto=rdma,port=20049 "$ADDR:/" "$MNT"
t0=$(date +%s%N)
got=$(sha256sum <"$MNT/big" | cut -d' ' -f1)
t1=$(date +%s%N)
log "read: $MIB MiB in $(((t1 - t0) / 1000000)) ms ($((MIB * 1000000000 / (t1 - t0 + 1))) MiB/s)"
check_eq "the file read back over RDMA is the source" "$want" "$got"
check_eq "the server's copy is the source" "$want" \
	"$(sha256sum <"$EXP/big" | cut -d' ' -f1)"
rm -f "$SRC" "$MNT/big"
# xprtrdma registers its payload buffers with FRWR (IB_WR_REG_MR)
c_reg1=$(counter mroce-nfs fast_reg)
check "the client registered its buffers (fast_reg $c_reg0 -> $c_reg1)" \
	test "$((c_reg1 - c_reg0))" -gt 100

# a file-system exerciser: 4 files, mixed block sizes, verified
check "fio on the mount: 4 jobs x 16 MiB, 4k-256k random writes, crc32c verify" \
	fio --name=nfs-rw --directory="$MNT" --numjobs=4 --size=16M \
	--rw=randwrite --bsrange=4k-256k --ioengine=psync --verify=crc32c \
	--verify_fatal=1 --do_verify=1 --fsync_on_close=1 \
	--output-format=json --output="$OUT/fio.json"
check "fio: the files read back after a remount verify" \
	sh -c "umount '$MNT' && echo 3 >/proc/sys/vm/drop_caches &&
	mount -t nfs -o vers=4.2,proto=rdma,port=20049 '$ADDR:/' '$MNT' &&
	fio --name=nfs-rw --directory='$MNT' --numjobs=4 --size=16M \
	--rw=randwrite --bsrange=4k-256k --ioengine=psync --verify=crc32c \
	--verify_fatal=1 --verify_only --output=/dev/null"
check "umount" umount "$MNT"
trouble=$(dmesg | tail -n +$((before + 1)) | grep -E 'WARNING:|BUG:|Oops|general protection|INFO: task .* blocked' || true)
check_eq "no kernel warning, oops or hung task" "" "$trouble"
