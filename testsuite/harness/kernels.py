"""The kernels DTI is tested on, by name: `make check KERNEL=NAME`.

    cd testsuite && python3 -m harness.kernels list            # the names, installed or not
    cd testsuite && python3 -m harness.kernels install NAME... # install (cached)
    cd testsuite && python3 -m harness.kernels build NAME...   # dti.ko and every client, W=1 + sparse
    cd testsuite && python3 -m harness.kernels release [NAME]  # its `uname -r`

NAME      the kernel                          from Debian's             installed
6.1       Debian 12's (the default)           linux-image-amd64         on the host
6.1-rt    its PREEMPT_RT flavour              linux-image-rt-amd64      on the host
6.12      6.12 built for Debian 12            linux-image-6.12-amd64    on the host
6.12-rt   its PREEMPT_RT flavour              linux-image-6.12-rt-amd64 on the host
5.10      Debian 11's                         bullseye's linux-image-amd64  in a bullseye chroot
newest    the newest kernel Debian ships      found when installed      in a trixie chroot
newest-rt its PREEMPT_RT flavour              found when installed      in a trixie chroot
arm64-6.1, arm64-6.12, arm64-newest: the arm64 builds of 6.1, 6.12 and
          newest (the same Debian versions), booted under qemu-system-aarch64
debug, rt-debug: built from source by debugkernel.py (make debug-kernel).

The host kernels are Debian 12 packages (bookworm, its security and
backports suites), compiled with Debian 12's gcc, so their headers build
on the host.  The others cannot: 5.10's headers ask for gcc-10 and the
newest kernel's kbuild tools for a newer glibc than Debian 12's.  So each
gets a chroot of its own Debian release (debootstrap, minbase), with the
headers and their compiler installed by apt; its modules are built there
(the repository bind-mounted at the same path) and its image is unpacked
there (vmlinuz and modules, depmod run), for the guest to boot.
"newest" is never written down: it is the highest-versioned
linux-image-X-amd64 (or -rt-amd64) among trixie, trixie-backports, sid
and experimental, by Debian version and release candidates left out,
whose headers install in a trixie chroot, when `install` runs; so it
moves on with Debian.  Once installed it stays what it was until
`install --update`.

An arm64 kernel's packages do not install on an amd64 machine (its
headers depend on gcc-N:arm64), so they are taken with `apt-get download`
(arm64 added to dpkg's architectures first) and unpacked with `dpkg-deb
-x` into a directory of their own, NAME/ in the cache (arm64-newest's in
the trixie chroot, under /opt/dti-NAME, for its kbuild tools): image,
modules (depmod run), headers and the common headers, whose Makefile is
pointed at the unpacked common tree and whose `scripts` and `tools` links
reach the machine's own linux-kbuild-X (amd64, Multi-Arch: foreign,
installed by apt).  Modules are cross-built with gcc-aarch64-linux-gnu
(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-: Kernel.kbuild_vars), on the
host for 6.1 and 6.12, in the chroot for the newest.

Everything lives in ${XDG_CACHE_HOME:-~/.cache}/dti/kernels/ (or
$DTI_KERNELS_CACHE): chroot-SUITE/ and NAME.json, which says what was
installed for NAME.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from .kernel import (BOOT_DIR, CROSS, MODULES_DIR, Kernel, KernelNotFound, _kernel_for,
                     cache_dir, find_kernel, version_key)

REPO = Path(__file__).resolve().parent.parent.parent
MIRROR = "http://deb.debian.org/debian"
SECURITY_MIRROR = "http://deb.debian.org/debian-security"

# The module directories of the repository, as conftest.MODULE_DIRS plus
# the benchmark's module, which only the matrix build compiles.
MODULE_DIRS = ("kmod", "testsuite/modules", "examples", "bench/kmod")


@dataclass(frozen=True)
class Spec:
    name: str
    what: str
    packages: tuple[str, ...]   # metapackages tried in order (host), or the image's flavour
    chroot: str | None = None   # Debian suite of the chroot, None: the host
    sources: tuple[str, ...] = ()   # the chroot's suites (the first is its release)
    rt: bool = False
    newest: bool = False
    arch: str = "amd64"         # Debian's architecture of its packages
    of: str | None = None       # another architecture's build of this spec's kernel


SPECS = {s.name: s for s in (
    Spec("6.1", "Debian 12's kernel", ("linux-image-amd64",)),
    Spec("6.1-rt", "Debian 12's PREEMPT_RT kernel", ("linux-image-rt-amd64",), rt=True),
    Spec("6.12", "6.12 built for Debian 12", ("linux-image-6.12-amd64",)),
    Spec("6.12-rt", "6.12 PREEMPT_RT built for Debian 12", ("linux-image-6.12-rt-amd64",),
         rt=True),
    Spec("5.10", "Debian 11's kernel", ("linux-image-amd64",), chroot="bullseye",
         sources=("bullseye", "bullseye-updates", "bullseye-security")),
    Spec("newest", "the newest kernel Debian ships", (), chroot="trixie",
         sources=("trixie", "trixie-backports", "sid", "experimental"), newest=True),
    Spec("newest-rt", "the newest PREEMPT_RT kernel Debian ships", (), chroot="trixie",
         sources=("trixie", "trixie-backports", "sid", "experimental"), rt=True,
         newest=True),
    Spec("arm64-6.1", "Debian 12's kernel, arm64", (), arch="arm64", of="6.1"),
    Spec("arm64-6.12", "6.12 built for Debian 12, arm64", (), arch="arm64", of="6.12"),
    Spec("arm64-newest", "the newest kernel Debian ships, arm64", (), chroot="trixie",
         sources=("trixie", "trixie-backports", "sid", "experimental"), arch="arm64",
         of="newest"),
)}

# What a chroot needs besides the headers, which bring their compiler.
CHROOT_TOOLS = ("make", "libc6-dev", "sparse", "perl", "bc", "kmod")
# What a foreign spec's modules are built with, per Debian architecture:
# the cross compiler's package (apt installs it, on the host or in the
# chroot; the headers name its gcc-N, which it depends on)
CROSS_TOOLS = {"arm64": ("gcc-aarch64-linux-gnu",)}


class KernelsError(RuntimeError):
    """A kernel of the matrix cannot be installed or built."""


def cache_root() -> Path:
    return cache_dir("DTI_KERNELS_CACHE", "kernels")


def _run(cmd: list[str], what: str, **kw) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        tail = "\n".join((r.stdout + r.stderr).splitlines()[-30:])
        raise KernelsError(f"{what} failed ({' '.join(cmd)}):\n{tail}")
    return r


# --------------------------------------------------------------------------
# chroots
# --------------------------------------------------------------------------

def chroot_dir(suite: str) -> Path:
    return cache_root() / f"chroot-{suite}"


def write_sources(root: Path, sources: tuple[str, ...],
                  mirror: str = MIRROR, security_mirror: str = SECURITY_MIRROR) -> None:
    """The chroot's apt sources: its release first; the others pinned below
    it, so that only what exists nowhere else comes from them."""
    lines = [f"deb {security_mirror if s.endswith('-security') else mirror} {s} main"
             for s in sources]
    (root / "etc/apt/sources.list").write_text("\n".join(lines) + "\n")
    prefs = [f"Package: *\nPin: release n={s}\nPin-Priority: 50\n"
             for s in sources[1:] if s in ("sid", "experimental")]
    (root / "etc/apt/preferences.d").mkdir(parents=True, exist_ok=True)
    (root / "etc/apt/preferences.d/dti").write_text("\n".join(prefs))
    # A mirror that is a snapshot serves suites whose Release files have
    # expired (sid's and experimental's within days); for this chroot's
    # look-ups that is no reason to refuse them.
    (root / "etc/apt/apt.conf.d").mkdir(parents=True, exist_ok=True)
    (root / "etc/apt/apt.conf.d/99dti").write_text('Acquire::Check-Valid-Until "false";\n')


@contextlib.contextmanager
def mounted(root: Path, *extra: Path):
    """/proc, /dev, the repository and the `extra` directories bind-mounted
    into the chroot, each at its own path, so that paths mean the same
    inside."""
    points = [(Path("/proc"), root / "proc"), (Path("/dev"), root / "dev"),
              *((d, root / str(d).lstrip("/")) for d in (REPO, *extra)
                if d == REPO or not Path(d).resolve().is_relative_to(REPO))]
    done = []
    try:
        for src, dst in points:
            dst.mkdir(parents=True, exist_ok=True)
            _run(["mount", "--bind", str(src), str(dst)], f"mounting {src} on {dst}")
            done.append(dst)
        yield root
    finally:
        for dst in reversed(done):
            subprocess.run(["umount", "-l", str(dst)], capture_output=True)


def in_chroot(root: Path, *cmd: str) -> list[str]:
    """`cmd` run in the chroot at `root`, with a clean environment."""
    return ["chroot", str(root), "/usr/bin/env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME=/root", "LC_ALL=C", "DEBIAN_FRONTEND=noninteractive", *cmd]


def chroot_run(root: Path, script: str, what: str, timeout: float = 3600) -> str:
    return _run(in_chroot(root, "sh", "-ec", script), what, timeout=timeout).stdout


def prepare_system(root: Path) -> None:
    """What debootstrap leaves out of a system that installs packages:
    name resolution (a copy of the host's: a link would lead to the
    host's file) and a policy-rc.d that keeps packages from starting
    daemons."""
    resolv = root / "etc/resolv.conf"
    resolv.unlink(missing_ok=True)
    shutil.copyfile("/etc/resolv.conf", resolv)
    rc = root / "usr/sbin/policy-rc.d"
    rc.write_text("#!/bin/sh\nexit 101\n")
    rc.chmod(0o755)


def debootstrap(root: Path, suite: str, sources: tuple[str, ...], packages: Iterable[str],
                *, who: str, stamp: str = ".dti-ready", prepare: bool = False) -> Path:
    """`suite` debootstrapped (minbase) into `root` once, with `sources`
    (write_sources()), prepare_system() if `prepare`, and `packages`
    installed; made in root.tmp and renamed, and `stamp` written, only
    when all of it worked.  `who` names the caller in messages."""
    if (root / stamp).is_file():
        return root
    if os.geteuid() != 0:
        raise KernelsError(f"{who}: making a chroot needs root (debootstrap, mount)")
    if not shutil.which("debootstrap"):
        raise KernelsError("debootstrap is missing: .ci/install-deps (make deps) installs it")
    tmp = root.with_name(root.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    print(f"{who}: debootstrap {suite} into {root}", flush=True)
    _run(["debootstrap", "--variant=minbase", suite, str(tmp), MIRROR],
         f"debootstrap {suite}", timeout=3600)
    write_sources(tmp, sources)
    if prepare:
        prepare_system(tmp)
    packages = list(packages)
    with mounted(tmp):
        chroot_run(tmp, "apt-get update -q && apt-get install -y -q --no-install-recommends "
                   + " ".join(packages), f"installing {', '.join(packages)}")
    (tmp / stamp).write_text(suite + "\n")
    tmp.rename(root)
    return root


def make_chroot(spec: Spec) -> Path:
    """The spec's chroot, debootstrapped once, its tools installed."""
    return debootstrap(chroot_dir(spec.chroot), spec.chroot, spec.sources, CHROOT_TOOLS,
                       who=spec.name)


# --------------------------------------------------------------------------
# finding and installing a kernel
# --------------------------------------------------------------------------

def _depends_release(depends: str) -> str | None:
    """The release of the image `apt-cache depends` says a metapackage
    depends on."""
    m = re.search(r"Depends: linux-image-(\d[^\s,(]*)", depends)
    return m.group(1) if m else None


def offered_release(metapackage: str) -> str | None:
    """The release of the image a host metapackage depends on, as the
    release offers it (installed or not); None if it offers none."""
    r = subprocess.run(["apt-cache", "depends", metapackage], capture_output=True, text=True)
    return _depends_release(r.stdout) if r.returncode == 0 else None


def _host_release(spec: Spec) -> str | None:
    """The release a host metapackage of the spec depends on, installed or not."""
    return next(filter(None, map(offered_release, spec.packages)), None)


def _dpkg_newer(a: str, b: str) -> int:
    """-1, 0 or 1 as Debian version a is older than, equal to or newer than b."""
    if subprocess.run(["dpkg", "--compare-versions", a, "gt", b]).returncode == 0:
        return 1
    return 0 if a == b else -1


def _newest_releases(root: Path, rt: bool) -> list[str]:
    """The plain (or -rt) amd64 images the chroot's suites have, newest
    first by their Debian versions.  Release candidates (versions with
    ~rc, experimental's previews) are not kernels Debian ships."""
    out = chroot_run(root, "apt-get update -q >/dev/null && "
                     "apt-cache search --names-only '^linux-image-[0-9].*-amd64$' | cut -d' ' -f1",
                     "listing the images")
    flavour = "-rt-amd64" if rt else "-amd64"
    pkgs = [p for p in out.split() if p.endswith(flavour) and not p.endswith("-cloud-amd64")
            and (rt or not p.endswith("-rt-amd64"))]
    if not pkgs:
        raise KernelsError(f"no linux-image-*{flavour} in {', '.join(SPECS['newest'].sources)}")
    versions: dict[str, str] = {}
    madison = chroot_run(root, "apt-cache madison " + " ".join(pkgs), "the images' versions")
    for line in madison.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) >= 2 and "~rc" not in parts[1]:
            old = versions.get(parts[0])
            if old is None or _dpkg_newer(parts[1], old) > 0:
                versions[parts[0]] = parts[1]
    order = sorted(versions, key=functools.cmp_to_key(
        lambda x, y: _dpkg_newer(versions[x], versions[y])), reverse=True)
    return [p[len("linux-image-"):] for p in order]


def _record_path(name: str) -> Path:
    return cache_root() / f"{name}.json"


def installed_release(name: str) -> str | None:
    try:
        return json.loads(_record_path(name).read_text())["release"]
    except (FileNotFoundError, KeyError, ValueError):
        return None


def install(name: str, update: bool = False) -> str:
    """Install kernel NAME (image and headers); its release."""
    spec = SPECS[name]
    rel = None if update else installed_release(name)
    if rel and find(name, check=False):
        return rel
    if spec.of is not None:
        return install_foreign(spec, update)
    if spec.chroot is None:
        rel = _host_release(spec)
        if not rel:
            raise KernelsError(f"{name}: none of {', '.join(spec.packages)} in apt's lists "
                               "(apt-get update?)")
        print(f"kernels: {name}: linux-image-{rel} and its headers on the host", flush=True)
        _run(["apt-get", "install", "-y", "-q", "--no-install-recommends",
              f"linux-image-{rel}", f"linux-headers-{rel}"],
             f"installing {name}", env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
             timeout=3600)
    else:
        root = make_chroot(spec)
        with mounted(root):
            if spec.newest:
                rels = _newest_releases(root, spec.rt)
            else:
                out = chroot_run(root, "apt-get update -q >/dev/null && apt-cache depends "
                                 + " ".join(spec.packages), "resolving the image")
                rels = [_depends_release(out)]
                if not rels[0]:
                    raise KernelsError(f"{name}: no image in {spec.chroot}")
            # The headers with apt (they bring their compiler); the newest
            # whose headers install in this release is the one.
            errors = []
            for rel in rels:
                try:
                    chroot_run(root, "apt-get install -y -q --no-install-recommends "
                               f"linux-headers-{rel}", f"installing linux-headers-{rel}")
                    break
                except KernelsError as e:
                    errors.append(str(e).splitlines()[0])
                    print(f"kernels: {name}: linux-headers-{rel} does not install in "
                          f"{spec.chroot}, trying the next", flush=True)
            else:
                raise KernelsError(f"{name}: no headers install:\n" + "\n".join(errors))
            print(f"kernels: {name}: linux-headers-{rel} installed in {root}", flush=True)
            # The image only unpacked: booting it needs vmlinuz and the
            # modules, not an initramfs made here.  Unpacked aside and
            # copied: extracted over / it would put a
            # directory in place of a merged-/usr symlink such as /lib.
            # Since 7.0 linux-image-REL holds no kernel: it depends on
            # linux-binary-REL and linux-modules-REL; so the image and
            # whichever of its dependencies are parts of it.  vmlinuz may be
            # /usr/lib/modules/REL/vmlinuz, put in /boot by kernel-install.
            deps = chroot_run(root, f"apt-cache depends linux-image-{rel}", "the image's parts")
            parts = [f"linux-image-{rel}"] + sorted(set(re.findall(
                rf"Depends: (linux-(?:binary|modules|image)-{re.escape(rel)}(?:-unsigned)?)$",
                deps, re.M)))
            chroot_run(root, "rm -rf /tmp/image && mkdir /tmp/image && cd /tmp/image && "
                       f"apt-get download -q {' '.join(parts)} && "
                       "for d in ./*.deb; do dpkg-deb -x $d root; done && "
                       "mkdir -p root/boot /boot /lib/modules && "
                       f"for v in root/usr/lib/modules/{rel}/vmlinuz root/lib/modules/{rel}/vmlinuz; "
                       f"do [ ! -f $v ] || cp $v root/boot/vmlinuz-{rel}; done && "
                       f"[ -f root/boot/vmlinuz-{rel} ] && cp -a root/boot/. /boot/ && "
                       f"for d in root/lib/modules root/usr/lib/modules; do "
                       f"[ ! -d $d ] || cp -a $d/. /lib/modules/; done && "
                       f"cd / && rm -rf /tmp/image", f"unpacking linux-image-{rel}")
        _run(["depmod", "-b", str(root), rel], f"depmod for {rel}")
    _record_path(name).parent.mkdir(parents=True, exist_ok=True)
    _record_path(name).write_text(json.dumps({"name": name, "release": rel}) + "\n")
    return rel


def foreign_dir(spec: Spec) -> Path:
    """Where a foreign spec's packages are unpacked, as seen from where
    its modules are built (the host, or its chroot)."""
    return Path(f"/opt/dti-{spec.name}") if spec.chroot else cache_root() / spec.name


def _foreign_release(spec: Spec, update: bool) -> str:
    """The foreign spec's release: that of the kernel it is a build of,
    with the architecture's suffix for amd64's (the same Debian version)."""
    assert spec.of is not None
    base = install(spec.of, update=update)
    if not base.endswith("-amd64"):
        raise KernelsError(f"{spec.name}: {spec.of}'s release {base} is not an amd64 one")
    return base[:-len("amd64")] + spec.arch


# Unpacks the packages named in $PKGS (downloaded into the current
# directory) into $DEST and makes the tree usable there: the headers'
# Makefile pointed at the unpacked trees, their kbuild links
# (relative, ../../lib/linux-kbuild-X) led to the machine's own, the
# modules where depmod looks (/lib/modules), vmlinuz in /boot.
_UNPACK_FOREIGN = r'''
rm -rf "$DEST.tmp" && mkdir -p "$DEST.tmp"
for d in ./*.deb; do dpkg-deb -x "$d" "$DEST.tmp"; done
h="$DEST.tmp/usr/src/linux-headers-$REL"
[ -f "$h/Makefile" ] || { echo "no linux-headers-$REL in the packages" >&2; exit 1; }
common=$(sed -n 's|^include /usr/src/\([^/]*\)/Makefile$|\1|p' "$h/Makefile")
if [ -n "$common" ]; then
    [ -d "$DEST.tmp/usr/src/$common" ] || { echo "no $common unpacked" >&2; exit 1; }
    # every path of the tree in it (the include; since 7.0 KBUILD_OUTPUT too)
    sed -i "s|/usr/src/|$DEST/usr/src/|g" "$h/Makefile"
fi
for l in "$h/scripts" "$h/tools" "$DEST.tmp/usr/src/$common/scripts" "$DEST.tmp/usr/src/$common/tools"; do
    [ -L "$l" ] || continue
    kb=$(readlink "$l" | sed -n 's|^\(\.\./\)*lib/\(linux-kbuild-[^/]*\)/.*|\2|p')
    [ -n "$kb" ] || continue
    [ -d "/usr/lib/$kb" ] || { echo "/usr/lib/$kb missing" >&2; exit 1; }
    mkdir -p "$DEST.tmp/usr/lib" && ln -sfn "/usr/lib/$kb" "$DEST.tmp/usr/lib/$kb"
done
if [ ! -d "$DEST.tmp/lib/modules/$REL" ] && [ -d "$DEST.tmp/usr/lib/modules/$REL" ]; then
    mkdir -p "$DEST.tmp/lib" && ln -sfn ../usr/lib/modules "$DEST.tmp/lib/modules"
fi
mkdir -p "$DEST.tmp/boot"
[ -f "$DEST.tmp/boot/vmlinuz-$REL" ] || cp "$DEST.tmp/lib/modules/$REL/vmlinuz" "$DEST.tmp/boot/vmlinuz-$REL"
rm -rf "$DEST" && mv "$DEST.tmp" "$DEST"
'''


def _foreign_packages(depends_of, rel: str, arch: str) -> tuple[list[str], str]:
    """(the packages to download, the linux-kbuild package to install)
    for release `rel` of Debian architecture `arch`; `depends_of(pkg)` is
    `apt-cache depends pkg` where they are looked up."""
    image = depends_of(f"linux-image-{rel}:{arch}")
    headers = depends_of(f"linux-headers-{rel}:{arch}")
    parts = [f"linux-image-{rel}:{arch}", f"linux-headers-{rel}:{arch}"]
    parts += sorted({f"{p}:{arch}" for p in re.findall(
        rf"Depends: (linux-(?:binary|modules)-{re.escape(rel)}(?:-unsigned)?)(?::{arch})?$", image, re.M)})
    common = re.findall(r"^\s+(linux-headers-\S+-common)$", headers, re.M)
    kbuild = re.findall(r"Depends: (linux-kbuild-[^\s:]+)", headers)
    if not common or not kbuild:
        raise KernelsError(f"linux-headers-{rel}:{arch}: no common headers or kbuild "
                           f"among its dependencies:\n{headers}")
    return parts + sorted(set(common)), kbuild[0]


def install_foreign(spec: Spec, update: bool = False) -> str:
    """Install a foreign spec (module docstring): its packages unpacked,
    the cross compiler and kbuild tools installed where its modules are
    built; its release."""
    rel = _foreign_release(spec, update)
    dest = foreign_dir(spec)
    add_arch = (f"dpkg --print-foreign-architectures | grep -qx {spec.arch} || "
                f"{{ dpkg --add-architecture {spec.arch} && apt-get update -q >/dev/null; }}")
    print(f"kernels: {spec.name}: linux-image-{rel} and its headers unpacked in "
          f"{dest}", flush=True)
    if spec.chroot is None:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        _run(["sh", "-ec", add_arch], f"adding {spec.arch} to dpkg", env=env)

        def depends_of(pkg: str) -> str:
            return _run(["apt-cache", "depends", pkg], f"apt-cache depends {pkg}").stdout
        parts, kbuild = _foreign_packages(depends_of, rel, spec.arch)
        _run(["apt-get", "install", "-y", "-q", "--no-install-recommends", kbuild,
              *CROSS_TOOLS[spec.arch]], f"installing {kbuild}", env=env, timeout=3600)
        with tempfile.TemporaryDirectory() as tmp:
            os.chmod(tmp, 0o755)        # apt-get download's _apt user writes there
            _run(["apt-get", "download", "-q", *parts], f"downloading {' '.join(parts)}",
                 cwd=tmp, timeout=3600)
            _run(["sh", "-ec", _UNPACK_FOREIGN], f"unpacking {rel}", cwd=tmp,
                 env={**env, "DEST": str(dest), "REL": rel})
        root = dest
    else:
        root = make_chroot(spec)
        with mounted(root):
            chroot_run(root, add_arch, f"adding {spec.arch} to the chroot's dpkg")

            def depends_of(pkg: str) -> str:
                return chroot_run(root, f"apt-cache depends '{pkg}'", f"apt-cache depends {pkg}")
            parts, kbuild = _foreign_packages(depends_of, rel, spec.arch)
            chroot_run(root, "apt-get install -y -q --no-install-recommends "
                       + " ".join((kbuild, *CROSS_TOOLS[spec.arch])),
                       f"installing {kbuild} in the chroot")
            (root / "tmp/dti-unpack.sh").write_text(_UNPACK_FOREIGN)
            chroot_run(root, "t=$(mktemp -d) && chmod 755 $t && cd $t && "
                       f"apt-get download -q {' '.join(parts)} && "
                       f"DEST='{dest}' REL='{rel}' sh -e /tmp/dti-unpack.sh && "
                       "cd / && rm -rf $t /tmp/dti-unpack.sh", f"unpacking {rel} in the chroot")
        root = root / str(dest).lstrip("/")
    _run(["depmod", "-b", str(root), rel], f"depmod for {rel}")
    _record_path(spec.name).parent.mkdir(parents=True, exist_ok=True)
    _record_path(spec.name).write_text(json.dumps({"name": spec.name, "release": rel}) + "\n")
    return rel


def _in_root(root: Path, path: Path) -> Path:
    """`path` as seen inside the chroot at `root`, resolved on the host."""
    p = root / str(path).lstrip("/")
    for _ in range(8):
        if not p.is_symlink():
            break
        target = Path(os.readlink(p))
        p = root / str(target).lstrip("/") if target.is_absolute() else p.parent / target
    return p


def find(name: str, check: bool = True) -> Kernel | None:
    """The Kernel for NAME, installed; None (or KernelNotFound if check)
    when it is not."""
    spec = SPECS[name]
    rel = (installed_release(name) if (spec.chroot or spec.newest or spec.of)
           else _host_release(spec))
    if rel and spec.of is not None:
        chroot = chroot_dir(spec.chroot) if spec.chroot else None
        root = (chroot / str(foreign_dir(spec)).lstrip("/")) if chroot else foreign_dir(spec)
        vmlinuz = root / "boot" / f"vmlinuz-{rel}"
        build = root / "usr" / "src" / f"linux-headers-{rel}"
        arch = next(a for a, c in CROSS.items() if c[0] == spec.arch)
        if vmlinuz.is_file() and (build / "Makefile").is_file():
            return Kernel(rel, vmlinuz, build, modules_root=root / "lib" / "modules",
                          flavour="cross", name=name, chroot=chroot, arch=arch)
    elif rel:
        if spec.chroot is None:
            k = _kernel_for(rel, BOOT_DIR, MODULES_DIR)
            if k:
                return dataclasses.replace(k, name=name)
        else:
            root = chroot_dir(spec.chroot)
            vmlinuz = root / "boot" / f"vmlinuz-{rel}"
            build = _in_root(root, Path("/lib/modules") / rel / "build")
            if vmlinuz.is_file() and (build / "Makefile").is_file():
                return Kernel(rel, vmlinuz, build, modules_root=root / "lib" / "modules",
                              flavour="chroot", name=name, chroot=root)
    if check:
        raise KernelNotFound(f"kernel {name} ({spec.what}) is not installed: "
                             f"make kernels KERNEL={name}")
    return None


# --------------------------------------------------------------------------
# building for a kernel
# --------------------------------------------------------------------------

def make_command(kernel: Kernel, directory: Path, *args: str) -> list[str]:
    """`make -C directory` for `kernel`, in its chroot if it has one."""
    if kernel.chroot is None:
        return ["make", "-C", str(directory), f"KVER={kernel.release}",
                f"KDIR={kernel.build_dir}", *kernel.kbuild_vars, *args]
    return in_chroot(kernel.chroot, "make", "-C", str(directory), f"KVER={kernel.release}",
                     f"KDIR={_chroot_kdir(kernel)}", *kernel.kbuild_vars, *args)


def kbuild_command(kernel: Kernel, module_dir: Path, *args: str) -> list[str]:
    """`make -C KDIR M=module_dir` for `kernel`, Kbuild called directly, in
    its chroot if it has one (module_dir given to build_context() then)."""
    if kernel.chroot is None:
        return ["make", "-C", str(kernel.build_dir), f"M={module_dir}",
                *kernel.kbuild_vars, *args]
    return in_chroot(kernel.chroot, "make", "-C", _chroot_kdir(kernel),
                     f"M={module_dir}", *kernel.kbuild_vars, *args)


def _chroot_kdir(kernel: Kernel) -> str:
    """A chroot kernel's build tree as seen in its chroot: its headers'
    /lib/modules/REL/build link, or where a foreign one was unpacked."""
    assert kernel.chroot is not None
    if kernel.foreign:
        return "/" + str(kernel.build_dir.relative_to(kernel.chroot))
    return f"/lib/modules/{kernel.release}/build"


def build_context(kernel: Kernel, *extra: Path):
    """What a make_command() or kbuild_command() needs around it: the
    chroot's mounts, with `extra` directories outside the repository."""
    return mounted(kernel.chroot, *extra) if kernel.chroot else contextlib.nullcontext()


def _copy_tree(dest: Path) -> None:
    """The module directories' sources (what git would track, no build
    output) into `dest`, laid out as in the repository."""
    skip = shutil.ignore_patterns("*.o", "*.ko", "*.mod", "*.mod.c", ".*.cmd", "*.a",
                                  "Module.symvers", "modules.order", ".dti_conf",
                                  "dti_conf.h", ".lint.log", ".lint.rc", ".tmp_versions")
    shutil.rmtree(dest, ignore_errors=True)
    for d in MODULE_DIRS:
        shutil.copytree(REPO / d, dest / d, ignore=skip)


@dataclass
class BuildResult:
    name: str
    release: str
    ok: bool
    notes: list[str]
    features: dict[str, bool]


_SPARSE_MISSING = "sparse did not check"
# Where a newer sparse than the chroot's release has is unpacked in it
NEWER_SPARSE_DIR = "/opt/dti-sparse"


def _newer_sparse(kernel: Kernel) -> tuple[str, str] | None:
    """(path in the chroot, version) of the newest sparse the chroot's
    suites offer, if newer than the one installed there, unpacked once
    under NEWER_SPARSE_DIR (its own package only: `sparse` needs no more
    than libc); None if there is none newer."""
    root = kernel.chroot
    assert root is not None
    policy = chroot_run(root, "apt-cache policy sparse", "apt-cache policy sparse")
    m = re.search(r"Installed: (\S+)", policy)
    installed = m.group(1) if m else "0"
    versions = re.findall(r"^ +(?:\*\*\* )?(\d\S*) -?\d+$", policy, re.M)
    newer = [v for v in versions if _dpkg_newer(v, installed) > 0]
    if not newer:
        return None
    best = newer[0]
    for v in newer[1:]:
        if _dpkg_newer(v, best) > 0:
            best = v
    d = f"{NEWER_SPARSE_DIR}-{best}"
    if not (root / d.lstrip("/") / "usr/bin/sparse").is_file():
        chroot_run(root, f"t=$(mktemp -d) && cd $t && apt-get download -q 'sparse={best}' "
                   f"&& dpkg-deb -x sparse_*.deb '{d}.tmp' && mv '{d}.tmp' '{d}' "
                   "&& rm -rf $t", f"unpacking sparse {best}")
    return f"{d}/usr/bin/sparse", best


def _lint_past_kbuild_gate(kernel: Kernel, directory: Path, log: str, extra: list[str],
                           notes: list[str]) -> tuple[subprocess.CompletedProcess, str]:
    """Lint `directory` again when Kbuild would not run sparse: with a
    newer sparse than the chroot's release has, past Kbuild's gate
    (KBUILD_CHECKSRC=2 on the command line: Debian's 7.3 headers lack
    scripts/checker-valid.sh, so the gate refuses every sparse), if that
    lints clean; else with W=1 alone.  Either is a note; `extra` gets the
    arguments the module directories after this one are linted with."""
    why = list(dict.fromkeys(line.split(": ", 1)[-1].strip() for line in log.splitlines()
                             if "not available or not up to date" in line
                             or "checker-valid" in line))
    why_s = f" ({'; '.join(why)})" if why else ""
    version = (in_chroot(kernel.chroot, "sparse", "--version") if kernel.chroot
               else ["sparse", "--version"])
    sparse = subprocess.run(version, capture_output=True, text=True).stdout.strip()
    newer = _newer_sparse(kernel) if kernel.chroot else None
    tried = ""
    if newer is not None:
        args = [f"CHECK={newer[0]}", "KBUILD_CHECKSRC=2"]
        r = subprocess.run(make_command(kernel, directory, "lint", *extra, *args),
                           capture_output=True, text=True)
        log = r.stdout + r.stderr
        if r.returncode == 0:
            notes.append(f"sparse {sparse}: Kbuild would not run it on these headers{why_s}; "
                         f"linted with sparse {newer[1]} (the newest the chroot's suites "
                         "offer, unpacked beside it), Kbuild's checker check skipped")
            extra.extend(args)
            return r, log
        tried = (f"; sparse {newer[1]} did not lint clean either:\n"
                 + "\n".join(log.splitlines()[-20:]))
    notes.append(f"sparse {sparse}: Kbuild would not run it on these headers{why_s}"
                 f"; linted with W=1 alone{tried}")
    extra.append("SPARSE=no")
    r = subprocess.run(make_command(kernel, directory, "lint", *extra),
                       capture_output=True, text=True)
    return r, r.stdout + r.stderr


def build(name: str, out_root: Path) -> BuildResult:
    """Lint (W=1, sparse, kernel-doc) every module directory for kernel
    NAME in a copy of them under out_root/NAME, so that the repository's
    own build, for the kernel the tests boot, is left alone.  Sparse that
    cannot run on the kernel's headers, or headers without kernel-doc,
    are notes, said each time, not silence; a warning fails."""
    kernel = find(name)
    dest = out_root / name
    _copy_tree(dest)
    notes: list[str] = []
    extra: list[str] = []
    if not (kernel.build_dir / "scripts" / "kernel-doc").is_file():
        extra.append("KERNELDOC=none")
        notes.append("kernel-doc: not in these headers (the default kernel's lint runs it)")
    ok = True
    with build_context(kernel):
        for d in MODULE_DIRS:
            cmd = make_command(kernel, dest / d, "lint", *extra)
            r = subprocess.run(cmd, capture_output=True, text=True)
            log = r.stdout + r.stderr
            if r.returncode != 0 and _SPARSE_MISSING in log and "SPARSE=no" not in extra:
                r, log = _lint_past_kbuild_gate(kernel, dest / d, log, extra, notes)
            if r.returncode != 0:
                ok = False
                tail = "\n".join(log.splitlines()[-40:])
                notes.append(f"{d}: lint failed:\n{tail}")
    return BuildResult(name, kernel.release, ok, notes, conf_features(dest / "kmod" / "dti_conf.h"))


def conf_features(conf: Path) -> dict[str, bool]:
    """The feature tests' outcome in a generated dti_conf.h: DTI_HAVE_<TEST>
    -> whether it compiled; {} if there is no such file."""
    if not conf.is_file():
        return {}
    return {m.group(2): m.group(1) == "#define" for m in
            re.finditer(r"^(#define|/\* #undef) (DTI_HAVE_\w+)", conf.read_text(), re.M)}


def feature_table(results: list[BuildResult]) -> tuple[str, list[str], list[str]]:
    """The feature tests' outcome per kernel; the tests that compiled on
    none of the kernels built (a test that never passes is likely broken:
    a typo reads as a missing interface); and those that compiled on all
    (their alternative is dead code on this matrix, though not on every
    kernel: Debian backported timer_delete_sync() to 5.10 and 6.1)."""
    names = sorted({f for r in results for f in r.features})
    lines = ["feature".ljust(42) + " ".join(r.name.rjust(9) for r in results)]
    never, always = [], []
    for f in names:
        vals = [r.features.get(f) for r in results]
        lines.append(f.ljust(42) + " ".join(("yes" if v else "no" if v is False else "?").rjust(9)
                                            for v in vals))
        if len(results) > 1 and not any(vals):
            never.append(f)
        if len(results) > 1 and all(vals):
            always.append(f)
    return "\n".join(lines), never, always


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m harness.kernels",
                                 description="The kernels DTI is tested on.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="the names, and what is installed")
    i = sub.add_parser("install", help="install kernels (cached)")
    i.add_argument("names", nargs="+", choices=sorted(SPECS) + ["all"])
    i.add_argument("--update", action="store_true",
                   help="look for the newest again, install what changed")
    b = sub.add_parser("build", help="lint dti.ko and every client for kernels (W=1, sparse)")
    b.add_argument("names", nargs="+", choices=sorted(SPECS) + ["installed"])
    b.add_argument("--out", type=Path, default=REPO / "testsuite" / ".build" / "matrix")
    b.add_argument("--expect-both", action="store_true",
                   help="fail if a feature test compiled on none of the kernels")
    r = sub.add_parser("release", help="a kernel's release, if installed; without NAME, "
                       "the kernel the tests boot ($DTI_KERNEL, $DTI_KVER or the default)")
    r.add_argument("name", nargs="?", choices=sorted(SPECS))
    args = ap.parse_args(argv)
    try:
        if args.cmd == "list":
            for name, spec in SPECS.items():
                k = find(name, check=False)
                print(f"{name:10} {spec.what:42} {k.release if k else '-'}")
        elif args.cmd == "install":
            names = list(SPECS) if "all" in args.names else args.names
            for n in names:
                print(f"{n}: {install(n, update=args.update)}", flush=True)
        elif args.cmd == "build":
            names = ([n for n in SPECS if find(n, check=False)] if "installed" in args.names
                     else args.names)
            results = []
            for n in names:
                print(f"kernels: building for {n} ...", flush=True)
                res = build(n, args.out)
                results.append(res)
                print(f"{n:10} {res.release:28} {'clean' if res.ok else 'FAILED'}", flush=True)
                for note in res.notes:
                    print(f"           {note}", flush=True)
            table, never, always = feature_table(results)
            print("\nfeature tests (kmod/compat/conf/):\n" + table)
            failed = [r.name for r in results if not r.ok]
            if always:
                print(f"kernels: present on every kernel built: {', '.join(always)}")
            if args.expect_both and never:
                print(f"kernels: feature tests that compiled on no kernel (broken?): "
                      f"{', '.join(never)}; see .dti_conf/ beside dti_conf.h",
                      file=sys.stderr)
                failed.append("feature tests")
            print(f"\nkernels: {len(results) - len(failed)} clean, "
                  f"{len(failed)} failed{': ' + ', '.join(failed) if failed else ''}")
            return 1 if failed else 0
        elif args.cmd == "release":
            print(find(args.name).release if args.name else find_kernel().release)
    except (KernelsError, KernelNotFound) as e:
        print(f"kernels: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
