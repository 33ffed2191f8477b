#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# check-sync.sh - does the rdma-core patch series next to this script still
# carry tools/libmroce and uapi/rdma/mroce-abi.h as they are?
#
# usage: tools/libmroce/rdma-core/check-sync.sh   (make -C tools/libmroce
#        check-rdma-core-patch)
#
# Applies the files 0001 and 0002 create (providers/mroce/*,
# kernel-headers/rdma/mroce-abi.h) to an empty folder and compares them
# with what mkpatches.sh would put there, then checks that the later
# patches (0003: libibverbs v57.0 and later) still apply on top.  Needs
# no rdma-core tree.  When it fails, regenerate the series with
# mkpatches.sh against a clean rdma-core tree of the newest tag.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../../.." && pwd)
lib=$top/tools/libmroce
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mroce-rcsync.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

shopt -s nullglob
patches=("$here"/[0-9][0-9][0-9][0-9]-*.patch)
[ ${#patches[@]} -gt 0 ] || { echo "check-sync: no patches in $here" >&2; exit 1; }

mkdir -p "$tmp/got" "$tmp/want/providers/mroce" "$tmp/want/kernel-headers/rdma"
base=()
later=()
for p in "${patches[@]}"; do
	case ${p##*/} in
	0001-* | 0002-*) base+=("$p") ;;
	*) later+=("$p") ;;
	esac
done
[ ${#base[@]} = 2 ] || { echo "check-sync: no 0001 and 0002 in $here" >&2; exit 1; }
(cd "$tmp/got" && git apply --include='providers/mroce/*' \
	--include='kernel-headers/rdma/mroce-abi.h' "${base[@]}")

srcs=$(sed -n '/^SRCS :=/,/[^\\]$/p' "$lib/Makefile" | sed 's/^SRCS :=//; s/\\//g' | tr -s ' \t\n' ' ')
for s in $srcs; do
	cp "$lib/$s" "$tmp/want/providers/mroce/$s"
done
sed -e 's|^#include "mroce_verbs_provider.h"$|#include <infiniband/driver.h>|' \
    -e 's|^#include <rdma/mroce-abi.h>.*$|#include <rdma/mroce-abi.h>|' \
	"$lib/mroce.h" >"$tmp/want/providers/mroce/mroce.h"
{
	echo "rdma_provider(mroce"
	for s in $srcs; do echo "  $s"; done
	echo ")"
} >"$tmp/want/providers/mroce/CMakeLists.txt"
cp "$top/uapi/rdma/mroce-abi.h" "$tmp/want/kernel-headers/rdma/mroce-abi.h"

if ! diff -ru "$tmp/want" "$tmp/got" >"$tmp/diff"; then
	sed -e "s|$tmp/want/|sources: |" -e "s|$tmp/got/|series: |" "$tmp/diff" | head -n 40
	echo "check-sync: the series in ${here#"$top"/} is out of date: run mkpatches.sh" >&2
	exit 1
fi
n=$(find "$tmp/got" -type f | wc -l)
if [ ${#later[@]} -gt 0 ]; then
	cp -R "$tmp/got" "$tmp/later"
	(cd "$tmp/later" && git apply --include='providers/mroce/*' "${later[@]}") ||
		{ echo "check-sync: ${later[*]##*/} no longer apply on top" >&2; exit 1; }
fi
echo "check-sync: 0001-0002 carry $n files as in tools/libmroce and uapi/;" \
	"${#later[@]} later patches apply on top"
