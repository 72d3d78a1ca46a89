#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Damaged copies of real dump excerpts, for fuzz_dump and dti dump's tests.

usage: dump-seed-variants.py OUTDIR EXCERPT.elf...

Each EXCERPT is an ELF dump `dti dump --excerpt` wrote from a real guest
crash (tests/dump-excerpts/).  Written, for each, into OUTDIR/elf/ as ELF
files and into OUTDIR/fuzz/ as fuzz_dump inputs (a flags byte, then the
file; see tests/fuzz_dump.c):

  NAME.whole         the excerpt itself (fuzz: as is, with the CRCs set,
                     with no virtual addresses)
  NAME.cut-N         the first N bytes: inside the ELF header, inside the
                     program headers, inside the first page of memory, at
                     a quarter, half, three quarters, one byte short
  NAME.flip-OFF-B    bit B of the byte at file offset OFF flipped: in the
                     program headers, in each channel or pending store
                     descriptor, in the sub-buffer headers and records;
                     fuzz inputs with the CRCs set again on every other one,
                     so that the flipped field itself is what is read

The choice is seeded by the name: the same excerpts give the same files.
"""
import random
import struct
import sys
from pathlib import Path

MARKER = b"__DTI__"
MARKER_SIZE = 40            # DTI_DUMP_MARKER_SIZE: the name field
DESC_SIZE = 128             # struct dti_dump_desc: flips land in it
EHDR_SIZE, PHDR_SIZE = 64, 56
PT_LOAD = 1
FLIPS_DESC = 6              # per descriptor
FLIPS_DATA = 12             # elsewhere in memory
# fuzz_dump.c's flags
F_FIX_CRC, F_NO_VIRT, F_ELF = 1, 2, 64


def segments(elf: bytes) -> list[tuple[int, int]]:
    """(file offset, size) of each PT_LOAD segment of a 64-bit ELF file."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2:
        raise SystemExit("not a 64-bit ELF file")
    end = "<" if elf[5] == 1 else ">"
    phoff, = struct.unpack_from(end + "Q", elf, 32)
    phnum, = struct.unpack_from(end + "H", elf, 56)
    out = []
    for i in range(phnum):
        p_type, _, off, _, _, filesz = struct.unpack_from(end + "IIQQQQ", elf,
                                                          phoff + i * PHDR_SIZE)
        if p_type == PT_LOAD:
            out.append((off, filesz))
    return out


def variants(name: str, elf: bytes):
    """(suffix, bytes, fuzz flags) of each damaged copy."""
    rnd = random.Random(name)
    segs = segments(elf)
    if not segs:
        raise SystemExit(f"{name}: no PT_LOAD segments")
    data = min(off for off, _ in segs)
    phnum = struct.unpack_from("<H" if elf[5] == 1 else ">H", elf, 56)[0]
    yield "whole", elf, (F_ELF, F_ELF | F_FIX_CRC, F_ELF | F_NO_VIRT)
    for n in sorted({EHDR_SIZE // 2, EHDR_SIZE + PHDR_SIZE * phnum // 2,
                     data + 100, len(elf) // 4, len(elf) // 2, len(elf) * 3 // 4,
                     len(elf) - 1}):
        yield f"cut-{n}", elf[:n], (F_ELF,)
    spots = [EHDR_SIZE + rnd.randrange(PHDR_SIZE * phnum)]
    at = elf.find(MARKER, data)
    while at >= 0:
        if at % 8 == 0:
            spots += [at + MARKER_SIZE + rnd.randrange(DESC_SIZE - MARKER_SIZE)
                      for _ in range(FLIPS_DESC)]
        at = elf.find(MARKER, at + 1)
    spots += [rnd.randrange(data, len(elf)) for _ in range(FLIPS_DATA)]
    for i, off in enumerate(spots):
        bit = rnd.randrange(8)
        b = bytearray(elf)
        b[off] ^= 1 << bit
        yield f"flip-{off}-{bit}", bytes(b), (F_ELF | (F_FIX_CRC if i % 2 else 0),)


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    out = Path(argv[1])
    (out / "elf").mkdir(parents=True, exist_ok=True)
    (out / "fuzz").mkdir(parents=True, exist_ok=True)
    for path in map(Path, argv[2:]):
        for suffix, blob, flags in variants(path.stem, path.read_bytes()):
            (out / "elf" / f"{path.stem}.{suffix}.elf").write_bytes(blob)
            for f in flags:
                (out / "fuzz" / f"{path.stem}.{suffix}.{f:02x}").write_bytes(
                    bytes([f]) + blob)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
