#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Print the kernel build directory mroce builds against: the running
# kernel's when it has one, else the newest installed Debian
# linux-headers-*-amd64.  Never hard-codes an ABI number.
b=/lib/modules/$(uname -r)/build
if [ -d "$b" ]; then
	echo "$b"
	exit 0
fi
d=$(printf '%s\n' /usr/src/linux-headers-*-amd64 | sort -V | tail -n 1)
if [ ! -d "$d" ]; then
	echo "kdir.sh: no kernel headers; install linux-headers-amd64" >&2
	exit 1
fi
echo "$d"
