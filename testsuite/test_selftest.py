"""The kselftest of the debugfs interface (kmod/selftests/, in a kernel
tree tools/testing/selftests/dti/), run in a guest as `make run_tests`
runs it: its program, dtitest.sh, with its test.d beside it, the KTAP lines
read and its exit status checked (the guest's busybox has no make).

* Against dti.ko and a channel of the dti_test client, one registered
  and a handle's: every test passes (`ok`, none skipped), exit 0.
* Without DTI (no dti.ko loaded, `modprobe dti` finds none) or without a
  channel, it skips as a whole: "1..0 # SKIP", exit 4 (KSFT_SKIP).
* A test that fails is `not ok`, with its output as diagnostics, and
  the program exits 1.
* Installed as a kernel tree installs it (`make -C tools/testing/selftests
  TARGETS=dti install`, with the kselftest runner of Debian's
  linux-source-6.12 and the guest's busybox, given /dev/stdout and no
  timeout(1)), run_kselftest.sh reports "ok 1 selftests: dti: dtitest.sh",
  dtitest.sh's own lines nested, and exits 0.

About 40 s per test on the reference host.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from guestlib import PRELUDE

SELFTESTS = Path(__file__).resolve().parent.parent / "kmod" / "selftests"
KERNEL_SOURCE = Path("/usr/src/linux-source-6.12.tar.xz")
# What `make -C tools/testing/selftests install` needs of a kernel tree
KSFT_MEMBERS = ("tools/testing/selftests/Makefile", "tools/testing/selftests/lib.mk",
                "tools/testing/selftests/run_kselftest.sh",
                "tools/testing/selftests/kselftest/", "scripts/subarch.include")
GUEST_DIR = "/selftests/dti"
KSFT_SKIP = 4

# Runs dtitest.sh, then prints its exit status on a line of its own.
RUN = f"""
set +e
sh {GUEST_DIR}/dtitest.sh
echo "dtitest-rc=$?"
"""


def n_tests() -> int:
    return len(list((SELFTESTS / "test.d").glob("*.tc")))


def ktap(stdout: str) -> tuple[list[str], int]:
    """The result lines of dtitest.sh's KTAP output and its exit status."""
    m = re.search(r"^dtitest-rc=(\d+)$", stdout, re.M)
    assert m, stdout
    results = re.findall(r"^((?:not )?ok \d+ .*)$", stdout, re.M)
    return results, int(m.group(1))


def run_selftest(guest, script: str, extra: dict | None = None, after: str = ""):
    files = {str(SELFTESTS): GUEST_DIR, **(extra or {})}
    res = guest.run(script + RUN + after, extra_files=files)
    assert res.rc == 0, res.stdout
    return res


def test_selftest_passes_on_dti_ko(dti_guest):
    res = run_selftest(dti_guest, PRELUDE + """
        ctl register_sub ksft 65536 8 3 0
        export DTI_CHANNEL=ksft
    """)
    results, rc = ktap(res.stdout)
    assert "TAP version 13" in res.stdout
    assert f"1..{n_tests()}" in res.stdout
    assert len(results) == n_tests(), res.stdout
    bad = [r for r in results if not r.startswith("ok ") or "# SKIP" in r]
    assert not bad, res.stdout
    assert rc == 0, res.stdout
    assert f"# Totals: pass:{n_tests()} fail:0" in res.stdout


def test_selftest_on_a_handle(dti_guest):
    """Without DTI_CHANNEL it takes the first channel there is: here a
    handle's (dti_test's h_demand), whose buffers come with a record."""
    res = run_selftest(dti_guest, PRELUDE + """
        first=$(ls -d $D/*/ | head -n 1)
        echo "first=$(basename $first)"
    """)
    results, rc = ktap(res.stdout)
    first = re.search(r"^first=(\S+)$", res.stdout, re.M).group(1)
    assert first == "h_demand"
    assert "# channel h_demand" in res.stdout
    assert len(results) == n_tests(), res.stdout
    assert all(r.startswith("ok ") and "# SKIP" not in r for r in results), res.stdout
    assert rc == 0, res.stdout


def test_selftest_skips_without_dti(guest):
    # No dti.ko in the guest's module tree for `modprobe dti`.
    res = run_selftest(guest, "")
    results, rc = ktap(res.stdout)
    assert rc == KSFT_SKIP, res.stdout
    assert re.search(r"^1\.\.0 # SKIP no /sys/kernel/debug/dti", res.stdout, re.M), res.stdout
    assert not results


def test_selftest_skips_without_a_channel(dti_guest):
    res = run_selftest(dti_guest, "insmod $DTI_MODDIR/dti.ko\n")
    results, rc = ktap(res.stdout)
    assert rc == KSFT_SKIP, res.stdout
    assert re.search(r"^1\.\.0 # SKIP no DTI channel", res.stdout, re.M), res.stdout


def test_selftest_reports_a_failure(dti_guest, tmp_path):
    """A test that fails is `not ok` with its output, the exit status 1,
    and the channel's level is put back after it."""
    bad = tmp_path / "99-fails.tc"
    bad.write_text("# description: a test that fails\n"
                   "echo 0 > \"$D/level\"\n"
                   "fail \"on purpose\"\n")
    res = run_selftest(dti_guest, PRELUDE + """
        ctl register_sub ksft 65536 8 5 0
        export DTI_CHANNEL=ksft
    """, {str(bad): f"{GUEST_DIR}/test.d/99-fails.tc"},
        "echo level-after=$(cat /sys/kernel/debug/dti/ksft/level)\n")
    results, rc = ktap(res.stdout)
    assert rc == 1, res.stdout
    assert results[-1] == f"not ok {n_tests() + 1} a test that fails", res.stdout
    assert "# FAIL: on purpose" in res.stdout
    assert all(r.startswith("ok ") for r in results[:-1]), res.stdout
    assert f"# Totals: pass:{n_tests()} fail:1" in res.stdout
    assert "level-after=5" in res.stdout, res.stdout


def kselftest_tree(build_dir: Path) -> Path:
    """The kselftest framework of Debian's linux-source-6.12 (cached),
    with kmod/selftests as its dti/: a tree's tools/testing/selftests."""
    if not KERNEL_SOURCE.is_file():
        pytest.skip(f"no {KERNEL_SOURCE}: apt-get install linux-source-6.12")
    top = build_dir / "kselftest-6.12"
    if not (top / "tools/testing/selftests/kselftest/runner.sh").is_file():
        tmp = build_dir / "kselftest-6.12.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        with tarfile.open(KERNEL_SOURCE) as tar:
            prefix = tar.next().name.split("/")[0] + "/"
            tar.extractall(tmp, members=[
                m for m in tar if m.name.startswith(prefix) and
                any(m.name[len(prefix):].startswith(k) for k in KSFT_MEMBERS)])
        shutil.rmtree(top, ignore_errors=True)
        (tmp / prefix).rename(top)
        shutil.rmtree(tmp)
    dti = top / "tools/testing/selftests/dti"
    shutil.rmtree(dti, ignore_errors=True)
    shutil.copytree(SELFTESTS, dti)
    return top / "tools/testing/selftests"


def test_run_kselftest(dti_guest, build_dir, tmp_path):
    ksft = kselftest_tree(build_dir)
    out = tmp_path / "kselftest"
    # kselftest's install copies with rsync (lib.mk): .ci/install-deps has it.
    inst = subprocess.run(["make", "-s", "-C", str(ksft), "TARGETS=dti", "install",
                           f"INSTALL_PATH={out}"], capture_output=True, text=True)
    assert inst.returncode == 0, f"kselftest install failed:\n{inst.stderr}"
    assert (out / "kselftest-list.txt").read_text().split() == ["dti:dtitest.sh"]
    res = dti_guest.run(PRELUDE + """
        ctl register_sub ksft 65536 8 3 0
        export DTI_CHANNEL=ksft
        # What runner.sh takes for granted: /dev/stdout, and a timeout(1)
        # with --foreground, which busybox's lacks (without one it runs
        # the test as it is).
        [ -e /dev/stdout ] || ln -s /proc/self/fd/1 /dev/stdout
        rm -f /usr/bin/timeout
        set +e
        /kselftest/run_kselftest.sh
        echo "kselftest-rc=$?"
    """, extra_files={str(out): "/kselftest"})
    assert res.rc == 0, res.stdout
    assert re.search(r"^ok 1 selftests: dti: dtitest.sh$", res.stdout, re.M), res.stdout
    assert "kselftest-rc=0" in res.stdout, res.stdout
    nested = re.findall(r"^# ((?:not )?ok \d+ .*)$", res.stdout, re.M)
    assert len(nested) == n_tests(), res.stdout
    assert all(r.startswith("ok ") and "# SKIP" not in r for r in nested), res.stdout
