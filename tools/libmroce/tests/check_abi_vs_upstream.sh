#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# check_abi_vs_upstream.sh RDMA_CORE_SRC [BUILD_DIR]
#
# Compare the provider ABI declared in mroce_verbs_provider.h with rdma-core's
# own <infiniband/driver.h>: tests/abi_layout_dump.c is compiled against both
# and the printed sizes/offsets must be identical; its _Static_asserts check
# the signatures of the entry points we call against both headers too.
#
# RDMA_CORE_SRC is an rdma-core source tree of the release the provider is
# built for (e.g. git checkout v44.0).  rdma-core's headers need its cmake
# configuration (config.h) and a generated kernel-abi header; if BUILD_DIR
# (default RDMA_CORE_SRC/build) lacks them, they are made with cmake + ninja
# (configure only plus one generated header, no compilation of rdma-core).
set -eu

src=${1:-}
if [ -z "$src" ] || [ ! -f "$src/libibverbs/driver.h" ]; then
	echo "usage: $0 RDMA_CORE_SRC [BUILD_DIR]  (an rdma-core source tree)" >&2
	exit 2
fi
src=$(cd "$src" && pwd)
build=${2:-$src/build}
here=$(cd "$(dirname "$0")" && pwd)

ours_pabi=$(sed -n 's/^#define MROCE_IBVERBS_PABI \([0-9]*\)$/\1/p' "$here/../mroce_verbs_provider.h")
up_pabi=$(sed -n 's/^set(IBVERBS_PABI_VERSION "\([0-9]*\)")$/\1/p' "$src/CMakeLists.txt")
echo "provider ABI: ours $ours_pabi, $src has $up_pabi"
if [ "$ours_pabi" != "$up_pabi" ]; then
	echo "check_abi_vs_upstream: FAIL: different provider ABI series"
	exit 1
fi

if [ ! -f "$build/include/config.h" ] ||
   [ ! -f "$build/include/kernel-abi/ib_user_verbs.h" ]; then
	echo "configuring rdma-core in $build (headers only)"
	mkdir -p "$build"
	(cd "$build" &&
	 cmake -GNinja -DNO_MAN_PAGES=1 -DNO_PYVERBS=1 "$src" >cmake.log 2>&1 &&
	 ninja include/kernel-abi/ib_user_verbs.h >/dev/null) ||
		{ echo "check_abi_vs_upstream: cannot configure $src (see $build/cmake.log)"; exit 1; }
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc=${CC:-cc}

# rdma-core's internal headers are not -Wextra clean; warnings stay off.
$cc -std=gnu11 -w -DMROCE_DUMP_UPSTREAM \
	-I"$build/include" -I"$src" -o "$tmp/upstream" "$here/abi_layout_dump.c"
$cc -std=gnu11 -Wall -Wextra -Werror -o "$tmp/ours" "$here/abi_layout_dump.c"
"$tmp/upstream" >"$tmp/upstream.txt"
"$tmp/ours" >"$tmp/ours.txt"

if diff -u "$tmp/upstream.txt" "$tmp/ours.txt"; then
	echo "check_abi_vs_upstream: PASS ($(wc -l <"$tmp/ours.txt") sizes/offsets/constants identical)"
else
	echo "check_abi_vs_upstream: FAIL (- rdma-core, + mroce_verbs_provider.h)"
	exit 1
fi
