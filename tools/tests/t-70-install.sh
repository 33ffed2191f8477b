#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 2400
#
# Install like an upstream RDMA driver: the Debian packages of "make deb"
# (build/deb/: mroce-dkms, mroce-provider, mroce-tools) are installed
# with dpkg -i in the guest (whose root is an overlay: nothing reaches the
# host), DKMS builds mroce.ko for the running kernel from
# /usr/src/mroce-VERSION and installs it under updates/dkms ("dkms
# status": installed).  Then, without insmod and without RDMAV_DRIVERS:
# "rdma link add" in h1 and in h2 loads mroce through its alias
# rdma-link-mroce, modinfo describes every parameter, ibv_devinfo finds
# the device through the installed provider, ibv_rc_pingpong and the
# installed mroce-verify run between the two namespaces.  Last, dpkg -r
# removes it all (module, DKMS tree, provider, tools; dpkg -P the
# provider's conffile) and modprobe no longer finds mroce.
#
# No .deb in build/deb fails the test ("build them with make deb"); make
# check builds them first.  DKMS is slow under TCG: measured 2026-12-05
# on 2 host cores shared with other guests and a W=1 build, dkms's
# "make -j2" of mroce.ko took 830 s, all of dpkg -i mroce-dkms (add,
# build, sign, install, depmod) 981 s, the whole test 1140 s, each
# depmod (install, remove) 80-90 s: hence the timeout (the log's
# "RESULT dkms" line and the [seconds] of dpkg's output give each run's
# times).  The man-db trigger is turned off in the guest's overlay (it
# would rebuild the whole man index).
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/rdma-lib.sh
. "$(dirname "$0")/rdma-lib.sh"

DEBS=$MROCE_TOP/build/deb
PKGS="mroce-dkms mroce-provider mroce-tools"
KVER=$(uname -r)
PROVIDER=/usr/lib/x86_64-linux-gnu/libibverbs/libmroce-rdmav34.so
DRIVER_CONF=/etc/libibverbs.d/mroce.driver

need_cmd dpkg rdma ip ibv_devinfo ibv_rc_pingpong modinfo timeout ss
command -v dkms >/dev/null 2>&1 ||
	fail "dkms is not installed on the host: run tools/setup.sh"
ver=$(cat "$MROCE_TOP/VERSION") || fail "no $MROCE_TOP/VERSION"
# DKMS builds against the kernel's headers package; the debug lane's
# kernel has none (and its /lib/modules is mounted read-only)
dpkg -s "linux-headers-$KVER" >/dev/null 2>&1 ||
	skip "no linux-headers-$KVER package for DKMS (the debug lane's kernel?)"

debs=()
for p in $PKGS; do
	d=$DEBS/${p}_${ver}_all.deb
	[ -f "$d" ] || d=$DEBS/${p}_${ver}_amd64.deb
	[ -f "$d" ] || fail "no ${p}_${ver}_*.deb in $DEBS: build them with make deb"
	debs+=("$d")
done

# the installed module and provider, not the build tree's
unset RDMAV_DRIVERS
[ -d /sys/module/mroce ] && fail "mroce is loaded before the test"
for p in $PKGS; do
	dpkg -s "$p" >/dev/null 2>&1 &&
		fail "$p is already installed (the guest's root is the host's: do not install the packages on the host)"
done

# whatever happens, leave nothing installed (the overlay goes away with
# the guest anyway; this keeps later tests honest)
cleanup_install() {
	rdma link delete mroce1 2>/dev/null
	rdma link delete mroce2 2>/dev/null
	modprobe -r mroce 2>/dev/null
	dpkg -P mroce-tools mroce-provider mroce-dkms >/dev/null 2>&1
	topo_clean
	if [ -d /tmp/boot-one ] && mountpoint -q /boot; then
		umount /boot
	fi
}
on_exit cleanup_install

# man-db's trigger would index every manual page of the host: off;
# no terminal for debconf
rm -f /var/lib/man-db/auto-update
export DEBIAN_FRONTEND=noninteractive

# The guest's /boot is the host's, which may hold other kernels (6.12 for
# the k612 lane beside 6.1).  dkms's postinst builds for the running
# kernel and for the newest /boot/config-* too: a second 15-minute TCG
# build.  This guest runs one kernel: show dkms only its files.
others=$(find /boot -maxdepth 1 -name 'config-*' ! -name "config-$KVER" -printf '%f ')
if [ -n "$others" ]; then
	log "hiding ${others}from dkms: /boot becomes a tmpfs with $KVER's files"
	mkdir -p /tmp/boot-one &&
		cp "/boot/config-$KVER" /tmp/boot-one/ &&
		cp "/boot/System.map-$KVER" /tmp/boot-one/ 2>/dev/null
	require "/boot with only $KVER's config" mount --bind /tmp/boot-one /boot
fi

# ------------------------------------------------------------ install
# DKMS needs the kernel's headers: the package must pull them in
check_match "mroce-dkms depends on kernel headers" \
	'(^|, )linux-headers-amd64 \| linux-headers-generic \| linux-headers(,|$)' \
	"$(dpkg-deb -f "${debs[0]}" Depends)"
check "dpkg -i mroce-provider mroce-tools" dpkg -i "${debs[1]}" "${debs[2]}"
# each line of its output with the seconds since the start
echo "+ dpkg -i ${debs[0]}"
s0=$SECONDS
dpkg -i "${debs[0]}" 2>&1 | while IFS= read -r l; do
	printf '[%4ds] %s\n' $((SECONDS - s0)) "$l"
done
rc=${PIPESTATUS[0]}
dkms_secs=$((SECONDS - s0))
check_eq "dpkg -i mroce-dkms (DKMS builds and installs mroce.ko for $KVER)" 0 "$rc"
log "RESULT dkms: dpkg -i mroce-dkms (dkms add, build, sign, install, depmod) took ${dkms_secs}s on $(nproc) CPUs, guest load average $(cut -d' ' -f1-3 /proc/loadavg)"
mlog=/var/lib/dkms/mroce/$ver/build/make.log
[ -f "$mlog" ] && sed 's/^/  dkms make.log| /' "$mlog" | tail -n 5

st=$(dkms status mroce 2>&1)
printf '  dkms status| %s\n' "$st"
check_match "dkms status: mroce/$ver installed for $KVER" \
	"^mroce/$ver, $KVER, [^:]*: installed" "$st"
check_eq "dkms built for the running kernel only" 1 "$(grep -c "^mroce/$ver, " <<<"$st")"
ko=$(modinfo -n mroce 2>&1)
check_match "modinfo -n mroce: the DKMS module under updates/dkms" \
	"^/lib/modules/$KVER/updates/dkms/mroce\.ko" "$ko"
check_eq "modinfo -F version mroce: the package's version" "$ver" \
	"$(modinfo -F version mroce 2>&1)"
check "the rdma-link-mroce alias is in modules.alias" \
	grep -q '^alias rdma-link-mroce mroce$' "/lib/modules/$KVER/modules.alias"
check "the provider is installed ($PROVIDER)" test -f "$PROVIDER"
check_eq "$DRIVER_CONF names it" "driver mroce" "$(cat "$DRIVER_CONF" 2>&1)"
check "mroce-verify is installed" test -x /usr/bin/mroce-verify
check "man -w 7 mroce finds the manual page" man -w 7 mroce

# every parameter has a description ("name:description (type)")
parms=$(modinfo -F parm mroce)
printf '%s\n' "$parms" | sed 's/^/  modinfo parm| /' # one per line
for p in cc_algo paths qdelay_target_us hint_epoch_us udp_port; do
	check_match "modinfo mroce describes $p" "^$p:[^( ]" "$parms"
done
check_eq "modinfo mroce: every parameter described, none other" \
	"cc_algo hint_epoch_us paths qdelay_target_us udp_port" \
	"$(echo "$parms" | sed 's/:.*//' | sort | tr '\n' ' ' | sed 's/ $//')"

# ------------------------------------------------------------ use
check_eq "mroce is not loaded before rdma link add" "" \
	"$(lsmod | awk '$1 == "mroce"')"
topo_pair || fail "topo_pair failed"
require "rdma link add mroce1 type mroce netdev veth1 in h1 (module autoloaded)" \
	in_h1 rdma link add mroce1 type mroce netdev veth1
check_match "lsmod: mroce loaded by rdma link add" "^mroce " "$(lsmod)"
# the build id of the loaded module (its ELF note in sysfs: 12 bytes of
# header, "GNU\0", then the id) is the one of the file DKMS installed
kid=$(od -An -tx1 -j16 /sys/module/mroce/notes/.note.gnu.build-id 2>/dev/null | tr -d ' \n')
fid=$(readelf -n "/lib/modules/$KVER/updates/dkms/mroce.ko" 2>/dev/null |
	sed -n 's/.*Build ID: *//p')
check_eq "the loaded module is the DKMS one (build id ${fid:-none})" \
	"${fid:-no build id in the file}" "${kid:-no build id in sysfs}"
require "rdma link add mroce2 type mroce netdev veth2 in h2" \
	in_h2 rdma link add mroce2 type mroce netdev veth2
check_eq "parameters in /sys/module/mroce/parameters" \
	"cc_algo hint_epoch_us paths qdelay_target_us udp_port" \
	"$(find /sys/module/mroce/parameters -mindepth 1 -printf '%f\n' | sort | tr '\n' ' ' | sed 's/ $//')"

for d in mroce1 mroce2; do
	out=$(in_h1 ibv_devinfo -d "$d" 2>&1)
	printf '%s\n' "$out" | sed "s/^/  ibv_devinfo $d| /" # every line
	check_match "ibv_devinfo -d $d: found through the installed provider" \
		"hca_id:[[:space:]]+$d" "$out"
	check_match "ibv_devinfo -d $d: port 1 active" \
		"state:[[:space:]]+PORT_ACTIVE" "$out"
	check_eq "ibv_devinfo -d $d: no libibverbs warning" "" \
		"$(echo "$out" | grep -i 'libibverbs\|warning\|couldn.t')"
done

SERVER_NS=h1 CLIENT_NS=h2 DEV_S=mroce1 DEV_C=mroce2
ADDR_S=$(topo_ip4 1) ADDR_C=$(topo_ip4 2)
GID_S=$(gid_index mroce1 "$ADDR_S") || fail "mroce1 has no GID ::ffff:$ADDR_S"
GID_C=$(gid_index mroce2 "$ADDR_C") || fail "mroce2 has no GID ::ffff:$ADDR_C"
RDMA_OUTDIR=$MROCE_RESULTS/$TEST_NAME
mkdir -p "$RDMA_OUTDIR" 2>/dev/null && [ -w "$RDMA_OUTDIR" ] ||
	RDMA_OUTDIR=$(mktemp -d /tmp/"$TEST_NAME".XXXXXX)

port=18570
run_pair pingpong "$port" 120 \
	ibv_rc_pingpong -d mroce1 -g "$GID_S" -p "$port" -s 4096 -n 200 -c -- \
	ibv_rc_pingpong -d mroce2 -g "$GID_C" -p "$port" -s 4096 -n 200 -c "$ADDR_S"
pair_ok "ibv_rc_pingpong 4096 B x 200, h1 <-> h2, installed module and provider"
check_match "ibv_rc_pingpong: client reports 200 iterations" \
	"^200 iters in " "$(cat "$CLI_OUT")"

port=$((port + 1))
run_pair verify "$port" 300 \
	mroce-verify -d mroce1 -g "$GID_S" -p "$port" --server -- \
	mroce-verify -d mroce2 -g "$GID_C" -p "$port" --client "$ADDR_S" \
		--seed 70 --iters 24 --max-size 64K --ops all,-errors --strict
pair_ok "mroce-verify (installed) --iters 24 --max-size 64K --strict"
check_match "mroce-verify: the client's summary" \
	"^mroce-verify: [0-9]+ messages, [0-9]+ bytes verified" "$(cat "$CLI_OUT")"

# ------------------------------------------------------------ remove
in_h1 rdma link delete mroce1
in_h2 rdma link delete mroce2
check "modprobe -r mroce" modprobe -r mroce
check "dpkg -r mroce-tools mroce-provider mroce-dkms" \
	dpkg -r mroce-tools mroce-provider mroce-dkms
check_eq "dkms status: no mroce left" "" "$(dkms status mroce 2>&1)"
check_eq "no mroce under /var/lib/dkms" "" "$(ls -A /var/lib/dkms/mroce 2>/dev/null)"
check "the module file is gone" \
	test ! -e "/lib/modules/$KVER/updates/dkms/mroce.ko"
check "/usr/src/mroce-$ver is gone" test ! -e "/usr/src/mroce-$ver"
check_fail "modinfo mroce finds nothing" modinfo mroce
check_fail "modprobe -n mroce finds nothing" modprobe -n mroce
check "the provider is gone" test ! -e "$PROVIDER"
check "mroce-verify is gone" test ! -e /usr/bin/mroce-verify
check "only the provider's conffile stays after dpkg -r" test -f "$DRIVER_CONF"
check "dpkg -P (purge)" dpkg -P mroce-tools mroce-provider mroce-dkms
check "$DRIVER_CONF is gone after the purge" test ! -e "$DRIVER_CONF"
check_eq "dpkg knows no mroce package" "" \
	"$(dpkg-query -W -f '${Package} ${db:Status-Abbrev}\n' 'mroce*' 2>/dev/null)"
