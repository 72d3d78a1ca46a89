"""Host-only tests of scripts/dti-stap with a fake stap (no kernel, no VM).

A fake `stap` (STAP) records every argv it gets, prints a -V line the test
controls and, for -p4, fails or succeeds as the test wants.  The stock
runtime (SYSTEMTAP_RUNTIME), the cache (DTI_STAP_CACHE), HOME and the kernel
build directories all live in tmp_path: the real stap, runtime and
~/.cache/dti are never touched.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
DTI_STAP = REPO / "scripts" / "dti-stap"

V48 = "Systemtap translator/driver (version 4.8/0.188, Debian version 4.8-2)"
TW_ERROR = ("stp_task_work.c:107:32: error: passing argument 2 of "
            "'task_work_cancel' from incompatible pointer type\n")

FAKE_STAP = '''#!{python}
import json, os, sys
args = sys.argv[1:]
with open(os.environ["FAKE_STAP_LOG"], "a") as f:
    f.write(json.dumps(args) + "\\n")
if args[:1] in (["-V"], ["--version"]):
    sys.stderr.write(os.environ["FAKE_STAP_VERSION"] + "\\nCopyright (C) Red Hat\\n")
elif "-p4" in args:
    sys.stderr.write(os.environ.get("FAKE_STAP_P4_LOG", ""))
    sys.exit(int(os.environ.get("FAKE_STAP_P4_RC", "0")))
'''

# Enough of SystemTap 4.8's stp_task_work.c for the patch and its check.
TASK_WORK_C = '''\
typedef typeof(&task_work_cancel) task_work_cancel_fn;
#define task_work_cancel (* (task_work_cancel_fn)kallsyms_task_work_cancel)
        kallsyms_task_work_cancel = (void *)kallsyms_lookup_name("task_work_cancel");
\ttwork = task_work_cancel(task, func);
'''

HEADER_NEW = ("struct callback_head *task_work_cancel_func(struct task_struct *,"
              " task_work_func_t);\nbool task_work_cancel(struct task_struct *task,"
              " struct callback_head *cb);\n")
HEADER_OLD = ("struct callback_head *task_work_cancel(struct task_struct *,"
              " task_work_func_t);\n")


class Rig:
    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.runtime = tmp / "runtime"
        self.cache = tmp / "cache"
        self.tapset = tmp / "tapset"
        self.log = tmp / "stap.log"
        files = {
            "stp_task_work.c": TASK_WORK_C,
            "linux/runtime.h": "#define STP_RUNTIME 1\n",
            "transport/transport.c": "int transport;\n",
            "sym.c": "int sym;\n",
        }
        for name, text in files.items():
            (self.runtime / name).parent.mkdir(parents=True, exist_ok=True)
            (self.runtime / name).write_text(text)
        self.tapset.mkdir()
        stap = tmp / "bin" / "stap"
        stap.parent.mkdir()
        stap.write_text(FAKE_STAP.format(python=sys.executable))
        stap.chmod(0o755)
        # Kernels: the fix is needed (new), not needed (old), no header (none).
        self.k = {}
        for name, header in (("new", HEADER_NEW), ("old", HEADER_OLD), ("none", None)):
            b = tmp / f"k-{name}"
            b.mkdir()
            if header:
                (b / "include/linux").mkdir(parents=True)
                (b / "include/linux/task_work.h").write_text(header)
            self.k[name] = str(b)
        home = tmp / "home"
        home.mkdir()
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "STAP": str(stap),
            "SYSTEMTAP_RUNTIME": str(self.runtime),
            "DTI_STAP_CACHE": str(self.cache),
            "DTI_TAPSET_DIR": str(self.tapset),
            "FAKE_STAP_LOG": str(self.log),
            "FAKE_STAP_VERSION": V48,
        }

    def run(self, *args, **env) -> subprocess.CompletedProcess:
        r = subprocess.run([str(DTI_STAP), *args], env={**self.env, **env},
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return r

    def calls(self) -> list:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def stap_argv(self, *args, **env) -> list:
        """Run dti-stap with args; the argv its final exec of stap got."""
        self.log.unlink(missing_ok=True)
        self.run(*args, **env)
        execs = [c for c in self.calls()
                 if c[:1] != ["-V"] and "dti_stap_probe" not in c]
        assert len(execs) == 1, self.calls()
        return execs[0]

    def probes(self) -> int:
        return sum("dti_stap_probe" in c for c in self.calls())

    def runtime_dir(self, **env) -> str:
        return self.run("--runtime-dir", DTI_STAP_RUNTIME_FIX="yes", **env).stdout.strip()

    def fix_needed(self, *args, **env) -> str:
        return self.run("--runtime-fix-needed", *args, **env).stdout.strip()

    def expand(self, args: list) -> list:
        """args with {new}, {old} and {none} replaced by the build directories."""
        out = []
        for a in args:
            for name, b in self.k.items():
                a = a.replace("{%s}" % name, b)
            out.append(a)
        return out

    def probe_memos(self) -> list:
        return sorted(self.cache.glob("probe-*")) if self.cache.exists() else []


@pytest.fixture
def rig(tmp_path):
    return Rig(tmp_path)


def patched_dir(rig: Rig, argv: list) -> str | None:
    """The -R dti-stap added in front of argv (None if it added none)."""
    if argv[:1] == ["-R"]:
        return argv[1]
    return None


# --- the patched runtime copy ------------------------------------------

def test_copy_is_patched_and_reused(rig):
    d = Path(rig.runtime_dir())
    assert d.parent == rig.cache and re.fullmatch(r"runtime-[0-9a-f]{16}", d.name)
    tw = (d / "stp_task_work.c").read_text()
    assert "twork = task_work_cancel_func(task, func);" in tw
    assert 'kallsyms_lookup_name("task_work_cancel_func")' in tw
    assert "typedef typeof(&task_work_cancel_func) task_work_cancel_fn;" in tw
    assert not re.search(r"\btask_work_cancel\b", tw)
    assert (d / ".dti-fixed").is_file()
    for name in ("linux/runtime.h", "transport/transport.c", "sym.c"):
        assert (d / name).read_text() == (rig.runtime / name).read_text()
    assert (rig.runtime / "stp_task_work.c").read_text() == TASK_WORK_C
    # The same runtime and stap: the same copy, not made again.
    (d / "marker").write_text("kept")
    assert rig.runtime_dir() == str(d)
    assert (d / "marker").read_text() == "kept"
    assert len(list(rig.cache.glob("runtime-*"))) == 1
    assert not list(rig.cache.glob(".runtime-*"))


# SystemTap 4.8's own probe context functions, which the context fix patches.
STOCK = Path("/usr/share/systemtap/runtime")
CTX_FILES = ("linux/runtime_context.h", "common_probe_context.h")


def test_context_is_held_with_interrupts_off(rig):
    """On any kernel (old: no task_work fix) the copy's probe context
    functions save interrupts in the context and restore them on release;
    where the kernel needs the task_work fix too, another copy has both.
    A runtime the patch does not apply to, or DTI_STAP_CTX_FIX=no: the
    stock runtime."""
    if not all((STOCK / f).is_file() for f in CTX_FILES):
        pytest.skip("SystemTap 4.8's runtime is not installed")
    for f in CTX_FILES:
        (rig.runtime / f).parent.mkdir(parents=True, exist_ok=True)
        (rig.runtime / f).write_text((STOCK / f).read_text())
    d = rig.run("--runtime-dir", "-r", rig.k["old"]).stdout.strip()
    assert d.startswith(str(rig.cache) + "/")
    ctx = (Path(d) / "linux/runtime_context.h").read_text()
    assert "local_irq_save(flags);" in ctx and "c->dti_irqflags = flags;" in ctx
    assert "local_irq_restore(flags);" in ctx.split("_stp_runtime_entryfn_put_context")[1]
    assert "unsigned long dti_irqflags;" in (Path(d) / "common_probe_context.h").read_text()
    fixed = (Path(d) / ".dti-fixed").read_text()
    assert "interrupts off" in fixed and "task_work" not in fixed
    assert (Path(d) / "stp_task_work.c").read_text() == TASK_WORK_C
    both = rig.run("--runtime-dir", "-r", rig.k["new"]).stdout.strip()
    assert both != d
    assert (Path(both) / "linux/runtime_context.h").read_text() == ctx
    assert "task_work_cancel_func(task, func)" in (Path(both) / "stp_task_work.c").read_text()
    assert rig.run("--runtime-dir", "-r", rig.k["old"],
                   DTI_STAP_CTX_FIX="no").stdout.strip() == str(rig.runtime)
    (rig.runtime / CTX_FILES[0]).write_text(ctx)          # fixed already
    assert rig.run("--runtime-dir", "-r", rig.k["old"]).stdout.strip() == str(rig.runtime)


KPROBES_C = "linux/kprobes.c"


def test_kprobe_fix_modsym(rig):
    """On any kernel the copy's linux/kprobes.c registers a probe on a
    module loaded later by module:symbol, and resolves the name again
    for a probe whose registration failed once it was resolved; turned
    off by DTI_STAP_MODSYM_FIX=no.  A copy is made per patch text: a
    dti-stap whose modsym patch reads otherwise makes its own."""
    if not (STOCK / KPROBES_C).is_file():
        pytest.skip("SystemTap 4.8's runtime is not installed")
    stock = (STOCK / KPROBES_C).read_text()
    if "USE_KALLSYMS_ON_EACH_SYMBOL && kp->addr == 0)\n\t return 4;" not in stock:
        pytest.skip("the installed SystemTap runtime's kprobes.c has not the defect")
    (rig.runtime / KPROBES_C).parent.mkdir(parents=True, exist_ok=True)
    (rig.runtime / KPROBES_C).write_text(stock)
    d = rig.run("--runtime-dir", "-r", rig.k["old"]).stdout.strip()
    kp = (Path(d) / KPROBES_C).read_text()
    assert "&& !stapkp_by_module_symbol(skp))\n\t return 4;" in kp
    assert "if (kp->symbol_name && kp->addr && stapkp_by_module_symbol(skp))\n" \
           "         kp->addr = NULL;" in kp
    assert "if (krp->kp.symbol_name && krp->kp.addr && stapkp_by_module_symbol(skp))\n" \
           "         krp->kp.addr = NULL;" in kp
    assert "module:symbol" in (Path(d) / ".dti-fixed").read_text()
    assert rig.run("--runtime-dir", "-r", rig.k["old"],
                   DTI_STAP_MODSYM_FIX="no").stdout.strip() == str(rig.runtime)
    # A dti-stap whose modsym patch differs (a later version's): a new copy.
    script = rig.tmp / "dti-stap"
    text = DTI_STAP.read_text()
    marker = "+      // leaves both the address and the name set, which register_kprobe()\n"
    assert text.count(marker) == 1
    script.write_text(text.replace(marker, marker.replace("()\n", "() \n")))
    script.chmod(0o755)
    r = subprocess.run([str(script), "--runtime-dir", "-r", rig.k["old"]],
                       env=rig.env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() not in (d, str(rig.runtime))


RELAY_V2 = "transport/relay_v2.c"
PRINT_FLUSH = "print_flush.c"
# SystemTap 5.1's answer to a tail too short for a header (PR31117):
# pad it and reserve again.  Its relay_v2.c still has the line dti-stap's
# patch changes, so the patch applies, but the defect is gone.
FLUSH_51 = """\
        bytes_reserved = _stp_data_write_reserve(hlen+len,
                                                 &entry);
\tif (bytes_reserved > 0 && bytes_reserved < hlen){
\t  memset(entry, 0, bytes_reserved);
\t  bytes_reserved = _stp_data_write_reserve(hlen+len,
\t\t\t\t\t\t   &entry);
\t}
"""


def test_subbuf_tail_left_as_padding(rig):
    """On any kernel the copy's relay transport switches sub-buffer when
    the current one has no room for more than a message header (stock
    4.8 reserves such a tail and leaves it unwritten); DTI_STAP_TAIL_FIX=no,
    a runtime the patch does not apply to, or one whose print_flush.c
    pads such a tail itself (5.1): the stock runtime."""
    if not all((STOCK / f).is_file() for f in (RELAY_V2, PRINT_FLUSH)):
        pytest.skip("SystemTap 4.8's runtime is not installed")
    if (STOCK / PRINT_FLUSH).read_text().count("_stp_data_write_reserve(hlen+len") != 1:
        pytest.skip("the installed SystemTap runtime pads short tails itself (5.1 on): "
                    "this test needs 4.8's, with the defect")
    stock = (STOCK / RELAY_V2).read_text()
    (rig.runtime / RELAY_V2).parent.mkdir(parents=True, exist_ok=True)
    (rig.runtime / RELAY_V2).write_text(stock)
    (rig.runtime / PRINT_FLUSH).write_text((STOCK / PRINT_FLUSH).read_text())
    d = rig.run("--runtime-dir", "-r", rig.k["old"]).stdout.strip()
    assert d.startswith(str(rig.cache) + "/")
    relay = (Path(d) / RELAY_V2).read_text()
    assert "if (buf->offset >= buf->chan->subbuf_size) {" in stock
    assert "if (buf->offset >= buf->chan->subbuf_size) {" not in relay
    assert re.search(r"if \(buf->offset \+ sizeof\(struct _stp_trace\) >=\s+"
                     r"buf->chan->subbuf_size\) \{\n\t\tsize_request = "
                     r"__stp_relay_switch_subbuf", relay)
    fixed = (Path(d) / ".dti-fixed").read_text()
    assert "tail" in fixed and "task_work" not in fixed
    assert rig.run("--runtime-dir", "-r", rig.k["old"],
                   DTI_STAP_TAIL_FIX="no").stdout.strip() == str(rig.runtime)
    (rig.runtime / PRINT_FLUSH).write_text(FLUSH_51)         # fixed otherwise
    r = rig.run("--runtime-dir", "-r", rig.k["old"])
    assert r.stdout.strip() == str(rig.runtime) and not r.stderr
    (rig.runtime / PRINT_FLUSH).write_text((STOCK / PRINT_FLUSH).read_text())
    (rig.runtime / RELAY_V2).write_text(relay)              # defect, no fit
    r = rig.run("--runtime-dir", "-r", rig.k["old"])
    assert r.stdout.strip() == str(rig.runtime)
    assert "does not apply" in r.stderr and "'tail'" in r.stderr


# --- the uprobe fix (Linux 6.12's uprobe_unregister_nosync) ---------------

UPROBES_NEW = ("struct uprobe *uprobe_register(struct inode *inode, loff_t offset,"
               " loff_t ref_ctr_offset, struct uprobe_consumer *uc);\n"
               "void uprobe_unregister_nosync(struct uprobe *uprobe,"
               " struct uprobe_consumer *uc);\nvoid uprobe_unregister_sync(void);\n")
UPROBES_OLD = ("int uprobe_register(struct inode *inode, loff_t offset,"
               " struct uprobe_consumer *uc);\nvoid uprobe_unregister(struct inode *inode,"
               " loff_t offset, struct uprobe_consumer *uc);\n")


def uprobe_patch() -> str:
    """The uprobe patch's text, as dti-stap holds it."""
    text = DTI_STAP.read_text()
    m = re.search(r"^uprobe_patch\(\) \{\n    cat <<'EOF'\n(.*?)^EOF$", text, re.S | re.M)
    assert m, "no uprobe_patch() in dti-stap"
    return m.group(1)


def old_sides(patch: str) -> dict[str, str]:
    """{file: text}: each file's hunks, old side (context and removed
    lines), one after the other: enough of SystemTap 5.1's files for the
    patch to apply, with offsets."""
    files: dict[str, str] = {}
    name = None
    for line in patch.splitlines():
        if line.startswith("--- a/"):
            name = line[6:]
            files[name] = ""
        elif line.startswith(("+++", "@@")):
            continue
        elif name and line[:1] in (" ", "-"):
            files[name] += line[1:] + "\n"
    return files


@pytest.fixture
def uprig(rig):
    """The rig with 5.1-like uprobe files, a kernel with 6.12's uprobes.h
    (k6) and one with 6.1's (k61)."""
    for name, text in old_sides(uprobe_patch()).items():
        (rig.runtime / name).parent.mkdir(parents=True, exist_ok=True)
        (rig.runtime / name).write_text(text)
    for k, header in (("k6", UPROBES_NEW), ("k61", UPROBES_OLD)):
        b = rig.tmp / f"k-{k}"
        (b / "include/linux").mkdir(parents=True)
        (b / "include/linux/uprobes.h").write_text(header)
        rig.k[k] = str(b)
    return rig


def test_uprobe_fix_for_a_kernel_without_uprobe_unregister(uprig):
    d = uprig.run("--runtime-dir", "-r", uprig.k["k6"]).stdout.strip()
    assert d.startswith(str(uprig.cache) + "/")
    assert "#define DTI_STAP_UPROBE_NOSYNC 1" in (Path(d) / "linux/runtime.h").read_text()
    ui = (Path(d) / "linux/uprobes-inode.c").read_text()
    assert "uprobe_register (inst->inode, c->offset, 0, &inst->kconsumer)" in ui
    assert "IS_ERR(inst->uprobe)" in ui
    assert "uprobe_unregister_nosync (inst->uprobe, &inst->kconsumer);" in ui
    assert "uprobe_unregister_sync ();" in ui
    t = (Path(d) / "transport/transport.c").read_text()
    assert t.count("!defined(DTI_STAP_UPROBE_NOSYNC)") == 2
    assert "uprobe_unregister_nosync" in (Path(d) / ".dti-fixed").read_text()
    assert uprig.run("--runtime-dir", "-r", uprig.k["k61"]).stdout.strip() == str(uprig.runtime)
    assert uprig.run("--runtime-dir", "-r", uprig.k["k6"],
                     DTI_STAP_UPROBE_FIX="no").stdout.strip() == str(uprig.runtime)


def test_uprobe_fix_not_for_a_runtime_that_has_it(uprig):
    ui = uprig.runtime / "linux/uprobes-inode.c"
    ui.write_text(ui.read_text() + "/* uprobe_unregister_nosync */\n")
    assert uprig.run("--runtime-dir", "-r", uprig.k["k6"]).stdout.strip() == str(uprig.runtime)


def test_uprobe_fix_that_does_not_apply_is_an_error(uprig):
    (uprig.runtime / "transport/transport.c").write_text("int transport;\n")
    r = subprocess.run([str(DTI_STAP), "-r", uprig.k["k6"], "x.stp"],
                       env=uprig.env, capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "uprobe_unregister_nosync" in r.stderr and "does not apply" in r.stderr
    assert not [c for c in uprig.calls() if c[:1] != ["-V"] and "dti_stap_probe" not in c]


def test_verbose_names_the_fixes(uprig):
    r = uprig.run("-v", "-r", uprig.k["k6"], "x.stp")
    assert "dti-stap: runtime:" in r.stderr and "uprobe_unregister_nosync" in r.stderr
    r = uprig.run("-r", uprig.k["k6"], "x.stp")
    assert "dti-stap:" not in r.stderr
    r = uprig.run("-r", uprig.k["k61"], "-vp4", "x.stp")
    assert "as it is (no fix needed)" in r.stderr


def _edit_file(rig):
    (rig.runtime / "transport/transport.c").write_text("int transport2;\n")


def _edit_runtime_h(rig):
    (rig.runtime / "linux/runtime.h").write_text("#define STP_RUNTIME 2\n")


def _add_file(rig):
    (rig.runtime / "transport/new.h").write_text("")


def _remove_file(rig):
    (rig.runtime / "sym.c").unlink()


def _rename_file(rig):
    (rig.runtime / "sym.c").rename(rig.runtime / "sym2.c")


def _edit_task_work(rig):
    (rig.runtime / "stp_task_work.c").write_text(TASK_WORK_C + "/* 4.8-3 */\n")


@pytest.mark.parametrize("change", [_edit_file, _edit_runtime_h, _add_file,
                                    _remove_file, _rename_file, _edit_task_work])
def test_any_runtime_change_gives_a_new_copy(rig, change):
    first = rig.runtime_dir()
    change(rig)
    second = rig.runtime_dir()
    assert second != first
    # The new copy is of the changed runtime, and patched; the old one stays.
    got = {p.relative_to(second).as_posix() for p in Path(second).rglob("*") if p.is_file()}
    want = {p.relative_to(rig.runtime).as_posix() for p in rig.runtime.rglob("*") if p.is_file()}
    assert got == want | {".dti-fixed"}
    assert "task_work_cancel_func(task, func)" in (Path(second) / "stp_task_work.c").read_text()
    assert (Path(first) / ".dti-fixed").is_file()


def test_stap_version_change_gives_a_new_copy(rig):
    first = rig.runtime_dir()
    assert rig.runtime_dir() == first
    second = rig.runtime_dir(FAKE_STAP_VERSION=V48.replace("4.8-2", "4.8-3"))
    assert second != first
    assert (Path(second) / ".dti-fixed").is_file()
    assert rig.runtime_dir() == first


def test_exec_adds_runtime_and_tapset(rig):
    argv = rig.stap_argv("-r", rig.k["new"], "x.stp", "a", "-")
    d = rig.runtime_dir()
    assert argv == ["-R", d, "-I", str(rig.tapset), "-r", rig.k["new"], "x.stp", "a", "-"]
    argv = rig.stap_argv("-r", rig.k["old"], "-e", "probe begin {}")
    assert argv == ["-I", str(rig.tapset), "-r", rig.k["old"], "-e", "probe begin {}"]


def test_source_tree_tapset_by_default(rig):
    env = dict(rig.env)
    del env["DTI_TAPSET_DIR"]
    rig.env = env
    argv = rig.stap_argv("-r", rig.k["old"], "x.stp")
    assert argv == ["-I", str(REPO / "tapset"), "-r", rig.k["old"], "x.stp"]


# --- which -r / -R count ------------------------------------------------

@pytest.mark.parametrize("args", [
    ["-r", "{new}", "x.stp"],
    ["-r{new}", "x.stp"],
    ["-vr", "{new}", "x.stp"],
    ["-vkr{new}", "x.stp"],
    ["-p4", "-r", "{new}", "-m", "mod", "-e", "probe begin {}", "arg"],
    ["-r", "{old}", "-r", "{new}", "x.stp"],                 # the last -r wins
    ["-r", "{new}", "-c", "rsync -R a b", "x.stp"],          # -c's argument
    ["-r", "{new}", "-o", "-Rout", "x.stp"],                 # -o's argument
    ["-r", "{new}", "-e", "-R", "x"],                        # -e's argument
    ["-r", "{new}", "--tmpdir", "-R", "x.stp"],              # a long option's
    ["--sysroot=/", "-r", "{new}", "x.stp"],
    ["-r", "{new}", "x.stp", "--", "-R", "/mine", "-r{old}"],  # script args
    ["-r", "{new}", "--", "x.stp", "-R", "/mine"],
])
def test_fix_applies(rig, args):
    args = rig.expand(args)
    argv = rig.stap_argv(*args)
    assert patched_dir(rig, argv) == rig.runtime_dir()
    assert argv[4:] == args                     # passed on unchanged


@pytest.mark.parametrize("args", [
    ["-r", "{old}", "x.stp"],
    ["-r", "{new}", "-r", "{old}", "x.stp"],
    ["-o", "-r{new}", "-r", "{old}", "x.stp"],               # -o's argument
    ["-G", "v=1", "-r", "{old}", "-D", "-r{new}", "x.stp"],  # -D's argument
    ["-r", "{old}", "--vp", "-r{new}", "x.stp"],
    ["-r", "{old}", "x.stp", "--", "-r", "{new}"],           # script args
    ["-r", "{old}", "x.stp", "--", "-r{new}"],
])
def test_fix_does_not_apply(rig, args):
    args = rig.expand(args)
    argv = rig.stap_argv(*args)
    assert argv == ["-I", str(rig.tapset), *args]


@pytest.mark.parametrize("args", [
    ["-R", "/mine", "-r", "{new}", "x.stp"],
    ["-R/mine", "-r", "{new}", "x.stp"],
    ["-r", "{new}", "-kR", "/mine", "x.stp"],
])
def test_callers_runtime_wins(rig, args):
    args = rig.expand(args)
    argv = rig.stap_argv(*args)
    assert argv == ["-I", str(rig.tapset), *args]
    assert not rig.cache.exists()


def test_options_after_the_script_count_as_in_stap(rig):
    """stap 4.8 parses with GNU getopt, which permutes: `stap x.stp -r KVER`
    compiles for KVER and `stap x.stp -R DIR` uses DIR (script arguments
    that look like options go after "--").  dti-stap reads them the same way,
    or it would pick the runtime for another kernel than stap builds for."""
    k = rig.k
    argv = rig.stap_argv("x.stp", "-r", k["new"])
    assert argv == ["-R", rig.runtime_dir(), "-I", str(rig.tapset), "x.stp", "-r", k["new"]]
    argv = rig.stap_argv("-r", k["new"], "x.stp", "-r", k["old"])
    assert argv == ["-I", str(rig.tapset), "-r", k["new"], "x.stp", "-r", k["old"]]
    argv = rig.stap_argv("-r", k["new"], "x.stp", "arg", "-R", "/mine")
    assert argv == ["-I", str(rig.tapset), "-r", k["new"], "x.stp", "arg", "-R", "/mine"]


def test_posixly_correct_stops_at_the_script(rig):
    """With POSIXLY_CORRECT getopt (so stap) stops at the first non-option."""
    k = rig.k
    args = ["-r", k["old"], "x.stp", "-r", k["new"], "-Rfoo"]
    assert rig.stap_argv(*args, POSIXLY_CORRECT="1") == ["-I", str(rig.tapset), *args]
    args = ["-r", k["new"], "x.stp", "-r", k["old"], "-rfoo", "-R"]
    argv = rig.stap_argv(*args, POSIXLY_CORRECT="1")
    assert argv == ["-R", rig.runtime_dir(), "-I", str(rig.tapset), *args]


def test_query_modes_read_r(rig):
    assert rig.fix_needed("-r", rig.k["new"]) == "yes"
    assert rig.fix_needed("-r", rig.k["old"]) == "no"
    assert rig.fix_needed("-r" + rig.k["new"]) == "yes"
    assert rig.fix_needed("-r", rig.k["new"], "--", "-r", rig.k["old"]) == "yes"
    assert rig.run("--runtime-dir", "-r", rig.k["old"]).stdout.strip() == str(rig.runtime)
    d = rig.run("--runtime-dir", "-r", rig.k["new"]).stdout.strip()
    assert d == rig.runtime_dir() and d.startswith(str(rig.cache) + "/")


def test_runtime_that_has_the_fix_needs_none(rig):
    (rig.runtime / "stp_task_work.c").write_text(
        TASK_WORK_C.replace("task_work_cancel(task", "task_work_cancel_func(task"))
    assert rig.fix_needed("-r", rig.k["new"]) == "no"
    assert patched_dir(rig, rig.stap_argv("-r", rig.k["new"], "x.stp")) is None


# --- the trivial probe, for kernels without a header ----------------------

def test_probe_task_work_error_is_cached_as_yes(rig):
    none = rig.k["none"]
    assert rig.fix_needed("-r", none, FAKE_STAP_P4_RC="1", FAKE_STAP_P4_LOG=TW_ERROR) == "yes"
    assert rig.probes() == 1
    probe = next(c for c in rig.calls() if "dti_stap_probe" in c)
    assert probe[:2] == ["-r", none] and "-p4" in probe
    memos = rig.probe_memos()
    assert len(memos) == 1 and memos[0].read_text() == "yes\n"
    # Cached: no new compile, even though one would now succeed.
    assert rig.fix_needed("-r", none) == "yes"
    argv = rig.stap_argv("-r", none, "x.stp")
    assert argv[:2] == ["-R", rig.runtime_dir()]
    assert rig.probes() == 0


def test_probe_success_is_cached_as_no(rig):
    none = rig.k["none"]
    assert rig.fix_needed("-r", none) == "no"
    assert rig.probes() == 1
    memos = rig.probe_memos()
    assert len(memos) == 1 and memos[0].read_text() == "no\n"
    argv = rig.stap_argv("-r", none, "x.stp", FAKE_STAP_P4_RC="1", FAKE_STAP_P4_LOG=TW_ERROR)
    assert argv == ["-I", str(rig.tapset), "-r", none, "x.stp"]
    assert rig.probes() == 0


def test_probe_other_failure_is_not_cached(rig):
    none = rig.k["none"]
    bad = {"FAKE_STAP_P4_RC": "1", "FAKE_STAP_P4_LOG": "make: gcc: No such file or directory\n"}
    r = rig.run("--runtime-fix-needed", "-r", none, **bad)
    assert r.stdout == "no\n"
    assert "gcc: No such file or directory" in r.stderr and "not cached" in r.stderr
    assert rig.probe_memos() == []
    argv = rig.stap_argv("-r", none, "x.stp", **bad)
    assert argv == ["-I", str(rig.tapset), "-r", none, "x.stp"]
    assert rig.probes() == 1                    # tried again
    # Once the real answer can be had, it is.
    assert rig.fix_needed("-r", none, FAKE_STAP_P4_RC="1", FAKE_STAP_P4_LOG=TW_ERROR) == "yes"
    assert len(rig.probe_memos()) == 1


def test_probe_answer_is_per_runtime_and_stap(rig):
    none = rig.k["none"]
    assert rig.fix_needed("-r", none) == "no"
    tw = {"FAKE_STAP_P4_RC": "1", "FAKE_STAP_P4_LOG": TW_ERROR}
    assert rig.fix_needed("-r", none, FAKE_STAP_VERSION=V48 + " new", **tw) == "yes"
    _edit_file(rig)
    assert rig.fix_needed("-r", none, **tw) == "yes"
    assert len(rig.probe_memos()) == 3


# --- DTI_STAP_RUNTIME_FIX ---------------------------------------------------

@pytest.mark.parametrize("val", ["no", "0"])
def test_override_no(rig, val):
    assert rig.fix_needed("-r", rig.k["new"], DTI_STAP_RUNTIME_FIX=val) == "no"
    argv = rig.stap_argv("-r", rig.k["new"], "x.stp", DTI_STAP_RUNTIME_FIX=val)
    assert argv == ["-I", str(rig.tapset), "-r", rig.k["new"], "x.stp"]
    argv = rig.stap_argv("-r", rig.k["none"], "x.stp", DTI_STAP_RUNTIME_FIX=val,
                         FAKE_STAP_P4_RC="1", FAKE_STAP_P4_LOG=TW_ERROR)
    assert patched_dir(rig, argv) is None and rig.probes() == 0
    assert not rig.cache.exists()


@pytest.mark.parametrize("val", ["yes", "1"])
def test_override_yes(rig, val):
    assert rig.fix_needed("-r", rig.k["old"], DTI_STAP_RUNTIME_FIX=val) == "yes"
    argv = rig.stap_argv("-r", rig.k["old"], "x.stp", DTI_STAP_RUNTIME_FIX=val)
    d = argv[1]
    assert argv == ["-R", d, "-I", str(rig.tapset), "-r", rig.k["old"], "x.stp"]
    assert "task_work_cancel_func(task, func)" in (Path(d) / "stp_task_work.c").read_text()
    assert rig.probe_memos() == []
