"""Boot a test script in QEMU on Debian's installed kernel and collect the result.

Modelled on drgn's vmtest.  `run(script, ...)` boots with -kernel/-initrd
(base initramfs + a per-test cpio holding /test.sh), kernel log on ttyS0 ->
console.log, script stdout+stderr on ttyS1 -> out.log.  /init writes the
tar+base64 of /out and a line "@@DTI-EXIT@@ <rc>" on ttyS1, then powers off.
The kernel runs with oops=panic panic=-1 and QEMU with -no-reboot, so an oops
ends the VM at once instead of hanging it.

A VM that panicked, timed out or ended without the exit marker raises
VMLost (VMPanic / VMTimeout), never AssertionError: a lost VM is kept
apart from a failing test.  `Result.check()` raises AssertionError if the
script's exit status is not 0.

`Guest` is the per-test object behind the pytest fixture `guest`: it runs
scripts in named run directories and remembers every boot's console so the
fixture can fail the test on kernel splats (see logcheck.find_splats).
"""

from __future__ import annotations

import base64
import io
import operator
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from . import initramfs, logcheck, pvh
from .kernel import Kernel, find_kernel

DEFAULT_TIMEOUT = 300.0
DEFAULT_MEM = 512
DEFAULT_SMP = 2
BASE_APPEND = ("console=ttyS0 oops=panic panic=-1 panic_on_warn=0 loglevel=7 "
               "printk.devkmsg=on rdinit=/init")
# On PREEMPT_RT the UARTs' interrupt handlers are threads; under TCG and
# a guest that floods every CPU, the output port's thread can run so late
# that the kernel finds IRQ 3 unhandled 99,900 times in 100,000 ("irq 3:
# nobody cared") and disables it, and the script's output never arrives
# (6.1-rt, test_kmod's four-CPU flood).  noirqdebug leaves it enabled.
RT_APPEND = "noirqdebug"
# Under TCG most kernels find the vCPUs' TSCs unsynchronized at boot and
# keep to the HPET; 7.3 found them in step, chose the TSC, and its
# clocksource watchdog later switched away from it on a loaded host.  A
# switch patches the kernel's text at run time (7.x: the inlined TSC read
# in ktime_get_mono_fast_ns(), a static key), and QEMU 7.2's threaded TCG
# ran the stale int3 on the other vCPU: "Oops: int3" in a test that had
# nothing to do with it.  Every TCG guest therefore keeps the clocksource
# it boots with, unless the caller chose the TSC's treatment itself (the
# benchmark's tsc=reliable: no watchdog, so no switch either).
TCG_APPEND = "tsc=unstable"
# An arm64 guest (Kernel.arch "arm64"): qemu-system-aarch64's virt
# machine, whose one PL011 (ttyAMA0) is the console; the script's output
# goes to a virtio console (initramfs.EARLY_INIT says why and how).
# cortex-a57: the CPU Debian's arm64 kernels are known to boot on under
# TCG, and cheaper to emulate than "max" (no pointer authentication).
FOREIGN_QEMU = {"arm64": ("qemu-system-aarch64", "qemu-system-arm",
                          ["-M", "virt", "-cpu", "cortex-a57"], "ttyAMA0")}


class VMLost(Exception):
    """The VM did not report an exit status (panic, timeout, crash, bad setup).

    Not an AssertionError: this is "the test could not run to the end", not
    "the test's checks failed".  `.console` and `.stdout` hold what was captured.
    """

    def __init__(self, message: str, console: str = "", stdout: str = "",
                 run_dir: Path | None = None):
        super().__init__(message)
        self.console = console
        self.stdout = stdout
        self.run_dir = run_dir


class VMPanic(VMLost):
    """The guest kernel panicked (an oops becomes a panic: oops=panic)."""


class VMTimeout(VMLost):
    """The VM did not power off within the host timeout and was killed."""


@dataclass
class Result:
    rc: int                     # exit status of the guest script
    stdout: str                 # script stdout+stderr (interleaved, as written)
    console: str                # kernel console log (ttyS0)
    outdir: Path | None         # files the script left in /out, or None
    run_dir: Path               # console.log, out.log, qemu.log, out/ ...
    duration: float             # wall-clock seconds of the boot
    smp: int = DEFAULT_SMP
    mem: int = DEFAULT_MEM
    cmdline: list[str] = field(default_factory=list)

    def check(self) -> "Result":
        """Raise AssertionError unless the script exited 0; returns self."""
        if self.rc != 0:
            raise AssertionError(
                f"guest script exited with status {self.rc} (run dir {self.run_dir})\n"
                f"--- guest output (tail) ---\n{logcheck.tail(self.stdout, 60)}")
        return self

    def splats(self, allow: Iterable[str] = ()) -> list[str]:
        return logcheck.find_splats(self.console, allow)


def use_kvm() -> bool:
    return os.environ.get("DTI_KVM", "") == "1"


def qemu_binary(kernel: Kernel | None = None) -> str:
    if kernel is not None and kernel.foreign:
        name, package = FOREIGN_QEMU[kernel.arch][:2]
        q = shutil.which(name)
        if not q:
            raise VMLost(f"{name} not found: apt-get install {package}")
        return q
    q = os.environ.get("DTI_QEMU") or shutil.which("qemu-system-x86_64")
    if not q:
        raise VMLost("qemu-system-x86_64 not found: apt-get install qemu-system-x86")
    return q


def foreign_qemu_command(kernel: Kernel, initrd: Path, run_dir: Path, *, smp: int,
                         mem: int, append: str, tcg: str, reboot: bool) -> list[str]:
    """qemu_command() for a foreign kernel (FOREIGN_QEMU): its vmlinuz as
    it is (QEMU takes arm64's gzipped Image), the console on the machine's
    UART, the script's output on a virtio console."""
    machine, console = FOREIGN_QEMU[kernel.arch][2:]
    base = BASE_APPEND.replace("console=ttyS0", f"console={console}")
    return [
        qemu_binary(kernel), "-nodefaults", "-no-user-config",
        *([] if reboot else ["-no-reboot"]), "-display", "none", "-monitor", "none",
        *machine, "-accel", tcg, "-smp", str(smp), "-m", str(mem),
        "-kernel", str(kernel.vmlinuz), "-initrd", str(initrd),
        "-append", " ".join(filter(None, (base, RT_APPEND if kernel.preempt_rt else "",
                                          append))),
        "-serial", f"file:{run_dir / 'console.log'}",
        "-device", "virtio-serial-device",
        "-chardev", f"file,id=dtiout,path={run_dir / 'out.log'}",
        "-device", "virtconsole,chardev=dtiout",
        "-nic", "none",
    ]


def qemu_command(kernel: Kernel, initrd: Path, run_dir: Path, *, smp: int, mem: int,
                 append: str = "", kvm: bool | None = None,
                 tcg_single: bool = False, reboot: bool = False,
                 kaslr: bool = False) -> list[str]:
    """The QEMU command booting `kernel` (pvh.boot_image(): its unpacked
    image through the PVH entry point where it has one, unless `kaslr`
    asks for the bzImage, whose decompressor places the kernel at random)."""
    kvm = use_kvm() if kvm is None else kvm
    # One host thread for all vCPUs: see run()'s tcg_single.
    if tcg_single or os.environ.get("DTI_TCG_SINGLE") == "1":
        tcg = "tcg,thread=single"
    else:
        tcg = "tcg"
    if kernel.foreign:
        return foreign_qemu_command(kernel, initrd, run_dir, smp=smp, mem=mem,
                                    append=append, tcg=tcg, reboot=reboot)
    accel = ["-accel", "kvm", "-cpu", "host"] if kvm else ["-accel", tcg, "-cpu", "max"]
    return [
        qemu_binary(), "-nodefaults", "-no-user-config", *([] if reboot else ["-no-reboot"]),
        "-display", "none", "-monitor", "none",
        *accel, "-smp", str(smp), "-m", str(mem),
        "-kernel", str(pvh.boot_image(kernel, kaslr=kaslr)), "-initrd", str(initrd),
        "-append", " ".join(filter(None, (BASE_APPEND,
                                          "" if kvm or "tsc=" in append else TCG_APPEND,
                                          RT_APPEND if kernel.preempt_rt else "", append))),
        "-serial", f"file:{run_dir / 'console.log'}",
        "-serial", f"file:{run_dir / 'out.log'}",
        "-nic", "none",
    ]


def make_run_dir(build_dir: Path, run_dir: str | os.PathLike | None, prefix: str) -> Path:
    """`run_dir` emptied, or a new directory `prefix`* under build_dir/runs/."""
    if run_dir is None:
        (build_dir / "runs").mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=prefix, dir=build_dir / "runs"))
    path = Path(run_dir)
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def write_initrd(run_dir: Path, base: Path, script: str, sh_opts: str) -> Path:
    """run_dir/initrd.cpio: the base archive and one holding `script`
    (also kept as run_dir/test.sh)."""
    initrd = run_dir / "initrd.cpio"
    with open(initrd, "wb") as out, open(base, "rb") as src:
        shutil.copyfileobj(src, out, 1 << 20)
        out.write(initramfs.script_archive(script, sh_opts))
    (run_dir / "test.sh").write_text(script)
    return initrd


def run_qemu(cmd: list[str], run_dir: Path, timeout: float,
             on_timeout: Callable[[], None] | None = None) -> tuple[int, bool]:
    """Run QEMU with its output in run_dir/qemu.log until it exits or
    `timeout` seconds pass; then call `on_timeout` (QEMU still running)
    and kill it.  QEMU never outlives this call, KeyboardInterrupt
    included.  Returns (exit status, timed out)."""
    timed_out = False
    with open(run_dir / "qemu.log", "wb") as qlog:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=qlog,
                                stderr=subprocess.STDOUT)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            if on_timeout:
                on_timeout()
        finally:
            if proc.poll() is None:
                proc.kill()
            qrc = proc.wait()
    return qrc, timed_out


def _hang_backtraces(kernel: Kernel, run_dir: Path) -> None:
    """DTI_HANG_DEBUG=1: before a VM that timed out is killed, attach gdb
    to QEMU's gdb stub and write every vCPU's registers and backtrace to
    hang-gdb.txt.  Symbols come from the guest kernel's debuginfo
    (linux-image-KVER-dbg: `make check-kdebug` installs it); the guest
    boots with nokaslr so that they apply.  Module frames show as
    addresses; the test can print /proc/modules to resolve them."""
    vmlinux = kernel.vmlinux or Path("/usr/lib/debug/boot") / f"vmlinux-{kernel.release}"
    sym = [str(vmlinux)] if vmlinux.exists() else []
    cmd = ["gdb", "-batch", "-nx", *sym,
           "-ex", f"target remote {run_dir / 'gdb.sock'}",
           "-ex", "info threads", "-ex", "thread apply all info registers rip rsp eflags",
           "-ex", "thread apply all x/2i $pc", "-ex", "thread apply all x/8xb $pc",
           "-ex", "thread apply all bt 40"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        text = r.stdout + r.stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        text = f"gdb failed: {e}\n"
    (run_dir / "hang-gdb.txt").write_text(text)


def parse_output(text: str) -> tuple[int | None, str, bytes | None]:
    """Split ttyS1 output into (rc or None, script stdout, /out tar.gz or None)."""
    text = text.replace("\r\n", "\n")
    exit_at = text.rfind(f"\n{initramfs.EXIT_MARKER} ")
    if exit_at < 0:
        return None, text, None
    m = re.match(rf"\n{initramfs.EXIT_MARKER} (-?\d+)\n", text[exit_at:])
    if not m:
        return None, text, None
    rc = int(m.group(1))
    body = text[:exit_at]
    tar = None
    begin = body.rfind(f"\n{initramfs.OUT_BEGIN_MARKER}\n")
    if begin >= 0:
        end = body.find(f"\n{initramfs.OUT_END_MARKER}\n", begin)
        if end < 0:
            end = body.find(f"\n{initramfs.OUT_END_MARKER}", begin)
        payload = body[begin + len(initramfs.OUT_BEGIN_MARKER) + 2: end if end >= 0 else None]
        tar = base64.b64decode("".join(payload.split()))
        body = body[:begin]
    return rc, body, tar


def _safe_extract(tar_bytes: bytes, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(tar_bytes), mode="r:*") as tf:
        if hasattr(tarfile, "data_filter"):
            tf.extractall(dest, filter="data")
            return
        root = dest.resolve()
        for m in tf.getmembers():
            target = (dest / m.name).resolve()
            if root != target and root not in target.parents:
                continue
            if m.isdir():
                target.mkdir(parents=True, exist_ok=True)
            elif m.isfile():
                target.parent.mkdir(parents=True, exist_ok=True)
                src = tf.extractfile(m)
                target.write_bytes(src.read() if src else b"")
                target.chmod(m.mode & 0o755 | 0o600)


def _read(p: Path) -> str:
    try:
        return p.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""


# pytest: hide harness frames when a VM is lost (the message says it all);
# keep them for any other exception (a harness bug).
_hide_vm_lost = operator.methodcaller("errisinstance", VMLost)


def _run_once(script: str, *, smp: int = DEFAULT_SMP, mem: int = DEFAULT_MEM,
              timeout: float | None = DEFAULT_TIMEOUT,
              modules: Iterable[str | os.PathLike] = (),
              extra_files: Mapping[str | os.PathLike, str] | None = None,
              sh_opts: str = "-eu", append: str = "",
              kernel: Kernel | None = None, build_dir: str | os.PathLike | None = None,
              run_dir: str | os.PathLike | None = None, kvm: bool | None = None,
              tcg_single: bool = False, reboot: bool = False,
              qemu_args: Sequence[str] = ()) -> Result:
    """Boot a VM, run `script` with `sh <sh_opts> /test.sh` as root, return a Result.

    modules: .ko files or directories (searched for *.ko), installed in the guest
      as /lib/modules/dti/<name>.ko ($DTI_MODDIR).
    extra_files: {host_path: guest_path}; ELF files bring their shared libs.
    sh_opts: "-eu" (default, like `set -eu`), "-u", "" ...
    append: extra kernel command line.
    run_dir: where console.log/out.log/qemu.log/out/, test.sh, stdout.txt, rc
      and cmdline go (default: a new directory under <build_dir>/runs/);
      emptied first if it exists.  initrd.cpio is kept if DTI_KEEP_INITRD=1.
    /out travels as tar.gz+base64 over the emulated UART: fine for a few MB
      (2 MB costs ~8 s under TCG), not for bulk data.
    tcg_single: run every vCPU in one host thread (-accel tcg,thread=single).
      QEMU 7.2's multi-threaded TCG can keep executing a stale translation of
      code another vCPU patched with text_poke_bp(): a static-key site or an
      ftrace call site toggled while other vCPUs run it at full rate was
      seen as an endless int3 loop, or a jump to 0 through an ftrace
      trampoline.  Tests that patch hot code under load use this; so does
      every test with DTI_TCG_SINGLE=1.
    timeout: seconds, then kernel.scaled() (times the debug kernel's
      factor, or DTI_TIMEOUT_FACTOR's).
    qemu_args: more QEMU arguments, after the harness's own (a disk:
      "-drive", "file=F,if=none,id=d0,format=raw", "-device",
      "virtio-blk-pci,drive=d0").
    reboot: a guest reset (sysrq-b, a panic with panic=N, a watchdog) boots
      it again in the same QEMU process, whose RAM is kept, and /init runs
      the script again: it must tell the boots apart (a file in /out does
      not survive; what survives is RAM).  A panic on the console is then
      no failure if the last boot reported an exit status.
    Raises VMLost (VMPanic, VMTimeout) if no exit status came back.
    DTI_HANG_DEBUG=1: see _hang_backtraces().
    """
    __tracebackhide__ = _hide_vm_lost
    kernel = kernel or find_kernel()
    build_dir = Path(build_dir or initramfs.default_build_dir())
    if timeout is None:
        timeout = DEFAULT_TIMEOUT
    timeout = kernel.scaled(timeout)
    run_dir = make_run_dir(build_dir, run_dir, "run-")
    base = initramfs.build_base(build_dir, modules, extra_files, kernel=kernel)
    initrd = write_initrd(run_dir, base, script, sh_opts)

    hang_debug = os.environ.get("DTI_HANG_DEBUG") == "1"
    if hang_debug:
        append = f"{append} nokaslr".strip()
    cmd = qemu_command(kernel, initrd, run_dir, smp=smp, mem=mem, append=append, kvm=kvm,
                       tcg_single=tcg_single, reboot=reboot)
    cmd += list(qemu_args)
    if hang_debug:
        cmd += ["-gdb", f"unix:{run_dir / 'gdb.sock'},server,nowait"]
    (run_dir / "cmdline").write_text(" ".join(cmd) + "\n")
    t0 = time.monotonic()
    qrc, timed_out = run_qemu(cmd, run_dir, timeout,
                              on_timeout=(lambda: _hang_backtraces(kernel, run_dir))
                              if hang_debug else None)
    duration = time.monotonic() - t0
    if os.environ.get("DTI_KEEP_INITRD") != "1":
        initrd.unlink(missing_ok=True)      # ~2-10 MB each; cmdline has the qemu command

    console = _read(run_dir / "console.log").replace("\r\n", "\n")
    out_text = _read(run_dir / "out.log")
    qemu_log = _read(run_dir / "qemu.log")
    rc, stdout, tar = parse_output(out_text)

    where = f"(run dir {run_dir}, {duration:.1f} s)"
    panic = logcheck.panic_text(console)
    if panic and not (reboot and rc is not None):
        raise VMPanic(f"VM lost: kernel panic {where}\n--- console ---\n{panic}",
                      console, stdout, run_dir)
    if timed_out:
        raise VMTimeout(
            f"VM lost: no poweroff within {timeout:.0f} s, qemu killed {where}\n"
            f"--- console tail ---\n{logcheck.tail(console)}\n"
            f"--- guest output tail ---\n{logcheck.tail(stdout, 20)}",
            console, stdout, run_dir)
    if rc is None:
        raise VMLost(
            f"VM lost: no exit marker from the guest (qemu exit {qrc}) {where}\n"
            f"--- qemu ---\n{logcheck.tail(qemu_log, 20)}\n"
            f"--- console tail ---\n{logcheck.tail(console)}\n"
            f"--- guest output tail ---\n{logcheck.tail(stdout, 20)}",
            console, stdout, run_dir)
    outdir = None
    if tar is not None:
        outdir = run_dir / "out"
        _safe_extract(tar, outdir)
    (run_dir / "stdout.txt").write_text(stdout)
    (run_dir / "rc").write_text(f"{rc}\n")
    return Result(rc=rc, stdout=stdout, console=console, outdir=outdir, run_dir=run_dir,
                  duration=duration, smp=smp, mem=mem, cmdline=cmd)



# The kernel's line as it starts /init.  A guest lost before that line
# was lost while booting, before anything of the test ran (dti.ko and
# every test module are loaded by /init).  QEMU 7.2's multi-threaded TCG
# does that now and then: a vCPU runs stale code after another patched
# a static key, and either loops in the int3 (seen about once in ten
# runs of the suite: RCU stalls, then the host timeout) or takes it as
# an oops in the kernel's own boot (seen on 6.12, 3 boots of 48 in one
# CI run: "Oops: int3" in sched_clock_tick() as the sched_clock_stable
# key is enabled by a late initcall).
INIT_STARTED = "Run /init as init process"
# Boots tried again after such a loss
BOOT_RETRIES = 2


# The kernel's first line at each boot (a run with reboot=True boots twice)
BOOT_BANNER = re.compile(r"^.*\bLinux version \d", re.M)


def boots(console: str) -> list[str]:
    """The console of each boot in it, in order."""
    starts = [m.start() for m in BOOT_BANNER.finditer(console)] or [0]
    starts[0] = 0
    return [console[a:b] for a, b in zip(starts, starts[1:] + [len(console)])]


def lost_before_init(e: VMLost) -> bool:
    """Whether a lost VM hung or panicked before its kernel (its last
    boot's) started /init."""
    return isinstance(e, (VMTimeout, VMPanic)) and INIT_STARTED not in boots(e.console)[-1]


def how_lost(e: VMLost) -> str:
    return "panicked" if isinstance(e, VMPanic) else "hung"


def splats_before_init(console: str) -> list[str]:
    """The kernel's splats, at any of its boots, before that boot started
    /init, and those of a boot that never did but was followed by another
    (it panicked, and panic= rebooted it): the emulator's or the kernel's
    own, since nothing of a test has run yet in that boot (seen on the RT
    debug kernel with the host loaded: an RCU stall while a CPU waited in
    text_poke_bp_batch() for the other to sync its cores, 6 s before
    /init; on 6.12 and 7.3, a later boot of a persistence test: an int3
    oops in sched_clock_cpu() as a static key was patched).  The last
    boot's splats, when it never started /init, are its loss's to judge
    (lost_before_init())."""
    found = []
    parts = boots(console)
    for i, boot in enumerate(parts):
        if INIT_STARTED in boot:
            found += logcheck.find_splats(boot.split(INIT_STARTED, 1)[0])
        elif i < len(parts) - 1:
            found += logcheck.find_splats(boot)
    return found


def keep_lost_console(run_dir: Path | None, console: str, how: str) -> None:
    """Copy the console of a boot lost (or with a splat) before /init
    beside its run directory, which the next boot of the same name
    empties, and say on stderr what happened (`how`)."""
    where = ""
    if run_dir is not None:
        kept = run_dir.with_name(run_dir.name + "-lost-console.log")
        kept.write_text(console)
        where = f" ({kept})"
    print(f"dti harness: the guest {how} before /init{where}; booting it again",
          file=sys.stderr)


def run(script: str, **kwargs) -> Result:
    """_run_once() (see there for the arguments), booted again, up to
    BOOT_RETRIES times, when the guest was lost before /init or its
    kernel reported a splat before it (the last boot's result stands)."""
    __tracebackhide__ = _hide_vm_lost
    for attempt in range(BOOT_RETRIES + 1):
        try:
            res = _run_once(script, **kwargs)
        except (VMTimeout, VMPanic) as e:
            if attempt == BOOT_RETRIES or not lost_before_init(e):
                raise
            keep_lost_console(e.run_dir, e.console, how_lost(e))
            continue
        splats = splats_before_init(res.console)
        if attempt == BOOT_RETRIES or not splats:
            return res
        keep_lost_console(res.run_dir, res.console, f"reported {splats[0]!r}")
    raise AssertionError("not reached")

@dataclass
class Boot:
    """One boot made through a Guest: its console and the splat allow-list."""
    run_dir: Path
    console: str
    allow: list[str]
    lost: VMLost | None = None
    result: Result | None = None


class Guest:
    """Per-test VM runner (the `guest` pytest fixture).

    Every boot's console is kept; `splats()` lists kernel splats over all
    boots of the test, minus the allowed ones (test-wide `allow`, the
    `allow_splat` marker, `allow_splat()` calls, and per-run `allow=`).
    """

    def __init__(self, name: str, *, kernel: Kernel | None = None,
                 build_dir: str | os.PathLike | None = None,
                 modules: Iterable[str | os.PathLike] = (),
                 extra_files: Mapping[str | os.PathLike, str] | None = None,
                 allow: Iterable[str] = (), timeout: float | None = None):
        self.name = re.sub(r"[^A-Za-z0-9_.=-]+", "_", name).strip("_")[:150] or "guest"
        self.kernel = kernel or find_kernel()
        self.build_dir = Path(build_dir or initramfs.default_build_dir())
        self.modules = list(modules)
        self.extra_files = dict(extra_files or {})
        self.allowed = list(allow)
        self.timeout = timeout
        self.boots: list[Boot] = []

    @property
    def kver(self) -> str:
        return self.kernel.release

    def allow_splat(self, *regexes: str) -> None:
        """Do not fail the test for splat lines matching any of `regexes`."""
        self.allowed.extend(regexes)

    def run(self, script: str, *, smp: int = DEFAULT_SMP, mem: int = DEFAULT_MEM,
            timeout: float | None = None,
            modules: Iterable[str | os.PathLike] | None = None,
            extra_files: Mapping[str | os.PathLike, str] | None = None,
            sh_opts: str = "-eu", append: str = "", allow: Iterable[str] = (),
            tcg_single: bool = False, qemu_args: Sequence[str] = ()) -> Result:
        """Like vm.run(); modules/extra_files default to the Guest's own.

        `extra_files` is merged over the Guest's extra files.
        """
        __tracebackhide__ = _hide_vm_lost
        mods = self.modules if modules is None else list(modules)
        extra = {**self.extra_files, **(extra_files or {})}
        run_dir = self.build_dir / "runs" / f"{self.name}-{len(self.boots) + 1}"
        boot = Boot(run_dir, "", list(allow))
        self.boots.append(boot)
        try:
            res = run(script, smp=smp, mem=mem,
                      timeout=timeout if timeout is not None else self.timeout,
                      modules=mods, extra_files=extra, sh_opts=sh_opts, append=append,
                      kernel=self.kernel, build_dir=self.build_dir, run_dir=run_dir,
                      tcg_single=tcg_single, qemu_args=qemu_args)
        except VMLost as e:
            boot.console, boot.lost = e.console, e
            raise
        boot.console, boot.result = res.console, res
        return res

    def splats(self, *, with_context: bool = False) -> list[str]:
        """Splat lines over all boots of this test, minus allowed ones."""
        found = []
        for b in self.boots:
            for s in logcheck.find_splats(b.console, self.allowed + b.allow):
                if with_context:
                    s = (f"[{b.run_dir}]\n"
                         + logcheck.splat_context(b.console, s))
                found.append(s)
        return found

    def expect_splat(self, regex: str) -> list[str]:
        """Assert that a splat line matching `regex` was seen, then allow it."""
        hits = [s for s in self.splats() if re.search(regex, s)]
        assert hits, f"expected a kernel splat matching {regex!r}, saw {self.splats()}"
        self.allow_splat(regex)
        return hits
