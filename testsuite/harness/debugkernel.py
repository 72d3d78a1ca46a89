"""The debug kernel: Debian's 6.1 source built with the kernel's own checkers.

    cd testsuite && python3 -m harness.debugkernel build [-j N] [--config-only]
    cd testsuite && python3 -m harness.debugkernel path    # its cache dir, or exit 1

(`make debug-kernel` installs linux-source-6.1 and runs `build`.)

The source is the linux-source-6.1 package's tarball, so the kernel is
Debian's, patches and all; its version is whatever the package holds.  The
config is `make x86_64_defconfig` with debug-kernel.config (next to this
file) merged over it by scripts/kconfig/merge_config.sh: what DTI, relay,
debugfs, ftrace, kprobes, perf, BPF, SystemTap and the harness use, KASAN,
lockdep, kmemleak, debug objects, UBSAN and the rest of the checkers, and
minus defconfig's graphics, sound, USB, wireless and NIC drivers that a
guest booted with -nodefaults never sees.  merge_config.sh only warns
when a value did not make it, so check_config() then compares every line
of the fragment with the final .config and the build stops on any
difference.

Everything lives in one cache directory outside the repository,
$DTI_DEBUG_KERNEL_CACHE or ${XDG_CACHE_HOME:-~/.cache}/dti/debug-kernel,
in a subdirectory VERSION-KEY (KEY hashes the source package's version,
the base config, the fragment, the compiler and LAYOUT_VERSION):

    build/            the kernel tree, built in place: vmlinux with DWARF,
                      System.map, Module.symvers.  It is KDIR for external
                      modules (kmod/ and the test modules) and what
                      `stap -r` is given.
    bzImage           the kernel the guests boot
    System.map, config
    modules/lib/modules/RELEASE/
                      `make modules_install INSTALL_MOD_PATH=modules`:
                      kernel/..., modules.dep (dump.py reads it), build ->
    build.log         the whole build's output
    info.json         written last: release, versions, key, build time

A finished directory is never rebuilt; one whose build stopped carries on
from where it was (the extracted tree and its objects are kept).  After a
build, only the KEEP_BUILDS newest finished ones stay.  The
release is <version>-dti-debug (CONFIG_LOCALVERSION in the fragment).
The kernel is not installed on the host (nothing goes to /boot or
/lib/modules): `find()` hands the harness a Kernel whose paths point into
the cache, and SystemTap is given the build tree with `-r` (see
kernel.Kernel.stap_target).

Under KASAN, lockdep and kmemleak in TCG a guest runs several times slower
than Debian's kernel, so guest timeouts are multiplied by TIMEOUT_FACTOR
(kernel.Kernel.scaled(); DTI_TIMEOUT_FACTOR overrides it).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from .kernel import Kernel, KernelNotFound

SOURCE_PACKAGE = "linux-source-6.1"
BASE_CONFIG = "x86_64_defconfig"
FRAGMENT = Path(__file__).resolve().with_name("debug-kernel.config")
LAYOUT_VERSION = 1          # bump when the build steps or the cache layout change
TIMEOUT_FACTOR = 4.0
KEEP_BUILDS = 2             # finished builds kept in the cache (about 4 GB each)
HEARTBEAT = 300.0           # seconds between progress lines during make


class DebugKernelError(RuntimeError):
    """The debug kernel cannot be built (missing package, bad config, make failed)."""


# --------------------------------------------------------------------------
# source, key, cache
# --------------------------------------------------------------------------

def source_version() -> str:
    """The installed linux-source-6.1 package's version, e.g. "6.1.192-2"."""
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}\t${Version}", SOURCE_PACKAGE],
                       capture_output=True, text=True)
    status, _, version = r.stdout.partition("\t")
    if r.returncode != 0 or "ok installed" not in status or not version:
        raise DebugKernelError(f"{SOURCE_PACKAGE} is not installed: "
                               f".ci/install-deps {SOURCE_PACKAGE} (make debug-kernel does)")
    return version


def source_tarball() -> Path:
    """The kernel source tarball the package installs under /usr/src."""
    r = subprocess.run(["dpkg", "-L", SOURCE_PACKAGE], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if re.fullmatch(r"/usr/src/linux-source-[^/]+\.tar\.(xz|bz2|gz)", line):
            return Path(line)
    raise DebugKernelError(f"{SOURCE_PACKAGE} installs no /usr/src/linux-source-*.tar.*")


def compiler_id() -> str:
    r = subprocess.run(["gcc", "--version"], capture_output=True, text=True)
    return r.stdout.splitlines()[0] if r.stdout else "gcc ?"


def cache_root() -> Path:
    env = os.environ.get("DTI_DEBUG_KERNEL_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "dti" / "debug-kernel"


def cache_key(version: str) -> str:
    h = hashlib.sha256()
    for part in (str(LAYOUT_VERSION), SOURCE_PACKAGE, version, BASE_CONFIG,
                 FRAGMENT.read_text(), compiler_id()):
        h.update(part.encode() + b"\0")
    return h.hexdigest()[:12]


def cache_dir(version: str | None = None) -> Path:
    """This source version's and config's directory (built or not)."""
    version = version or source_version()
    return cache_root() / f"{version}-{cache_key(version)}"


# --------------------------------------------------------------------------
# config checks
# --------------------------------------------------------------------------

_SET = re.compile(r"^(CONFIG_\w+)=(.*)$")
_UNSET = re.compile(r"^# (CONFIG_\w+) is not set$")


def read_config(text: str) -> dict[str, str]:
    """CONFIG_X -> value ("n" for "# CONFIG_X is not set"); other lines ignored."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        m = _SET.match(line)
        if m:
            values[m.group(1)] = m.group(2)
            continue
        m = _UNSET.match(line)
        if m:
            values[m.group(1)] = "n"
    return values


def check_config(fragment: str, config: str) -> list[str]:
    """Every requested value that the final config does not have, as
    "CONFIG_X: wanted V, got W" lines (W "absent" when it is not there)."""
    have = read_config(config)
    bad = []
    for name, want in read_config(fragment).items():
        got = have.get(name, "n" if want == "n" else "absent")
        if got != want:
            bad.append(f"{name}: wanted {want}, got {got}")
    return bad


def config_counts(config: str) -> dict[str, int]:
    values = read_config(config).values()
    return {"y": sum(v == "y" for v in values), "m": sum(v == "m" for v in values)}


# --------------------------------------------------------------------------
# build
# --------------------------------------------------------------------------

def _run(cmd: list[str], log, cwd: Path, what: str) -> None:
    log.write(f"\n$ {' '.join(cmd)}\n")
    log.flush()
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
    while True:
        try:
            rc = proc.wait(timeout=HEARTBEAT)
            break
        except subprocess.TimeoutExpired:
            print(f"debug-kernel:   {what}: {(time.monotonic() - t0) / 60:.0f} min ...",
                  flush=True)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    log.flush()
    if rc != 0:
        tail = "\n".join(Path(log.name).read_text(errors="replace").splitlines()[-40:])
        raise DebugKernelError(f"{what} failed (exit {rc}): {' '.join(cmd)}\n"
                               f"--- {log.name} (tail) ---\n{tail}")


def configure(src: Path, log) -> str:
    """defconfig, the fragment merged over it, checked; returns the .config."""
    _run(["make", BASE_CONFIG], log, src, BASE_CONFIG)
    _run(["scripts/kconfig/merge_config.sh", ".config", str(FRAGMENT)], log, src,
         "merge_config.sh")
    config = (src / ".config").read_text()
    bad = check_config(FRAGMENT.read_text(), config)
    if bad:
        raise DebugKernelError(f"the merged config lacks what {FRAGMENT.name} asks for "
                               "(a dependency not met?):\n  " + "\n  ".join(bad))
    return config


def build(jobs: int | None = None, config_only: bool = False) -> Path:
    """Build (or finish building) the debug kernel; return its cache dir."""
    version = source_version()
    tarball = source_tarball()
    out = cache_dir(version)
    if (out / "info.json").is_file():
        print(f"debug-kernel: already built: {out}")
        return out
    jobs = jobs or os.cpu_count() or 1
    src = out / "build"
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    print(f"debug-kernel: {SOURCE_PACKAGE} {version}, {BASE_CONFIG} + {FRAGMENT.name}, "
          f"-j{jobs}\ndebug-kernel: in {out} (log: {out / 'build.log'})", flush=True)
    with open(out / "build.log", "a") as log:
        log.write(f"\n=== {time.strftime('%F %T')} {SOURCE_PACKAGE} {version} "
                  f"key {cache_key(version)} -j{jobs}\n")
        stamp = src / ".dti-extracted"
        if not stamp.is_file():
            print(f"debug-kernel: extracting {tarball}", flush=True)
            shutil.rmtree(src, ignore_errors=True)
            src.mkdir()
            _run(["tar", "-xf", str(tarball), "--strip-components=1", "-C", str(src)],
                 log, out, "extracting the source")
            stamp.write_text(f"{tarball} {version}\n")
        print("debug-kernel: configuring", flush=True)
        config = configure(src, log)
        counts = config_counts(config)
        print(f"debug-kernel: config checked: {counts['y']} =y, {counts['m']} =m", flush=True)
        if config_only:
            return out
        print(f"debug-kernel: make -j{jobs} (about 30 min on 2 cores)", flush=True)
        t1 = time.monotonic()
        # LOCALVERSION= (empty): no "+" from setlocalversion whatever tree
        # the cache sits in.
        _run(["make", f"-j{jobs}", "LOCALVERSION="], log, src, "make")
        t_make = time.monotonic() - t1
        release = subprocess.run(["make", "-s", "LOCALVERSION=", "kernelrelease"], cwd=src,
                                 capture_output=True, text=True,
                                 check=True).stdout.strip()
        mods = out / "modules"
        shutil.rmtree(mods, ignore_errors=True)
        _run(["make", "LOCALVERSION=", f"INSTALL_MOD_PATH={mods}", "modules_install"],
             log, src, "modules_install")
        if not (mods / "lib" / "modules" / release / "modules.dep").is_file():
            raise DebugKernelError(f"modules_install left no modules.dep in {mods}")
        shutil.copyfile(src / "arch" / "x86" / "boot" / "bzImage", out / "bzImage")
        shutil.copyfile(src / "System.map", out / "System.map")
        shutil.copyfile(src / ".config", out / "config")
    info = {
        "release": release,
        "source_package": SOURCE_PACKAGE,
        "source_version": version,
        "key": cache_key(version),
        "base_config": BASE_CONFIG,
        "compiler": compiler_id(),
        "jobs": jobs,
        "config": counts,
        "make_seconds": round(t_make),
        "total_seconds": round(time.monotonic() - t0),
        "built": time.strftime("%F %T"),
    }
    tmp = out / "info.json.tmp"
    tmp.write_text(json.dumps(info, indent=2) + "\n")
    tmp.replace(out / "info.json")
    prune(out)
    print(f"debug-kernel: {release} built in {info['total_seconds'] / 60:.1f} min "
          f"(make {t_make / 60:.1f} min): {out}", flush=True)
    return out


def prune(keep: Path) -> None:
    """Remove finished builds other than `keep` and the newest of the rest,
    KEEP_BUILDS in all (a new package or fragment leaves the old ones)."""
    done = sorted((d for d in cache_root().iterdir()
                   if d != keep and (d / "info.json").is_file()),
                  key=lambda d: (d / "info.json").stat().st_mtime, reverse=True)
    for d in done[KEEP_BUILDS - 1:]:
        print(f"debug-kernel: removing the older build {d}", flush=True)
        shutil.rmtree(d, ignore_errors=True)


# --------------------------------------------------------------------------
# the harness's view
# --------------------------------------------------------------------------

def kernel_in(out: Path) -> Kernel:
    """The Kernel built in cache directory `out`."""
    try:
        info = json.loads((out / "info.json").read_text())
    except FileNotFoundError:
        raise KernelNotFound(f"{out}: no finished debug kernel there (no info.json)") from None
    build_dir = out / "build"
    return Kernel(release=info["release"], vmlinuz=out / "bzImage", build_dir=build_dir,
                  modules_root=out / "modules" / "lib" / "modules", flavour="debug",
                  timeout_factor=TIMEOUT_FACTOR, vmlinux=build_dir / "vmlinux")


def find(spec: str = "debug") -> Kernel:
    """The debug kernel for DTI_KERNEL=`spec`: "debug" (the one built from
    the installed linux-source-6.1 with today's fragment) or a cache dir."""
    if spec != "debug":
        return kernel_in(Path(spec))
    try:
        out = cache_dir()
    except DebugKernelError as e:
        raise KernelNotFound(f"debug kernel: {e}") from None
    if not (out / "info.json").is_file():
        raise KernelNotFound(f"debug kernel not built for {SOURCE_PACKAGE} "
                             f"{source_version()} and {FRAGMENT.name} as they are now: "
                             f"make debug-kernel (about 30 min on 2 cores; into {out})")
    return kernel_in(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m harness.debugkernel",
                                 description="Build or locate DTI's debug kernel.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="build it (a no-op when the cache has it)")
    b.add_argument("-j", "--jobs", type=int, default=None)
    b.add_argument("--config-only", action="store_true",
                   help="extract, configure and check the config, then stop")
    sub.add_parser("path", help="print its cache dir; exit 1 if it is not built")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "build":
            build(args.jobs, args.config_only)
        else:
            out = cache_dir()
            print(out)
            return 0 if (out / "info.json").is_file() else 1
    except DebugKernelError as e:
        print(f"debug-kernel: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
