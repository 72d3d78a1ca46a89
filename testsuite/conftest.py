"""pytest fixtures for DTI's VM tests (see harness/ for the machinery).

Fixtures:
  kernel     (session) harness.Kernel: the newest installed kernel with headers
  build_dir  (session) Path: $DTI_BUILD_DIR or testsuite/.build
  modules    (session) list[Path]: .ko files built from MODULE_DIRS; env
             DTI_KO=/path/to/dti.ko puts that dti.ko in place of kmod's
             (test_packages.py: the one DKMS built from the dti-dkms package)
  guest      (function) harness.Guest: guest.run(script, smp=2, ...) -> Result
  dti_guest  (function) the same Guest, with `modules` installed by default
  dti_tool   (session) Path: the `dti` command, built by `make -C runtime`
  stap       (session) harness.stap.Stap: stap.compile(script) -> module for
             the guest kernel (dti.ko installed where stap finds it first)
  tapset_guest (function) dti_guest plus /bin/dti, for SystemTap tests
  kernel_symbols (session) Path: a System.map for the guest kernel in its
             build tree (from a guest's /proc/kallsyms), for kprobe.function()

After each test, every console of the test's boots is searched for kernel
splats (harness.logcheck.find_splats); any splat fails the test.  Opt out
with @pytest.mark.allow_splat(regex, ...), guest.allow_splat(regex),
guest.expect_splat(regex) or guest.run(..., allow=[regex]).

A test that ended in harness.VMLost (panic, timeout, no exit status) is
reported as "VM-LOST" (letter L) and listed in a summary section of its own,
apart from ordinary assertion failures.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from harness import initramfs
from harness.kernel import KernelNotFound, find_kernel
from harness.vm import DEFAULT_TIMEOUT, Guest, VMLost, VMPanic

pytest_plugins = ["pytester"]   # for harness/tests/test_plugin.py

REPO = Path(__file__).resolve().parent.parent

# Directories (relative to the repo root) whose Makefile builds guest kernel
# modules; called as `make -C DIR KVER=<kver> KDIR=<build dir>`.  A directory
# without a Makefile is skipped.  Add e.g. "examples/foo" here.
MODULE_DIRS: list[str] = [
    "kmod",
    "testsuite/modules",
    "examples",
]

_GUESTS = pytest.StashKey[list]()

# The core set (`pytest -m core`, make check-core): what CI runs on every
# kernel of the matrix besides the default, whose whole suite make check
# runs.  Loading and registration, handles, control by name, the write
# path under hotplug, NMI and kprobes, panic output and persistence.
CORE_FILES = ("test_kmod.py", "test_handles.py", "test_ctl.py", "test_write_safety.py",
              "test_probe_contexts.py", "test_panic.py", "test_persist.py")
# The SystemTap set (`pytest -m tapset`): the tapset elaborated with the
# SystemTap in use and its probes run in the guest; with the core set,
# what CI runs in Debian 13 (make check-debian13-core).
TAPSET_FILES = ("test_tapset.py", "test_tapset_guest.py")


def pytest_addoption(parser):
    group = parser.getgroup("dti", "DTI VM tests")
    group.addoption("--dti-timeout", type=float,
                    default=float(os.environ.get("DTI_TIMEOUT", DEFAULT_TIMEOUT)),
                    help="host timeout per VM boot in seconds (env DTI_TIMEOUT; "
                         f"default {DEFAULT_TIMEOUT:.0f})")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "allow_splat(*regex): kernel splat lines matching any regex "
                   "do not fail the test")
    config.addinivalue_line(
        "markers", "core: in the core set each kernel of the matrix runs (CORE_FILES)")
    config.addinivalue_line(
        "markers", "tapset: in the SystemTap set (TAPSET_FILES)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name in CORE_FILES:
            item.add_marker(pytest.mark.core)
        if item.path.name in TAPSET_FILES:
            item.add_marker(pytest.mark.tapset)


@pytest.fixture(scope="session")
def kernel():
    try:
        return find_kernel()
    except KernelNotFound as e:
        pytest.fail(str(e), pytrace=False)


@pytest.fixture(scope="session")
def build_dir() -> Path:
    d = initramfs.default_build_dir()
    d.mkdir(parents=True, exist_ok=True)
    return d


def build_module_dir(path: Path, kernel) -> list[Path]:
    """Run make in `path` for `kernel` (in its chroot if it has one, see
    harness/kernels.py); return the .ko files found under it."""
    from harness import kernels
    cmd = kernels.make_command(kernel, path, f"-j{os.cpu_count() or 1}")
    with kernels.build_context(kernel):
        r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        out = "\n".join((r.stdout + r.stderr).splitlines()[-80:])
        pytest.fail(f"module build failed: {' '.join(cmd)}\n{out}", pytrace=False)
    return sorted(path.rglob("*.ko"))


@pytest.fixture(scope="session")
def modules(kernel) -> list[Path]:
    kos: list[Path] = []
    for d in MODULE_DIRS:
        path = REPO / d
        if (path / "Makefile").is_file():
            kos.extend(build_module_dir(path, kernel))
    # kmod/ is still built: the client modules link against its Module.symvers
    override = os.environ.get("DTI_KO")
    if override:
        ko = Path(override).resolve()
        if ko.name != "dti.ko" or not ko.is_file():
            pytest.fail(f"DTI_KO={override}: no such dti.ko", pytrace=False)
        kos = [ko if k.name == "dti.ko" else k for k in kos]
    return kos


@pytest.fixture(scope="session")
def dti_tool(kernel) -> Path:
    """The `dti` command for the guest.  The host's is built in any case:
    tests read the guest's output with it (runtime/build/dti)."""
    r = subprocess.run(["make", "-C", str(REPO / "runtime")], capture_output=True,
                       text=True)
    if r.returncode != 0:
        out = "\n".join((r.stdout + r.stderr).splitlines()[-80:])
        pytest.fail(f"make -C runtime failed:\n{out}", pytrace=False)
    if kernel.foreign:        # cross-built, its libraries from a sysroot
        from harness import userland
        try:
            return userland.build_dti(kernel.arch)
        except userland.UserlandError as e:
            pytest.fail(str(e), pytrace=False)
    return REPO / "runtime" / "build" / "dti"   # its shared libraries go along


@pytest.fixture
def guest(request, kernel, build_dir) -> Guest:
    allow = [rx for m in request.node.iter_markers("allow_splat") for rx in m.args]
    g = Guest(request.node.nodeid, kernel=kernel, build_dir=build_dir, allow=allow,
              timeout=request.config.getoption("--dti-timeout"))
    request.node.stash.setdefault(_GUESTS, []).append(g)
    return g


@pytest.fixture
def dti_guest(guest, modules) -> Guest:
    guest.modules = list(modules)
    return guest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    guests = item.stash.get(_GUESTS, [])
    if call.when != "call" or not guests:
        return
    if call.excinfo is not None and call.excinfo.errisinstance(VMLost):
        rep.dti_vm_lost = True
    runs = [str(b.run_dir) for g in guests for b in g.boots]
    if runs:
        rep.sections.append(("dti guest run dirs", "\n".join(runs)))
    splats = [s for g in guests for s in g.splats(with_context=True)]
    if not splats or rep.skipped:
        return
    msg = ("kernel splat(s) in the guest console (opt out with "
           "@pytest.mark.allow_splat(regex) or guest.expect_splat(regex)):\n\n"
           + "\n\n".join(splats))
    if rep.passed:
        rep.outcome = "failed"
        rep.longrepr = msg
    elif not (call.excinfo and call.excinfo.errisinstance(VMPanic)):  # that one shows it
        rep.sections.append(("dti kernel splats", msg))


def pytest_report_teststatus(report, config):
    if getattr(report, "dti_vm_lost", False) and report.failed:
        return "failed", "L", "VM-LOST"
    return None


def pytest_terminal_summary(terminalreporter):
    lost = [r for r in terminalreporter.stats.get("failed", [])
            if getattr(r, "dti_vm_lost", False)]
    if not lost:
        return
    terminalreporter.section("DTI: VM lost (panic/timeout/no exit status), "
                             "not an assertion failure", red=True)
    for r in lost:
        crash = getattr(getattr(r, "longrepr", None), "reprcrash", None)
        msg = crash.message if crash else str(r.longrepr)
        terminalreporter.write_line(f"{r.nodeid}: {msg.strip().splitlines()[0]}")


@pytest.fixture(scope="session")
def stap(kernel, build_dir, modules):
    from harness.stap import Stap, stap_unusable
    if not shutil.which("stap"):
        pytest.skip("stap not installed: apt-get install systemtap")
    dti_ko = next((m for m in modules if m.name == "dti.ko"), None)
    s = Stap(kernel, build_dir, dti_ko)
    why = stap_unusable(s)
    if why:
        pytest.skip(why)
    return s


# Where SystemTap looks for the symbol table of the kernel given with
# -r KVER: 4.8 in the kernel's build tree (besides /boot), 5.x only in
# /boot/System.map-KVER and here, the path of Debian's -dbg package.
DEBUG_SYSTEM_MAP = Path("/usr/lib/debug/boot")


@pytest.fixture(scope="session")
def kernel_symbols(kernel, build_dir) -> Path:
    """A System.map for the guest kernel where each SystemTap looks for
    the kernel's symbol table (kprobe.function() probes need it): the
    build tree (4.8) and /usr/lib/debug/boot/System.map-KVER (5.x).
    Debian's /boot/System.map is a stub pointing at the -dbg package, so
    it is made from the /proc/kallsyms of a booted guest, once; a real
    System.map already in either place is left alone and copied to the
    other."""
    targets = [Path(kernel.build_dir).resolve() / "System.map"]
    if kernel.flavour == "debian":          # stap -r KVER
        targets.append(DEBUG_SYSTEM_MAP / f"System.map-{kernel.release}")
    have = next((t for t in targets if t.is_file()), None)
    if have is not None:
        text = have.read_text()
    else:
        g = Guest("kallsyms", kernel=kernel, build_dir=build_dir)
        res = g.run("cat /proc/kallsyms > /out/kallsyms", smp=1).check()
        lines = sorted(line for line in (res.outdir / "kallsyms").read_text().splitlines()
                       if "[" not in line)          # vmlinux's, not modules'
        if not any(line.endswith(" _stext") and not line.startswith("0000") for line in lines):
            pytest.fail("guest /proc/kallsyms hides its addresses", pytrace=False)
        text = "\n".join(lines) + "\n"
    for target in targets:
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(target.name + ".dti-tmp")
            tmp.write_text(text)
            tmp.replace(target)
    return targets[0]


@pytest.fixture
def tapset_guest(dti_guest, stap, modules, dti_tool):
    """dti_guest for SystemTap tests: dti.ko's probe functions checked
    for compiler clones, and the dti command in the guest as /bin/dti."""
    from harness.stap import probe_clones
    dti = next(m for m in modules if m.name == "dti.ko")
    clones = probe_clones(dti)
    if clones:
        pytest.fail(f"{dti}: gcc cloned the probe functions ({', '.join(clones)}); "
                    "callers call the clones and the tapset's probes see nothing "
                    "or no arguments.  dti_probe_*() must be `noinline __noipa`.",
                    pytrace=False)
    dti_guest.extra_files[str(dti_tool)] = "/bin/dti"
    return dti_guest
