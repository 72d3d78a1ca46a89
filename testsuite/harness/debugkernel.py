"""The debug kernels: Debian's kernel source built with the kernel's own checkers.

    cd testsuite && python3 -m harness.debugkernel build [--flavour F] [-j N] [--config-only]
    cd testsuite && python3 -m harness.debugkernel path [--flavour F]  # its cache dir, or exit 1

Two flavours (FLAVOURS), "debug" when none is named:

    debug      linux-source-X.Y of the line of Debian's default kernel
               (linux-image-amd64: 6.1 on Debian 12), x86_64_defconfig
               + debug-kernel.config
               (`make debug-kernel`; DTI_KERNEL=debug)
    rt-debug   linux-source-X.Y of the line of the release's RT kernel
               (linux-image-rt-amd64) if PREEMPT_RT is in that line's
               mainline source (6.12 on), else of the 6.12-rt kernel of
               the matrix (on Debian 12: linux-source-6.12),
               x86_64_defconfig + debug-kernel.config
               + rt-debug-kernel.config: the same checkers on PREEMPT_RT,
               with lockdep's raw_spinlock-in-spinlock nesting check
               (`make debug-kernel KERNEL=rt-debug`; DTI_KERNEL=rt-debug)

(`make debug-kernel` installs the flavour's source package, which
`python3 -m harness.debugkernel source-package` names, and runs `build`.)

The source is the linux-source-X.Y package's tarball, so the kernel is
Debian's, patches and all; its version is whatever the package holds.  The
config is `make x86_64_defconfig` with the flavour's fragments (next to
this file) merged over it, in their order, by scripts/kconfig/merge_config.sh.
debug-kernel.config: what DTI, relay, debugfs, ftrace, kprobes, perf, BPF,
SystemTap and the harness use, KASAN, lockdep, kmemleak, debug objects,
UBSAN and the rest of the checkers, and minus defconfig's graphics, sound,
USB, wireless and NIC drivers that a guest booted with -nodefaults never
sees.  rt-debug-kernel.config overrides what PREEMPT_RT and 6.12 need
otherwise (the preemption model, options 6.12 renamed or dropped), and a
later fragment's line wins as it does in merge_config.sh.  merge_config.sh
only warns when a value did not make it, so check_config() then compares
every line that holds after the merge (each fragment's, minus what a
later one overrides) with the final .config and the build stops on any
difference.

Everything lives in one cache directory outside the repository,
$DTI_DEBUG_KERNEL_CACHE or ${XDG_CACHE_HOME:-~/.cache}/dti/debug-kernel,
in a subdirectory VERSION-KEY per flavour and source (KEY hashes the
source package and its version, the base config, the fragments, the
compiler and LAYOUT_VERSION):

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
    info.json         written last: flavour, release, versions, key, build time

A finished directory is never rebuilt; one whose build stopped carries on
from where it was (the extracted tree and its objects are kept).  After a
build, only the KEEP_BUILDS newest finished ones of its flavour stay (an
info.json without "flavour" is a "debug" one), so the flavours never
evict each other.  The release is <version>-dti-debug or
<version>-dti-rt-debug (CONFIG_LOCALVERSION in the fragments).
The kernel is not installed on the host (nothing goes to /boot or
/lib/modules): `find()` hands the harness a Kernel whose paths point into
the cache, and SystemTap is given the build tree with `-r` (see
kernel.Kernel.stap_target).

Under KASAN, lockdep and kmemleak in TCG a guest runs several times slower
than Debian's kernel, so guest timeouts are multiplied by TIMEOUT_FACTOR
(kernel.Kernel.scaled(); DTI_TIMEOUT_FACTOR overrides it).  Both flavours
give the harness a Kernel of flavour "debug" (kernel.py's notion: built
here, not installed); which of the two it is, is info.json's "flavour".
"""

from __future__ import annotations

import argparse
import functools
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
from .kernel import cache_dir as kernel_cache_dir

# PREEMPT_RT is in mainline from this line on: an RT tree without
# Debian's RT patch set, which linux-source-X.Y does not apply.
RT_MAINLINE = (6, 12)
BASE_CONFIG = "x86_64_defconfig"
FRAGMENT = Path(__file__).resolve().with_name("debug-kernel.config")
RT_FRAGMENT = Path(__file__).resolve().with_name("rt-debug-kernel.config")
FLAVOURS = ("debug", "rt-debug")
LAYOUT_VERSION = 1          # bump when the build steps or the cache layout change
TIMEOUT_FACTOR = 4.0
KEEP_BUILDS = 2             # finished builds kept per flavour (about 4 GB each)
HEARTBEAT = 300.0           # seconds between progress lines during make


class DebugKernelError(RuntimeError):
    """The debug kernel cannot be built (missing package, bad config, make failed)."""


# --------------------------------------------------------------------------
# flavours
# --------------------------------------------------------------------------

def check_flavour(flavour: str) -> str:
    if flavour not in FLAVOURS:
        raise DebugKernelError(f"no debug kernel flavour {flavour!r}: "
                               f"one of {', '.join(FLAVOURS)}")
    return flavour


def _line(metapackage: str) -> tuple[int, int] | None:
    """The kernel line, e.g. (6, 1), of the image a metapackage depends
    on, as the release offers it; None if it offers none."""
    from . import kernels
    m = re.match(r"(\d+)\.(\d+)[.-]", kernels.offered_release(metapackage) or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


@functools.lru_cache(maxsize=None)
def source_package(flavour: str = "debug") -> str:
    """The Debian package whose tarball the flavour is built from (see the
    module's docstring), from the lines of the kernels the release offers."""
    from . import kernels
    if check_flavour(flavour) == "debug":
        tried = ["linux-image-amd64"]
        line = _line(tried[0])
    else:
        tried = ["linux-image-rt-amd64", *kernels.SPECS["6.12-rt"].packages]
        line = next((ln for ln in map(_line, tried) if ln and ln >= RT_MAINLINE), None)
    if line is None:
        raise DebugKernelError(f"no kernel line for the {flavour} kernel: apt-cache "
                               f"depends {' / '.join(tried)} names no suitable "
                               "linux-image (apt-get update?)")
    return f"linux-source-{line[0]}.{line[1]}"


def fragments(flavour: str = "debug") -> list[Path]:
    """The flavour's config fragments, in merge order (a later one wins)."""
    return [FRAGMENT, RT_FRAGMENT] if check_flavour(flavour) == "rt-debug" else [FRAGMENT]


def fragments_text(flavour: str = "debug") -> str:
    """The fragments one after the other: read_config() of it gives each
    option's value after the merge, the last fragment's."""
    return "\n".join(f.read_text() for f in fragments(flavour))


def make_command(flavour: str = "debug") -> str:
    """What builds the flavour, for the messages."""
    return "make debug-kernel" + ("" if flavour == "debug" else f" KERNEL={flavour}")


def build_time(flavour: str = "debug") -> str:
    """How long make takes on 2 cores, for the messages."""
    return "about 30 min" if flavour == "debug" else "30 to 60 min"


# --------------------------------------------------------------------------
# source, key, cache
# --------------------------------------------------------------------------

def source_version(flavour: str = "debug") -> str:
    """The installed source package's version, e.g. "6.1.192-2" (linux-source-6.1)."""
    package = source_package(flavour)
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}\t${Version}", package],
                       capture_output=True, text=True)
    status, _, version = r.stdout.partition("\t")
    if r.returncode != 0 or "ok installed" not in status or not version:
        raise DebugKernelError(f"{package} is not installed: "
                               f".ci/install-deps {package} ({make_command(flavour)} does)")
    return version


def source_tarball(flavour: str = "debug") -> Path:
    """The kernel source tarball the package installs under /usr/src."""
    package = source_package(flavour)
    r = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if re.fullmatch(r"/usr/src/linux-source-[^/]+\.tar\.(xz|bz2|gz)", line):
            return Path(line)
    raise DebugKernelError(f"{package} installs no /usr/src/linux-source-*.tar.*")


def compiler_id() -> str:
    r = subprocess.run(["gcc", "--version"], capture_output=True, text=True)
    return r.stdout.splitlines()[0] if r.stdout else "gcc ?"


def cache_root() -> Path:
    return kernel_cache_dir("DTI_DEBUG_KERNEL_CACHE", "debug-kernel")


def cache_key(version: str, flavour: str = "debug") -> str:
    # For "debug" the parts are what they were before the flavours came
    # (one fragment), so its builds keep their key.
    h = hashlib.sha256()
    for part in (str(LAYOUT_VERSION), source_package(flavour), version, BASE_CONFIG,
                 *(f.read_text() for f in fragments(flavour)), compiler_id()):
        h.update(part.encode() + b"\0")
    return h.hexdigest()[:12]


def cache_dir(version: str | None = None, flavour: str = "debug") -> Path:
    """This flavour's, source version's and config's directory (built or not)."""
    version = version or source_version(flavour)
    return cache_root() / f"{version}-{cache_key(version, flavour)}"


def built_flavour(out: Path) -> str | None:
    """The flavour of the finished build in `out` (None: not finished)."""
    try:
        info = json.loads((out / "info.json").read_text())
    except (OSError, ValueError):
        return None
    return info.get("flavour", "debug")


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


def configure(src: Path, log, flavour: str = "debug") -> str:
    """defconfig, the flavour's fragments merged over it, checked; returns
    the .config."""
    frags = fragments(flavour)
    _run(["make", BASE_CONFIG], log, src, BASE_CONFIG)
    _run(["scripts/kconfig/merge_config.sh", ".config", *map(str, frags)], log, src,
         "merge_config.sh")
    config = (src / ".config").read_text()
    bad = check_config(fragments_text(flavour), config)
    if bad:
        names = " + ".join(f.name for f in frags)
        raise DebugKernelError(f"the merged config lacks what {names} "
                               f"{'asks' if len(frags) == 1 else 'ask'} for "
                               "(a dependency not met?):\n  " + "\n  ".join(bad))
    return config


def build(jobs: int | None = None, config_only: bool = False,
          flavour: str = "debug") -> Path:
    """Build (or finish building) the flavour's debug kernel; return its cache dir."""
    package = source_package(flavour)
    version = source_version(flavour)
    tarball = source_tarball(flavour)
    out = cache_dir(version, flavour)
    if (out / "info.json").is_file():
        print(f"debug-kernel: already built: {out}")
        return out
    jobs = jobs or os.cpu_count() or 1
    src = out / "build"
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    names = " + ".join(f.name for f in fragments(flavour))
    print(f"debug-kernel: {flavour}: {package} {version}, {BASE_CONFIG} + {names}, "
          f"-j{jobs}\ndebug-kernel: in {out} (log: {out / 'build.log'})", flush=True)
    with open(out / "build.log", "a") as log:
        log.write(f"\n=== {time.strftime('%F %T')} {flavour}: {package} {version} "
                  f"key {cache_key(version, flavour)} -j{jobs}\n")
        stamp = src / ".dti-extracted"
        if not stamp.is_file():
            print(f"debug-kernel: extracting {tarball}", flush=True)
            shutil.rmtree(src, ignore_errors=True)
            src.mkdir()
            _run(["tar", "-xf", str(tarball), "--strip-components=1", "-C", str(src)],
                 log, out, "extracting the source")
            stamp.write_text(f"{tarball} {version}\n")
        print("debug-kernel: configuring", flush=True)
        config = configure(src, log, flavour)
        counts = config_counts(config)
        print(f"debug-kernel: config checked: {counts['y']} =y, {counts['m']} =m", flush=True)
        if config_only:
            return out
        print(f"debug-kernel: make -j{jobs} ({build_time(flavour)} on 2 cores)", flush=True)
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
        "flavour": flavour,
        "release": release,
        "source_package": package,
        "source_version": version,
        "key": cache_key(version, flavour),
        "fragments": [f.name for f in fragments(flavour)],
        "base_config": BASE_CONFIG,
        "compiler": compiler_id(),
        "jobs": jobs,
        "config": counts,
        "make_seconds": round(t_make),
        "total_seconds": round(time.monotonic() - t0),
        "built": time.strftime("%F %T"),
    }
    finish(out, info, "debug-kernel")
    prune(out)
    return out


def finish(out: Path, info: dict, who: str) -> None:
    """Write out/info.json last, atomically (what marks a build finished),
    and say how long it took."""
    tmp = out / "info.json.tmp"
    tmp.write_text(json.dumps(info, indent=2) + "\n")
    tmp.replace(out / "info.json")
    print(f"{who}: {info['release']} built in {info['total_seconds'] / 60:.1f} min "
          f"(make {info['make_seconds'] / 60:.1f} min): {out}", flush=True)


def prune(keep: Path) -> None:
    """Remove finished builds of `keep`'s flavour other than `keep` and the
    newest of the rest, KEEP_BUILDS in all (a new package or fragment leaves
    the old ones); the other flavour's builds are left alone."""
    flavour = built_flavour(keep) or "debug"
    done = sorted((d for d in cache_root().iterdir()
                   if d != keep and built_flavour(d) == flavour),
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
    """The debug kernel for DTI_KERNEL=`spec`: a flavour, "debug" (the one
    built from the installed source_package() with today's fragment) or
    "rt-debug" (its source_package(), PREEMPT_RT, today's two fragments), or
    a cache dir."""
    if spec not in FLAVOURS:
        return kernel_in(Path(spec))
    flavour = spec
    try:
        out = cache_dir(flavour=flavour)
    except DebugKernelError as e:
        raise KernelNotFound(f"{flavour} kernel: {e}") from None
    if not (out / "info.json").is_file():
        names = " and ".join(f.name for f in fragments(flavour))
        raise KernelNotFound(f"{flavour} kernel not built for {source_package(flavour)} "
                             f"{source_version(flavour)} and {names} as they are now: "
                             f"{make_command(flavour)} ({build_time(flavour)} on 2 cores; "
                             f"into {out})")
    return kernel_in(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m harness.debugkernel",
                                 description="Build or locate DTI's debug kernels.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="build it (a no-op when the cache has it)")
    b.add_argument("-j", "--jobs", type=int, default=None)
    b.add_argument("--config-only", action="store_true",
                   help="extract, configure and check the config, then stop")
    p = sub.add_parser("path", help="print its cache dir; exit 1 if it is not built")
    sp = sub.add_parser("source-package", help="print the Debian package of its source")
    for s in (b, p, sp):
        s.add_argument("--flavour", choices=FLAVOURS, default="debug",
                       help="debug: the default kernel's line (the default); "
                            "rt-debug: an RT line with PREEMPT_RT in mainline")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "build":
            build(args.jobs, args.config_only, args.flavour)
        elif args.cmd == "source-package":
            print(source_package(args.flavour))
        else:
            out = cache_dir(flavour=args.flavour)
            print(out)
            return 0 if (out / "info.json").is_file() else 1
    except DebugKernelError as e:
        print(f"debug-kernel: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
