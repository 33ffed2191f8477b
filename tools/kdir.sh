#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Print the kernel build directory mroce builds against:
#   1. MROCE_KVER=<release> (say 6.12.x+bpo-amd64): that kernel's headers;
#   2. the running kernel's build directory, when it has one;
#   3. the kernel Debian's linux-headers-amd64 metapackage points at (the
#      distribution's default: bookworm's 6.1, even with backports' 6.12
#      headers installed beside it);
#   4. else the newest installed linux-headers-*-amd64.
# Never hard-codes an ABI number.
if [ -n "${MROCE_KVER:-}" ]; then
	d=/usr/src/linux-headers-$MROCE_KVER
	[ -d "$d" ] || d=/lib/modules/$MROCE_KVER/build
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
meta=$(dpkg-query -W -f '${Depends}' linux-headers-amd64 2>/dev/null |
	sed -n 's/.*linux-headers-\([^ ,]*-amd64\).*/\1/p')
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
