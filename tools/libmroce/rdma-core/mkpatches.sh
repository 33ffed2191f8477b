#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# mkpatches.sh - write the rdma-core patch series that adds the mroce
# provider as providers/mroce, from this repository's tools/libmroce and
# uapi/rdma/mroce-abi.h.
#
# usage: tools/libmroce/rdma-core/mkpatches.sh RDMA_CORE_GIT_TREE [OUTDIR]
#
# RDMA_CORE_GIT_TREE is a clean git work tree of rdma-core checked out at
# the base the series is made against (e.g. tag v44.0, Debian bookworm's).
# Two commits are added on top of its HEAD (detached or not) and written
# with git format-patch into OUTDIR (default: the folder of this script):
#
#   0001 kernel-headers: the mroce uapi header (kernel-headers/rdma/
#        mroce-abi.h, published with the other rdma/ headers)
#   0002 providers/mroce: the provider sources, its CMakeLists.txt
#        (rdma_provider()), add_subdirectory(), the static-link provider
#        list in libibverbs/verbs.h, MAINTAINERS and README.md.
#   0003 only when the tree's libibverbs has it (v57.0 and later):
#        ibv_cmd_get_context() takes the file descriptor array of
#        rdma-core commit f4d7c01a0 ("libibverbs: Add file descriptor
#        array attribute"); the provider passes none (NULL), as rxe and
#        siw do.  tools/libmroce stays on the PABI 34 form (v36..v56).
#
# 0001 and 0002 apply to v44.0 .. v64.0 alike; 0003 on top of them to
# v57.0 and later.  Made against the newest tag, the series serves both.
#
# The provider sources are copied as they are, except that mroce.h
# includes rdma-core's own <infiniband/driver.h> instead of
# mroce_verbs_provider.h (our declarations of that private ABI for the
# out-of-tree build), which is not copied.  tools/libmroce/rdma-core/
# check-sync.sh checks that a series still matches the sources.
#
# The script never builds anything; what to build, and what was built, is
# in Documentation/kernels-rdma-core.rst.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../../.." && pwd)
lib=$top/tools/libmroce

[ $# -ge 1 ] || { sed -n '4,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 2; }
rc=$(cd "$1" && pwd)
out=${2:-$here}
git -C "$rc" rev-parse --git-dir >/dev/null
[ -z "$(git -C "$rc" status --porcelain)" ] || { echo "mkpatches: $rc is not clean" >&2; exit 1; }
for f in CMakeLists.txt kernel-headers/CMakeLists.txt libibverbs/verbs.h MAINTAINERS README.md; do
	[ -f "$rc/$f" ] || { echo "mkpatches: $rc has no $f: not rdma-core?" >&2; exit 1; }
done
[ ! -e "$rc/providers/mroce" ] || { echo "mkpatches: $rc already has providers/mroce" >&2; exit 1; }

# sources the provider library is built from (tools/libmroce/Makefile)
srcs=$(sed -n '/^SRCS :=/,/[^\\]$/p' "$lib/Makefile" | sed 's/^SRCS :=//; s/\\//g' | tr -s ' \t\n' ' ')
[ -n "${srcs// /}" ] || { echo "mkpatches: no SRCS in $lib/Makefile" >&2; exit 1; }

# insert_before FILE REGEX LINE: LINE before the first line matching REGEX
insert_before()
{
	awk -v re="$2" -v line="$3" '!done && $0 ~ re { print line; done = 1 } { print }
		END { if (!done) exit 1 }' "$1" >"$1.new" ||
		{ rm -f "$1.new"; echo "mkpatches: no line /$2/ in $1" >&2; exit 1; }
	mv "$1.new" "$1"
}
# insert_after FILE REGEX LINE: LINE after the first line matching REGEX
insert_after()
{
	awk -v re="$2" -v line="$3" '{ print } !done && $0 ~ re { print line; done = 1 }
		END { if (!done) exit 1 }' "$1" >"$1.new" ||
		{ rm -f "$1.new"; echo "mkpatches: no line /$2/ in $1" >&2; exit 1; }
	mv "$1.new" "$1"
}

gitc() { git -C "$rc" -c user.name="mroce" -c user.email="mroce@example.org" "$@"; }

# --- 0001: the uapi header ----------------------------------------------
cp "$top/uapi/rdma/mroce-abi.h" "$rc/kernel-headers/rdma/mroce-abi.h"
insert_before "$rc/kernel-headers/CMakeLists.txt" '^  rdma/mthca-abi.h$' '  rdma/mroce-abi.h'
gitc add kernel-headers
gitc commit -q -s -F - <<'MSG'
kernel-headers: add the mroce uapi header

mroce is a soft RDMA transport (MetaRoCE over UDP/IP) whose kernel module
is developed out of tree.  rdma/mroce-abi.h is its uverbs ABI: the
driver id, the uverbs ABI version, the responses that describe the
queue rings shared with the kernel, and the WQE/CQE layouts in them.

MROCE_DRIVER_ID is a private number (0x4d52, "MR") while the kernel
driver is out of tree; it becomes an RDMA_DRIVER_MROCE entry of enum
rdma_driver_id when the driver is merged.
MSG

# --- 0002: the provider ------------------------------------------------
mkdir -p "$rc/providers/mroce"
for s in $srcs; do
	cp "$lib/$s" "$rc/providers/mroce/$s"
done
sed -e 's|^#include "mroce_verbs_provider.h"$|#include <infiniband/driver.h>|' \
    -e 's|^#include <rdma/mroce-abi.h>.*$|#include <rdma/mroce-abi.h>|' \
	"$lib/mroce.h" >"$rc/providers/mroce/mroce.h"
grep -q '^#include <infiniband/driver.h>$' "$rc/providers/mroce/mroce.h" ||
	{ echo "mkpatches: mroce.h does not include mroce_verbs_provider.h any more" >&2; exit 1; }
{
	echo "rdma_provider(mroce"
	for s in $srcs; do echo "  $s"; done
	echo ")"
} >"$rc/providers/mroce/CMakeLists.txt"
insert_before "$rc/CMakeLists.txt" '^add_subdirectory[(]providers/rxe[)]$' 'add_subdirectory(providers/mroce)'
insert_after "$rc/libibverbs/verbs.h" '^extern const struct verbs_device_ops verbs_provider_mlx5;$' \
	'extern const struct verbs_device_ops verbs_provider_mroce;'
insert_before "$rc/MAINTAINERS" '^MTHCA USERSPACE PROVIDER' \
	"MROCE SOFT METAROCE USERSPACE PROVIDER (for mroce.ko)
M:	mroce maintainers <mroce@example.org>
S:	Supported
F:	providers/mroce/
"
insert_after "$rc/README.md" '^ - mlx5_ib.ko$' ' - mroce.ko'
gitc add CMakeLists.txt libibverbs/verbs.h MAINTAINERS README.md providers/mroce
gitc commit -q -s -F - <<'MSG'
providers/mroce: add the MetaRoCE soft RDMA provider

The userspace half of mroce.ko, a soft RDMA transport that carries
MetaRoCE (RoCE-like transport headers with multipath, selective
acknowledgement and congestion control) over UDP/IP on any netdev.

Queues are rings in memory shared with the kernel: post_send,
post_recv, post_srq_recv and poll_cq touch only the rings, and a write()
doorbell is made only when the kernel asks for one.  RC and UD QPs,
SRQs, extended QPs (ibv_wr_*) and CQs (ibv_start_poll), memory windows
type 1 and 2, address handles.  UC, XRC, dmabuf MRs, ECE and multicast
are not offered (their ops stay NULL).
MSG

n=2
# --- 0003: libibverbs of v57.0 and later ---------------------------------
if grep -q 'struct ibv_fd_arr \*fd_arr' "$rc/libibverbs/driver.h"; then
	p=$rc/providers/mroce/mroce_provider.c
	awk '/ibv_cmd_get_context\(.*sizeof\(cmd\),$/ { print; getline;
		sub(/&resp/, "NULL, \\&resp"); done++ } { print }
		END { if (done != 1) exit 1 }' "$p" >"$p.new" ||
		{ rm -f "$p.new"; echo "mkpatches: no ibv_cmd_get_context() call in $p" >&2; exit 1; }
	mv "$p.new" "$p"
	gitc add providers/mroce
	gitc commit -q -s -F - <<'MSG'
providers/mroce: pass no file descriptor array to ibv_cmd_get_context

Commit f4d7c01a0 ("libibverbs: Add file descriptor array attribute",
v57.0) added the fd_arr argument.  mroce's context takes no file
descriptors from the kernel: NULL, as rxe and siw pass.
MSG
	n=3
fi

mkdir -p "$out"
rm -f "$out"/[0-9][0-9][0-9][0-9]-*.patch
gitc format-patch -q -o "$out" "HEAD~$n..HEAD"
ls "$out"/[0-9][0-9][0-9][0-9]-*.patch
