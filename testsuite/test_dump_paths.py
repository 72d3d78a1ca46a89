"""Smoke tests of issue 19's two dump paths (harness/dump.py), no DTI code.

The guest writes a random marker into the printk ring buffer (a kernel
page) through /dev/kmsg, then crashes with sysrq-c.  The marker is split in
the script so that its text is only ever whole in memory, not in /test.sh.

* test_qemu_dump_path (~20 s): QEMU's dump-guest-memory.
  (a) the ELF file is an ELF core with a VMCOREINFO note for this kernel
      and holds the marker; (b) the kdump-zlib file (QEMU 7.2 writes it
      flattened; the harness reassembles it) is read with libkdumpfile.
* test_kdump_path (~35 s): kexec -p capture kernel, makedumpfile -c -d 31.
  (c) the file is read with libkdumpfile and with makedumpfile --dump-dmesg.

"Holds the marker" is checked where it matters: in the printk text ring,
found from VMCOREINFO alone (prb -> text_data_ring -> data) and read
through libkdumpfile (python3-libkdumpfile).
"""

from __future__ import annotations

import mmap
import secrets
import struct
import subprocess
from pathlib import Path

import pytest

from harness import dump

kdumpfile = pytest.importorskip("kdumpfile",
                                reason="apt-get install python3-libkdumpfile")

ELF_MAGIC = b"\x7fELF"
ELFCLASS64 = 2
ET_CORE = 4
EM_X86_64 = 62
PT_NOTE = 4
PN_XNUM = 0xFFFF
EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
PHDR = struct.Struct("<IIQQQQQQ")
SHDR = struct.Struct("<IIQQQQIIQQ")
NHDR = struct.Struct("<III")
KDUMP_SIGNATURE = b"KDUMP   "       # disk_dump_header.signature
START_KERNEL_MAP = 0xFFFFFFFF80000000   # x86_64 __START_KERNEL_map
U64 = struct.Struct("<Q")
U32 = struct.Struct("<I")
MARKER_PREFIX = "DTI-DUMP-MARK"


def marker_script(token: str) -> str:
    """Guest shell: log MARKER_PREFIX-token to the printk ring buffer."""
    return f"""
A={MARKER_PREFIX}; B={token}
echo "$A-$B" > /dev/kmsg
echo marker written
"""


def _align4(n: int) -> int:
    return (n + 3) & ~3


def elf_core_notes(path: Path) -> list[tuple[str, int, bytes]]:
    """(name, type, desc) of every note of the ELF core file `path`."""
    with open(path, "rb") as f:
        ident, e_type, e_machine, _, _, e_phoff, e_shoff, _, _, e_phentsize, \
            e_phnum, _, _, _ = EHDR.unpack(f.read(EHDR.size))
        assert ident[:4] == ELF_MAGIC and ident[4] == ELFCLASS64, f"{path}: not ELF64"
        assert (e_type, e_machine) == (ET_CORE, EM_X86_64), f"{path}: not an x86_64 core"
        if e_phnum == PN_XNUM:              # extended numbering: count in shdr 0
            f.seek(e_shoff)
            e_phnum = SHDR.unpack(f.read(SHDR.size))[7]
        notes = []
        for i in range(e_phnum):
            f.seek(e_phoff + i * e_phentsize)
            p_type, _, p_offset, _, _, p_filesz, _, _ = PHDR.unpack(f.read(PHDR.size))
            if p_type != PT_NOTE:
                continue
            f.seek(p_offset)
            seg = f.read(p_filesz)
            off = 0
            while off + NHDR.size <= len(seg):
                namesz, descsz, ntype = NHDR.unpack_from(seg, off)
                off += NHDR.size
                name = seg[off:off + namesz].rstrip(b"\0").decode(errors="replace")
                off += _align4(namesz)
                notes.append((name, ntype, seg[off:off + descsz]))
                off += _align4(descsz)
        return notes


def file_contains(path: Path, needle: bytes) -> bool:
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        return m.find(needle) >= 0


def printk_text_ring(path: Path) -> bytes:
    """The printk text data ring of the dump `path`, found from VMCOREINFO.

    Kernel virtual addresses go through libkdumpfile's translation; if that
    fails for an address of the kernel image (QEMU 7.2 writes a wrong
    phys_base into its kdump header), the image mapping is applied with
    VMCOREINFO's phys_base."""
    ctx = kdumpfile.kdumpfile(str(path))
    ctx.attr["addrxlat.ostype"] = "linux"
    info = ctx.attr["linux.vmcoreinfo"]
    phys_base = ctx.attr["linux.phys_base"]

    def kread(vaddr: int, size: int) -> bytes:
        try:
            return ctx.read(kdumpfile.KDUMP_KVADDR, vaddr, size)
        except kdumpfile.exceptions.AddressTranslationException:
            if vaddr < START_KERNEL_MAP:
                raise
            paddr = (vaddr - START_KERNEL_MAP + phys_base) % (1 << 64)
            return ctx.read(kdumpfile.KDUMP_MACHPHYSADDR, paddr, size)

    off = info["OFFSET"]
    prb = U64.unpack(kread(int(info["SYMBOL"]["prb"]), U64.size))[0]
    ring = prb + int(off["printk_ringbuffer"]["text_data_ring"])
    bits = U32.unpack(kread(ring + int(off["prb_data_ring"]["size_bits"]), U32.size))[0]
    data = U64.unpack(kread(ring + int(off["prb_data_ring"]["data"]), U64.size))[0]
    return kread(data, 1 << bits)


def check_kdump_file(path: Path, marker: bytes) -> None:
    """A kdump-compressed file that libkdumpfile reads, with `marker` in
    its printk ring."""
    with open(path, "rb") as f:
        assert f.read(len(KDUMP_SIGNATURE)) == KDUMP_SIGNATURE, f"{path}: not kdump"
    assert kdumpfile.kdumpfile(str(path)).attr["file.format"] == "diskdump"
    assert marker in printk_text_ring(path), f"{path}: marker not in the printk ring"


def test_qemu_dump_path(guest, kernel):
    """QEMU path: pvpanic pauses the panicked guest, QMP dumps it twice."""
    token = secrets.token_hex(8)
    marker = f"{MARKER_PREFIX}-{token}".encode()
    res = dump.qemu_dump(marker_script(token), guest=guest, timeout=guest.timeout)
    assert "marker written" in res.stdout
    assert res.elf and res.kdump_zlib, res.files

    # (a) ELF core: VMCOREINFO note for this kernel, marker in memory and ring
    notes = elf_core_notes(res.elf)
    vmcoreinfo = [desc for name, _, desc in notes if name == "VMCOREINFO"]
    assert vmcoreinfo, f"no VMCOREINFO note in {res.elf}: {[n for n, _, _ in notes]}"
    assert f"OSRELEASE={kernel.release}\n".encode() in vmcoreinfo[0]
    assert file_contains(res.elf, marker)
    assert marker in printk_text_ring(res.elf)

    # (b) QEMU's kdump-zlib, flattened as written and reassembled
    assert dump.is_flattened(res.files["kdump-zlib-flat"])
    check_kdump_file(res.kdump_zlib, marker)

    # Passed: the dumps (the ELF one is the guest's RAM) need not stay.
    for path in res.files.values():
        Path(path).unlink(missing_ok=True)


def test_kdump_path(guest, kernel, tmp_path):
    """Real kdump path: capture kernel runs makedumpfile -c -d 31 /proc/vmcore."""
    token = secrets.token_hex(8)
    marker = f"{MARKER_PREFIX}-{token}".encode()
    res = dump.kdump(marker_script(token), guest=guest, timeout=guest.timeout)
    assert "marker written" in res.stdout
    assert f"{dump.CAPTURE_EXIT_MARKER} 0" in res.stdout
    assert res.vmcore

    # (c) makedumpfile -c -d 31 output: libkdumpfile, then makedumpfile's dmesg
    check_kdump_file(res.vmcore, marker)
    dmesg = tmp_path / "dmesg.txt"
    r = subprocess.run(["makedumpfile", "--dump-dmesg", str(res.vmcore), str(dmesg)],
                       capture_output=True, text=True, timeout=dump.QMP_TIMEOUT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert marker in dmesg.read_bytes()
