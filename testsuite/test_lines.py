"""Callers as function and source line (issue 25).

dti_lines.ko logs records whose text is "FILE:LINE FUNCTION", the place
of their own logging call, from an ordinary function, a helper inlined
into two functions, a cold function (.text.unlikely) and its init
function (.init.text, freed once the module is live).

* The module table: dti/.modules names every module loaded after dti.ko
  and dti.ko itself, with the address /sys/module/NAME/sections/.text
  gives and the build-id of /sys/module/NAME/notes; an unloaded module
  is marked gone.
* Live: `dti read --lines -d dti_lines.ko` prints for each record the
  file and line its text claims, the inlined helper's with the call it
  was inlined for; the init record, whose code is gone, is left as hex.
* Offline: `dti decode SNAPDIR --lines -d dti_lines.ko` on the host
  does the same from a `dti snapshot`, and so does `dti dump VMCORE
  --lines` on a QEMU dump of the guest after a panic.
* Wrong build: a dti_lines.ko built again from a source whose lines
  moved is refused by build-id, with both ids in the message, and no
  record is given a line.

About 30 s per guest test on the reference host.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness import dump

HERE = Path(__file__).resolve().parent
LINES_SRC = HERE / "modules" / "dti_lines.c"
ROUNDS = 5
# The calls of dti_lines.c: (function holding the call, inlined function or None)
FUNCS = {"lines_plain", "lines_other", "lines_cold", "lines_helper"}

LOAD = r"""
insmod $DTI_MODDIR/dti.ko
insmod $DTI_MODDIR/dti_lines.ko
D=/sys/kernel/debug/dti
echo %d > /sys/kernel/debug/dti_lines/log
""" % ROUNDS


def module_ko(modules, name: str) -> Path:
    return next(k for k in modules if k.name == f"{name}.ko")


def modules_table(text: str) -> dict[str, list[dict]]:
    """DTI_MODULES_FILE's lines, by module name."""
    out: dict[str, list[dict]] = {}
    for line in text.splitlines():
        name, addr, size, bid, state, loaded, unloaded = line.split()
        out.setdefault(name, []).append(dict(text=int(addr, 16), size=int(size, 16),
                                             build_id=bid, state=state,
                                             loaded=int(loaded), unloaded=int(unloaded)))
    return out


def claimed(rec: dict) -> tuple[str, int, str]:
    """(file, line, function) a record's text claims."""
    m = re.fullmatch(r"(\S+):(\d+) (\w+)\n?", rec["text"])
    assert m, rec
    return m[1], int(m[2]), m[3]


def same_file(resolved: str, claim: str) -> bool:
    """A DWARF path names the file __FILE__ named (kbuild may give either form)."""
    return os.path.normpath(resolved) == os.path.normpath(claim) or \
        os.path.normpath(resolved).endswith("/" + os.path.normpath(claim).lstrip("./"))


def check_lines(recs: list[dict]) -> None:
    """Each record resolved to the line its text claims; init's left alone."""
    assert len(recs) == 1 + 4 * ROUNDS, [r["text"] for r in recs]
    seen = set()
    for rec in recs:
        file, line, func = claimed(rec)
        if func == "lines_init":
            # .init.text is freed: never a line, never another function's
            assert not rec.get("file") and not rec.get("line"), rec
            continue
        assert func in FUNCS, rec
        assert rec.get("line") == line and same_file(rec.get("file", ""), file), rec
        inl = rec.get("inlined") or []
        if func == "lines_helper":
            # the helper's line, inlined into one of its two callers
            assert inl and inl[0]["function"] == "lines_helper", rec
            assert rec["function"] in ("lines_plain", "lines_other"), rec
            assert same_file(inl[0]["file"], file) and inl[0]["line"] > 0, rec
        else:
            assert not inl and rec["function"] == func, rec
        seen.add((rec["function"], func))
    assert seen == {("lines_plain", "lines_plain"), ("lines_other", "lines_other"),
                    ("lines_cold", "lines_cold"), ("lines_plain", "lines_helper"),
                    ("lines_other", "lines_helper")}, seen


def json_records(path: Path) -> list[dict]:
    return [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]


def test_module_table(dti_guest):
    """.modules: each module's .text and build-id as sysfs shows them; gone on rmmod."""
    res = dti_guest.run(LOAD + r"""
        insmod $DTI_MODDIR/dti_plain.ko
        cat $D/.modules > /out/loaded
        for m in dti dti_lines dti_plain; do
            echo "$m $(cat /sys/module/$m/sections/.text)" >> /out/sysfs
            od -An -tx1 -v /sys/module/$m/notes/.note.gnu.build-id | tr -d ' \n' >> /out/notes
            echo >> /out/notes
        done
        rmmod dti_plain
        insmod $DTI_MODDIR/dti_plain.ko
        cat $D/.modules > /out/reloaded
        echo "dti_plain $(cat /sys/module/dti_plain/sections/.text)" > /out/sysfs2
    """, smp=2).check()
    out = res.outdir
    table = modules_table((out / "loaded").read_text())
    notes = (out / "notes").read_text().split()
    for (name, addr), note in zip((ln.split() for ln in (out / "sysfs").read_text().splitlines()),
                                  notes):
        assert len(table[name]) == 1 and table[name][0]["state"] == "live", table
        e = table[name][0]
        assert e["text"] == int(addr, 16), (name, e, addr)
        # the note: namesz, descsz, type (12 bytes), "GNU\0", then the id
        assert note[32:] == e["build_id"] and len(e["build_id"]) == 40, (name, note, e)
        assert e["size"] > 0 and e["loaded"] > 0 and e["unloaded"] == 0
    again = modules_table((out / "reloaded").read_text())
    plain = sorted(again["dti_plain"], key=lambda e: e["loaded"])
    assert [e["state"] for e in plain] == ["gone", "live"], plain
    assert plain[0]["unloaded"] >= plain[0]["loaded"] and plain[0]["unloaded"] <= plain[1]["loaded"]
    assert plain[1]["text"] == int((out / "sysfs2").read_text().split()[1], 16)
    assert again["dti_lines"] == table["dti_lines"]
