#!/bin/sh
# The shared library exports exactly the functions libdti.h declares, all
# under a version of libdti.map, and libdti.map lists exactly those.
# usage: check-abi.sh HEADER LIBDTI.SO MAP
set -eu
hdr=$1 so=$2 map=$3
tmp=${TMPDIR:-/tmp}/check-abi.$$
trap 'rm -f "$tmp".*' EXIT
# the declarations check-api-doc.sh counts
sed -n '/^typedef/d; s/^[a-z].*[ *]\(dti_[a-z_]*\)(.*/\1/p' "$hdr" | sort > "$tmp.h"
nm -D --defined-only "$so" | awk '$2 != "A" { print $3 }' | sort > "$tmp.so"
sed 's/@.*//' "$tmp.so" > "$tmp.exp"
sed -n 's/^[ \t]*\(dti_[a-z_]*\);.*/\1/p' "$map" | sort > "$tmp.map"
bad=0
if ! diff -u "$tmp.h" "$tmp.exp" > "$tmp.d"; then
	echo "$so: exported symbols (+) differ from the functions of $hdr (-):" >&2
	cat "$tmp.d" >&2
	bad=1
fi
if ! diff -u "$tmp.h" "$tmp.map" > "$tmp.d"; then
	echo "$map (+) differs from the functions of $hdr (-):" >&2
	cat "$tmp.d" >&2
	bad=1
fi
if grep -v '@@LIBDTI_' "$tmp.so" >&2; then
	echo "$so: the symbols above have no version" >&2
	bad=1
fi
[ $bad = 0 ] || exit 1
echo "abi: $(wc -l < "$tmp.h") functions exported from $(basename "$so"), as libdti.h and libdti.map list them"
