"""Smoke tests of the VM harness itself: each test boots QEMU (~7 s under TCG).

They need no DTI code: the only module is harness/tests/data/splatmod
(a tiny out-of-tree module that WARNs on request), built here.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from harness import initramfs, kernels
from harness.vm import VMLost, VMPanic, VMTimeout

SPLATMOD_SRC = Path(__file__).parent / "harness/tests/data/splatmod"


@pytest.fixture(scope="module")
def splat_module(kernel, build_dir):
    """dti_splat.ko built for the guest kernel (from harness/tests/data/splatmod)."""
    work = build_dir / f"splatmod-{kernel.release}"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(SPLATMOD_SRC, work)
    with kernels.build_context(kernel, work):
        r = subprocess.run(kernels.kbuild_command(kernel, work, "modules"),
                           capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return work / "dti_splat.ko"


def test_boot_basics(guest, kernel, splat_module):
    res = guest.run(r"""
        uname -r
        nproc
        grep -q ' /sys/kernel/debug debugfs ' /proc/mounts && echo debugfs-ok
        grep -q ' /tmp tmpfs ' /proc/mounts && echo tmpfs-ok
        ls "$DTI_MODDIR"
        insmod "$DTI_MODDIR/dti_splat.ko"
        grep -q '^dti_splat ' /proc/modules && echo module-loaded
        rmmod dti_splat
        staprun -V    # quiet unless stderr is a tty: here it is ttyS1
        mkdir -p /out/sub
        echo hello > /out/sub/hello.txt
        head -c 5000 /dev/urandom > /out/blob
        md5sum /out/blob
        echo to-stderr >&2
        """, smp=2, modules=[splat_module],
        extra_files=initramfs.systemtap_runtime_files())
    res.check()
    lines = res.stdout.splitlines()
    assert lines[0] == kernel.release
    assert lines[1] == "2"
    assert lines[2:6] == ["debugfs-ok", "tmpfs-ok", "dti_splat.ko", "module-loaded"]
    assert lines[6].startswith("Systemtap module loader/runner")  # staprun + libs work
    assert lines[-1] == "to-stderr"
    assert (res.outdir / "sub/hello.txt").read_text() == "hello\n"
    md5 = hashlib.md5((res.outdir / "blob").read_bytes()).hexdigest()
    assert lines[-2] == f"{md5}  /out/blob"
    # the benign taint lines of an unsigned out-of-tree module are there, not flagged
    assert "loading out-of-tree module taints kernel" in res.console
    assert res.splats() == []


def test_smp4_and_errexit(guest):
    res = guest.run("nproc; echo err >&2; false; echo unreachable", smp=4)
    assert res.rc == 1
    assert res.stdout == "4\nerr\n"
    assert res.outdir is None
    with pytest.raises(AssertionError, match="exited with status 1"):
        res.check()


def test_exit_status_without_errexit(guest):
    res = guest.run("false\necho still-running\nexit 3", sh_opts="-u")
    assert res.rc == 3
    assert res.stdout == "still-running\n"


def test_warning_is_detected(guest, splat_module):
    res = guest.run('insmod "$DTI_MODDIR/dti_splat.ko" warn=1; echo survived',
                    modules=[splat_module])
    res.check()
    assert res.stdout == "survived\n"
    # WARN()'s first line: "WARNING: CPU: 0 PID: 108 at FILE:LINE FUNC",
    # from 7.0 "WARNING: FILE:LINE at FUNC [MODULE], CPU#0: COMM/PID".
    hits = guest.expect_splat(r"^WARNING: (CPU: \d+ PID: \d+ at .*dti_splat"
                              r"|.*dti_splat.*, CPU#\d+: )")
    assert len(hits) == 1
    assert guest.splats() == []


@pytest.mark.allow_splat(r"Kernel panic - not syncing: sysrq triggered crash")
def test_panic_is_vm_lost(guest):
    with pytest.raises(VMPanic) as ei:
        guest.run("echo c > /proc/sysrq-trigger; echo not-reached")
    assert isinstance(ei.value, VMLost) and not isinstance(ei.value, AssertionError)
    assert "sysrq triggered crash" in str(ei.value)
    assert "not-reached" not in ei.value.stdout


def test_timeout_is_vm_lost(guest):
    # the debug kernel's guests get longer (Kernel.scaled())
    with pytest.raises(VMTimeout, match=f"no poweroff within {guest.kernel.scaled(15):.0f} s"):
        guest.run("sleep 1000", timeout=15)
