#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# dtitest.sh - the kselftest of DTI's debugfs interface
#
# Runs each test.d/*.tc, one feature each, on one DTI channel: the one
# $DTI_CHANNEL names, else the first under /sys/kernel/debug/dti.  A
# test's "# description:" line names it in the KTAP output, its
# "# requires:" line the files of the channel's directory it needs; a
# test that lacks one, or exits 4, is unsupported (skipped), not failed.
# The channel's level and marker level are put back after each test.
#
# Exit status: 0 when no test failed, 4 (KSFT_SKIP) when DTI or a
# channel is missing or no test could run, 1 when one failed.
#
# DTI is in the kernel or its module (modprobe dti); the channels are
# drivers' (DTI has no debugfs file that creates one).  The files are
# root's.

KSFT_FAIL=1
KSFT_SKIP=4

TOP=$(cd "$(dirname "$0")" && pwd)
DEBUGFS=${DEBUGFS:-/sys/kernel/debug}

skip_all() {
	echo "TAP version 13"
	echo "1..0 # SKIP $*"
	exit $KSFT_SKIP
}

[ "$(id -u)" = 0 ] || skip_all "not root"
[ -d "$DEBUGFS/dti" ] || mount -t debugfs none "$DEBUGFS" 2>/dev/null
[ -d "$DEBUGFS/dti" ] || modprobe dti 2>/dev/null
[ -d "$DEBUGFS/dti" ] || skip_all "no $DEBUGFS/dti: a kernel without DTI (CONFIG_DTI)"

if [ -z "${DTI_CHANNEL:-}" ]; then
	for d in "$DEBUGFS"/dti/*/; do
		if [ -f "$d/level" ]; then
			DTI_CHANNEL=$(basename "$d")
			break
		fi
	done
fi
[ -n "${DTI_CHANNEL:-}" ] && [ -f "$DEBUGFS/dti/$DTI_CHANNEL/level" ] ||
	skip_all "no DTI channel${DTI_CHANNEL:+ $DTI_CHANNEL}:" \
		 "load a driver that has one, or set DTI_CHANNEL"
D=$DEBUGFS/dti/$DTI_CHANNEL
export DEBUGFS DTI_CHANNEL D

TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/dtitest.XXXXXX") || exit $KSFT_FAIL
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT

level0=$(cat "$D/level")
mark0=$(cat "$D/marker_level" 2>/dev/null)
restore() {
	echo "$level0" > "$D/level" 2>/dev/null
	[ -z "$mark0" ] || echo "$mark0" > "$D/marker_level" 2>/dev/null
}

set -- "$TOP"/test.d/*.tc
echo "TAP version 13"
echo "# channel $DTI_CHANNEL"
echo "1..$#"
n=0 pass=0 fail=0 skip=0
for t in "$@"; do
	n=$((n + 1))
	desc=$(sed -n 's/^# description: //p' "$t")
	desc=${desc:-$(basename "$t")}
	# Buffers for the files that come with them: a handle's come with
	# a record, and a test may have destroyed them.
	[ -e "$D/trace0" ] || sh -c '. "$1"; echo 7 > "$D/level"; buffers' \
		dtitest.sh "$TOP/test.d/functions" > /dev/null 2>&1
	missing=
	for f in $(sed -n 's/^# requires: //p' "$t"); do
		[ -e "$D/$f" ] || missing="$missing $f"
	done
	if [ -n "$missing" ]; then
		echo "ok $n $desc # SKIP the channel has no$missing"
		skip=$((skip + 1))
		continue
	fi
	log=$TMPDIR/log
	sh -e -c '. "$1"; . "$2"' dtitest.sh "$TOP/test.d/functions" "$t" > "$log" 2>&1
	rc=$?
	restore
	case $rc in
	0)	echo "ok $n $desc"
		pass=$((pass + 1));;
	$KSFT_SKIP)
		echo "ok $n $desc # SKIP $(tail -n 1 "$log")"
		skip=$((skip + 1));;
	*)	echo "not ok $n $desc"
		sed 's/^/# /' "$log"
		fail=$((fail + 1));;
	esac
done
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ $fail = 0 ] || exit $KSFT_FAIL
[ $pass -gt 0 ] || exit $KSFT_SKIP
exit 0
