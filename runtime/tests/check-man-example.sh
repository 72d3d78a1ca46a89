#!/bin/sh
# Compile the EXAMPLE section of a man page against libdti.
# usage: check-man-example.sh PAGE OUT LIB CC [CFLAGS...]
set -eu
page=$1 out=$2 lib=$3
shift 3
sed -n '/^\.SH EXAMPLE/,/^\.fi/p' "$page" | sed '1,2d;$d' |
	sed -e 's/\\-/-/g' -e 's/\\e/\\/g' > "$out.c"
"$@" -o "$out" "$out.c" "$lib"
echo "man-example: the EXAMPLE of $page compiles"
