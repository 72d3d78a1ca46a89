#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# mkbtf.sh MODULE.ko BASE_BTF
#
# Give a module built out of tree the BTF that Kbuild's modfinal step
# gives one built with the kernel's vmlinux at hand: its types split from
# BASE_BTF (pahole -J --btf_base), then the ids of its BTF id sets (the
# kfuncs') resolved against both (resolve_btfids -b).  BASE_BTF is the
# target kernel's own BTF, /sys/kernel/btf/vmlinux of that kernel (or its
# vmlinux with debug info): a module's split BTF refers to its type ids,
# so the BTF of any other build of the same version will not do.
#
# Environment: PAHOLE (default pahole, from Debian's dwarves or pahole
# package), RESOLVE_BTFIDS (default resolve_btfids; Debian ships it in
# linux-kbuild-VERSION/tools/bpf/resolve_btfids/).
set -eu

ko=$1
base=$2
pahole=${PAHOLE:-pahole}
resolve=${RESOLVE_BTFIDS:-resolve_btfids}

for t in "$pahole" "$resolve"; do
	if ! command -v "$t" >/dev/null 2>&1; then
		echo "mkbtf.sh: $t not found: $ko keeps no BTF, and BPF programs can call none of its kfuncs" >&2
		exit 1
	fi
done
if [ ! -r "$base" ]; then
	echo "mkbtf.sh: $base: no such BTF (the target kernel's /sys/kernel/btf/vmlinux)" >&2
	exit 1
fi

# A kernel whose headers carry its vmlinux (Debian's from 6.12) gave the
# module its BTF at the build: nothing to do, and resolving its ids again
# would undo their sorting.
if ${OBJDUMP:-objdump} -h "$ko" | grep -q ' \.BTF '; then
	echo "mkbtf.sh: $ko has its BTF already" >&2
	exit 0
fi

# The flags the kernel's scripts/pahole-flags.sh gives for this pahole:
# floats from 1.21, threads from 1.22.
ver=$("$pahole" --version | sed 's/^v//; s/\.//')
flags=""
[ "$ver" -ge 121 ] && flags="$flags --btf_gen_floats"
[ "$ver" -ge 122 ] && flags="$flags -j"

# pahole writes the .BTF section into the module itself.
LLVM_OBJCOPY=${OBJCOPY:-objcopy} "$pahole" -J $flags --btf_base "$base" "$ko"
"$resolve" -b "$base" "$ko"
