# SPDX-License-Identifier: GPL-2.0
"""dti export and -F ctf on the host: the saved guest outputs (a snapshot
with typed events and text, a console log with text and binary records,
dump excerpts of a wrapped ring, replayed and pending records), the
snapshot with records taken out of its sequence (losses), each with and
without the reader's filters, written as CTF and read back by
babeltrace2 (ctf_oracle.py): every record of `dti ... -F json` in order,
every field equal, and the discarded events where dti tells losses.

Run after `make -C runtime` (`make -C runtime check` does):
    /usr/bin/python3 -m pytest -q runtime/tests/test_export.py
"""
from __future__ import annotations

import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from ctf_oracle import babeltrace2_reads, check, read_ctf

TESTS = Path(__file__).resolve().parent
BUILD = Path(os.environ.get("DTI_BUILD", TESTS.parent / "build")).resolve()
DTI = BUILD / "dti"
SNAP = TESTS / "guest-output" / "snap"
CONSOLE = TESTS / "guest-output" / "console.log"
EXCERPTS = TESTS / "dump-excerpts"

# struct dti_record of <linux/dti_record.h>: its flags, cpu, len and seq
HDR = struct.Struct("<HBBbBHIIQQQ")
SUBBUF, FORMAT = 0x80, 0x20


def dti(*args, ok=(0,)) -> subprocess.CompletedProcess:
    r = subprocess.run([str(DTI), *map(str, args)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode in ok, (args, r.returncode, r.stderr)
    return r


def export_and_check(tmp: Path, read: list, export: list, exact_gaps=True) -> dict:
    """`dti READ... -F json` against the CTF trace `dti EXPORT...` writes
    into tmp/ctf (EXPORT names it where it must)."""
    want = dti(*read, "-F", "json", ok=(0, 2))
    r = dti(*export, ok=(0, 2))
    assert r.returncode == want.returncode and r.stdout == "", r
    # the same notices, losses among them, on standard error
    assert r.stderr == want.stderr
    return check(tmp / "ctf", want.stdout, want.stderr, exact_gaps)


def with_gaps(tmp: Path, shifts: dict[int, list[tuple[int, int]]]) -> Path:
    """A copy of SNAP's trace files (not its stats, which would call the
    records later ones) whose CPU c's records from the i-th on have
    their seq raised by n, for each (i, n) of shifts[c]: n records lost
    before the i-th."""
    d = tmp / "gaps"
    d.mkdir()
    shutil.copy(SNAP / "info", d / "info")
    for cpu in (0, 1):
        data = bytearray((SNAP / f"trace{cpu}").read_bytes())
        at, i = 0, 0
        while at < len(data):
            _, _, flags, _, _, _, length, _, seq, _, _ = HDR.unpack_from(data, at)
            if not flags & (SUBBUF | FORMAT):
                add = sum(n for k, n in shifts.get(cpu, []) if i >= k)
                struct.pack_into("<Q", data, at + 16, seq + add)
                i += 1
            at += (HDR.size + length + 7) & ~7
        (d / f"trace{cpu}").write_bytes(bytes(data))
    return d


def test_snapshot(tmp_path):
    """Text records and two event types with every kind of field."""
    n = export_and_check(tmp_path, ["decode", SNAP], ["export", tmp_path / "ctf", SNAP])
    assert n == {"records": 76, "lost": 0, "intervals": 0}
    got, _ = read_ctf(tmp_path / "ctf")
    assert {r.get("event", "text" if "text" in r else "binary") for r in got} == \
        {"text", "ints", "mixed"}
    # the metadata names the channel, and declares a field of each kind
    meta = (tmp_path / "ctf" / "metadata").read_text()
    assert meta.startswith("/* CTF 1.8 */") and 'channel = "sev";' in meta
    assert "signed = true; } _s64;" in meta and "base = 16; } _ptr;" in meta
    assert "encoding = UTF8; } _str[__str_length];" in meta
    assert sorted(p.name for p in (tmp_path / "ctf").iterdir()) == ["cpu0", "cpu1", "metadata"]


def test_losses(tmp_path):
    """Records lost on both CPUs, one loss before a typed event, as
    discarded events between the records dti names."""
    gaps = with_gaps(tmp_path, {0: [(5, 3), (31, 1000)], 1: [(20, 7)]})
    n = export_and_check(tmp_path, ["decode", gaps], ["export", tmp_path / "ctf", gaps])
    assert n == {"records": 76, "lost": 1010, "intervals": 3}
    # dti report counts the same
    assert "\nlost: 1010 records in 3 intervals" in dti("report", gaps).stdout


@pytest.mark.parametrize("filters, exact", [
    (["-c", "1"], True),
    (["-p", "warning"], False),
    (["--filter", "event == mixed"], False),
    (["-g", "text1"], False),
    (["-S", "+40ms", "-U", "+70ms"], False),
])
def test_losses_filtered(tmp_path, filters, exact):
    """The filters hold, and losses are those dti tells of the CPUs kept,
    even where no record of the CPU is kept before or after them."""
    gaps = with_gaps(tmp_path, {0: [(5, 3), (36, 2)], 1: [(20, 7)]})
    n = export_and_check(tmp_path, ["decode", *filters, gaps],
                         ["export", *filters, tmp_path / "ctf", gaps], exact)
    assert n["records"] > 0


def test_console_log(tmp_path):
    """A console log's channels, one trace each (DIR/NAME); binary records."""
    dti("console-log", "-F", "ctf", "-o", tmp_path / "all", CONSOLE)
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == ["pa", "pb"]
    for name in ("pa", "pb"):
        n = export_and_check(tmp_path, ["console-log", "--channel", name, CONSOLE],
                             ["console-log", "--channel", name, "-F", "ctf", "-o",
                              tmp_path / "ctf", CONSOLE])
        assert n["records"] > 0
        got, _ = read_ctf(tmp_path / "all" / name)
        assert got == read_ctf(tmp_path / "ctf")[0]
        shutil.rmtree(tmp_path / "ctf")
    assert any("data" in r for r in got)


@pytest.mark.parametrize("name", ["wrap8k", "h_early", "h_raw", "noover"])
def test_dump(tmp_path, name):
    """A wrapped ring, replayed records, pending ones (no seq), a full
    no-overwrite ring: from a dump, all channels or --channel's."""
    elf = EXCERPTS / f"{name}.elf"
    n = export_and_check(tmp_path, ["dump", "--channel", name, elf],
                         ["dump", "--channel", name, "-F", "ctf", "-o", tmp_path / "ctf", elf])
    assert n["records"] > 0
    dti("dump", "-F", "ctf", "-o", tmp_path / "all", elf)
    assert read_ctf(tmp_path / "all" / name)[0] == read_ctf(tmp_path / "ctf")[0]


def test_empty_and_refused(tmp_path):
    """No record: a trace babeltrace2 reads as empty.  A directory that is
    not empty is refused, with nothing written."""
    n = export_and_check(tmp_path, ["decode", "-p", "emerg", SNAP],
                         ["export", "-p", "emerg", tmp_path / "ctf", SNAP])
    assert n == {"records": 0, "lost": 0, "intervals": 0}
    r = dti("export", tmp_path / "ctf", SNAP, ok=(1,))
    assert "directory is not empty" in r.stderr and str(tmp_path / "ctf") in r.stderr


def test_several_channels(tmp_path):
    """Several snapshots (dti export DIR SNAP1 SNAP2, as dti decode merges
    them): a trace each, DIR/NAME and DIR/NAME.1 for a second of the same
    name, each equal to its snapshot's own export, losses in the one
    that had them; babeltrace2 reads DIR as one timeline of both."""
    gaps = with_gaps(tmp_path, {0: [(5, 3)], 1: [(20, 7)]})
    r = dti("export", "-c", "0", tmp_path / "both", SNAP, gaps, ok=(0, 2))
    assert sorted(p.name for p in (tmp_path / "both").iterdir()) == ["sev", "sev.1"]
    for snap, name in ((SNAP, "sev"), (gaps, "sev.1")):
        n = export_and_check(tmp_path, ["decode", "-c", "0", snap],
                             ["export", "-c", "0", tmp_path / "ctf", snap])
        assert read_ctf(tmp_path / "both" / name) == read_ctf(tmp_path / "ctf")
        assert n["lost"] == (3 if snap == gaps else 0)
        shutil.rmtree(tmp_path / "ctf")
    assert "3 records lost on cpu0" in r.stderr
    merged = dti("decode", "-c", "0", SNAP, gaps, ok=(0, 2)).stdout.splitlines()
    assert babeltrace2_reads(tmp_path / "both") == len(merged)
