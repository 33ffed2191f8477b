#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# "make deb": Debian packages of mroce into build/deb/:
#   mroce-dkms      the module's source + dkms.conf (DKMS builds it for
#                   every kernel with headers)
#   mroce-provider  libmroce-rdmav34.so + /etc/libibverbs.d/mroce.driver
#   mroce-tools     mroce-verify, mroce-top, mroce(7), mroce-verify(1),
#                   mroce-top(1)
# The tree as it is (tracked and untracked, not ignored, files) is copied
# to build/deb/src/mroce-VERSION and built there with dpkg-buildpackage
# (binary only, unsigned); dpkg-buildpackage writes to the parent of the
# source, which must not be the parent of the worktree.  Then lintian,
# which must report no error (MROCE_LINTIAN=0 skips it).
# The version comes from the top-level VERSION file; debian/changelog's
# top entry must carry the same.
set -euo pipefail
top=$(dirname "$(dirname "$(readlink -f "$0")")")
cd "$top"

die() { echo "deb: $*" >&2; exit 1; }
for c in dpkg-buildpackage dpkg-parsechangelog dh dh_dkms; do
	command -v "$c" >/dev/null ||
		die "$c not found: run tools/setup.sh (debhelper, dh-dkms, dpkg-dev)"
done

ver=$(cat VERSION)
clver=$(dpkg-parsechangelog -l debian/changelog -SVersion)
[ "$clver" = "$ver" ] ||
	die "VERSION says $ver but debian/changelog says $clver (dch -v $ver)"

out=$top/build/deb
src=$out/src/mroce-$ver
rm -rf "$out"
mkdir -p "$src"
git ls-files -z -co --exclude-standard |
	while IFS= read -r -d '' f; do
		[ -e "$f" ] && printf '%s\0' "$f"
	done |
	tar --null -T - -cf - | tar -C "$src" -xf -

(cd "$src" && dpkg-buildpackage -b -us -uc) >"$out/build.log" 2>&1 ||
	{ tail -n 40 "$out/build.log" >&2; die "dpkg-buildpackage failed (log: $out/build.log)"; }
mv "$out"/src/*.deb "$out"/src/*.changes "$out"/src/*.buildinfo "$out"/
rm -rf "$out/src"

echo "deb: packages in $out (build log: $out/build.log)"
for d in "$out"/*.deb; do
	printf '  %-40s %8s bytes\n' "${d##*/}" "$(stat -c %s "$d")"
done

if [ "${MROCE_LINTIAN:-1}" != 0 ]; then
	command -v lintian >/dev/null || die "lintian not found: run tools/setup.sh"
	echo "deb: lintian"
	lintian --fail-on error --tag-display-limit 0 "$out"/*.changes ||
		die "lintian reports errors"
	echo "deb: lintian: no errors"
fi
