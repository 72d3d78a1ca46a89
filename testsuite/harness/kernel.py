"""Locate the guest kernel: release (KVER), /boot/vmlinuz-KVER and its build dir.

The host kernel cannot load modules, so every kernel-side test boots one of
Debian's *installed* kernels in QEMU.  We never hard-code a version: the
newest installed kernel that has both /boot/vmlinuz-KVER and
/lib/modules/KVER/build is chosen, unless env DTI_KVER names one.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

BOOT_DIR = Path("/boot")
MODULES_DIR = Path("/lib/modules")


class KernelNotFound(RuntimeError):
    """No usable installed kernel (vmlinuz + build dir) was found."""


@dataclass(frozen=True)
class Kernel:
    release: str        # e.g. "6.1.0-56-amd64" (what `uname -r` prints in the guest)
    vmlinuz: Path       # /boot/vmlinuz-<release>
    build_dir: Path     # /lib/modules/<release>/build (kbuild tree / headers)

    @property
    def modules_dir(self) -> Path:
        return MODULES_DIR / self.release


def version_key(release: str) -> tuple:
    """Sort key for kernel releases: numeric runs compare as numbers."""
    return tuple((0, int(p)) if p.isdigit() else (1, p)
                 for p in re.findall(r"\d+|[A-Za-z]+", release))


def _kernel_for(release: str, boot_dir: Path, modules_dir: Path) -> Kernel | None:
    vmlinuz = boot_dir / f"vmlinuz-{release}"
    build = modules_dir / release / "build"
    if vmlinuz.is_file() and (build / "Makefile").is_file():
        return Kernel(release, vmlinuz, build)
    return None


def installed_kernels(boot_dir: Path = BOOT_DIR,
                      modules_dir: Path = MODULES_DIR) -> list[Kernel]:
    """All installed kernels with vmlinuz and build dir, newest first."""
    found = []
    if modules_dir.is_dir():
        for d in modules_dir.iterdir():
            k = _kernel_for(d.name, boot_dir, modules_dir)
            if k:
                found.append(k)
    found.sort(key=lambda k: version_key(k.release), reverse=True)
    return found


@functools.lru_cache(maxsize=None)
def find_kernel(release: str | None = None) -> Kernel:
    """Return the kernel to boot: `release`, else $DTI_KVER, else the newest."""
    release = release or os.environ.get("DTI_KVER") or None
    if release:
        k = _kernel_for(release, BOOT_DIR, MODULES_DIR)
        if not k:
            raise KernelNotFound(
                f"kernel {release!r}: need {BOOT_DIR}/vmlinuz-{release} and "
                f"{MODULES_DIR}/{release}/build (install linux-image/linux-headers)")
        return k
    ks = installed_kernels()
    if not ks:
        raise KernelNotFound(
            "no installed kernel with /boot/vmlinuz-KVER and /lib/modules/KVER/build; "
            "apt-get install linux-image-amd64 linux-headers-amd64")
    return ks[0]
