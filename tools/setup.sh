#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Install (as root) every Debian package mroce needs: tools/packages.txt.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
mapfile -t pkgs < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/packages.txt")
if [ "$(id -u)" != 0 ]; then
	echo "setup.sh: run as root (apt-get install)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${pkgs[@]}"
