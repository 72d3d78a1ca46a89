"""The built-in kernel: Debian's kernel source with the DTI series applied
and DTI built in (CONFIG_DTI=y), for the tests of DTI from boot.

    cd testsuite && python3 -m harness.builtinkernel build --series DIR [-j N]
    cd testsuite && python3 -m harness.builtinkernel path   # its cache dir, or exit 1

`make builtin-kernel` writes the series (`make patches KERNEL=6.12`) and
runs `build` on it; DTI_KERNEL=builtin boots the result.

The source is SOURCE_PACKAGE's tarball (Debian's patches and all).  The
series is what `make patches` writes: a git format-patch directory, cover
letter first; every patch but the cover letter is applied with `git am`.
The config is Debian's: the .config of Debian's own 6.12 kernel
(linux-headers-X-amd64 of the matrix's 6.12, `make kernels KERNEL=6.12`)
with its modules left out (each `=m` becomes "is not set": the several
thousand modules are hours on this host's 2 cores, and DTI's boot tests
load none of them), then builtin-kernel.config (next to this file)
merged over it by scripts/kconfig/merge_config.sh and checked line by
line as debugkernel.check_config() does: DTI, its KUnit suite,
virtio_blk with its DTI records, all built in, what the harness's guests
need built in rather than as modules, and no debug information (Debian's
BTF needs pahole and DWARF nothing here reads).  So what is built in is
what Debian builds in: its scheduler, locking, memory, security and
tracing options, under which DTI from boot is tested.

One tree is kept and built again in place, so that a change to kmod/
costs minutes, not a kernel:

    $DTI_BUILTIN_KERNEL_CACHE or ~/.cache/dti/builtin-kernel/
      work/src/       the source as a git repository: tag `base` is the
                      tarball, branch `dti` the series on top of it.  A new
                      series resets the branch to base (files the old one
                      touched get new times, nothing else does) and is
                      applied again; make then rebuilds what changed.
      bzImage, System.map, config
      modules/lib/modules/RELEASE/   make modules_install
      build.log       every build's output
      info.json       written last: release, source version, the series'
                      hash, the hash of kmod/ it was made from, times

find() gives the harness the Kernel only when info.json's kmod hash is
that of the kmod/ of the checkout: a kernel built from other DTI sources
is reported as stale (KernelNotFound, with the command that rebuilds it),
so the tests never pass on code they did not build.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from . import debugkernel
from .debugkernel import DebugKernelError, check_config, config_counts
from .kernel import Kernel, KernelNotFound
from .kernel import cache_dir as kernel_cache_dir

SOURCE_PACKAGE = "linux-source-6.12"
SERIES_KERNEL = "6.12"              # what `make patches KERNEL=` is given
BASE_KERNEL = "6.12"                # whose Debian .config the kernel starts from
FRAGMENT = Path(__file__).resolve().with_name("builtin-kernel.config")
REPO = Path(__file__).resolve().parents[2]
MAKE_COMMAND = "make builtin-kernel"
BUILD_TIME = "about 45 min the first time, a few minutes after a change to kmod/"
TIMEOUT_FACTOR = 1.0
GIT_ID = ["-c", "user.name=DTI test harness", "-c", "user.email=dti@localhost"]


class BuiltinKernelError(DebugKernelError):
    """The built-in kernel cannot be built (no source, a patch that does not
    apply, a config that does not hold, make failed)."""


def cache_root() -> Path:
    return kernel_cache_dir("DTI_BUILTIN_KERNEL_CACHE", "builtin-kernel")


def source_version() -> str:
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}\t${Version}", SOURCE_PACKAGE],
                       capture_output=True, text=True)
    status, _, version = r.stdout.partition("\t")
    if r.returncode != 0 or "ok installed" not in status or not version:
        raise BuiltinKernelError(f"{SOURCE_PACKAGE} is not installed: "
                                 f".ci/install-deps {SOURCE_PACKAGE} ({MAKE_COMMAND} does)")
    return version


def source_tarball() -> Path:
    r = subprocess.run(["dpkg", "-L", SOURCE_PACKAGE], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith("/usr/src/linux-source-") and ".tar." in line:
            return Path(line)
    raise BuiltinKernelError(f"{SOURCE_PACKAGE} installs no /usr/src/linux-source-*.tar.*")


def kmod_hash() -> str:
    """The hash of what the series is made from: kmod/'s tracked files as
    they are in the working tree, and the config fragment."""
    r = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "kmod"],
                       capture_output=True, check=True)
    h = hashlib.sha256()
    for name in sorted(r.stdout.decode().split("\0")):
        path = REPO / name
        if name and path.is_file():
            h.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    h.update(FRAGMENT.read_bytes())
    return h.hexdigest()[:16]


def series_patches(series: Path) -> list[Path]:
    """The series' patches in order, the cover letter left out."""
    patches = sorted(p for p in series.glob("*.patch") if not p.name.startswith("0000-"))
    if not patches:
        raise BuiltinKernelError(f"{series}: no patches (make patches KERNEL={SERIES_KERNEL})")
    return patches


def added_files(patches: list[Path]) -> list[str]:
    """The paths the series creates (its "new file mode" diffs)."""
    names = []
    for p in patches:
        last = None
        for line in p.read_text(errors="replace").splitlines():
            if line.startswith("diff --git a/"):
                last = line.split(" b/", 1)[1]
            elif line.startswith("new file mode") and last:
                names.append(last)
    return names


def series_hash(patches: list[Path]) -> str:
    h = hashlib.sha256()
    for p in patches:
        h.update(p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _git(src: Path, *args: str, log=None) -> None:
    cmd = ["git", *GIT_ID, "-C", str(src), *args]
    if log is None:
        subprocess.run(cmd, check=True, capture_output=True)
    else:
        debugkernel._run(cmd, log, src, "git " + args[0])


def extract(out: Path, log) -> Path:
    """work/src with the tarball committed as tag `base` (again if the
    package's version changed)."""
    src = out / "work" / "src"
    version = source_version()
    stamp = out / "work" / "extracted"
    if stamp.is_file() and stamp.read_text().strip() == version and (src / ".git").is_dir():
        return src
    tarball = source_tarball()
    print(f"builtin-kernel: extracting {tarball}", flush=True)
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    debugkernel._run(["tar", "-xf", str(tarball), "--strip-components=1", "-C", str(src)],
                     log, out, "extracting the source")
    _git(src, "init", "-q", log=log)
    # Debian's tarball ignores its own top level (.gitignore: /*): -f.
    _git(src, "add", "-A", "-f", ".", log=log)
    _git(src, "commit", "-q", "-m", f"{SOURCE_PACKAGE} {version}", log=log)
    _git(src, "tag", "-f", "base", log=log)
    stamp.write_text(version + "\n")
    return src


def apply_series(src: Path, patches: list[Path], log) -> None:
    """Branch `dti`: base plus the series, unless it holds that series already."""
    want = series_hash(patches)
    stamp = src.parent / "series"
    if stamp.is_file() and stamp.read_text().strip() == want:
        return
    print(f"builtin-kernel: applying {len(patches)} patches", flush=True)
    stamp.unlink(missing_ok=True)
    subprocess.run(["git", "-C", str(src), "am", "--abort"], capture_output=True)
    _git(src, "checkout", "-q", "-f", "-B", "dti", "base", log=log)
    # The files the series adds are untracked at base, and ignored
    # (Debian's .gitignore has /*), so the checkout leaves any earlier
    # copy behind, on which git am would stop.
    for name in added_files(patches):
        (src / name).unlink(missing_ok=True)
    _git(src, "am", "-q", "--whitespace=nowarn", *map(str, patches), log=log)
    stamp.write_text(want + "\n")


def debian_config() -> tuple[str, str]:
    """Debian's own config of BASE_KERNEL's line, and its release."""
    from . import kernels
    try:
        k = kernels.find(BASE_KERNEL)
    except KernelNotFound as e:
        raise BuiltinKernelError(f"Debian's {BASE_KERNEL} config: {e}: "
                                 f"make kernels KERNEL={BASE_KERNEL}") from None
    path = k.build_dir / ".config"
    try:
        return path.read_text(), k.release
    except OSError as e:
        raise BuiltinKernelError(f"Debian's {BASE_KERNEL} config: {path}: {e.strerror}") from None


def without_modules(config: str) -> str:
    """`config` with every module (=m) turned into "is not set"."""
    out = []
    for line in config.splitlines():
        name, eq, value = line.partition("=")
        if eq and value == "m" and name.startswith("CONFIG_"):
            line = f"# {name} is not set"
        out.append(line)
    return "\n".join(out) + "\n"


def configure(src: Path, log) -> str:
    config, release = debian_config()
    log.write(f"base config: Debian's {release}, its modules left out\n")
    (src / ".config").write_text(without_modules(config))
    debugkernel._run(["scripts/kconfig/merge_config.sh", ".config", str(FRAGMENT)], log, src,
                     "merge_config.sh")
    config = (src / ".config").read_text()
    bad = check_config(FRAGMENT.read_text(), config)
    if bad:
        raise BuiltinKernelError(f"the merged config lacks what {FRAGMENT.name} asks for "
                                 "(the series not applied? a dependency not met?):\n  "
                                 + "\n  ".join(bad))
    return config


def build(series: Path, jobs: int | None = None) -> Path:
    """Apply `series` and build; return the cache dir."""
    out = cache_root()
    out.mkdir(parents=True, exist_ok=True)
    patches = series_patches(series.resolve())
    jobs = jobs or os.cpu_count() or 1
    t0 = time.monotonic()
    with open(out / "build.log", "a") as log:
        log.write(f"\n=== {time.strftime('%F %T')} {SOURCE_PACKAGE} series {series} -j{jobs}\n")
        src = extract(out, log)
        apply_series(src, patches, log)
        print("builtin-kernel: configuring", flush=True)
        config = configure(src, log)
        (out / "info.json").unlink(missing_ok=True)
        print(f"builtin-kernel: make -j{jobs} ({BUILD_TIME}); log: {out / 'build.log'}",
              flush=True)
        t1 = time.monotonic()
        debugkernel._run(["make", f"-j{jobs}", "LOCALVERSION="], log, src, "make")
        t_make = time.monotonic() - t1
        release = subprocess.run(["make", "-s", "LOCALVERSION=", "kernelrelease"], cwd=src,
                                 capture_output=True, text=True, check=True).stdout.strip()
        mods = out / "modules"
        shutil.rmtree(mods, ignore_errors=True)
        debugkernel._run(["make", "LOCALVERSION=", f"INSTALL_MOD_PATH={mods}",
                          "modules_install"], log, src, "modules_install")
        for name, dst in (("arch/x86/boot/bzImage", "bzImage"), ("System.map", "System.map"),
                          (".config", "config")):
            shutil.copyfile(src / name, out / dst)
    info = {
        "release": release,
        "source_package": SOURCE_PACKAGE,
        "source_version": source_version(),
        "series": series_hash(patches),
        "patches": [p.name for p in patches],
        "kmod": kmod_hash(),
        "config": config_counts(config),
        "jobs": jobs,
        "make_seconds": round(t_make),
        "total_seconds": round(time.monotonic() - t0),
        "built": time.strftime("%F %T"),
    }
    debugkernel.finish(out, info, "builtin-kernel")
    return out


def find() -> Kernel:
    """The built-in kernel for DTI_KERNEL=builtin, if it was built from
    this checkout's kmod/."""
    out = cache_root()
    try:
        info = json.loads((out / "info.json").read_text())
    except (OSError, ValueError):
        raise KernelNotFound(f"the built-in kernel is not built: {MAKE_COMMAND} "
                             f"({BUILD_TIME}; into {out})") from None
    if info.get("kmod") != kmod_hash():
        raise KernelNotFound(f"the built-in kernel in {out} was built from another kmod/: "
                             f"{MAKE_COMMAND} ({BUILD_TIME})")
    src = out / "work" / "src"
    return Kernel(release=info["release"], vmlinuz=out / "bzImage", build_dir=src,
                  modules_root=out / "modules" / "lib" / "modules", flavour="builtin",
                  timeout_factor=TIMEOUT_FACTOR, vmlinux=src / "vmlinux")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m harness.builtinkernel",
                                 description="Build or locate the kernel with DTI built in.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="apply the series and build (incrementally)")
    b.add_argument("--series", type=Path, required=True,
                   help=f"the directory make patches KERNEL={SERIES_KERNEL} wrote")
    b.add_argument("-j", "--jobs", type=int, default=None)
    sub.add_parser("path", help="print its cache dir; exit 1 if it is not built or stale")
    sub.add_parser("source-package", help="print the Debian package of its source")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "build":
            build(args.series, args.jobs)
        elif args.cmd == "path":
            find()
            print(cache_root())
        else:
            print(SOURCE_PACKAGE)
    except KernelNotFound as e:
        print(f"builtin-kernel: {e}", file=sys.stderr)
        return 1
    except (BuiltinKernelError, subprocess.CalledProcessError) as e:
        print(f"builtin-kernel: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
