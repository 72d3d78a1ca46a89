"""Crash a guest for real and bring its memory dump to the host (issue 19).

Two dump paths, each one boot of Debian's kernel under QEMU (TCG):

* `qemu_dump(script, ...)` -- the QEMU path.  QEMU runs with a pvpanic
  device, `-device vmcoreinfo`, `-action panic=pause` and a QMP socket.
  The guest loads qemu_fw_cfg.ko (so the kernel hands QEMU its VMCOREINFO)
  and pvpanic-mmio.ko (the driver of the ISA pvpanic device), runs
  `script`, then crashes (`echo c > /proc/sysrq-trigger`).  pvpanic tells
  QEMU, which pauses the guest before panic=-1 could reboot it; on
  GUEST_PANICKED (or a paused/guest-panicked status) the host asks QMP for
  `dump-guest-memory` twice -- ELF (paging=false) and kdump-zlib -- then
  quits QEMU.  Returns a QemuDumpResult (paths `elf`, `kdump_zlib`).
  A kernel without a pvpanic driver (Debian's arm64) boots with panic=0
  instead, and the host stops it through QMP once the console shows the
  end of panic()'s output (CONSOLE_PANIC_END).

* `kdump(script, ...)` -- the real kdump path.  The guest boots with
  `crashkernel=`, its initramfs carries kexec (kexec-tools), the same
  vmlinuz and a capture initramfs (`build_capture_initrd`: busybox,
  makedumpfile, virtio-blk and its dependencies, CAPTURE_INIT as /init).
  It loads the capture kernel with `kexec -p`, runs `script` and crashes.
  The capture kernel runs `makedumpfile -c -d 31 /proc/vmcore` (Debian's
  kdump-tools default; other options through `makedumpfile_opts`), writes
  the file to a raw virtio-blk disk behind a one-line header
  ("DTI-KDUMP 1 <length> <md5>") and powers off.  The host checks length
  and md5 and extracts the file.  Returns a KdumpResult (path `vmcore`).

Both return console (ttyS0: both kernels' logs), stdout (ttyS1: the script's
output, then the capture init's) and run_dir like vm.Result.  A boot that
does not end with its dump -- no crash, QEMU gone, a capture kernel that
never wrote the disk, a timeout -- raises vm.VMLost (VMTimeout) with the
run dir; QEMU is always killed.  With `guest=` (the pytest fixture), the
boot is recorded in the Guest: its run dir is listed in reports and its
console is checked for splats, the expected sysrq panic allowed.

Timings on the reference host (2 cores, QEMU 7.2 TCG, Debian's 6.1 kernel):
  qemu_dump, 512 MiB guest: ~9 s (boot + crash ~7 s, ELF dump 0.6 s,
    kdump-zlib dump 1.1 s, reassembly 0.1 s); ELF 512 MiB, kdump-zlib ~37 MiB.
  kdump, 1024 MiB guest, crashkernel=256M: ~24 s (boot, kexec -p, crash,
    capture kernel boot, makedumpfile ~6 s, dd); -c -d 31 file ~17 MiB.
    The capture initramfs is ~6 MiB.
  test_dump_paths.py: ~35 s for both.

QEMU 7.2 quirks that a dump reader meets here:
  * dump-guest-memory writes the kdump-* formats in makedumpfile's
    *flattened* format, which libkdumpfile 0.5.1 cannot open; both the
    flattened file and its `makedumpfile -R` copy are returned.
  * with KASLR, the phys_base in QEMU's kdump sub-header is wrong, so
    makedumpfile and libkdumpfile cannot translate kernel virtual
    addresses in that file; VMCOREINFO's NUMBER(phys_base) is right.
makedumpfile 1.7.2 prints "The kernel version is not supported" for 6.1
and completes; the dump it writes reads fine (dmesg, libkdumpfile).
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from . import initramfs, logcheck
from .kernel import Kernel, find_kernel
from .vm import (BOOT_RETRIES, DEFAULT_SMP, Boot, Guest, VMLost, VMTimeout, how_lost,
                 keep_lost_console, lost_before_init, make_run_dir,
                 parse_output, qemu_command, run_qemu, write_initrd)

QEMU_DUMP_MEM = 512             # MiB: the ELF dump is as large as the guest
KDUMP_MEM = 1024                # MiB: room for crashkernel= and the first kernel
CRASHKERNEL = "256M"            # reserved for the capture kernel (6.1 + makedumpfile)
DUMP_TIMEOUT = 600.0            # seconds for a whole boot, crash and dump
QMP_TIMEOUT = 300.0             # seconds for one QMP command (a dump under TCG)
QUIT_TIMEOUT = 20.0             # seconds for QEMU to exit after "quit"
QMP_CONNECT_TIMEOUT = 30.0      # seconds for QEMU to create its QMP socket
STATUS_POLL = 2.0               # seconds between query-status while waiting
OUTPUT_POLL = 0.2               # seconds between looks at the script's output
SOCKET_PATH_MAX = 100           # sun_path is 108 bytes; keep a margin
FLATTENED_SIGNATURE = b"makedumpfile\0"    # makedumpfile_header.signature
FLAT_SUFFIX = "-flat"           # files["kdump-zlib-flat"]: QEMU's file as written

CRASH_SYSRQ = "echo c > /proc/sysrq-trigger"
EXPECTED_CRASH = r"Kernel panic - not syncing: sysrq triggered crash"
DEFAULT_MAKEDUMPFILE_OPTS = ("-c", "-d", "31")   # Debian kdump-tools' default

# Guest modules of the QEMU path: the kernel writes VMCOREINFO to fw_cfg
# when qemu_fw_cfg loads; pvpanic-mmio drives `-device pvpanic` (ACPI
# QEMU0001).  A tuple names alternatives, the first the kernel has wins:
# before 5.12 the driver was pvpanic.
PVPANIC_MODULES = ("pvpanic-mmio", "pvpanic")
QEMU_PATH_MODULES = ("qemu_fw_cfg", PVPANIC_MODULES)
# A kernel with no pvpanic driver (Debian's arm64 kernels build none:
# CONFIG_PVPANIC is not set) tells QEMU nothing at a panic.  Such a guest
# boots with panic=0, so that its CPUs stay stopped in panic() instead of
# rebooting, and the host takes the end of panic()'s output on the console
# (after the panic notifiers: dti.ko's dump_on_panic print included) as
# the moment to stop the machine and dump it.
CONSOLE_PANIC_END = "---[ end Kernel panic"
CONSOLE_PANIC_APPEND = "panic=0"
# Capture kernel: the dump disk.
CAPTURE_MODULES = ("virtio_pci", "virtio_blk")
CAPTURE_CMDLINE = ("console=ttyS0 oops=panic panic=-1 loglevel=7 rdinit=/init "
                   "irqpoll nr_cpus=1 reset_devices nousb dti.capture=1")
GUEST_VMLINUZ = "/boot/vmlinuz"
GUEST_CAPTURE_INITRD = "/boot/capture.cpio"
DUMP_DISK_HEADER = 1 << 20      # the dump starts 1 MiB into the disk
DUMP_DISK_MAGIC = "DTI-KDUMP"
DUMP_DISK_VERSION = 1
CAPTURE_EXIT_MARKER = "@@DTI-CAPTURE-EXIT@@"
CAPTURE_FORMAT_VERSION = 1      # bump when CAPTURE_INIT or the capture layout changes
KEEP_CAPTURE_ARCHIVES = 4

CAPTURE_INIT = f"""#!/bin/sh
# DTI capture-kernel /init, generated by testsuite/harness/dump.py.
# Runs makedumpfile on /proc/vmcore (options from dti.mdf_opts= on the
# command line, commas for spaces), writes the result to /dev/vda at
# byte {DUMP_DISK_HEADER} behind the header
# "{DUMP_DISK_MAGIC} {DUMP_DISK_VERSION} LEN MD5", and powers off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
OUT={initramfs.OUT_DEV}
exec 3>$OUT
stty -F $OUT raw -echo
capture() {{
    set -e
    opts=$(sed -n 's/.*dti\\.mdf_opts=\\([^ ]*\\).*/\\1/p' /proc/cmdline | tr , ' ')
    echo "capture kernel: $(uname -r), makedumpfile $opts"
    for m in $(cat /etc/dti-capture-modules); do
        insmod {initramfs.GUEST_MODULE_DIR}/$m
    done
    n=0
    until [ -b /dev/vda ]; do
        n=$((n + 1)); [ $n -lt 300 ] || {{ echo "no /dev/vda" >&2; return 1; }}
        sleep 0.1
    done
    ls -l /proc/vmcore
    makedumpfile $opts /proc/vmcore /tmp/vmcore
    len=$(wc -c < /tmp/vmcore)
    sum=$(md5sum /tmp/vmcore | cut -d' ' -f1)
    dd if=/tmp/vmcore of=/dev/vda bs={DUMP_DISK_HEADER} seek=1 conv=fsync 2>/dev/null
    printf '{DUMP_DISK_MAGIC} {DUMP_DISK_VERSION} %s %s\\n' "$len" "$sum" > /tmp/header
    dd if=/tmp/header of=/dev/vda conv=notrunc,fsync 2>/dev/null
    echo "dump written: $len bytes, md5 $sum"
}}
( capture ) >$OUT 2>&1
rc=$?
printf '\\n{CAPTURE_EXIT_MARKER} %d\\n' "$rc" >$OUT
exec 3>&-
sync
poweroff -f
echo o >/proc/sysrq-trigger
while :; do sleep 1; done
"""


# --------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------

@dataclass
class DumpRun:
    """What a dump boot left, like vm.Result without an exit status."""
    stdout: str                 # ttyS1: script output (then the capture init's)
    console: str                # ttyS0: kernel log(s)
    run_dir: Path               # console.log, out.log, qemu.log, cmdline, dumps
    duration: float             # wall-clock seconds, boot to QEMU's end
    cmdline: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)   # phase -> seconds


@dataclass
class QemuDumpResult(DumpRun):
    """The QEMU path: dump-guest-memory files by format ("elf", "kdump-zlib"...)."""
    files: dict[str, Path] = field(default_factory=dict)

    @property
    def elf(self) -> Path | None:
        """The ELF core (paging=false)."""
        return self.files.get("elf")

    @property
    def kdump_zlib(self) -> Path | None:
        """The kdump-compressed (zlib) file written by QEMU."""
        return self.files.get("kdump-zlib")


# What makedumpfile prints when the kernel is newer than it knows (1.7.2,
# Debian 12's, on 6.12 and 7.3; 1.7.6, Debian 13's, on 6.12): it goes on,
# but classifies pages by the layout of the newest kernel it knows, so
# -d 16 (free pages) and -d 31 may drop pages in use (1.7.2 on 6.12 and
# 7.3: DTI's descriptors and rings gone or corrupt in the dump, with -d 15
# and -d 16 alone intact; 1.7.6's -d 31 dumps of 6.12 keep them).
MAKEDUMPFILE_UNSUPPORTED = "The kernel version is not supported."


@dataclass
class KdumpResult(DumpRun):
    """The real kdump path: makedumpfile's output from the capture kernel."""
    vmcore: Path | None = None

    def makedumpfile_unsupported(self) -> str | None:
        """Why the dump cannot be trusted to hold every page in use (the
        makedumpfile in the capture kernel does not support the crashed
        kernel, in its own words), or None."""
        if MAKEDUMPFILE_UNSUPPORTED not in self.stdout:
            return None
        ver = subprocess.run([str(makedumpfile_binary()), "-v"],
                             capture_output=True, text=True)
        first = (ver.stdout + ver.stderr).strip().splitlines()[:1] or ["makedumpfile"]
        return (f"{first[0]} in the capture kernel said of the crashed kernel: "
                f"{MAKEDUMPFILE_UNSUPPORTED!r} (it filters pages by the layout of the "
                "newest kernel it knows); a makedumpfile that supports the kernel "
                "is needed")


# --------------------------------------------------------------------------
# QMP
# --------------------------------------------------------------------------

class QMPError(RuntimeError):
    """QMP answered with an error or the connection broke."""


class QMP:
    """Minimal QMP client over a unix socket (one JSON object per line).

    Events that arrive while waiting for a command's answer are kept in
    `events` (oldest first) for `wait_event`.
    """

    def __init__(self, path: Path, timeout: float = QMP_CONNECT_TIMEOUT):
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(str(path))
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise QMPError(f"no QMP socket at {path} after {timeout:.0f} s")
                time.sleep(0.1)
        self.buf = b""
        self.events: list[dict[str, Any]] = []
        greeting = self._recv(timeout)
        if greeting is None or "QMP" not in greeting:
            raise QMPError(f"not a QMP greeting: {greeting}")
        self.execute("qmp_capabilities", timeout=timeout)

    def close(self) -> None:
        self.sock.close()

    def _recv(self, timeout: float) -> dict[str, Any] | None:
        """Next message, or None if nothing came within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.sock], [], [], left)
            if not ready:
                return None
            chunk = self.sock.recv(65536)
            if not chunk:
                raise QMPError("QMP connection closed (QEMU exited?)")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return json.loads(line)

    def execute(self, command: str, arguments: Mapping[str, Any] | None = None,
                timeout: float = QMP_TIMEOUT) -> Any:
        """Run a command and return its "return" value; QMPError on error."""
        msg: dict[str, Any] = {"execute": command}
        if arguments:
            msg["arguments"] = dict(arguments)
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._recv(max(0.0, deadline - time.monotonic()))
            if reply is None:
                raise QMPError(f"{command}: no answer within {timeout:.0f} s")
            if "event" in reply:
                self.events.append(reply)
            elif "error" in reply:
                raise QMPError(f"{command}: {reply['error']}")
            elif "return" in reply:
                return reply["return"]

    def wait_event(self, names: Iterable[str], timeout: float) -> dict[str, Any] | None:
        """The first (kept or new) event named in `names`, or None on timeout."""
        names = set(names)
        deadline = time.monotonic() + timeout
        while True:
            for i, ev in enumerate(self.events):
                if ev["event"] in names:
                    return self.events.pop(i)
            self.events.clear()
            msg = self._recv(max(0.0, deadline - time.monotonic()))
            if msg is None:
                return None
            if "event" in msg:
                self.events.append(msg)


def _qmp_socket_path(run_dir: Path) -> tuple[Path, Path | None]:
    """Where QEMU's QMP socket goes, and a temporary directory to remove.

    In the run dir if its path is short enough for sun_path, else in /tmp."""
    path = run_dir / "qmp.sock"
    if len(str(path)) <= SOCKET_PATH_MAX:
        return path, None
    tmp = Path(tempfile.mkdtemp(prefix="dti-qmp-"))
    return tmp / "qmp.sock", tmp


# --------------------------------------------------------------------------
# guest kernel modules
# --------------------------------------------------------------------------

def _module_dep(kernel: Kernel) -> dict[str, tuple[Path, list[str]]]:
    """modules.dep as {name: (path, [dependency names])}."""
    deps: dict[str, tuple[Path, list[str]]] = {}
    for line in (kernel.modules_dir / "modules.dep").read_text().splitlines():
        target, _, rest = line.partition(":")
        if not target:
            continue
        path = kernel.modules_dir / target
        names = [Path(d).name.split(".ko")[0] for d in rest.split()]
        deps[path.name.split(".ko")[0].replace("-", "_")] = (path, names)
    return deps


def _module_builtin(kernel: Kernel) -> set[str]:
    """Names of the modules built into the kernel (modules.builtin)."""
    path = kernel.modules_dir / "modules.builtin"
    if not path.is_file():
        return set()
    return {Path(line).name.split(".ko")[0].replace("-", "_")
            for line in path.read_text().split()}


# How a distribution compresses its modules (CONFIG_MODULE_COMPRESS_*):
# suffix -> command that writes the plain module to stdout.  busybox's
# insmod in the guest takes only plain ones.
_DECOMPRESS = {".xz": ["xz", "-dc"], ".zst": ["zstd", "-dcq"], ".gz": ["gzip", "-dc"]}


def plain_module(kernel: Kernel, path: Path) -> Path:
    """`path` itself if it is a plain .ko, else its plain copy, made once
    under the build directory."""
    if path.suffix == ".ko":
        return path
    cmd = _DECOMPRESS.get(path.suffix)
    if cmd is None or not path.name.endswith(".ko" + path.suffix):
        raise ValueError(f"{path}: not a kernel module this harness can decompress "
                         f"(known: {', '.join(_DECOMPRESS)})")
    out = initramfs.default_build_dir() / "kernel-modules" / kernel.release / path.name[:-len(path.suffix)]
    if not out.is_file() or out.stat().st_mtime < path.stat().st_mtime:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            subprocess.run(cmd + [str(path)], stdout=f, check=True)
        tmp.replace(out)
    return out


def kernel_modules(kernel: Kernel, names: Iterable[str | tuple[str, ...]]) -> list[Path]:
    """Paths of the distribution's modules `names` and their dependencies,
    dependencies first (the order to insmod them); a module built into the
    kernel is left out, a compressed one decompressed (plain_module()).
    A name may be a tuple of alternatives: the first the kernel has."""
    deps = _module_dep(kernel)
    builtin = _module_builtin(kernel)
    order: list[Path] = []

    def pick(name: str | tuple[str, ...]) -> str:
        if isinstance(name, str):
            return name
        for n in name:
            if n.replace("-", "_") in deps or n.replace("-", "_") in builtin:
                return n
        return name[0]

    def visit(name: str) -> None:
        key = name.replace("-", "_")
        if key in builtin:
            return
        if key not in deps:
            raise FileNotFoundError(f"module {name} not in {kernel.modules_dir}/modules.dep "
                                    "nor in modules.builtin")
        path, needs = deps[key]
        for dep in needs:
            visit(dep)
        path = plain_module(kernel, path)
        if path not in order:
            order.append(path)

    for n in names:
        visit(pick(n))
    return order


def _insmod_lines(modules: Iterable[Path]) -> str:
    return "".join(f"insmod {initramfs.GUEST_MODULE_DIR}/{m.name}\n" for m in modules)


# --------------------------------------------------------------------------
# shared boot machinery
# --------------------------------------------------------------------------

def _read(p: Path) -> str:
    try:
        return p.read_bytes().decode("utf-8", errors="replace").replace("\r\n", "\n")
    except FileNotFoundError:
        return ""


def _outputs(run_dir: Path) -> tuple[str, str]:
    """(console, script stdout) captured so far."""
    console = _read(run_dir / "console.log")
    _, stdout, _ = parse_output(_read(run_dir / "out.log"))
    return console, stdout


def _lost(why: str, run_dir: Path, t0: float, cls: type[VMLost] = VMLost) -> VMLost:
    console, stdout = _outputs(run_dir)
    rc, _, _ = parse_output(_read(run_dir / "out.log"))
    if rc is not None:
        why += f"; the guest script exited with status {rc} instead of crashing"
    return cls(
        f"VM lost: {why} (run dir {run_dir}, {time.monotonic() - t0:.1f} s)\n"
        f"--- qemu ---\n{logcheck.tail(_read(run_dir / 'qemu.log'), 20)}\n"
        f"--- console tail ---\n{logcheck.tail(console)}\n"
        f"--- guest output tail ---\n{logcheck.tail(stdout, 20)}",
        console, stdout, run_dir)


def _register(guest: Guest | None, run_dir: Path, crash: str) -> Boot | None:
    if guest is None:
        return None
    boot = Boot(run_dir, "", [EXPECTED_CRASH] if crash == CRASH_SYSRQ else [])
    guest.boots.append(boot)
    return boot


def _guest_run_dir(guest: Guest | None, run_dir: str | os.PathLike | None,
                   build_dir: Path) -> str | os.PathLike | None:
    if run_dir is None and guest is not None:
        return build_dir / "runs" / f"{guest.name}-{len(guest.boots) + 1}"
    return run_dir


def _finish(boot: Boot | None, run_dir: Path) -> None:
    if boot is not None:
        boot.console = _read(run_dir / "console.log")


def _kill(proc: subprocess.Popen, grace: float) -> int:
    try:
        return proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


# --------------------------------------------------------------------------
# the QEMU path
# --------------------------------------------------------------------------

def is_flattened(path: Path) -> bool:
    """True if `path` is in makedumpfile's flattened format (what QEMU 7.2
    writes for the kdump-* formats, made for pipes; readers want it
    reassembled)."""
    with open(path, "rb") as f:
        return f.read(len(FLATTENED_SIGNATURE)) == FLATTENED_SIGNATURE


def reassemble_flattened(flat: Path, out: Path) -> Path:
    """`makedumpfile -R out < flat`: a flattened dump as a kdump-compressed file."""
    with open(flat, "rb") as src:
        r = subprocess.run([str(makedumpfile_binary()), "-R", str(out)], stdin=src,
                           capture_output=True, text=True, timeout=QMP_TIMEOUT)
    if r.returncode != 0:
        raise QMPError(f"makedumpfile -R {out} < {flat} failed:\n{r.stdout}{r.stderr}")
    return out


def _wait_output(run_dir: Path, text: str, proc: subprocess.Popen,
                 deadline: float) -> None:
    """Wait until the script's output (ttyS1) holds `text`.

    Raises TimeoutError past `deadline`, QMPError if QEMU went away."""
    while text not in _read(run_dir / "out.log"):
        if time.monotonic() > deadline:
            raise TimeoutError
        if proc.poll() is not None:
            raise QMPError(f"QEMU exited with status {proc.returncode}")
        time.sleep(OUTPUT_POLL)


def has_pvpanic(kernel: Kernel) -> bool:
    """True if `kernel` has a pvpanic driver (module or built in)."""
    deps, builtin = _module_dep(kernel), _module_builtin(kernel)
    return any(n.replace("-", "_") in deps or n.replace("-", "_") in builtin
               for n in PVPANIC_MODULES)


def _wait_panicked(qmp: QMP, proc: subprocess.Popen, deadline: float,
                   console: Path | None = None) -> str:
    """Wait until the guest panicked (pvpanic paused it, or with `console`,
    the console log holds the end of panic()'s output: the machine is then
    stopped through QMP); return how we knew.

    Raises TimeoutError past `deadline`, QMPError if QEMU went away."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        if console is not None:
            if CONSOLE_PANIC_END in _read(console):
                qmp.execute("stop", timeout=QMP_CONNECT_TIMEOUT)
                return f"console: {CONSOLE_PANIC_END!r}, machine stopped"
            if proc.poll() is not None:
                raise QMPError(f"QEMU exited with status {proc.returncode}")
            time.sleep(OUTPUT_POLL)
            continue
        ev = qmp.wait_event(["GUEST_PANICKED"], min(left, STATUS_POLL))
        if ev is not None:
            return f"GUEST_PANICKED {ev.get('data', {})}"
        if proc.poll() is not None:
            raise QMPError(f"QEMU exited with status {proc.returncode}")
        status = qmp.execute("query-status", timeout=QMP_CONNECT_TIMEOUT)["status"]
        if status in ("guest-panicked", "paused"):
            return f"status {status}"


def _qemu_dump_once(script: str, *, smp: int = DEFAULT_SMP, mem: int = QEMU_DUMP_MEM,
                    timeout: float | None = DUMP_TIMEOUT,
                    modules: Iterable[str | os.PathLike] = (),
                    extra_files: Mapping[str | os.PathLike, str] | None = None,
                    append: str = "", crash: str = CRASH_SYSRQ,
                    formats: Iterable[str] = ("elf", "kdump-zlib"),
                    nmi_on: str | None = None, stop_on: str | None = None,
                    reboot: bool = False,
                    kernel: Kernel | None = None, build_dir: str | os.PathLike | None = None,
                    run_dir: str | os.PathLike | None = None,
                    guest: Guest | None = None,
                    qemu_args: Iterable[str] = ()) -> QemuDumpResult:
    """Boot, run `script` (sh -eu), crash with `crash`, dump through QMP.

    modules, extra_files, append: as vm.run(); qemu_fw_cfg and pvpanic-mmio
      are added and loaded before `script`.
    crash: shell run after `script` ("" if the script crashes the guest itself).
    formats: dump-guest-memory formats, each written to run_dir/vmcore.<format>
      ("elf", "kdump-zlib", "kdump-lzo", "kdump-snappy").  QEMU 7.2 writes the
      kdump-* formats flattened: that file is kept as files["<format>-flat"]
      and files["<format>"] is its reassembled copy (makedumpfile -R).
    nmi_on: once the script's output holds this text, QMP `inject-nmi` sends
      every vCPU an NMI, wherever it is (with the sysctl
      kernel.unknown_nmi_panic=1 set by the script, that panics the guest
      with every CPU stopped in NMI context, in the middle of whatever it
      was doing); `crash` should then be "" or a wait.
    stop_on: once the script's output holds this text, QMP `stop` halts
      every vCPU wherever it is, and the machine is dumped as it stands,
      with no panic (for a guest with no NMI to inject: arm64's virt).
    reboot: a guest reset boots it again in the same QEMU process, RAM
      kept, and the script runs again (as vm.run()'s reboot); the dump is
      taken at the first panic, whichever boot it comes in.
    timeout: seconds until the guest must have panicked (None: DUMP_TIMEOUT);
      each dump then has QMP_TIMEOUT.
    guest: a vm.Guest to record the boot in (run dir naming, splat checks).
    qemu_args: more QEMU arguments, after the harness's own (disks).
    Raises VMLost (VMTimeout) if the guest never panicked or a dump failed.
    """
    kernel = kernel or find_kernel()
    timeout = kernel.scaled(DUMP_TIMEOUT if timeout is None else timeout)
    build_dir = Path(build_dir or initramfs.default_build_dir())
    run_dir = make_run_dir(build_dir, _guest_run_dir(guest, run_dir, build_dir), "qdump-")
    boot = _register(guest, run_dir, crash)
    pvpanic = has_pvpanic(kernel)
    fw = kernel_modules(kernel, QEMU_PATH_MODULES if pvpanic else QEMU_PATH_MODULES[:1])
    if not pvpanic:
        append = " ".join(filter(None, (append, CONSOLE_PANIC_APPEND)))
    base = initramfs.build_base(build_dir, [*fw, *modules], extra_files, kernel=kernel)
    # The script's output reaches the port before the crash stops the guest.
    drain = f"{initramfs.DRAIN_OUTPUT}\n" if crash else ""
    initrd = write_initrd(run_dir, base, f"{_insmod_lines(fw)}{script}\n{drain}{crash}\n",
                          "-eu")
    sock, sock_tmp = _qmp_socket_path(run_dir)
    # The bzImage: a dump of a kernel placed by KASLR, as users' are.
    cmd = qemu_command(kernel, initrd, run_dir, smp=smp, mem=mem, append=append, kvm=False,
                       reboot=reboot, kaslr=True)
    cmd += [*(["-device", "pvpanic", "-action", "panic=pause"] if pvpanic else []),
            "-device", "vmcoreinfo",
            "-qmp", f"unix:{sock},server=on,wait=off", *qemu_args]
    (run_dir / "cmdline").write_text(" ".join(cmd) + "\n")
    res = QemuDumpResult(stdout="", console="", run_dir=run_dir, duration=0.0,
                         cmdline=cmd)
    t0 = time.monotonic()
    qlog = open(run_dir / "qemu.log", "wb")
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=qlog,
                            stderr=subprocess.STDOUT)
    qmp: QMP | None = None
    grace = 0.0             # seconds QEMU gets to exit by itself: after "quit" only
    try:
        qmp = QMP(sock)
        if nmi_on is not None:
            _wait_output(run_dir, nmi_on, proc, t0 + timeout)
            qmp.execute("inject-nmi")
            res.timings["nmi"] = time.monotonic() - t0
        if stop_on is not None:
            _wait_output(run_dir, stop_on, proc, t0 + timeout)
            qmp.execute("stop", timeout=QMP_CONNECT_TIMEOUT)
            how = f"output: {stop_on!r}, machine stopped"
        else:
            how = _wait_panicked(qmp, proc, t0 + timeout,
                                 None if pvpanic else run_dir / "console.log")
        res.timings["boot+crash"] = time.monotonic() - t0
        (run_dir / "panicked").write_text(how + "\n")
        for fmt in formats:
            out = run_dir / f"vmcore.{fmt}"
            t1 = time.monotonic()
            qmp.execute("dump-guest-memory", {"paging": False, "protocol": f"file:{out}",
                                              "format": fmt})
            res.timings[f"dump {fmt}"] = time.monotonic() - t1
            res.files[fmt] = out
            if is_flattened(out):
                flat = out.with_name(f"{out.name}{FLAT_SUFFIX}")
                out.rename(flat)
                res.files[f"{fmt}{FLAT_SUFFIX}"] = flat
                reassemble_flattened(flat, out)
        qmp.execute("quit", timeout=QUIT_TIMEOUT)
        grace = QUIT_TIMEOUT
    except TimeoutError:
        raise _lost(f"guest did not panic within {timeout:.0f} s, qemu killed",
                    run_dir, t0, VMTimeout) from None
    except QMPError as e:
        raise _lost(f"QMP: {e}", run_dir, t0) from None
    finally:            # also on KeyboardInterrupt: never leave qemu behind
        if qmp is not None:
            qmp.close()
        _kill(proc, grace)
        qlog.close()
        initrd.unlink(missing_ok=True)
        if sock_tmp is not None:
            shutil.rmtree(sock_tmp, ignore_errors=True)
        _finish(boot, run_dir)
    res.duration = time.monotonic() - t0
    res.console, res.stdout = _outputs(run_dir)
    return res


def qemu_dump(script: str, *, guest: Guest | None = None, **kwargs) -> QemuDumpResult:
    """_qemu_dump_once() (see there for the arguments), booted again, up to
    vm.BOOT_RETRIES times, when the guest was lost before /init; the lost
    boot is no boot of `guest`'s (its console holds the emulator's fault)."""
    for attempt in range(BOOT_RETRIES + 1):
        boots = len(guest.boots) if guest is not None else 0
        try:
            return _qemu_dump_once(script, guest=guest, **kwargs)
        except VMLost as e:
            if attempt == BOOT_RETRIES or not lost_before_init(e):
                raise
            if guest is not None:
                del guest.boots[boots:]
            keep_lost_console(e.run_dir, e.console, how_lost(e))
    raise AssertionError("not reached")


# --------------------------------------------------------------------------
# the real kdump path
# --------------------------------------------------------------------------

def makedumpfile_binary() -> Path:
    p = shutil.which("makedumpfile") or "/usr/sbin/makedumpfile"
    if not Path(p).is_file():
        raise VMLost("makedumpfile not found: apt-get install makedumpfile")
    return Path(p)


def kexec_binary() -> Path:
    p = shutil.which("kexec") or "/sbin/kexec"
    if not Path(p).is_file():
        raise VMLost("kexec not found: apt-get install kexec-tools")
    return Path(p)


def build_capture_initrd(kernel: Kernel | None = None,
                         build_dir: str | os.PathLike | None = None) -> Path:
    """The capture kernel's initramfs, cached like the base one.

    A base archive (busybox, makedumpfile and its libraries, the virtio-blk
    modules) followed by a small archive with CAPTURE_INIT as /init and
    /etc/dti-capture-modules (insmod order), cached as
    <build_dir>/initramfs/capture-<key>.cpio."""
    kernel = kernel or find_kernel()
    build_dir = Path(build_dir or initramfs.default_build_dir())
    mods = kernel_modules(kernel, CAPTURE_MODULES)
    base = initramfs.build_base(build_dir, mods,
                                {str(makedumpfile_binary()): "/usr/sbin/makedumpfile"})
    order = "".join(f"{m.name}\n" for m in mods)
    key = hashlib.sha256(json.dumps([CAPTURE_FORMAT_VERSION, base.name, CAPTURE_INIT,
                                     order]).encode()).hexdigest()[:16]
    cache = build_dir / "initramfs"
    path = cache / f"capture-{key}.cpio"
    if path.exists():
        return path
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    with open(tmp, "wb") as out, open(base, "rb") as src:
        shutil.copyfileobj(src, out, 1 << 20)
        w = initramfs.CpioWriter(out)
        w.file("/init", CAPTURE_INIT.encode(), 0o755)
        w.file("/etc/dti-capture-modules", order.encode(), 0o644)
        w.close()
    os.replace(tmp, path)
    old = sorted(cache.glob("capture-*.cpio"), key=lambda p: p.stat().st_mtime,
                 reverse=True)
    for p in old[KEEP_CAPTURE_ARCHIVES:]:
        p.unlink(missing_ok=True)
    return path


def kexec_load_script(opts: Iterable[str] = DEFAULT_MAKEDUMPFILE_OPTS,
                      kexec_flags: str = "") -> str:
    """Guest shell: load the capture kernel with `kexec -p`."""
    append = f"{CAPTURE_CMDLINE} dti.mdf_opts={','.join(opts)}"
    return (f"grep -q 'Crash kernel' /proc/iomem || "
            f"{{ echo 'no crashkernel= reservation' >&2; exit 1; }}\n"
            f"kexec -p {kexec_flags} {GUEST_VMLINUZ} --initrd={GUEST_CAPTURE_INITRD} "
            f"--append='{append}'\n"
            f"[ \"$(cat /sys/kernel/kexec_crash_loaded)\" = 1 ]\n")


def read_dump_disk(disk: Path, out: Path) -> Path:
    """Extract the dump the capture kernel wrote to `disk` into `out`.

    Raises ValueError if the header is missing or length/md5 do not match."""
    with open(disk, "rb") as f:
        header = (f.read(DUMP_DISK_HEADER).split(b"\n", 1)[0].rstrip(b"\0")
                  .decode(errors="replace"))
        fields = header.split()
        if (len(fields) != 4 or fields[0] != DUMP_DISK_MAGIC
                or fields[1] != str(DUMP_DISK_VERSION)):
            raise ValueError(f"{disk}: no dump header (found {header[:60]!r})")
        length, md5 = int(fields[2]), fields[3]
        h = hashlib.md5()
        with open(out, "wb") as dst:
            left = length
            while left:
                chunk = f.read(min(left, 1 << 20))
                if not chunk:
                    raise ValueError(f"{disk}: dump truncated ({length - left} of {length})")
                h.update(chunk)
                dst.write(chunk)
                left -= len(chunk)
    if h.hexdigest() != md5:
        raise ValueError(f"{disk}: md5 {h.hexdigest()} != header's {md5}")
    return out


def kdump(script: str, *, smp: int = DEFAULT_SMP, mem: int = KDUMP_MEM,
          crashkernel: str = CRASHKERNEL, timeout: float | None = DUMP_TIMEOUT,
          modules: Iterable[str | os.PathLike] = (),
          extra_files: Mapping[str | os.PathLike, str] | None = None,
          append: str = "", crash: str = CRASH_SYSRQ,
          makedumpfile_opts: Iterable[str] = DEFAULT_MAKEDUMPFILE_OPTS,
          kexec_flags: str = "",
          kernel: Kernel | None = None, build_dir: str | os.PathLike | None = None,
          run_dir: str | os.PathLike | None = None,
          guest: Guest | None = None) -> KdumpResult:
    """Boot with crashkernel=, `kexec -p` a capture kernel, run `script`,
    crash with `crash`; the capture kernel saves `makedumpfile OPTS
    /proc/vmcore` to a disk the host reads.  Returns its path (run_dir/vmcore).

    kexec_flags: e.g. "-s" for kexec_file_load().  Other arguments: qemu_dump().
    Raises VMLost (VMTimeout) if QEMU did not end with a dump on the disk
    within `timeout` seconds (None: DUMP_TIMEOUT).
    """
    kernel = kernel or find_kernel()
    timeout = kernel.scaled(DUMP_TIMEOUT if timeout is None else timeout)
    build_dir = Path(build_dir or initramfs.default_build_dir())
    run_dir = make_run_dir(build_dir, _guest_run_dir(guest, run_dir, build_dir), "kdump-")
    boot = _register(guest, run_dir, crash)
    opts = list(makedumpfile_opts)
    capture = build_capture_initrd(kernel, build_dir)
    extra = {**(extra_files or {}), str(kexec_binary()): "/sbin/kexec",
             str(kernel.vmlinuz): GUEST_VMLINUZ, str(capture): GUEST_CAPTURE_INITRD}
    base = initramfs.build_base(build_dir, modules, extra)
    initrd = write_initrd(run_dir, base,
                          # as qemu_dump(): the output reaches the port before the crash
                          f"{kexec_load_script(opts, kexec_flags)}{script}\n"
                          f"{initramfs.DRAIN_OUTPUT}\n{crash}\n", "-eu")
    disk = run_dir / "dump-disk.img"
    with open(disk, "wb") as f:          # sparse: costs only what is written
        f.truncate(DUMP_DISK_HEADER + mem * (1 << 20))
    cmd = qemu_command(kernel, initrd, run_dir, smp=smp, mem=mem, kvm=False, kaslr=True,
                       append=f"crashkernel={crashkernel} {append}".strip())
    cmd += ["-drive", f"file={disk},format=raw,if=virtio,cache=unsafe"]
    (run_dir / "cmdline").write_text(" ".join(cmd) + "\n")
    res = KdumpResult(stdout="", console="", run_dir=run_dir, duration=0.0, cmdline=cmd)
    t0 = time.monotonic()
    try:
        _, timed_out = run_qemu(cmd, run_dir, timeout)
    finally:
        initrd.unlink(missing_ok=True)
        _finish(boot, run_dir)
    res.duration = time.monotonic() - t0
    res.timings["boot+crash+capture"] = res.duration
    if timed_out:
        raise _lost(f"no poweroff within {timeout:.0f} s, qemu killed", run_dir, t0,
                    VMTimeout)
    try:
        res.vmcore = read_dump_disk(disk, run_dir / "vmcore")
    except ValueError as e:         # the disk stays in the run dir, for a look
        raise _lost(f"capture kernel left no dump: {e}", run_dir, t0) from None
    disk.unlink()
    res.console, res.stdout = _outputs(run_dir)
    return res
