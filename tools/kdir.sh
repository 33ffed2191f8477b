#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Print the kernel build directory mroce builds against:
#   1. MROCE_KVER=<release> (say 6.12.118+deb12-amd64): that kernel's
#      headers; or MROCE_KVER=<series> (say 6.12): the release Debian's
#      linux-headers-<series>-amd64 metapackage points at, else the newest
#      installed linux-headers-<series>.*-amd64;
#   2. the running kernel's build directory, when it has one;
#   3. the kernel Debian's linux-headers-amd64 metapackage points at (the
#      distribution's default: bookworm's 6.1, even with backports' 6.12
#      headers installed beside it);
#   4. else the newest installed linux-headers-*-amd64.
# Never hard-codes an ABI number.
# The release linux-headers-$1 (a metapackage: amd64, 6.12-amd64) depends on.
meta_release()
{
	dpkg-query -W -f '${Depends}' "linux-headers-$1" 2>/dev/null |
		sed -n 's/.*linux-headers-\([^ ,]*-amd64\).*/\1/p'
}
if [ -n "${MROCE_KVER:-}" ]; then
	d=/usr/src/linux-headers-$MROCE_KVER
	[ -d "$d" ] || d=/lib/modules/$MROCE_KVER/build
	if [ ! -d "$d" ] && printf '%s\n' "$MROCE_KVER" | grep -qE '^[0-9]+\.[0-9]+$'; then
		r=$(meta_release "$MROCE_KVER-amd64")
		d=/usr/src/linux-headers-$r
		[ -n "$r" ] && [ -d "$d" ] ||
			d=$(printf '%s\n' "/usr/src/linux-headers-$MROCE_KVER".*-amd64 |
				sort -V | tail -n 1)
	fi
	if [ ! -d "$d" ]; then
		echo "kdir.sh: no headers for MROCE_KVER=$MROCE_KVER" >&2
		exit 1
	fi
	echo "$d"
	exit 0
fi
b=/lib/modules/$(uname -r)/build
if [ -d "$b" ]; then
	echo "$b"
	exit 0
fi
meta=$(meta_release amd64)
if [ -n "$meta" ] && [ -d "/usr/src/linux-headers-$meta" ]; then
	echo "/usr/src/linux-headers-$meta"
	exit 0
fi
d=$(printf '%s\n' /usr/src/linux-headers-*-amd64 | sort -V | tail -n 1)
if [ ! -d "$d" ]; then
	echo "kdir.sh: no kernel headers; install linux-headers-amd64" >&2
	exit 1
fi
echo "$d"
