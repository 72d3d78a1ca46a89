"""User space for a foreign guest (an arm64 kernel: Kernel.foreign).

The `dti` command is cross-built from runtime/ with the architecture's
cross compiler (Debian 12's gcc-aarch64-linux-gnu, whose C library is
libc6-dev-arm64-cross) against a sysroot of the libraries it links:
their Debian packages of that architecture, taken with `apt-get
download` and unpacked with `dpkg-deb -x` once, into the kernels' cache
(userland-ARCH-sysroot/), as the kernels' own packages are.  It goes to
runtime/build-ARCH/dti.  libsystemd is left out (`dti read --journal`
says so there).

In the guest the command needs those libraries and the cross C library:
guest_libs() names them by the ELF files' DT_NEEDED (readelf, since the
host's ldd cannot read another architecture's files) and places them
where the guest's dynamic loader looks, /lib/TRIPLET/.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from .kernel import cache_dir

REPO = Path(__file__).resolve().parent.parent.parent

# Per Debian architecture: the GNU triplet, the cross compiler, where its
# C library lives on the host, and the loader's path in the guest
CROSS_USERLAND = {
    "arm64": ("aarch64-linux-gnu", "aarch64-linux-gnu-gcc", Path("/usr/aarch64-linux-gnu/lib"),
              "/lib/ld-linux-aarch64.so.1"),
}

# The packages of the libraries `dti` links (elfutils, libkdumpfile) and
# theirs, headers included
SYSROOT_PACKAGES = ("libdw-dev", "libdw1", "libelf-dev", "libelf1", "libkdumpfile-dev",
                    "libkdumpfile10", "zlib1g", "liblzma5", "libzstd1", "libbz2-1.0",
                    "liblzo2-2", "libsnappy1v5")


# SystemTap's runtime for the guest (staprun and stapio, which the guest
# runs a compiled script's module with) and the libraries staprun links,
# the C++ ones included, as the arm64 packages of Debian 12 have them
STAP_PACKAGES = ("systemtap-runtime", "libnss3", "libnspr4", "libsqlite3-0", "libstdc++6",
                 "libgcc-s1", "libelf1", "zlib1g")


class UserlandError(RuntimeError):
    """The foreign user space cannot be made."""


def sysroot(arch: str, name: str = "sysroot",
            packages: tuple[str, ...] = SYSROOT_PACKAGES) -> Path:
    """The sysroot of `packages` (SYSROOT_PACKAGES) for `arch`, unpacked
    once into userland-ARCH-NAME/."""
    root = cache_dir("DTI_KERNELS_CACHE", "kernels") / f"userland-{arch}-{name}"
    stamp = root / ".dti-ready"
    if stamp.is_file() and stamp.read_text() == " ".join(packages) + "\n":
        return root
    shutil.rmtree(root, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        pkgs = [f"{p}:{arch}" for p in packages]
        r = subprocess.run(["apt-get", "download", "-q", *pkgs], cwd=tmp,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise UserlandError(f"apt-get download {' '.join(pkgs)} failed (dpkg "
                                f"--add-architecture {arch}? apt-get update?):\n{r.stderr}")
        for deb in sorted(Path(tmp).glob("*.deb")):
            subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    stamp.write_text(" ".join(packages) + "\n")
    return root


def _lib_dirs(arch: str, extra: Path | None = None) -> list[Path]:
    triplet, _, libc, _ = CROSS_USERLAND[arch]
    root = sysroot(arch)
    dirs = [root / "usr/lib" / triplet, root / "lib" / triplet]
    stap = cache_dir("DTI_KERNELS_CACHE", "kernels") / f"userland-{arch}-stap"
    if extra is None and (stap / ".dti-ready").is_file():
        extra = stap            # systemtap_runtime_files()'s, once unpacked
    if extra is not None:
        dirs += [extra / "usr/lib" / triplet, extra / "lib" / triplet]
    return dirs + [libc]


def build_dti(arch: str) -> Path:
    """runtime/build-ARCH/dti, cross-built (make decides what is stale)."""
    triplet, cc, _, _ = CROSS_USERLAND[arch]
    if not shutil.which(cc):
        raise UserlandError(f"{cc} not found: apt-get install gcc-{triplet} "
                            f"libc6-dev-{arch}-cross")
    root = sysroot(arch)
    dirs = ":".join(str(d) for d in _lib_dirs(arch)[:2])
    out = f"build-{arch}"
    cmd = ["make", "-C", str(REPO / "runtime"), f"-j{os.cpu_count() or 1}", f"B={out}",
           f"CC={cc}", f"CPPFLAGS=-I{root}/usr/include",
           "LDFLAGS=" + " ".join(f"-L{d}" for d in _lib_dirs(arch)[:2])
           + f" -Wl,-rpath-link,{dirs}",
           "KDUMP_CFLAGS=", "KDUMP_LIBS=-lkdumpfile -laddrxlat",
           "SYSTEMD_LIBS=", "SYSTEMD_CFLAGS=",
           f"DW_HEADER={root}/usr/include/elfutils/libdwfl.h", f"{out}/dti"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        tail = "\n".join((r.stdout + r.stderr).splitlines()[-40:])
        raise UserlandError(f"cross-building dti failed ({' '.join(cmd)}):\n{tail}")
    warnings = [line for line in (r.stdout + r.stderr).splitlines() if "warning:" in line]
    if warnings:
        raise UserlandError("cross-building dti warned:\n" + "\n".join(warnings[:20]))
    return REPO / "runtime" / out / "dti"


def _needed(path: Path) -> list[str]:
    r = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True)
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", r.stdout)


@functools.lru_cache(maxsize=None)
def _guest_libs(arch: str, path: str, size: int, mtime: int,
                extra: str | None = None) -> tuple[tuple[str, str], ...]:
    triplet, _, _, loader = CROSS_USERLAND[arch]
    dirs = _lib_dirs(arch, Path(extra) if extra else None)
    found: dict[str, str] = {}
    todo = [Path(path)]
    while todo:
        for name in _needed(todo.pop()):
            if name in found or "/" + name == loader or Path(name).name == Path(loader).name:
                continue
            host = next((d / name for d in dirs if (d / name).exists()), None)
            if host is None:
                raise UserlandError(f"{path}: {name} is in none of "
                                    f"{', '.join(map(str, dirs))}")
            found[name] = str(host.resolve())
            todo.append(host)
    libc = CROSS_USERLAND[arch][2]
    pairs = [(host, f"/lib/{triplet}/{name}") for name, host in found.items()]
    pairs.append((str((libc / Path(loader).name).resolve()), loader))
    return tuple(pairs)


def guest_libs(arch: str, path: str | os.PathLike,
               extra: Path | None = None) -> list[tuple[str, str]]:
    """(host path, guest path) of the libraries and the loader that `arch`
    ELF file `path` needs, looked for in the sysroot, then in the unpacked
    packages `extra`, then in the cross C library."""
    st = Path(path).stat()
    return list(_guest_libs(arch, str(path), st.st_size, st.st_mtime_ns,
                            str(extra) if extra else None))


def systemtap_runtime_files(arch: str) -> dict[str, str]:
    """{host: guest} for an `arch` guest's staprun and stapio (where
    staprun execs it): Debian's systemtap-runtime of that architecture,
    unpacked with the libraries they need as the sysroot is, where
    guest_libs() finds those (the initramfs adds them)."""
    root = sysroot(arch, "stap", STAP_PACKAGES)
    files: dict[str, str] = {}
    for guest in ("/usr/bin/staprun", "/usr/lib/systemtap/stapio"):
        host = root / guest.lstrip("/")
        if not host.is_file():
            raise UserlandError(f"{host}: not in {arch}'s systemtap-runtime")
        files[str(host)] = guest
        guest_libs(arch, host, root)    # all there, or UserlandError now
    return files


def static_helper(src: Path, out_dir: Path, arch: str, include: Path | None = None,
                  deps: tuple[Path, ...] = ()) -> Path:
    """A test's helper program `src`, linked static for a guest of `arch`
    (the host's gcc, or CROSS_USERLAND's compiler for a foreign one),
    into out_dir/ARCH/, built again when older than its source or `deps`;
    `include`: a directory for -I."""
    cc = CROSS_USERLAND[arch][1] if arch in CROSS_USERLAND else "gcc"
    exe = out_dir / arch / src.stem
    newest = max(p.stat().st_mtime for p in (src, *deps))
    if not exe.is_file() or exe.stat().st_mtime < newest:
        exe.parent.mkdir(parents=True, exist_ok=True)
        r = subprocess.run([cc, "-O2", "-Wall", "-Wextra", "-Werror", "-static",
                            *(["-I", str(include)] if include else []),
                            "-o", str(exe), str(src)], capture_output=True, text=True)
        if r.returncode:
            raise UserlandError(f"building {src.name} with {cc} failed:\n{r.stderr}")
    return exe
