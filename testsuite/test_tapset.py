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

import os
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
    ("dti_freeze.stp", ["mychan", "fault", "10", "warn-info"]),
    ("dti_freeze.stp", []),             # the usage alone
])
def test_script_elaborates(stap, script, args):
    _check(stap.elaborate(SCRIPTS / script, args=args), f"{script} {args}")


def test_without_dti_debuginfo(stap, kernel):
    """Where stap cannot find dti.ko (here: the copy the harness installs
    for stap, kept under another name while the test runs), a DTI probe
    is a "no match" error, and `probe dti.record ?` makes it optional."""
    ko = kernel.stap_module_dir / "dti.ko"
    assert ko.is_file(), f"the stap fixture installs {ko}"
    hidden = ko.with_name("dti.ko.dti-hidden")
    env = stap.env()
    os.replace(ko, hidden)
    try:
        r = subprocess.run(stap.command("-p2", "-e", "probe dti.record { println(msg) }"),
                           capture_output=True, text=True, env=env)
        assert r.returncode != 0 and "no match" in r.stderr, r.stderr
        r = subprocess.run(stap.command("-p2", "-e", "probe dti.record ? { println(msg) } "
                                        "probe begin { exit() }"),
                           capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stderr
    finally:
        os.replace(hidden, ko)


STOCK_RUNTIME = Path(os.environ.get("SYSTEMTAP_RUNTIME", "/usr/share/systemtap/runtime"))


def kernel_header(kernel, name: str) -> str:
    """The text of the guest kernel's include/NAME (build tree or source)."""
    for d in (Path(kernel.build_dir) / "include",
              Path("/lib/modules") / kernel.release / "source" / "include"):
        if (d / name).is_file():
            return (d / name).read_text()
    pytest.fail(f"no {name} found for the guest kernel", pytrace=False)


def test_runtime_fix_detection(stap, kernel):
    """dti-stap's runtime has exactly the fixes the SystemTap in use and
    the guest kernel call for, each read here from the code itself: the
    task_work fix where <linux/task_work.h> declares task_work_cancel_func
    and the runtime does not know it (4.8 on Debian's 6.1); the uprobe fix
    where <linux/uprobes.h> declares uprobe_unregister_nosync and the
    runtime does not know it (5.1 on 6.12); the context fix where the
    runtime takes a probe context with interrupts on (4.8, 5.1); the tail
    fix where print_flush.c reserves a message once (4.8); the module
    symbol fix where kprobes.c leaves a probe its symbol walk did not find
    unregistered (4.8, 5.1).  None: the stock runtime."""
    want = {}
    if ("task_work_cancel_func" in kernel_header(kernel, "linux/task_work.h")
            and "task_work_cancel_func" not in (STOCK_RUNTIME / "stp_task_work.c").read_text()):
        want["task_work_cancel_func"] = "task_work_cancel_func(task, func)"
    uprobes_inode = STOCK_RUNTIME / "linux/uprobes-inode.c"
    if ("uprobe_unregister_nosync" in kernel_header(kernel, "linux/uprobes.h")
            and "uprobe_unregister_nosync" not in uprobes_inode.read_text()):
        want["uprobe_unregister_nosync"] = "uprobe_unregister_nosync (inst->uprobe"
    ctx = (STOCK_RUNTIME / "linux/runtime_context.h").read_text()
    get = ctx[ctx.index("_stp_runtime_entryfn_get_context(void)\n"):]
    if "local_irq_save" not in get[:get.index("\n}\n")]:
        want["interrupts off"] = "c->dti_irqflags = flags;"
    if (STOCK_RUNTIME / "print_flush.c").read_text().count("_stp_data_write_reserve(hlen+len") == 1:
        want["sub-buffer tail"] = "sizeof(struct _stp_trace) >="
    kprobes = (STOCK_RUNTIME / "linux/kprobes.c").read_text()
    if re.search(r"USE_KALLSYMS_ON_EACH_SYMBOL && kp->addr == 0\)\n\s*return 4;", kprobes):
        want["module:symbol"] = "stapkp_by_module_symbol(skp)"
    assert stap.runtime_fix_needed() == ("task_work_cancel_func" in want)
    rt = Path(stap.runtime_dir())
    if not want:
        assert rt == STOCK_RUNTIME
        return
    assert rt != STOCK_RUNTIME
    fixed = (rt / ".dti-fixed").read_text().splitlines()
    assert len(fixed) == len(want), fixed
    code = "".join(f.read_text(errors="replace") for f in rt.rglob("*.[ch]"))
    for marker, line in want.items():
        assert any(marker in f for f in fixed), (marker, fixed)
        assert line in code, line


def test_scripts_options_reach_stap(tmp_path):
    """Each of DTI's three scripts names -DSTP_NO_OVERLOAD in a
    "dti-stap-options:" line, and dti-stap hands it to stap (here `echo`,
    which prints its command line), before the caller's own options; a
    line naming anything but -D or -g is refused, naming it."""
    env = {**os.environ, "STAP": "echo", "DTI_STAP_CACHE": str(tmp_path / "cache")}
    for name in ("dti_watch.stp", "dti_freeze.stp", "dti_inject.stp"):
        r = subprocess.run([str(DTI_STAP), "-p2", str(DTI_STAP.parent / name), "a", "b"],
                           capture_output=True, text=True, env=env, check=True)
        words = r.stdout.split()
        assert "-DSTP_NO_OVERLOAD" in words, (name, r.stdout)
        assert words.index("-DSTP_NO_OVERLOAD") < words.index("-p2"), r.stdout
    bad = tmp_path / "bad.stp"
    bad.write_text("// dti-stap-options: -DX --all-modules\nprobe begin { exit() }\n")
    r = subprocess.run([str(DTI_STAP), str(bad)], capture_output=True, text=True, env=env)
    assert r.returncode != 0 and r.stdout == "", r.stdout
    assert f"{bad}: dti-stap-options: only -DNAME[=VALUE] and -g are taken, not '--all-modules'" \
        in r.stderr, r.stderr


def test_reference_pages_installed_for_every_probe_and_function(tmp_path):
    """`make install-stap` installs a page for every probe alias and every
    public function of the tapset (read here from the .stp files, not from
    the generator), and man finds probe::dti.record there with its values
    and function::dti_log with its synopsis."""
    dest = tmp_path / "root"
    r = subprocess.run(["make", "-s", "-C", str(TAPSET_DIR.parent), "install-stap",
                        f"DESTDIR={dest}", "PREFIX=/usr"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    man3 = dest / "usr/share/man/man3"
    want = set()
    for stp in ("dti.stp", "dti_control.stp"):
        text = (TAPSET_DIR / stp).read_text()
        want |= {f"probe::{n}" for n in re.findall(r"^probe\s+(dti\.\w+)\s*=", text, re.M)}
        want |= {f"function::{n}" for n in re.findall(r"^function\s+(dti_\w+)", text, re.M)}
    have = {p.name.removesuffix(".3stap") for p in man3.glob("*.3stap")}
    assert len(want) > 25 and want == have, (want - have, have - want)
    env = {**os.environ, "MANPATH": str(dest / "usr/share/man"), "MANWIDTH": "200"}
    for topic, expect in (("probe::dti.record", ["probe::dti.record - A channel stored a record",
                                                  "VALUES", "buf_cpu", "CONTEXT"]),
                          ("function::dti_log", ["dti_log:long(name:string, level:long, msg:string)",
                                                 "ARGUMENTS", "DESCRIPTION"])):
        r = subprocess.run(["man", "-w", topic], capture_output=True, text=True, env=env)
        assert r.stdout.strip() == str(man3 / f"{topic}.3stap"), r.stdout + r.stderr
        r = subprocess.run(["man", "-P", "cat", topic], capture_output=True, text=True, env=env)
        assert r.returncode == 0 and all(e in r.stdout for e in expect), r.stdout + r.stderr


def test_runtime_fix_override(stap):
    env = stap.env()
    for val, want in (("yes", "yes"), ("no", "no")):
        r = subprocess.run([str(DTI_STAP), "--runtime-fix-needed", "-r", stap.kernel.release],
                           capture_output=True, text=True,
                           env={**env, "DTI_STAP_RUNTIME_FIX": val}, check=True)
        assert r.stdout.strip() == want
