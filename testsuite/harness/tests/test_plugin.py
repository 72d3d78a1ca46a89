"""The conftest hooks, checked in an inner pytest run with fake boots (no VM)."""

from pathlib import Path

from harness import kernels
from harness.debugkernel import cache_root

TESTSUITE = Path(__file__).resolve().parents[2]
# Where the debug kernels (DTI_KERNEL=debug) and the matrix's chroots
# (DTI_KERNEL=5.10, newest) are, found before pytester gives the inner
# run a HOME of its own
DEBUG_KERNEL_CACHE = cache_root()
KERNELS_CACHE = kernels.cache_root()

INNER = '''
import pytest
from harness.vm import Boot, VMLost

WARN = "[    2.78] WARNING: CPU: 0 PID: 99 at x.c:16 f+0x2c/0x1000 [m]\\n"
CLEAN = "[    2.71] m: loading out-of-tree module taints kernel.\\n"

def test_clean(guest):
    guest.boots.append(Boot(guest.build_dir / "r1", CLEAN, []))

def test_warn_fails(guest):
    guest.boots.append(Boot(guest.build_dir / "r2", CLEAN + WARN, []))

@pytest.mark.allow_splat(r"WARNING: CPU")
def test_warn_allowed_by_marker(guest):
    guest.boots.append(Boot(guest.build_dir / "r3", WARN, []))

def test_warn_allowed_per_run(guest):
    guest.boots.append(Boot(guest.build_dir / "r4", WARN, [r"x\\.c:16"]))

def test_warn_expected(guest):
    guest.boots.append(Boot(guest.build_dir / "r5", WARN, []))
    guest.expect_splat(r"at x\\.c")

def test_vm_lost(guest):
    guest.boots.append(Boot(guest.build_dir / "r6", "", []))
    raise VMLost("VM lost: no exit marker from the guest")
'''


def test_splat_hook_and_vm_lost_report(pytester, monkeypatch, tmp_path):
    monkeypatch.setenv("DTI_BUILD_DIR", str(tmp_path / "build"))
    monkeypatch.setenv("PYTHONPATH", str(TESTSUITE))
    monkeypatch.setenv("DTI_DEBUG_KERNEL_CACHE", str(DEBUG_KERNEL_CACHE))
    monkeypatch.setenv("DTI_KERNELS_CACHE", str(KERNELS_CACHE))
    pytester.makeconftest((TESTSUITE / "conftest.py").read_text())
    pytester.makepyfile(test_inner=INNER)
    res = pytester.runpytest_subprocess("-v", "-p", "no:cacheprovider")
    res.assert_outcomes(passed=4, failed=2)
    out = res.stdout.str()
    assert "test_warn_fails FAILED" in out
    assert "kernel splat(s) in the guest console" in out
    assert "test_vm_lost VM-LOST" in out
    assert "DTI: VM lost" in out
    res.stdout.fnmatch_lines(["*test_inner.py::test_vm_lost: *VM lost: no exit marker*"])
