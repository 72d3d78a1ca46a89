"""Another Debian release as DTI's home: a fresh system of that release in
a chroot, the project copied in, a command run there.

    cd testsuite && python3 -m harness.home trixie make check
    cd testsuite && python3 -m harness.home trixie make demo
    cd testsuite && python3 -m harness.home trixie sh -c '...'

`make check-debian13` and `make demo-debian13` run the first two.

    cd testsuite && python3 -m harness.home --kernel rt-debug trixie make stress

boots a debug kernel (harness/debugkernel.py) instead of the release's
own: the one the host built, found on the host as DTI_KERNEL=SPEC finds
it (a flavour or a cache directory), bind-mounted into the chroot at its
own path and named to the command there by DTI_KERNEL.  Its modules and
SystemTap's are built with the compiler the kernel was built with (gcc-N
of the release, installed first; see Kernel.kbuild_vars): that is how a
Debian 13 SystemTap runs on the RT debug kernel built on Debian 12.
`make check-debian13 KERNEL=rt-debug`, `make stress-debian13
KERNEL=rt-debug` run it.

The chroot is debootstrapped once (variant minbase) into the cache
(~/.cache/dti/home/SUITE, or $DTI_HOME_CACHE/SUITE), with the release's
own apt sources (SUITE, SUITE-updates, SUITE-security) and nothing else
installed but make, which the user types: what a target needs, its
`make deps` (.ci/install-deps) installs, as on a fresh machine of that
release.  The guests boot the
release's own kernel (Debian's default one there, linux-image-amd64) and
SystemTap is the release's.

At each run the project (what git tracks and the new files it does not
ignore) is copied to /srv/dti in the chroot, over the copy of the last
run minus everything but the test suite's caches (testsuite/.build), so
the host tree's in-place kernel builds are left alone.  /proc, /sys,
/dev (with /dev/pts and /dev/shm) are mounted there while the command
runs and unmounted after, whatever happens.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .kernel import cache_dir
from .kernels import KernelsError, _run, debootstrap, in_chroot

REPO = Path(__file__).resolve().parent.parent.parent
INSIDE = "/srv/dti"     # the project's copy (readable by all: tests run dti as nobody)
KEEP = "testsuite/.build"           # what a new copy keeps of the last one
READY = ".dti-home-ready"


class HomeError(RuntimeError):
    """The chroot cannot be made or entered."""


def root_dir(suite: str) -> Path:
    return cache_dir("DTI_HOME_CACHE", "home") / suite


def make_root(suite: str) -> Path:
    """The suite's chroot, debootstrapped once, with make."""
    return debootstrap(root_dir(suite), suite, (suite, f"{suite}-updates", f"{suite}-security"),
                       ("make",), who="home", stamp=READY, prepare=True)


def copy_project(root: Path) -> Path:
    """The project copied to INSIDE, keeping only KEEP of the last copy."""
    dst = root / INSIDE.lstrip("/")
    if dst.is_dir():
        keep = dst / KEEP
        for p in dst.iterdir():
            if p.name != "testsuite":
                _remove(p)
        if (dst / "testsuite").is_dir():
            for p in (dst / "testsuite").iterdir():
                if p != keep:
                    _remove(p)
    dst.mkdir(parents=True, exist_ok=True)
    files = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], capture_output=True, check=True).stdout
    names = [n for n in files.split(b"\0") if n and (REPO / os.fsdecode(n)).exists()]
    tar = subprocess.Popen(["tar", "--null", "-T", "-", "-cf", "-"], cwd=REPO,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    untar = subprocess.Popen(["tar", "-xf", "-"], cwd=dst, stdin=tar.stdout)
    assert tar.stdin is not None and tar.stdout is not None
    tar.stdout.close()
    tar.stdin.write(b"\0".join(names) + b"\0")
    tar.stdin.close()
    if tar.wait() != 0 or untar.wait() != 0:
        raise HomeError(f"copying the project into {dst} failed")
    return dst


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p)
    else:
        p.unlink()


@contextlib.contextmanager
def mounted(root: Path):
    """/proc, /sys and /dev (recursively: /dev/pts, /dev/shm) in the chroot."""
    done: list[Path] = []
    try:
        for args, point in ((["-t", "proc", "proc"], "proc"),
                            (["-t", "sysfs", "sysfs"], "sys"),
                            (["--rbind", "/dev"], "dev")):
            dst = root / point
            dst.mkdir(exist_ok=True)
            _run(["mount", *args, str(dst)], f"mounting {point} in {root}")
            done.append(dst)
            if point == "dev":
                _run(["mount", "--make-rslave", str(dst)], f"{dst}: make-rslave")
        yield root
    finally:
        for dst in reversed(done):
            subprocess.run(["umount", "-R", "-l", str(dst)], capture_output=True)


@contextlib.contextmanager
def bound(root: Path, directory: Path | None):
    """`directory` (if any) bind-mounted into the chroot at its own path."""
    if directory is None:
        yield
        return
    dst = root / str(directory).lstrip("/")
    dst.mkdir(parents=True, exist_ok=True)
    _run(["mount", "--bind", str(directory), str(dst)], f"mounting {directory} on {dst}")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(dst)], capture_output=True)


def host_debug_kernel(spec: str) -> tuple[Path, list[str]]:
    """The host's debug kernel for DTI_KERNEL=`spec`: its cache directory
    and the packages its modules need in the chroot (its gcc-N)."""
    from .debugkernel import FLAVOURS, find
    from .kernel import KernelNotFound
    if spec not in FLAVOURS and not Path(spec).is_dir():
        raise HomeError(f"--kernel {spec}: a debug kernel ({', '.join(FLAVOURS)}) or its cache "
                        "directory; the home boots its release's own kernel otherwise")
    try:
        kernel = find(spec)
    except KernelNotFound as e:
        raise HomeError(str(e)) from None
    major = kernel.built_by_gcc
    return kernel.build_dir.parent.resolve(), [f"gcc-{major}"] if major else []


def run(suite: str, command: list[str], kernel: str | None = None) -> int:
    """`command` run in the suite's chroot, in the project's copy; its
    exit status.  `kernel`: a debug kernel of the host's to boot there."""
    out, packages = host_debug_kernel(kernel) if kernel else (None, [])
    root = make_root(suite)
    copy_project(root)
    script = f"cd {INSIDE}"
    if packages:
        script += " && .ci/install-deps " + " ".join(packages)
    if out is not None:
        script += f" && export DTI_KERNEL={out}"
    with mounted(root), bound(root, out):
        cmd = in_chroot(root, "sh", "-c", script + ' && exec "$@"', "home", *command)
        return subprocess.run(cmd).returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m harness.home",
                                 description="Run a command in a fresh Debian release "
                                             "with the project copied in.")
    ap.add_argument("--kernel", metavar="SPEC",
                    help="boot the host's debug kernel SPEC (rt-debug, debug, or its "
                         "cache dir) instead of the release's own")
    ap.add_argument("suite", help="the Debian release, e.g. trixie")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="what to run (in /srv/dti)")
    args = ap.parse_args(argv)
    if not args.command:
        ap.error("no command")
    try:
        return run(args.suite, args.command, args.kernel)
    except (HomeError, KernelsError) as e:
        print(f"home: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
