#!/bin/sh
# Every function in the public header has a comment right above it that
# says what it returns on error (or that it cannot fail / returns nothing).
set -eu
hdr=${1:-include/dti/libdti.h}
awk '
/^[a-z].*[ *]dti_[a-z_]+\(/ && !/^typedef/ {
	match($0, /dti_[a-z_]+\(/)
	fn = substr($0, RSTART, RLENGTH - 1)
	if (prev !~ /\*\/[ \t]*$/) { print hdr ": " fn ": no comment above the declaration"; bad = 1 }
	else if (doc !~ /(Return|[Rr]eturns|NULL on|or -1|Never fails|is ignored|"\?")/) {
		print hdr ": " fn ": comment does not say what it returns"; bad = 1
	}
	n++
}
/\/\*/ { doc = "" }
{ doc = doc " " $0; if ($0 !~ /^[ \t]*$/) prev = $0 }
/;[ \t]*$/ && !/\*/ { doc = "" }
END { if (bad) exit 1; printf "api-doc: %d public functions documented\n", n }
' hdr="$hdr" "$hdr"
