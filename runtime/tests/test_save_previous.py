# SPDX-License-Identifier: GPL-2.0
"""dti save-previous on a fake debugfs tree whose dti/.previous holds two
persistent channels of the previous boot (the real guest snapshot's
trace files, a module table, dti.ko's status file): what it saves
decodes as `dti read --previous` reads, a second run in the same boot
saves nothing twice, --keep removes the oldest boots' directories; and
the dti-save-previous unit passes `systemd-analyze verify`.  The guest
saves after a real reset in testsuite/test_persist.py.

Run after `make -C runtime` (`make -C runtime check` does):
    python3 -m pytest -q runtime/tests/test_save_previous.py
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from test_cli import DTI, RUNTIME, run

SNAP = RUNTIME / "tests" / "guest-output" / "snap"
UNIT = RUNTIME.parent / "debian" / "dti.dti-save-previous.service"
STATUS = ("name: {}\nboot: 3\nthis_boot: 4\nsubbuf_size: 4096\nn_subbufs: 4\nnr_cpus: 2\n"
          "subbufs: 3\ndamaged_subbufs: 0\nrecords: {}\ndamaged_records: 1\n")
MODULES = "dti_test 0xffffffffc02a0000 0x8000 - live 1 0\n"
BOOT_DIR = re.compile(r"^\d{8}T\d{6}-[0-9a-f]{32}$")


def boot_id() -> str:
    return Path("/proc/sys/kernel/random/boot_id").read_text().strip().replace("-", "")


@pytest.fixture
def fs(tmp_path: Path) -> Path:
    """<tmp>/fs/dti/.previous/{sev,two}: sev the guest snapshot, two its
    CPU 1 alone, with no module table."""
    prev = tmp_path / "fs" / "dti" / ".previous"
    for name, files in (("sev", ["trace0", "trace1"]), ("two", ["trace1"])):
        (prev / name).mkdir(parents=True)
        for f in files:
            shutil.copy(SNAP / f, prev / name / f)
        records = subprocess.run([str(DTI), "decode", *(str(SNAP / f) for f in files)],
                                 capture_output=True, check=True).stdout.count(b"\n")
        (prev / name / "status").write_text(STATUS.format(name, records))
        (prev / name / "merged").write_text("")
        (prev / name / "clear").write_text("")
    (prev / "sev" / "modules").write_text(MODULES)
    return tmp_path / "fs"


def save(fs: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    return run(["--debugfs", str(fs), "save-previous", "--dir", str(out), *args])


def test_saved_decodes_as_read_previous(fs, tmp_path):
    out = tmp_path / "saved"
    p = save(fs, out)
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    boots = os.listdir(out)
    assert len(boots) == 1 and BOOT_DIR.match(boots[0]) and boots[0].endswith(boot_id())
    lines = p.stdout.decode().splitlines()
    assert len(lines) == 2, lines
    for name, line in zip(("sev", "two"), lines):
        saved = out / boots[0] / name
        assert line.startswith(f"{name}: ") and line.endswith(f"saved in {saved}")
        # JSON names the channel: "two" holds records of channel sev (the
        # data says so, read --previous the command line)
        for fmt in ("ts", "json") if name == "sev" else ("ts",):
            want = run(["--debugfs", str(fs), "read", "--previous", "-F", fmt, name])
            got = run(["decode", "-F", fmt, str(saved)])
            assert want.returncode == got.returncode == 0 and got.stderr == b""
            assert got.stdout == want.stdout and want.stdout.count(b"\n") > 10
        records = want.stdout.count(b"\n")
        assert f"{name}: {records} records of the previous boot (boot 3 of the region, " \
            "1 damaged records and 0 damaged sub-buffers skipped)" in line
        assert (saved / "release").read_text() == os.uname().release + "\n"
        assert (saved / "status").read_text().startswith(f"name: {name}\n")
    assert (out / boots[0] / "sev" / "modules").read_text() == MODULES
    assert not (out / boots[0] / "two" / "modules").exists()
    assert sorted(os.listdir(out / boots[0])) == ["sev", "two"]


def test_same_boot_saves_once(fs, tmp_path):
    out = tmp_path / "saved"
    assert save(fs, out).returncode == 0
    p = save(fs, out)
    assert p.returncode == 0, p.stderr
    assert len(os.listdir(out)) == 1
    assert p.stdout.decode().count("the previous boot's records were saved in ") == 2


def test_keep_prunes_oldest_boots(fs, tmp_path):
    out = tmp_path / "saved"
    old = [f"2020010{i}T000000-{i:032x}" for i in range(1, 5)]
    for name in old:
        (out / name / "sev").mkdir(parents=True)
        (out / name / "sev" / "trace0").write_bytes(b"")
    (out / "other").mkdir()        # not a boot's: never removed
    p = save(fs, out, "--keep", "2")
    assert p.returncode == 0, p.stderr
    left = sorted(os.listdir(out))
    assert len(left) == 3 and left[0] == old[3] and left[2] == "other", left
    assert left[1].endswith(boot_id())
    for name in old[:3]:
        assert f"removed {out / name} (--keep 2)" in p.stdout.decode()
    # --keep 0 keeps all
    (out / old[0]).mkdir()
    assert save(fs, out, "--keep", "0").returncode == 0 and (out / old[0]).exists()


def test_nothing_to_save(tmp_path):
    (tmp_path / "fs" / "dti").mkdir(parents=True)
    p = save(tmp_path / "fs", tmp_path / "saved")
    assert (p.returncode, p.stdout) == (0, b"no records of a previous boot to save\n")
    assert not (tmp_path / "saved").exists()


def test_usage(fs, tmp_path):
    p = save(fs, tmp_path / "saved", "--keep", "two")
    assert p.returncode == 129 and b"--keep takes a number of boots" in p.stderr
    p = run(["--debugfs", str(tmp_path / "none"), "save-previous"])
    assert p.returncode == 1 and b"debugfs is not available" in p.stderr


@pytest.mark.parametrize("command", ["save-previous", "save-kdump"])
def test_unit_verifies(tmp_path, command):
    """The units as the dti package installs them, dti at the build's path."""
    if not shutil.which("systemd-analyze"):
        pytest.fail("systemd-analyze is needed (package systemd)")
    text = (UNIT.parent / f"dti.dti-{command}.service").read_text()
    assert f"ExecStart=/usr/bin/dti {command}" in text
    unit = tmp_path / f"dti-{command}.service"
    unit.write_text(text.replace("/usr/bin/dti", str(DTI)))
    p = subprocess.run(["systemd-analyze", "verify", "--man=no", str(unit)],
                       capture_output=True, text=True)
    assert p.returncode == 0 and p.stderr == "" and p.stdout == "", p.stderr + p.stdout


EXCERPTS = RUNTIME / "tests" / "dump-excerpts"


def test_save_kdump(tmp_path):
    """dti save-kdump over kdump-tools' layout (DIR/STAMP/dump.STAMP): an
    excerpt beside a dump with DTI channels, that reads as the dump does;
    a note beside one with none (its markers gone); an incomplete dump and
    a dump already done left alone; a second run saves nothing; the
    directory from KDUMP_COREDIR, as kdump-tools' defaults set it."""
    crash = tmp_path / "crash"
    for stamp, src in (("202611281600", "wrap8k.elf"), ("202611281601", "noover.elf")):
        (crash / stamp).mkdir(parents=True)
        shutil.copy(EXCERPTS / src, crash / stamp / f"dump.{stamp}")
    gone = crash / "202611281601" / "dump.202611281601"
    gone.write_bytes(gone.read_bytes().replace(b"__DTI_", b"__XXX_"))
    (crash / "202611281602").mkdir()
    (crash / "202611281602" / "dump-incomplete").write_bytes(b"")
    env = dict(os.environ, KDUMP_COREDIR=str(crash))
    p = subprocess.run([str(DTI), "save-kdump"], capture_output=True, text=True, env=env)
    # what dti dump says of a dump with no channel, on standard error
    assert p.returncode == 0 and p.stderr.startswith(f"dti: {gone}: no DTI channels in"), \
        p.stderr
    first = crash / "202611281600"
    assert p.stdout.splitlines()[0].startswith(
        f"{first}/dti-excerpt.elf: 1 channel in "), p.stdout
    assert p.stdout.splitlines()[1] == \
        f"{crash}/202611281601/dti-excerpt.none: no DTI channels in {gone}", p.stdout
    assert sorted(x.name for x in first.iterdir()) == ["dti-excerpt.elf", "dump.202611281600"]
    assert sorted(x.name for x in (crash / "202611281602").iterdir()) == ["dump-incomplete"]
    for args in (["-F", "json"], ["--list", "-q"]):
        assert run(["dump", *args, str(first / "dti-excerpt.elf")], tmp_path).stdout == \
            run(["dump", *args, str(first / "dump.202611281600")], tmp_path).stdout.replace(
                str(first / "dump.202611281600").encode(),
                str(first / "dti-excerpt.elf").encode())
    p = run(["save-kdump", "--dir", str(crash)], tmp_path)
    assert p.stdout.decode() == f"{crash}: no dump without its DTI excerpt\n"
    p = run(["save-kdump", "--dir", str(tmp_path / "none")], tmp_path)
    assert p.returncode == 0 and b"no such directory" in p.stdout
