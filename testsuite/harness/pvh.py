"""The image QEMU boots: the kernel proper through its PVH entry point,
else the bzImage.

A bzImage starts in real mode, and its decompressor unpacks the kernel
before the kernel runs: under TCG that takes most of a test's boot (6.1's
xz-packed kernel: about 5.5 of 9 s to the first console line, 3 s with the
unpacked kernel).  A kernel built with CONFIG_PVH carries an entry point
(the Xen ELF note XEN_ELFNOTE_PHYS32_ENTRY) by which QEMU's -kernel starts
the unpacked ELF image directly.  boot_image() unpacks the bzImage's
payload once (its setup header says where it is; its magic says how it is
packed), keeps it in a cache keyed by the bzImage's size and time, and
returns it when it has that note; any other kernel boots as before.

What a PVH boot leaves out is the decompressor's work, KASLR with it: the
kernel runs at its link address.  Tests of what KASLR changes (crash dumps
read with and without VMCOREINFO) boot the bzImage: qemu_command(kaslr=).
Env DTI_BOOT=bzimage boots every guest that way.
"""

from __future__ import annotations

import bz2
import lzma
import os
import shutil
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

from .kernel import Kernel, cache_dir

# The x86 boot protocol's setup header (Documentation/arch/x86/boot.rst).
SETUP_SECTS_OFF = 0x1f1
HEADER_MAGIC_OFF = 0x202
HEADER_MAGIC = b"HdrS"
PAYLOAD_OFFSET_OFF = 0x248          # from the start of the protected-mode code
SECTOR = 512
DEFAULT_SETUP_SECTS = 4             # a 0 in setup_sects means 4
SIZE_TRAILER = 4                    # kbuild appends the unpacked size (size_append)

ELF_MAGIC = b"\x7fELF"
PT_NOTE = 4
XEN_NOTE_NAME = b"Xen"
XEN_ELFNOTE_PHYS32_ENTRY = 18


class NoPvhImage(Exception):
    """The bzImage's kernel cannot be booted through a PVH entry point.
    `lasting`: so for good (the image's own make), not for want of a
    tool here, which a later run may have."""

    def __init__(self, message: str, lasting: bool = True):
        super().__init__(message)
        self.lasting = lasting


def _payload(image: bytes) -> bytes:
    if image[HEADER_MAGIC_OFF:HEADER_MAGIC_OFF + 4] != HEADER_MAGIC:
        raise NoPvhImage("not a bzImage (no HdrS setup header)")
    setup_sects = image[SETUP_SECTS_OFF] or DEFAULT_SETUP_SECTS
    offset, length = struct.unpack_from("<II", image, PAYLOAD_OFFSET_OFF)
    start = (setup_sects + 1) * SECTOR + offset
    if not length or start + length > len(image):
        raise NoPvhImage("the setup header names no payload inside the file")
    return image[start:start + length]


def _zstd(data: bytes) -> bytes:
    if not shutil.which("zstd"):
        raise NoPvhImage("a zstd-packed kernel and no zstd command (apt-get install zstd)",
                         lasting=False)
    r = subprocess.run(["zstd", "-dcq"], input=data[:-SIZE_TRAILER], capture_output=True)
    if r.returncode != 0:
        raise NoPvhImage(f"zstd: {r.stderr.decode(errors='replace').strip()}")
    return r.stdout


def _unpack(payload: bytes) -> bytes:
    """The kernel ELF image inside a bzImage payload."""
    if payload.startswith(b"\xfd7zXZ\x00"):
        return lzma.LZMADecompressor().decompress(payload)
    if payload.startswith(b"\x1f\x8b"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(payload)
    if payload.startswith(b"BZh"):
        return bz2.BZ2Decompressor().decompress(payload)
    if payload.startswith(b"\x28\xb5\x2f\xfd"):
        return _zstd(payload)
    if payload.startswith(b"\x5d\x00\x00"):
        return lzma.LZMADecompressor(format=lzma.FORMAT_ALONE).decompress(payload)
    raise NoPvhImage(f"payload packed in a way not handled here (magic {payload[:4].hex()})")


def has_pvh_entry(elf: bytes) -> bool:
    """Whether ELF64 little-endian image `elf` has a Xen PHYS32_ENTRY note."""
    if not elf.startswith(ELF_MAGIC) or elf[4] != 2 or elf[5] != 1:
        return False
    phoff, = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from(
            "<IIQQQQ", elf, phoff + i * phentsize)
        if p_type != PT_NOTE:
            continue
        pos, end = p_offset, p_offset + p_filesz
        while pos + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", elf, pos)
            name = elf[pos + 12:pos + 12 + namesz].rstrip(b"\0")
            if name == XEN_NOTE_NAME and ntype == XEN_ELFNOTE_PHYS32_ENTRY:
                return True
            pos += 12 + (namesz + 3 & ~3) + (descsz + 3 & ~3)
    return False


def _cached_name(kernel: Kernel) -> str:
    st = kernel.vmlinuz.stat()
    return f"{kernel.release}-{st.st_size}-{st.st_mtime_ns}"


def unpacked(kernel: Kernel) -> Path:
    """The kernel's unpacked PVH-bootable image, made once and cached
    (cache_dir DTI_PVH_CACHE, "pvh"); NoPvhImage says why there is none."""
    cache = cache_dir("DTI_PVH_CACHE", "pvh")
    name = _cached_name(kernel)
    elf_path, none_path = cache / f"{name}.elf", cache / f"{name}.none"
    if elf_path.is_file():
        return elf_path
    if none_path.is_file():
        raise NoPvhImage(none_path.read_text())
    cache.mkdir(parents=True, exist_ok=True)
    try:
        elf = _unpack(_payload(kernel.vmlinuz.read_bytes()))
        if not has_pvh_entry(elf):
            raise NoPvhImage("its kernel has no PVH entry point (CONFIG_PVH off)")
    except NoPvhImage as e:
        if e.lasting:
            none_path.write_text(f"{kernel.vmlinuz}: {e}")
        raise NoPvhImage(f"{kernel.vmlinuz}: {e}", e.lasting) from None
    except (lzma.LZMAError, zlib.error, OSError, ValueError, struct.error) as e:
        none_path.write_text(f"{kernel.vmlinuz}: {e}")
        raise NoPvhImage(none_path.read_text()) from None
    fd, tmp = tempfile.mkstemp(dir=cache, prefix=f".{name}.")
    with os.fdopen(fd, "wb") as f:
        f.write(elf)
    os.replace(tmp, elf_path)
    return elf_path


def boot_image(kernel: Kernel, *, kaslr: bool = False) -> Path:
    """What QEMU's -kernel is given for `kernel`: its unpacked image when it
    has a PVH entry point and neither `kaslr` nor DTI_BOOT=bzimage asks for
    the decompressor, else its bzImage."""
    if kaslr or os.environ.get("DTI_BOOT") == "bzimage":
        return kernel.vmlinuz
    try:
        return unpacked(kernel)
    except NoPvhImage:
        return kernel.vmlinuz
