"""Locate the guest kernel: release (KVER), /boot/vmlinuz-KVER and its build dir.

The host kernel cannot load modules, so every kernel-side test boots one of
Debian's *installed* kernels in QEMU.  We never hard-code a version: the
newest installed kernel that has both /boot/vmlinuz-KVER and
/lib/modules/KVER/build is chosen, unless env DTI_KVER names one.

Env DTI_KERNEL=NAME boots a kernel of the matrix (harness/kernels.py:
6.1, 6.12, 5.10, newest, the -rt flavours).  Without DTI_KERNEL or
DTI_KVER the default is Debian's default kernel, the one the installed
linux-image-amd64 depends on, else the newest installed.

Env DTI_KERNEL=arm64-6.1 (arm64-6.12, arm64-newest) boots Debian's arm64
kernel under qemu-system-aarch64: its Kernel's arch is "arm64", its
packages are unpacked in the cache (harness/kernels.py) and its modules
cross-built (kbuild_vars: ARCH and CROSS_COMPILE).

Env DTI_KERNEL=debug boots the debug kernel instead (`make debug-kernel`,
harness/debugkernel.py: Debian's source with KASAN, lockdep, kmemleak ...),
which is not installed: its paths point into its cache, and DTI_KERNEL may
also name such a cache directory.

Env DTI_KERNEL=builtin boots the kernel with DTI built in (`make
builtin-kernel`, harness/builtinkernel.py): no dti.ko to load.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

BOOT_DIR = Path("/boot")
MODULES_DIR = Path("/lib/modules")


# The architecture the host builds and boots natively (the kernel's ARCH
# name of x86-64 is x86; Kernel.arch says the machine, as `uname -m`)
HOST_ARCH = "x86_64"
# Per foreign architecture: Debian's name of it, the kernel's ARCH and the
# cross compiler's prefix (Debian 12's gcc-aarch64-linux-gnu)
CROSS = {"arm64": ("arm64", "arm64", "aarch64-linux-gnu-")}


class KernelNotFound(RuntimeError):
    """No usable installed kernel (vmlinuz + build dir) was found."""


@dataclass(frozen=True)
class Kernel:
    release: str        # e.g. "6.1.0-56-amd64" (what `uname -r` prints in the guest)
    vmlinuz: Path       # /boot/vmlinuz-<release>
    build_dir: Path     # /lib/modules/<release>/build (kbuild tree / headers)
    modules_root: Path = MODULES_DIR    # holds <release>/ (modules.dep, kernel/...)
    flavour: str = "debian"     # "debian": installed; "debug": debugkernel.py's build;
                                # "builtin": builtinkernel.py's, DTI built in;
                                # "chroot": kernels.py's, in a chroot of its release
    timeout_factor: float = 1.0     # guest timeouts are multiplied by this
    vmlinux: Path | None = None     # the kernel with DWARF when it comes with one
    name: str | None = None         # its name in kernels.SPECS, if it has one
    chroot: Path | None = None      # where its modules are built (kernels.py)
    arch: str = HOST_ARCH           # the guest's machine: x86_64, or a key of CROSS

    @property
    def foreign(self) -> bool:
        """Whether the kernel is for another architecture than the host's
        (cross-built modules, another QEMU, another user space)."""
        return self.arch != HOST_ARCH

    @property
    def modules_dir(self) -> Path:
        return self.modules_root / self.release

    @property
    def stap_target(self) -> str:
        """What `stap -r` is given.  An installed kernel: its release (stap
        then reads /lib/modules/KVER, where install_dti() puts dti.ko).  The
        debug kernel: its build tree, where stap finds vmlinux and, by
        searching the tree, every module (dti.ko in stap_module_dir)."""
        return self.release if self.flavour == "debian" else str(self.build_dir)

    @property
    def stap_module_dir(self) -> Path:
        """Where dti.ko goes for `stap -r stap_target` to find module("dti")."""
        if self.flavour == "debian":
            return self.modules_dir / "extra"
        return self.build_dir / "extra"

    def config(self) -> set[str] | None:
        """The lines of the kernel's config (build_dir/.config), or None if
        the build tree has none."""
        path = self.build_dir / ".config"
        return set(path.read_text().splitlines()) if path.is_file() else None

    @property
    def built_by_gcc(self) -> str | None:
        """The major version of the gcc the build tree was configured with
        (its CONFIG_CC_VERSION_TEXT), None for another compiler or no config."""
        for line in self.config() or ():
            m = re.fullmatch(r'CONFIG_CC_VERSION_TEXT="gcc\b.* (\d+)\.\d+\.\d+"', line)
            if m:
                return m.group(1)
        return None

    @functools.cached_property
    def kbuild_vars(self) -> tuple[str, ...]:
        """What Kbuild and `stap -B` must be given, beyond the build tree,
        to build modules for this kernel here: CC=gcc-N where the tree was
        built by gcc N and this system's gcc is of another major version
        (a debug kernel built on Debian 12, used from Debian 13).  Debian's
        headers name their compiler themselves, and a chroot kernel's
        modules are built in its chroot, so only a "debug" tree is asked.
        A foreign kernel: ARCH and CROSS_COMPILE (its headers name the
        compiler's version, as CROSS_COMPILE's gcc-N)."""
        if self.foreign:
            _, karch, prefix = CROSS[self.arch]
            return (f"ARCH={karch}", f"CROSS_COMPILE={prefix}")
        major = self.built_by_gcc if self.flavour == "debug" else None
        if major is None or gcc_major("gcc") == major:
            return ()
        if gcc_major(f"gcc-{major}") == major:
            return (f"CC=gcc-{major}",)
        raise KernelNotFound(f"{self.build_dir} was built by gcc {major} and this system's "
                             f"gcc is {gcc_major('gcc') or 'missing'}: install gcc-{major} "
                             "(its modules are built with it)")

    @property
    def preempt_rt(self) -> bool:
        """Whether the kernel is a PREEMPT_RT one (its config says so)."""
        return "CONFIG_PREEMPT_RT=y" in (self.config() or ())

    def scaled(self, timeout: float) -> float:
        """A guest timeout for this kernel: times $DTI_TIMEOUT_FACTOR if set,
        else times timeout_factor (the debug kernel runs several times slower)."""
        factor = os.environ.get("DTI_TIMEOUT_FACTOR")
        return timeout * (float(factor) if factor else self.timeout_factor)


def gcc_major(gcc: str) -> str | None:
    """The major version of compiler `gcc` (e.g. "12"), None if absent."""
    try:
        r = subprocess.run([gcc, "-dumpversion"], capture_output=True, text=True)
    except OSError:
        return None
    if r.returncode != 0 or not r.stdout.strip():
        return None
    return r.stdout.strip().split(".")[0]


def cache_dir(env: str, name: str) -> Path:
    """$env if set, else ${XDG_CACHE_HOME:-~/.cache}/dti/name: where a kind
    of kernel the harness builds or installs is kept, outside the tree."""
    if os.environ.get(env):
        return Path(os.environ[env])
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "dti" / name


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


def default_release() -> str | None:
    """The release Debian's default kernel metapackage depends on, if both
    are installed."""
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}\t${Depends}", "linux-image-amd64"],
                       capture_output=True, text=True)
    status, _, depends = r.stdout.partition("\t")
    m = re.search(r"linux-image-(\d[^\s,(]*)", depends)
    if r.returncode != 0 or "ok installed" not in status or not m:
        return None
    return m.group(1) if _kernel_for(m.group(1), BOOT_DIR, MODULES_DIR) else None


@functools.lru_cache(maxsize=None)
def find_kernel(release: str | None = None) -> Kernel:
    """Return the kernel to boot: `release`, else the one $DTI_KERNEL
    names (a kernel of the matrix or the debug kernel), else $DTI_KVER,
    else Debian's default kernel, else the newest installed one."""
    spec = os.environ.get("DTI_KERNEL")
    if release is None and spec:
        from . import kernels
        if spec in kernels.SPECS:
            return kernels.find(spec)
        if spec == "builtin":
            from . import builtinkernel
            return builtinkernel.find()
        from . import debugkernel
        return debugkernel.find(spec)
    release = release or os.environ.get("DTI_KVER") or default_release()
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

