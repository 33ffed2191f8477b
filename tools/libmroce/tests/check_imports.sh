#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# check_imports.sh LIB - check the provider's dynamic symbol interface:
#  * every symbol it imports from libibverbs is exported by the
#    libibverbs.so.1 it resolves to, with exactly the same symbol version,
#    and only IBVERBS_PRIVATE_<PABI> / IBVERBS_1.x versions are used;
#  * it exports nothing (libibverbs only needs its constructor).
set -eu

lib=${1:?usage: check_imports.sh path/to/libmroce-rdmavNN.so}
pabi=$(basename "$lib" | sed -n 's/^libmroce-rdmav\([0-9]*\)\.so$/\1/p')
[ -n "$pabi" ] || { echo "check_imports: cannot get PABI from $lib" >&2; exit 1; }

verbs=$(ldd "$lib" | awk '$1 == "libibverbs.so.1" { print $3 }')
if [ -z "$verbs" ] || [ ! -e "$verbs" ]; then
	echo "FAIL: $lib does not resolve libibverbs.so.1" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "VERSION SYMBOL" of what libibverbs exports (defined, not hidden).
objdump -T "$verbs" | awk '$2 != "*UND*" && $4 != "*UND*" && /IBVERBS_/ {
	v = $(NF - 1); gsub(/[()]/, "", v); print v, $NF }' | sort -u >"$tmp/exported"

# Everything the provider imports from an IBVERBS_* version node.
objdump -T "$lib" | awk '/\*UND\*/ && /IBVERBS_/ {
	v = $(NF - 1); gsub(/[()]/, "", v); print v, $NF }' | sort -u >"$tmp/imported"

# Anything the provider defines in its dynamic symbol table.
objdump -T "$lib" | awk '/^[0-9a-f]+ / && !/\*UND\*/ { print $NF }' >"$tmp/defined"

status=0
echo "check_imports: $lib against $verbs"
while read -r ver sym; do
	case $ver in
	IBVERBS_PRIVATE_"$pabi" | IBVERBS_1.*) ;;
	*)	echo "FAIL: $sym uses unexpected version $ver"; status=1 ;;
	esac
	if grep -qx "$ver $sym" "$tmp/exported"; then
		echo "  ok   $sym@$ver"
	else
		echo "  FAIL $sym@$ver is not exported by $verbs"
		status=1
	fi
done <"$tmp/imported"

[ -s "$tmp/imported" ] || { echo "FAIL: no IBVERBS_* imports found"; status=1; }
grep -q "^IBVERBS_PRIVATE_$pabi verbs_register_driver_$pabi\$" "$tmp/imported" ||
	{ echo "FAIL: verbs_register_driver_$pabi is not imported"; status=1; }

# Undefined symbols without any IBVERBS_ version must come from libc.
objdump -T "$lib" | awk '/\*UND\*/ && !/IBVERBS_/ && !/GLIBC_/ && $NF !~ /^(_ITM_|__gmon_start__|__cxa_finalize)/ { print $NF }' >"$tmp/other"
if [ -s "$tmp/other" ]; then
	echo "FAIL: unexpected unversioned imports:"; sed 's/^/  /' "$tmp/other"; status=1
fi

if [ -s "$tmp/defined" ]; then
	echo "FAIL: the provider exports symbols:"; sed 's/^/  /' "$tmp/defined"; status=1
else
	echo "  ok   exports no symbols"
fi

if [ $status -eq 0 ]; then
	echo "check_imports: PASS"
else
	echo "check_imports: FAIL"
fi
exit $status
