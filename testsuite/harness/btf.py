"""BTF for dti.ko built out of tree, for the BPF tests (issue 56).

Debian's kernels are built with CONFIG_DEBUG_INFO_BTF_MODULES=y, but a
module built against their headers gets no BTF: Kbuild's modfinal step
splits a module's BTF from vmlinux's and skips it ("Skipping BTF
generation ... due to unavailability of vmlinux"), since the headers
carry no vmlinux.  A module's kfuncs are found by their BTF ids, so
without BTF a BPF program can call none.

The target kernel's own BTF is what a module's split BTF must refer to
(type ids and all), and the running kernel gives it: /sys/kernel/btf/vmlinux.
target_btf() boots the kernel once and keeps that file (cached per
release, under the kernels' cache); kmod/mkbtf.sh then does what modfinal
would have (pahole -J --btf_base, resolve_btfids -b) on a copy of the
module built as usual (add_btf()).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from . import vm
from .kernel import Kernel, cache_dir

REPO = Path(__file__).resolve().parent.parent.parent
MKBTF = REPO / "kmod" / "mkbtf.sh"


class BTFError(RuntimeError):
    pass


def cache(kernel: Kernel) -> Path:
    return cache_dir("DTI_BTF_CACHE", "btf") / kernel.release


def target_btf(kernel: Kernel, build_dir: Path | None = None) -> Path:
    """The kernel's /sys/kernel/btf/vmlinux, from a boot of it (cached)."""
    out = cache(kernel) / "vmlinux.btf"
    if out.is_file():
        return out
    res = vm.run("""
        if [ ! -r /sys/kernel/btf/vmlinux ]; then echo "no /sys/kernel/btf/vmlinux" >&2; exit 3; fi
        cp /sys/kernel/btf/vmlinux /out/vmlinux.btf
    """, kernel=kernel, build_dir=build_dir, timeout=300)
    got = res.outdir / "vmlinux.btf" if res.outdir else None
    if res.rc != 0 or not got or not got.is_file():
        raise BTFError(f"{kernel.release}: no BTF from the guest (rc {res.rc}): "
                       f"{res.stdout[-500:]}")
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(got, out)
    return out


def resolve_btfids() -> Path | None:
    """A resolve_btfids binary: Debian's kbuild packages carry one from 6.12
    (the tool reads only ELF and BTF, so any kernel's does)."""
    found = sorted(Path("/usr/lib").glob("linux-kbuild-*/tools/bpf/resolve_btfids/resolve_btfids"))
    return found[-1] if found else None


def add_btf(ko: Path, kernel: Kernel, build_dir: Path | None = None) -> Path:
    """A copy of module `ko` with BTF split from `kernel`'s; its path."""
    base = target_btf(kernel, build_dir)
    dest = cache(kernel) / ko.name
    tool = resolve_btfids()
    if tool is None:
        raise BTFError("no resolve_btfids: install linux-kbuild-6.12 (Debian 12's backports "
                       "headers bring it)")
    shutil.copyfile(ko, dest)
    r = subprocess.run([str(MKBTF), str(dest), str(base)], capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "RESOLVE_BTFIDS": str(tool)})
    if r.returncode != 0:
        raise BTFError(f"mkbtf.sh {dest} {base}: {r.stdout}{r.stderr}")
    return dest
