"""SystemTap tapset (tapset/dti.stp): elaboration tests on the host.

Like SystemTap's own testsuite/buildok: every file in buildok/ must pass
`stap -p2` for the guest kernel (dti.ko installed where stap finds it, see
harness/stap.py).  There is one file per probe alias, printing every
variable its documentation lists; dti-all-probes.stp uses every alias at
once and dti-functions.stp every public function.  The scripts in scripts/
must elaborate too, and scripts/dti-stap must choose the runtime the way
its header says.  No guest is booted here.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from harness.stap import DTI_STAP, TAPSET_DIR

HERE = Path(__file__).resolve().parent
BUILDOK = HERE / "buildok"
SCRIPTS = HERE.parent / "scripts"
TAPSET = TAPSET_DIR / "dti.stp"


def documented_probes() -> dict[str, list[str]]:
    """{probe name: [documented variables]} from the tapset's /** */ blocks."""
    src = TAPSET.read_text()
    out = {}
    for probe, body in re.findall(r"/\*\*\n \* probe (\S+) - .*?\n(.*?)\*/", src, re.S):
        out[probe] = re.findall(r"^ \* @(\w+):", body, re.M)
    return out


def defined_aliases() -> set[str]:
    return set(re.findall(r"^probe (dti\.[\w.]+)\s*=", TAPSET.read_text(), re.M))


def buildok_file(probe: str) -> Path:
    return BUILDOK / ("dti-" + probe.split(".", 1)[1].replace(".", "-") + ".stp")


PROBES = sorted(documented_probes())


def _check(res: subprocess.CompletedProcess, what: str) -> None:
    assert res.returncode == 0, f"stap -p2 {what} failed:\n{res.stdout}\n{res.stderr}"


def test_every_alias_is_documented_and_has_a_buildok_file():
    docs = documented_probes()
    assert set(docs) == defined_aliases()
    for probe, variables in docs.items():
        f = buildok_file(probe)
        assert f.is_file(), f"no buildok test for {probe}: {f}"
        text = f.read_text()
        assert re.search(rf"^probe {re.escape(probe)}\b", text, re.M), f
        missing = [v for v in variables if not re.search(rf",\s*{v}\)", text)]
        assert not missing, f"{f.name} does not print {missing}"


@pytest.mark.parametrize("probe", PROBES)
def test_alias_elaborates(stap, probe):
    """stap -p2 on buildok/dti-<alias>.stp: the alias resolves in dti.ko and
    every documented variable exists.  Each file holds a single alias, so an
    optional (?) alias that resolves to nothing fails ("no probes found")."""
    _check(stap.elaborate(buildok_file(probe)), probe)


@pytest.mark.parametrize("name", ["dti-all-probes.stp", "dti-functions.stp"])
def test_buildok_file(stap, name):
    _check(stap.elaborate(BUILDOK / name), name)


@pytest.mark.parametrize("script,args", [
    ("dti_watch.stp", []),
    ("dti_freeze.stp", ["mychan", "fault [0-9]+"]),
    ("dti_freeze.stp", ["mychan", "fault", "10", "0-3"]),
])
def test_script_elaborates(stap, script, args):
    _check(stap.elaborate(SCRIPTS / script, args=args), f"{script} {args}")


def test_without_dti_debuginfo(stap, kernel):
    """Where stap cannot find dti.ko (here: -r with the build tree, which
    stap then searches for modules, see harness/stap.py), a DTI probe is a
    "no match" error, and `probe dti.record ?` makes it optional."""
    if kernel.flavour == "debug":
        pytest.skip("host-side: needs a build tree without dti.ko, and the debug "
                    "kernel's is where dti.ko is put for stap (Debian's run covers it)")
    env = stap.env()
    r = subprocess.run([str(DTI_STAP), "-r", str(kernel.build_dir), "-p2", "-e",
                        "probe dti.record { println(msg) }"],
                       capture_output=True, text=True, env=env)
    assert r.returncode != 0 and "no match" in r.stderr, r.stderr
    r = subprocess.run([str(DTI_STAP), "-r", str(kernel.build_dir), "-p2", "-e",
                        "probe dti.record ? { println(msg) } probe begin { exit() }"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr


def test_runtime_fix_detection(stap, kernel):
    """dti-stap's detection agrees with the kernel headers: the fix is
    needed exactly when <linux/task_work.h> declares task_work_cancel_func
    and the stock runtime does not know it."""
    hdrs = list(Path(kernel.build_dir).glob("include/linux/task_work.h"))
    src = Path("/lib/modules") / kernel.release / "source" / "include/linux/task_work.h"
    if src.is_file():
        hdrs.append(src)
    assert hdrs, "no task_work.h found for the guest kernel"
    declares = any("task_work_cancel_func" in h.read_text() for h in hdrs)
    runtime_knows = "task_work_cancel_func" in Path(
        "/usr/share/systemtap/runtime/stp_task_work.c").read_text()
    assert stap.runtime_fix_needed() == (declares and not runtime_knows)
    rt = Path(stap.runtime_dir())
    tw = (rt / "stp_task_work.c").read_text()
    if stap.runtime_fix_needed():
        assert rt != Path("/usr/share/systemtap/runtime")
        assert (rt / ".dti-fixed").is_file()
        assert "task_work_cancel_func(task, func)" in tw
        assert not re.search(r"\btask_work_cancel\b", tw)
    else:
        assert rt == Path("/usr/share/systemtap/runtime")


def test_runtime_fix_override(stap):
    env = stap.env()
    for val, want in (("yes", "yes"), ("no", "no")):
        r = subprocess.run([str(DTI_STAP), "--runtime-fix-needed", "-r", stap.kernel.release],
                           capture_output=True, text=True,
                           env={**env, "DTI_STAP_RUNTIME_FIX": val}, check=True)
        assert r.stdout.strip() == want
