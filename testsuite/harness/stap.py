"""Compile SystemTap scripts on the host for the guest kernel; run them with staprun.

The host cannot load modules, so a script is cross-compiled here
(`stap -r KVER -p4`) and the resulting .ko is run in the guest with
`staprun`.  Compilation goes through scripts/dti-stap, the user-facing
wrapper, so the tests use exactly the logic users get:

* DTI's tapset (tapset/) is on the tapset path (-I);
* SystemTap 4.8's runtime is replaced by a patched copy (-R) only when the
  target kernel needs it (Debian 6.1's task_work_cancel_func backport;
  see the comment at the top of scripts/dti-stap for the detection).

Probes name DTI's module as module("dti").  With -r KVER stap finds a
module's debuginfo by searching /lib/modules/KVER, so `install_dti()` copies
the freshly built dti.ko to /lib/modules/KVER/extra/ on the host (as
`make install` does; the host kernel never loads it, it is only where stap
looks).  Note that `-r /lib/modules/KVER/build` would not do on Debian
12: its build tree says its release is the upstream one (e.g. 6.1.192),
so stap then searches the build tree itself for modules instead.  That is what the
debug kernel (DTI_KERNEL=debug) uses: it is not installed, stap gets its
build tree (Kernel.stap_target) and dti.ko goes to that tree's extra/.

Modules are cached under <build_dir>/stap/ by a hash of everything that
goes into them: the script, the tapset, dti.ko, stap's version, the kernel
release, the options and the runtime chosen.
"""

from __future__ import annotations

import contextlib
import fcntl
import filecmp
import hashlib
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from . import initramfs
from .kernel import CROSS, Kernel

REPO = Path(__file__).resolve().parent.parent.parent
DTI_STAP = REPO / "scripts" / "dti-stap"
TAPSET_DIR = REPO / "tapset"
GUEST_STAP_DIR = "/stap"        # compiled modules go here in the guest


class StapError(RuntimeError):
    """stap failed; .output holds what it printed."""

    def __init__(self, message: str, output: str = ""):
        super().__init__(message)
        self.output = output


def _sha(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(len(p).to_bytes(8, "little"))
        h.update(p)
    return h.hexdigest()


def _tree_bytes(d: Path) -> bytes:
    out = []
    if d.is_dir():
        for f in sorted(d.rglob("*.stp*")):
            out.append(str(f.relative_to(d)).encode() + b"\0" + f.read_bytes())
    return b"\0\0".join(out)


def stap_version() -> str:
    r = subprocess.run(["stap", "-V"], capture_output=True, text=True)
    return (r.stdout + r.stderr).splitlines()[0] if (r.stdout + r.stderr) else "?"


def install_dti(kernel: Kernel, ko: Path, *, depmod: bool = True) -> Path:
    """Copy dti.ko to /lib/modules/KVER/extra/ (if different) so stap -r KVER
    finds module("dti")'s debuginfo (the debug kernel: to its build tree's
    extra/, see Kernel.stap_target).  Returns the installed path."""
    dest = kernel.stap_module_dir / "dti.ko"
    if dest.is_file() and filecmp.cmp(ko, dest, shallow=False):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(f".ko.tmp{os.getpid()}")
    shutil.copyfile(ko, tmp)
    os.replace(tmp, dest)
    if depmod and kernel.flavour == "debian" and shutil.which("depmod"):
        subprocess.run(["depmod", kernel.release], capture_output=True)
    return dest


# How many times (TRYLOCKDELAY, 10 us apart) a probe tries a script
# global's lock before SystemTap skips it, on the debug kernel: 1 s
# instead of the stock 1 ms, since KASAN and lockdep make whatever holds
# it several times slower there, and a skip should not come of that.
# (The skips the flood tests saw there were of another kind, "low stack",
# SystemTap's stack guard misreading the IRQ stacks: see
# test_scripts_load.py; this limit did not change them.)
DEBUG_MAXTRYLOCK = 100000

# A script compiled with this is never stopped for skipped probes (stock
# MAXSKIPPED is 100); its end still says how many it skipped.
NO_SKIP_LIMIT = f"-DMAXSKIPPED={1 << 30}"


@contextlib.contextmanager
def dti_installed(kernel: Kernel, ko: Path | None):
    """install_dti(), held so until the block ends: a test run of another
    checkout installs its own dti.ko (a build-id of its own) where stap
    looks, and a stap that read it meanwhile made a module the guest's
    dti.ko refuses ("Build-id mismatch").  A lock file beside it keeps the
    runs of every checkout apart."""
    if ko is None:
        yield
        return
    lock_dir = kernel.stap_module_dir
    lock_dir.mkdir(parents=True, exist_ok=True)
    with open(lock_dir / ".dti-stap.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            install_dti(kernel, ko)
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@dataclass
class Compiled:
    ko: Path            # the module on the host
    name: str           # module name (stap -m)
    seconds: float      # compile time, 0.0 if it came from the cache
    cached: bool

    @property
    def guest_path(self) -> str:
        return f"{GUEST_STAP_DIR}/{self.ko.name}"


@dataclass
class Stap:
    """Compiles scripts for one guest kernel (the `stap` pytest fixture)."""
    kernel: Kernel
    build_dir: Path
    dti_ko: Path | None = None
    timings: list[tuple[str, float, bool]] = field(default_factory=list)

    def __post_init__(self):
        self.cache = Path(self.build_dir).resolve() / "stap"
        self.cache.mkdir(parents=True, exist_ok=True)
        if self.dti_ko is not None:
            install_dti(self.kernel, self.dti_ko)

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.setdefault("DTI_STAP_CACHE", str(self.cache / "runtime"))
        env["DTI_TAPSET_DIR"] = str(TAPSET_DIR)
        return env

    def runtime_fix_needed(self) -> bool:
        r = subprocess.run([str(DTI_STAP), "--runtime-fix-needed", "-r",
                            self.kernel.stap_target],
                           capture_output=True, text=True, env=self.env(), check=True)
        return r.stdout.strip() == "yes"

    def runtime_dir(self) -> str:
        r = subprocess.run([str(DTI_STAP), "--runtime-dir", "-r", self.kernel.stap_target],
                           capture_output=True, text=True, env=self.env(), check=True)
        return r.stdout.strip()

    def command(self, *args: str) -> list[str]:
        kbuild = [f"-B{v}" for v in self.kernel.kbuild_vars]
        if self.kernel.foreign:
            # cross-compiled: stap's own -a, and Kbuild's ARCH and CROSS_COMPILE
            kbuild = ["-a", CROSS[self.kernel.arch][1], *kbuild]
        return [str(DTI_STAP), "-r", self.kernel.stap_target, *kbuild, *args]

    def elaborate(self, script: str | os.PathLike, *opts: str,
                  args: Iterable[str] = ()) -> subprocess.CompletedProcess:
        """stap -p2 on a file (Path) or script text (str); never raises."""
        if isinstance(script, Path):
            cmd = [*opts, str(script), *args]
        else:
            cmd = [*opts, "-e", script, *args]
        return subprocess.run(self.command("-p2", *cmd), capture_output=True, text=True,
                              env=self.env())

    def compile(self, script: str | os.PathLike, *, name: str | None = None,
                opts: Iterable[str] = (), args: Iterable[str] = ()) -> Compiled:
        """Compile a script (a Path to a .stp file, or its text) with -p4.

        opts: extra stap options, e.g. ["-DMAXSTRINGLEN=1100", "-g"].
        args: the script's command-line arguments ($1, @1 ...), which stap
          compiles into the module.
        Returns the cached module if nothing that goes into it changed.
        """
        opts = list(opts)
        args = list(args)
        if self.kernel.flavour == "debug" and not any(o.startswith("-DMAXTRYLOCK=")
                                                       for o in opts):
            opts.append(f"-DMAXTRYLOCK={DEBUG_MAXTRYLOCK}")
        if isinstance(script, Path):
            text = script.read_text()
        else:
            text = str(script)
        # Modules probed by path: their build-id must match the guest's.
        probed = sorted(set(re.findall(r'module\("(/[^"]+\.ko)"\)', " ".join([text, *args]))))
        probed_bytes = b"".join(Path(p).read_bytes() for p in probed if Path(p).is_file())
        key = _sha(text.encode(), _tree_bytes(TAPSET_DIR), probed_bytes,
                   self.dti_ko.read_bytes() if self.dti_ko else b"",
                   stap_version().encode(), self.kernel.stap_target.encode(),
                   "\0".join(self.kernel.kbuild_vars).encode(),
                   "\0".join(opts).encode(), "\0".join(args).encode(),
                   self.runtime_dir().encode(),
                   DTI_STAP.read_bytes())[:16]
        base = re.sub(r"[^A-Za-z0-9_]", "_", name or "dti_stap")[:40]
        modname = f"{base}_{key[:8]}"
        outdir = self.cache / key
        ko = outdir / f"{modname}.ko"
        if ko.is_file():
            self.timings.append((modname, 0.0, True))
            return Compiled(ko, modname, 0.0, True)
        tmp = self.cache / f".{key}.tmp{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        src = tmp / f"{base}.stp"
        src.write_text(text)
        cmd = self.command("-p4", "-m", modname, *opts, str(src), *args)
        t0 = time.monotonic()
        # stap must see this checkout's dti.ko (see dti_installed())
        with dti_installed(self.kernel, self.dti_ko):
            r = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, env=self.env())
        secs = time.monotonic() - t0
        if r.returncode != 0 or not (tmp / f"{modname}.ko").is_file():
            out = r.stdout + r.stderr
            shutil.rmtree(tmp, ignore_errors=True)
            raise StapError(f"stap failed ({' '.join(cmd)}):\n"
                            + "\n".join(out.splitlines()[-60:]), out)
        (tmp / "stap.log").write_text(r.stdout + r.stderr)
        shutil.rmtree(outdir, ignore_errors=True)
        os.replace(tmp, outdir)
        self.timings.append((modname, secs, False))
        return Compiled(ko, modname, secs, False)

    def guest_files(self, *mods: Compiled) -> dict[str, str]:
        """extra_files for Guest.run(): staprun, stapio and the modules in /stap/."""
        if self.kernel.foreign:
            from . import userland
            files: dict[str, str] = userland.systemtap_runtime_files(self.kernel.arch)
        else:
            files = dict(initramfs.systemtap_runtime_files())
        for m in mods:
            files[str(m.ko)] = m.guest_path
        return files


# A script with no probe on DTI: what any SystemTap module needs of the kernel.
_SMOKE_SCRIPT = 'probe begin { println("dti-stap-smoke ok") exit() }'


def stap_unusable(stap: "Stap") -> str | None:
    """Why SystemTap cannot be used on stap.kernel, or None if it can.

    A kernel whose headers live in a chroot (harness/kernels.py) is not
    one the host's stap can build for.  Otherwise a script with no DTI
    probe is compiled and run in a guest, once per stap version and kernel
    (the answer is kept in the stap cache), so that a SystemTap that
    cannot work on this kernel (4.8 and 5.1 on 6.12: uprobe_unregister is
    gone) is one skip that says why, not every SystemTap test failing."""
    from .vm import Guest

    if stap.kernel.chroot is not None:
        return (f"SystemTap: kernel {stap.kernel.name} ({stap.kernel.release}) has its headers "
                f"in a chroot of its own Debian release; the host's stap does not build for it")
    key = _sha(stap_version().encode(), stap.kernel.stap_target.encode(),
               stap.kernel.vmlinuz.read_bytes()[:1 << 16], DTI_STAP.read_bytes())[:16]
    verdict = stap.cache / f"usable-{key}.txt"
    if verdict.is_file():
        text = verdict.read_text()
        return text or None
    why = ""
    try:
        mod = stap.compile(_SMOKE_SCRIPT, name="dti_stap_smoke")
        g = Guest("stap-smoke", kernel=stap.kernel, build_dir=stap.build_dir)
        res = g.run(f"{staprun_cmd(mod)} > /out/smoke 2>&1 || true", smp=1,
                    extra_files=stap.guest_files(mod))
        out = (res.outdir / "smoke").read_text() if (res.outdir / "smoke").is_file() else ""
        if "dti-stap-smoke ok" not in out:
            first = next((line for line in out.splitlines() if "ERROR" in line),
                         out.strip().splitlines()[0] if out.strip() else "no output")
            why = (f"SystemTap ({stap_version()}) cannot run a module on {stap.kernel.release}: "
                   f"{first.strip()}")
    except StapError as e:
        first = next((line for line in e.output.splitlines() if "error" in line.lower()),
                     str(e).splitlines()[0])
        why = (f"SystemTap ({stap_version()}) cannot build for {stap.kernel.release}: "
               f"{first.strip()}")
    verdict.write_text(why)
    return why or None


def probe_clones(ko: Path) -> list[str]:
    """dti_probe_* symbols gcc cloned (.constprop/.isra/.part) in `ko`.

    Callers then call the clone, often without the arguments, and a probe on
    the original function never fires: the probe functions must be
    `noinline __noipa`."""
    r = subprocess.run(["nm", str(ko)], capture_output=True, text=True)
    return [line.split()[-1] for line in r.stdout.splitlines()
            if re.search(r"\bdti_probe_\w+\.(constprop|isra|part)", line)]


def staprun_cmd(mod: Compiled, *params: str, opts: str = "") -> str:
    """A guest shell command running `mod` with staprun.

    params: module parameters, i.e. the script's -G globals ("name=value");
    opts: staprun options, e.g. "-o /out/x.txt" or "-T 5".
    """
    return " ".join(p for p in ("staprun", opts, mod.guest_path, *params) if p)
