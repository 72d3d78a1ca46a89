#!/bin/sh
# Build the EXAMPLE section of a man page as a user would: against libdti
# installed in DESTDIR, with the flags pkg-config gives, linked with the
# shared library.  First a file holding only #include <dti/libdti.h> must
# compile (the header stands on its own, record flags included).
# tests/test_cli.py runs the example.
# usage: check-man-example.sh PAGE OUT DESTDIR CC [CFLAGS...]
set -eu
page=$1 out=$2 destdir=$3
shift 3
pcdir=$(dirname "$(find "$destdir" -name libdti.pc)")
export PKG_CONFIG_LIBDIR="$pcdir" PKG_CONFIG_SYSROOT_DIR="$destdir"
flags=$(pkg-config --cflags --libs libdti)
libdir=$(pkg-config --libs-only-L libdti | sed 's/^ *-L//; s/ *$//')

printf '#include <dti/libdti.h>\nint main(void) { return DTI_REC_TEXT != 1; }\n' > "$out-hdr.c"
"$@" -o "$out-hdr" "$out-hdr.c" $flags

sed -n '/^\.SH EXAMPLE/,/^\.fi/p' "$page" | sed '1,2d;$d' |
	sed -e 's/\\-/-/g' -e 's/\\e/\\/g' > "$out.c"
"$@" -o "$out" "$out.c" $flags
if ! LD_LIBRARY_PATH=$libdir ldd "$out" | grep -q "=> $libdir/libdti.so.0 "; then
	echo "man-example: $out does not use $libdir/libdti.so.0:" >&2
	LD_LIBRARY_PATH=$libdir ldd "$out" >&2
	exit 1
fi
echo "man-example: the EXAMPLE of $page builds with pkg-config against $libdir/libdti.so.0"
