"""A dump of the built-in kernel (harness/builtinkernel.py, `make
builtin-kernel`; DTI_KERNEL=builtin) read through the dump index that DTI,
built in, names in VMCOREINFO.

The guest boots with two virtio disks (virtio_blk, built in with
CONFIG_VIRTIO_BLK_DTI, records their probes before the first user-space
process), reads them (their interrupts), adds a marker record with `dti
write`, shows what each channel holds, and crashes for real (sysrq-c);
QEMU's dump-guest-memory writes an ELF and a kdump-zlib dump (the guest
handed its VMCOREINFO note over through fw_cfg, `-device vmcoreinfo`).
On the host:

  * both dumps' VMCOREINFO has DTI's line, DTI=0x<physical address>,
    and `dti dump -v` says the channels were located by it, not scanned;
  * `dti dump` gives virtio_blk's records as the guest read them before
    the crash, the boot-time probes (from before /init) among them, and
    serial8250's console setup from start_kernel;
  * the same dump with the line made unrecognisable is scanned and
    gives the same output: the index loses nothing;
  * a DTI= line pointing at memory that is no index is refused with its
    address, and the dump is scanned instead: the same output again.

Skipped, with the command that builds the kernel, where the built-in
kernel is not built from this checkout's kmod/.  About 35 s here (one boot).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from dtirec import json_record
from harness import dump
from test_builtin import DISKS, builtin_kernel, disks  # noqa: F401 (a fixture)

REPO = Path(__file__).resolve().parent.parent
DTI = REPO / "runtime" / "build" / "dti"
D = "/sys/kernel/debug/dti"
CHANNELS = ("virtio_blk", "serial8250")
MARK = "dump-test marker"
# dmesg's "[    1.234567] Run /init as init process": the first user-space process.
RUN_INIT = re.compile(r"\[\s*(\d+\.\d+)\] Run /init as init process")
LOCATED = re.compile(rb"channels located by VMCOREINFO \(DTI=0x([0-9a-f]+)\): (\d+) descriptors")
DTI_LINE = re.compile(rb"\nDTI=0x([0-9a-f]+)\n")

SCRIPT = "\n".join([
    "dd if=/dev/vda of=/dev/null bs=64k count=4 iflag=direct 2>/dev/null",
    "dd if=/dev/vdb of=/dev/null bs=64k count=4 iflag=direct 2>/dev/null",
    f"dti write --level notice virtio_blk '{MARK}'",
    *[f"echo @@VIEW {ch}; dti read --no-reset --format json {ch}; echo @@END {ch}"
      for ch in CHANNELS],
    "echo @@READY",
])


# What a record is compared by: the same in `dti read` and `dti dump`
KEYS = ("ts_ns", "cpu", "level", "text")


def key(r: dict) -> tuple:
    return tuple(r.get(k) for k in KEYS)


def views(stdout: str) -> dict[str, list[tuple]]:
    """The records each channel's @@VIEW section showed."""
    got = {}
    for m in re.finditer(r"^@@VIEW (\S+)\n(.*?)^@@END \1$", stdout, re.M | re.S):
        got[m[1]] = [key(json_record(ln)) for ln in m[2].splitlines() if ln.strip()]
    return got


def dti(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(DTI), *map(str, args)], capture_output=True, timeout=600)


def records(out: bytes) -> list[tuple]:
    return [key(json_record(ln.decode())) for ln in out.splitlines() if ln.strip()]


@pytest.fixture(scope="module")
def crash(request, builtin_kernel, build_dir, dti_tool, tmp_path_factory):
    failed = request.session.testsfailed
    res = dump.qemu_dump(SCRIPT, kernel=builtin_kernel, build_dir=build_dir,
                         extra_files={str(dti_tool): "/bin/dti"},
                         qemu_args=disks(tmp_path_factory.mktemp("disks")))
    assert "@@READY" in res.stdout, res.stdout[-3000:]
    yield res
    if request.session.testsfailed == failed:     # dumps are as large as the guest
        for p in res.files.values():
            Path(p).unlink(missing_ok=True)


@pytest.mark.parametrize("fmt", ["elf", "kdump-zlib"])
def test_dump_located_by_vmcoreinfo(crash, fmt):
    path = crash.files[fmt]
    p = dti("dump", "-v", "--list", path)
    assert p.returncode == 0, p.stderr.decode()[-3000:]
    m = LOCATED.search(p.stderr)
    assert m, p.stderr.decode()
    assert int(m[2]) >= len(CHANNELS)
    assert b"located by scanning" not in p.stderr
    # built in, the module table is empty but sealed: taken, not refused
    assert b"CRC mismatch" not in p.stderr + p.stdout, p.stderr.decode()
    assert b"located by VMCOREINFO (DTI=0x%s)" % m[1] in p.stdout
    if fmt == "elf":        # the line the kernel wrote, in the note QEMU copied
        head = path.open("rb").read(1 << 16)
        line = DTI_LINE.search(head)
        assert line and line[1] == m[1], "no DTI= line in the ELF dump's VMCOREINFO note"
    shown = views(crash.stdout)
    t_init = RUN_INIT.search(crash.console)
    assert t_init, "no 'Run /init' line on the console"
    got = {}
    for ch in CHANNELS:
        p = dti("dump", "--channel", ch, "--format", "json", path)
        assert p.returncode == 0, p.stderr.decode()[-3000:]
        got[ch] = records(p.stdout)
    # no disk I/O after the view; the console's output goes on to the panic
    assert got["virtio_blk"] == shown["virtio_blk"]
    assert shown["serial8250"] and shown["serial8250"][0] in got["serial8250"]
    probes = [json_record(ln.decode()) for ln in
              dti("dump", "--channel", "virtio_blk", "-F", "json", path).stdout.splitlines()
              if b" probe " in ln]
    assert [r["text"].split(":")[0] for r in probes] == list(DISKS)
    assert all(r["ts_ns"] < float(t_init[1]) * 1e9 for r in probes)
    assert any((r[3] or "").rstrip("\n").endswith(MARK) for r in shown["virtio_blk"])


def test_index_loses_nothing_and_bad_line_falls_back(crash, tmp_path):
    """The ELF dump read three ways: by its index, by scanning (the DTI=
    line renamed), and with the line pointing at memory that is no index."""
    path = tmp_path / "vmcore.elf"
    shutil.copyfile(crash.files["elf"], path)
    want = dti("dump", "-F", "json", path)
    assert want.returncode == 0 and want.stdout, want.stderr.decode()[-3000:]
    with path.open("r+b") as f:
        head = f.read(1 << 16)
        m = DTI_LINE.search(head)
        assert m, "no DTI= line in the ELF dump's VMCOREINFO note"
        f.seek(m.start() + 1)
        f.write(b"XTI")                     # a line no reader knows
    p = dti("dump", "-v", "-F", "json", path)
    assert p.returncode == 0, p.stderr.decode()[-3000:]
    assert b"channels located by scanning (VMCOREINFO names no dump index" in p.stderr
    assert p.stdout == want.stdout
    # DTI= naming the page before the index, as many digits: no index there
    bad = b"%0*x" % (len(m[1]), int(m[1], 16) - 4096)
    with path.open("r+b") as f:
        f.seek(m.start() + 1)
        f.write(b"DTI=0x" + bad)
    p = dti("dump", "-v", "-F", "json", path)
    assert p.returncode == 0, p.stderr.decode()[-3000:]
    assert (b"VMCOREINFO's DTI=0x%s: no dump index there" % bad.lstrip(b"0")) in p.stderr, \
        p.stderr.decode()
    assert b"channels located by scanning (VMCOREINFO's dump index could not be used)" in p.stderr
    assert p.stdout == want.stdout
    path.unlink()
