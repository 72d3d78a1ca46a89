"""The Debian packages (debian/, `make deb`), installed as a user would.

`make deb` builds them; lintian must have nothing to say (no E: or W:).
Then a fresh chroot of the Debian release the guest kernel comes from is
made with debootstrap (the host's own release, read from /etc/os-release,
with its updates, security and backports suites; for a kernel of the
matrix built in a chroot of another release, that release's suites:
harness/kernels.py) and given the headers of the guest kernel
(linux-headers-RELEASE, RELEASE from harness.kernel as every guest test
has it), and apt installs the built .debs in it, fetching their
dependencies (dkms, gcc, systemtap, ...) from Debian.  There:

  * DKMS built and installed dti.ko for RELEASE (dkms status, the .ko with
    its DWARF, which SystemTap needs);
  * `dti --help` runs;
  * a program builds against libdti-dev (pkg-config) and runs with libdti0;
  * plain `stap` finds the installed tapset (-p2, `probe dti.record`),
    and `dti-stap -p4 -r RELEASE` compiles the script to a module
    (SystemTap 4.8 alone cannot compile for Debian's 6.1 kernels: see
    scripts/dti-stap);
  * test_kmod.py passes in the guest with the dti.ko DKMS built
    (DTI_KO, see conftest.py).

Part of `make check`, and `make check-deb` runs it alone.  Needs root
and the tools `make deps` installs (debootstrap, debhelper, dh-dkms,
lintian): without them it is skipped, unless DTI_CHECK_DEB=1 (set by
`make check-deb`) makes that a failure; DTI_CHECK_DEB=0 skips it.  It
fetches about 150 MB from the Debian mirror the first time.
Timings on the reference host (2 cores): about 5 minutes from nothing
(debootstrap and the headers ~70 s, the packages and their
dependencies ~30 s with DKMS's build, stap ~20 s, test_kmod.py in the
guest ~2.5 min), 4 minutes from the cache.  The
chroot with the headers is cached in .build/deb/base-RELEASE and the
downloaded packages in .build/deb/archives, so that a rerun only copies
it and installs the packages again; delete .build/deb to start from
nothing.  The chroot of a run is .build/deb/root; /proc, /sys and /dev
are mounted in it only while the tests run, and a tree with anything
still mounted in it is never deleted.  Env DTI_DEB_MIRROR and
DTI_DEB_SECURITY_MIRROR name other Debian mirrors.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import dump, kernels

REPO = Path(__file__).resolve().parent.parent
TESTSUITE = Path(__file__).resolve().parent
MIRROR = os.environ.get("DTI_DEB_MIRROR", "http://deb.debian.org/debian")
SECURITY = os.environ.get("DTI_DEB_SECURITY_MIRROR", "http://deb.debian.org/debian-security")
CHROOT_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LC_ALL": "C",
              "DEBIAN_FRONTEND": "noninteractive"}
RECORD_SCRIPT = 'probe dti.record { printf("%s %d %d\\n", channel, cpu, level) }'

# The kernels of the matrix installed from Debian 12's archive, whose
# headers install in the Debian 12 chroot (harness/kernels.py); not the
# arm64 ones, whose headers do not install on amd64.
HOST_KERNELS = tuple(name for name, spec in kernels.SPECS.items()
                     if spec.chroot is None and spec.of is None)

TOOLS = ("debootstrap", "dpkg-buildpackage", "dh", "dh_dkms", "lintian", "chroot",
         "mount", "readelf")


def _missing() -> str | None:
    spec = os.environ.get("DTI_KERNEL")
    if spec and spec not in HOST_KERNELS:
        return (f"DTI_KERNEL={spec}: the packages are tested against a Debian 12 kernel "
                f"and its linux-headers package ({', '.join(HOST_KERNELS)})")
    if os.geteuid() != 0:
        return "not root (chroot and mounts)"
    tools = [t for t in TOOLS if not shutil.which(t)]
    if tools:
        return f"missing {', '.join(tools)}"
    return None


CHECK = os.environ.get("DTI_CHECK_DEB", "")
MISSING = "DTI_CHECK_DEB=0" if CHECK == "0" else _missing()

pytestmark = pytest.mark.skipif(
    MISSING is not None and CHECK != "1",
    reason=f"{MISSING} (make deps installs the tools; make check-deb runs this alone)")


def run(cmd, *, timeout=1800, **kw) -> subprocess.CompletedProcess:
    """Run cmd; fail the test with the end of its output if it fails."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    if r.returncode != 0:
        out = "\n".join((r.stdout + r.stderr).splitlines()[-60:])
        pytest.fail(f"{' '.join(map(str, cmd))}: exit {r.returncode}\n{out}",
                    pytrace=False)
    return r


def mounts_under(root: Path) -> list[str]:
    """Mount points at or below root (from /proc/self/mountinfo)."""
    root_s = str(root.resolve())
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        mp = line.split()[4].replace("\\040", " ")
        if mp == root_s or mp.startswith(root_s + "/"):
            found.append(mp)
    return found


def umount_under(root: Path) -> None:
    """Unmount what is mounted below root, deepest first (what a failed
    debootstrap leaves)."""
    for mp in sorted(mounts_under(root), key=len, reverse=True):
        r = subprocess.run(["umount", mp], capture_output=True, text=True)
        if r.returncode != 0:
            subprocess.run(["umount", "--lazy", mp], capture_output=True, text=True)


def remove_tree(root: Path) -> None:
    """rm -rf root, refused while anything is mounted below it."""
    if not root.exists():
        return
    busy = mounts_under(root)
    if busy:
        pytest.fail(f"{root}: still mounted: {', '.join(busy)}; unmount by hand",
                    pytrace=False)
    run(["rm", "-rf", "--one-file-system", str(root)])


class Chroot:
    """A Debian tree under `root`, with /proc, /sys and /dev mounted
    between mount() and umount()."""

    MOUNTS = (("proc", "proc", ["-t", "proc"]),
              ("sys", "sysfs", ["-t", "sysfs"]),
              ("dev", "/dev", ["--bind"]))

    def __init__(self, root: Path):
        self.root = root
        self.mounted: list[Path] = []

    def mount(self) -> None:
        for sub, src, opts in self.MOUNTS:
            target = self.root / sub
            target.mkdir(exist_ok=True)
            run(["mount", *opts, src, str(target)])
            self.mounted.append(target)

    def umount(self) -> None:
        errors = []
        while self.mounted:
            target = self.mounted.pop()
            r = subprocess.run(["umount", str(target)], capture_output=True, text=True)
            if r.returncode != 0:
                r = subprocess.run(["umount", "--lazy", str(target)],
                                   capture_output=True, text=True)
            if r.returncode != 0:
                errors.append(f"{target}: {r.stderr.strip()}")
        if errors:
            raise RuntimeError("could not unmount " + "; ".join(errors))

    def run(self, script: str, *, check=True, timeout=1800) -> subprocess.CompletedProcess:
        cmd = ["chroot", str(self.root), "/usr/bin/env", "-i",
               *[f"{k}={v}" for k, v in CHROOT_ENV.items()], "sh", "-ec", script]
        if check:
            return run(cmd, timeout=timeout)
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)

    def path(self, p: str) -> Path:
        return self.root / p.lstrip("/")


def host_codename() -> str:
    """The host's Debian release (VERSION_CODENAME in /etc/os-release)."""
    try:
        text = Path("/etc/os-release").read_text()
    except OSError as e:
        raise RuntimeError(f"cannot tell the host's Debian release: {e}") from None
    m = re.search(r'^VERSION_CODENAME="?([a-z]+)"?$', text, re.M)
    if not m:
        raise RuntimeError("cannot tell the host's Debian release: "
                           "no VERSION_CODENAME in /etc/os-release")
    return m.group(1)


def release_suites(kernel) -> tuple[str, ...]:
    """The suites the chroot takes, its release first: those of the
    kernel's own chroot for a kernel of the matrix built in one, else the
    host's release with its updates, security and backports suites (the
    headers of a kernel from backports or security come from there)."""
    spec = kernels.SPECS.get(kernel.name or "")
    if spec is not None and spec.chroot:
        return spec.sources
    c = host_codename()
    return (c, f"{c}-updates", f"{c}-security", f"{c}-backports")


def setup_tree(root: Path, suites: tuple[str, ...]) -> None:
    """What debootstrap leaves out: the sources (`suites`), name
    resolution, no daemons started."""
    kernels.write_sources(root, suites, MIRROR, SECURITY)
    kernels.prepare_system(root)


def apt_install(ch: Chroot, archives: Path, packages: str) -> None:
    """apt-get install with the package cache of earlier runs: hard links
    in before, the new downloads linked back out after."""
    inside = ch.path("/var/cache/apt/archives")
    inside.mkdir(parents=True, exist_ok=True)
    for deb in archives.glob("*.deb"):
        if not (inside / deb.name).exists():
            os.link(deb, inside / deb.name)
    try:
        ch.run(f"apt-get install -y -q --no-install-recommends {packages}")
    finally:
        for deb in inside.glob("*.deb"):
            if not (archives / deb.name).exists():
                os.link(deb, archives / deb.name)


def make_base(base: Path, release: str, suites: tuple[str, ...], archives: Path,
              dbs_cache: Path) -> None:
    """debootstrap suites[0] with `suites` as its sources, and
    linux-headers-RELEASE, into base, atomically."""
    tmp = base.with_name(base.name + ".tmp")
    remove_tree(tmp)
    dbs_cache.mkdir(parents=True, exist_ok=True)
    try:
        run(["debootstrap", "--variant=minbase", f"--cache-dir={dbs_cache}", suites[0],
             str(tmp), MIRROR])
    finally:
        umount_under(tmp)
    setup_tree(tmp, suites)
    ch = Chroot(tmp)
    try:
        ch.mount()
        ch.run("apt-get update -q")
        apt_install(ch, archives, f"linux-headers-{release}")
        ch.run("apt-get clean")
    finally:
        ch.umount()
    tmp.rename(base)


@pytest.fixture(scope="module")
def deb_dir(build_dir) -> Path:
    if MISSING:                         # DTI_CHECK_DEB=1: a failure
        pytest.fail(f"{MISSING} (make check-deb installs the tools)", pytrace=False)
    return build_dir / "deb"


@pytest.fixture(scope="module")
def debs(deb_dir) -> dict[str, Path]:
    """`make deb` into .build/deb/out: {package name: .deb}."""
    out = deb_dir / "out"
    run(["make", "-C", str(REPO), "deb", f"DEB_DIR={out}"])
    found = {p.name.split("_")[0]: p for p in out.glob("*.deb")}
    assert set(found) >= {"dti-dkms", "dti", "libdti0", "libdti-dev", "dti-systemtap",
                          "python3-dti"}
    return found


@pytest.fixture(scope="module")
def chroot(kernel, deb_dir, debs):
    """A fresh chroot of the kernel's Debian release with
    linux-headers-RELEASE and the packages."""
    release = kernel.release
    archives = deb_dir / "archives"
    archives.mkdir(parents=True, exist_ok=True)
    base = deb_dir / f"base-{release}"
    for old in deb_dir.glob("base-*"):          # other kernels' headers
        if old != base and not old.name.endswith(".tmp"):
            remove_tree(old)
    t0 = time.monotonic()
    made = not base.is_dir()
    if made:
        make_base(base, release, release_suites(kernel), archives, deb_dir / "debootstrap")
    t_base = time.monotonic() - t0
    root = deb_dir / "root"
    remove_tree(root)
    run(["cp", "-a", "--reflink=auto", str(base), str(root)])
    ch = Chroot(root)
    try:
        ch.mount()
        ch.path("/tmp/debs").mkdir(parents=True, exist_ok=True)
        names = []
        for name, deb in debs.items():
            if not name.endswith("-dbgsym"):
                shutil.copy(deb, ch.path("/tmp/debs"))
                names.append(f"/tmp/debs/{deb.name}")
        t1 = time.monotonic()
        ch.run("apt-get update -q")
        # a C toolchain and pkgconf for test_libdti_dev_builds_a_program alone
        apt_install(ch, archives, " ".join(sorted(names) + ["gcc", "libc6-dev", "pkgconf"]))
        print(f"\nchroot: base {t_base:.0f} s ({'made' if made else 'cached'}), "
              f"apt install of the packages {time.monotonic() - t1:.0f} s")
        yield ch
    finally:
        ch.umount()
    remove_tree(root)


def test_lintian_is_clean(debs):
    changes = next(iter(debs.values())).parent.glob("*.changes")
    r = subprocess.run(["lintian", "--pedantic", *map(str, changes)],
                       capture_output=True, text=True)
    bad = [line for line in r.stdout.splitlines() if re.match(r"[EW]: ", line)]
    assert not bad, "lintian:\n" + "\n".join(bad)
    assert r.returncode == 0, r.stdout + r.stderr


def dkms_ko(chroot, kernel) -> Path:
    """The dti.ko DKMS installed for the kernel, as DKMS left it: plain, or
    compressed as the kernel's own modules are (Debian's 6.12: .ko.xz)."""
    d = chroot.path(f"/lib/modules/{kernel.release}/updates/dkms")
    found = sorted(d.glob("dti.ko*")) if d.is_dir() else []
    assert found, f"no dti.ko in {d}: {sorted(p.name for p in d.iterdir()) if d.is_dir() else []}"
    return found[0]


def test_dkms_built_dti_ko_for_the_guest_kernel(chroot, kernel):
    release = kernel.release
    status = chroot.run(f"dkms status -k {release} dti").stdout
    assert re.search(rf"^dti/[^,]+, {re.escape(release)}, \S+: installed", status, re.M), status
    ko = dkms_ko(chroot, kernel)
    info = chroot.run(f"modinfo -F vermagic /lib/modules/{release}/updates/dkms/{ko.name}").stdout
    assert info.split()[0] == release
    # kept its DWARF (STRIP[0]="no"): SystemTap's probes on module("dti") need it
    sections = run(["readelf", "-S", "-W", str(dump.plain_module(kernel, ko))]).stdout
    assert ".debug_info" in sections
    # modprobe finds it
    dep = chroot.run(f"modprobe -S {release} --show-depends dti").stdout
    assert f"updates/dkms/{ko.name}" in dep


def test_dti_command_runs(chroot):
    r = chroot.run("dti --help")
    assert r.stdout.startswith("usage: dti "), r.stdout + r.stderr
    chroot.run("test -f /usr/share/man/man1/dti.1.gz && test -f /usr/share/man/man1/dti-stap.1.gz")


def test_libdti_dev_builds_a_program(chroot):
    """The header, the pkg-config file and the shared library fit together."""
    chroot.path("/tmp/uselib.c").write_text(
        "#include <dti/libdti.h>\n#include <stdio.h>\n"
        'int main(void) { puts(dti_level_name(3)); return 0; }\n')
    r = chroot.run("cc -Wall -Werror -o /tmp/uselib /tmp/uselib.c "
                   "$(pkg-config --cflags --libs libdti) && ldd /tmp/uselib && /tmp/uselib")
    assert re.search(r"libdti.so.0 => \S*/lib/\S+/libdti.so.0 ", r.stdout), r.stdout
    assert r.stdout.splitlines()[-1] == "err"
    # libdti.a, with the libraries its Libs.private names (elfutils)
    r = chroot.run("cc -Wall -Werror -o /tmp/uselib-static /tmp/uselib.c "
                   "$(pkg-config --cflags libdti) -l:libdti.a $(pkg-config --static --libs libdti) "
                   "&& ldd /tmp/uselib-static && /tmp/uselib-static")
    assert "libdti.so" not in r.stdout and r.stdout.splitlines()[-1] == "err", \
        r.stdout + r.stderr


def test_python_binding_reads_through_libdti(chroot):
    """python3-dti imports and calls the installed libdti.so.0: a missing
    snapshot is an error with libdti's errno and message."""
    chroot.path("/tmp/usepy.py").write_text(
        "import errno, dti\n"
        "try:\n    dti.load('/tmp/no-such-snapshot')\n"
        "except dti.DTIError as e:\n"
        "    assert e.errno == errno.ENOENT and 'no-such-snapshot' in str(e), e\n"
        "    print('refused:', e)\n")
    r = chroot.run("python3 /tmp/usepy.py")
    assert r.stdout.startswith("refused: "), r.stdout + r.stderr


def test_stap_uses_the_installed_tapset(chroot, kernel, stap):
    """(The stap fixture skips, saying why, where SystemTap cannot build
    for the kernel.)"""
    release = kernel.release
    # plain stap finds dti.stp, dti.stpm and module("dti")'s DWARF
    r = chroot.run(f"stap -p2 -r {release} -e '{RECORD_SCRIPT}'")
    assert "dti_probe" in r.stdout, r.stdout[-2000:]
    # and dti-stap compiles it to a module for the guest kernel
    r = chroot.run(f"cd /tmp && dti-stap -p4 -r {release} -m dti_pkgtest -e '{RECORD_SCRIPT}'",
                   timeout=900)
    assert r.stdout.strip().endswith("dti_pkgtest.ko"), r.stdout + r.stderr
    assert chroot.path("/tmp/dti_pkgtest.ko").is_file()


# What test_kmod.py runs with the dti.ko DKMS built: registration and its
# files, a record from each context on each CPU, every CPU flooding while
# merged snapshots are read, removal under an open reader.  The same
# source as the suite's dti.ko, built by DKMS: this shows the build, not
# the code again (all of test_kmod.py: DTI_DKMS_KMOD_TESTS=all).
DKMS_KMOD_TESTS = ("register_creates or per_cpu_placement or merged_snapshots "
                   "or unregister_while")


def test_kmod_tests_pass_with_the_dkms_module(chroot, kernel, deb_dir):
    """test_kmod.py's DKMS_KMOD_TESTS in the guest, with the dti.ko DKMS
    built (DTI_KO)."""
    ko = deb_dir / "dkms" / "dti.ko"
    ko.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(dump.plain_module(kernel, dkms_ko(chroot, kernel)), ko)
    env = dict(os.environ, DTI_KO=str(ko), DTI_KVER=kernel.release)
    which = os.environ.get("DTI_DKMS_KMOD_TESTS", DKMS_KMOD_TESTS)
    select = [] if which == "all" else ["-k", which]
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "test_kmod.py", *select], cwd=TESTSUITE, env=env,
                       capture_output=True, text=True, timeout=3600)
    tail = "\n".join(r.stdout.splitlines()[-40:])
    print(tail)
    assert r.returncode == 0, tail
    assert re.search(r"\b([5-9]|\d\d+) passed", tail), tail     # the selection still selects
