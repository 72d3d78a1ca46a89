"""The README's front page: short, leading with the SystemTap jobs, and
every command it shows run here.

The commands of each tour (the indented lines between `<!-- tour: NAME -->`
and `<!-- end of tour -->`) are run as the README shows them, in a guest
with the sample driver (the SystemTap and driver tours) or on the host
against a dump of one (the support tour), translated only where the
guest differs from an installed system: `modprobe M` loads the build's
M.ko, `dti-stap SCRIPT ARGS` runs the module the host compiled with
those arguments (a script started in the background is waited for until
its probes fire, as a user waits for its first line), and VMCORE names
the dump.  A command outside the tours is `make demo` or `make check`,
which .ci/run runs, or a `dti-stap -e` script, which runs here too.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

from guestlib import PRELUDE_FUNCS, WARM, start_stap
from harness import dump
from harness.stap import staprun_cmd

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
TOUR = re.compile(r"^<!-- tour: (\w+) -->\n(.*?)^<!-- end of tour -->", re.S | re.M)
FRONT_PAGE_MAX_LINES = 300
# What a script started in the background prints first, by script.
READY = {"dti_watch.stp": "dti_watch: watching", "dti_freeze.stp": "dti_freeze: channel",
         "dti_inject.stp": "dti_inject: "}


WARM_UP = """
[ -d $D/stapwarm ] || ctl register stapwarm 16384 7
n=0
until grep -q stapwarm {out} 2>/dev/null; do
    n=$((n + 1)); [ $n -lt 600 ] || {{ echo "probes never fired" >&2; exit 9; }}
    ctl printk stapwarm 0 1 -1 process warm
    sleep 0.1
done
"""


def commands(block: str) -> list[str]:
    """The shell lines of an indented block, comments left out."""
    out = []
    for line in block.splitlines():
        if line.startswith("    ") and line.strip() and not line.strip().startswith("#"):
            out.append(line.strip())
    return out


def tours() -> dict[str, list[str]]:
    return {m[1]: commands(m[2]) for m in TOUR.finditer(README.read_text())}


def untoured_commands() -> list[str]:
    """Indented command lines of the front page outside the tours and the
    C example."""
    text = TOUR.sub("", README.read_text())
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return commands(text)


def test_front_page_is_short_and_leads_with_the_three_jobs():
    text = README.read_text()
    heads = re.findall(r"^## (.+)$", text, re.M)
    assert len(text.splitlines()) < FRONT_PAGE_MAX_LINES
    assert heads[:3] == ["Two commands", "The three jobs, with SystemTap (five minutes)",
                         "For a driver author (five minutes)"], heads
    assert set(tours()) == {"systemtap", "driver", "support"}
    for link in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (REPO / link).is_file(), link


def test_commands_outside_the_tours_are_run_by_ci_or_here():
    ci = (REPO / ".ci" / "run").read_text()
    for cmd in untoured_commands():
        if cmd.startswith("make "):
            target = cmd.split("#")[0].split()[1]
            assert re.search(rf"^\s*(\S+=\S+\s+)*(step\s+)?make( --\S+)* {target}\b", ci,
                             re.M), \
                f"README shows `{cmd}`, which .ci/run does not run"
        else:
            assert cmd.startswith("dti-stap -e "), f"README shows `{cmd}`, which no test runs"


def _compile(stap, words: list[str], sample_ko: Path, n: int):
    """The module `dti-stap WORDS` builds, and its -G settings."""
    params, args, script = [], [], None
    i = 0
    while i < len(words):
        w = words[i]
        if w == "-G":
            params.append(words[i + 1])
            i += 2
            continue
        if w == "-e":
            script = words[i + 1]
            i += 2
            continue
        if script is None:
            script = REPO / w
        else:
            # the sample driver is where an installed system's stap finds it
            args.append(w.replace('module("dti_sample")', f'module("{sample_ko}")'))
        i += 1
    mod = stap.compile(script, name=f"tour{n}", opts=["-E", WARM], args=args)
    return mod, params, script


def _guest_script(lines: list[str], stap, modules) -> tuple[str, dict]:
    sample_ko = next(m for m in modules if m.name == "dti_sample.ko")
    sh, files = [], {}
    for n, line in enumerate(lines):
        if line.startswith("modprobe "):
            name = line.split()[1]
            sh.append(f"insmod $DTI_MODDIR/{name}.ko")
            if name == "dti":
                # the warm-up channel start_stap() writes to, by dti_test
                sh.append("insmod $DTI_MODDIR/dti_test.ko" + PRELUDE_FUNCS)
            continue
        if not line.startswith("dti-stap "):
            sh.append(line)
            continue
        background = line.endswith("&")
        words = shlex.split(line.rstrip("&").strip())[1:]
        mod, params, script = _compile(stap, words, sample_ko, n)
        files.update(stap.guest_files(mod))
        out = f"/out/tour{n}.txt"
        ready = READY.get(Path(str(script)).name) if isinstance(script, Path) else None
        if background and ready:
            sh.append(start_stap(mod, out, ready=ready, params=" ".join(params)))
        elif background:
            # a script that prints nothing of its own first: its probes
            # firing on the warm-up channel say it runs
            sh.append(f"{staprun_cmd(mod, *params, opts=f'-o {out}')} &")
            sh.append(WARM_UP.format(out=out))
        else:
            sh.append(f"{staprun_cmd(mod, *params)} > {out}")
    return "\n".join(sh) + "\n", files


def _tour_output(res, n: int) -> str:
    return (res.outdir / f"tour{n}.txt").read_text()


def test_systemtap_and_driver_tours(tapset_guest, stap, modules):
    """The SystemTap tour's three jobs on the sample driver, then the
    driver author's commands, and the `dti-stap -e` one-liner, as the
    README shows them: the watch's summary counts the driver's records,
    the freeze leaves the channel off two records after the timeout, the
    injected ds_finish records are in the channel."""
    t = tours()
    lines = t["systemtap"] + t["driver"]
    extra = [c for c in untoured_commands() if c.startswith("dti-stap -e ")]
    assert extra, "the front page's dti-stap -e example is gone"
    lines += [f"{extra[0]} &", "echo 3 > /sys/kernel/debug/dti_sample/submit", "sleep 5",
              "kill -INT $!", "wait"]
    script, files = _guest_script(lines, stap, modules)
    res = tapset_guest.run("exec > /out/stdout.txt 2>&1\n" + script, smp=2, timeout=900,
                           extra_files=files).check()
    outs = {n: _tour_output(res, n) for n, line in enumerate(lines)
            if line.startswith("dti-stap ")}
    watch, freeze, inject, oneliner = outs.values()
    stdout = (res.outdir / "stdout.txt").read_text()
    assert "=== dti_watch summary" in watch, watch
    assert re.search(r"^total channel=dti_sample cpu=\d+ level=\d+ records=[1-9]", watch, re.M)
    assert "dti_freeze: FROZEN channel=dti_sample after=2 records=2" in freeze, freeze
    assert "controller reset after req" in stdout, stdout
    m = re.search(r"^dti_inject: (\d+) logged, 0 filtered by level, 0 failed$", inject, re.M)
    assert m and int(m[1]) > 0, inject
    assert re.search(rf"^{m[1]}$", stdout, re.M), stdout      # grep -c '^ds_finish '
    assert re.search(r"^dti_sample cpu\d+ \S+ ", oneliner, re.M), oneliner
    # the driver tour: the listing, the level, and the snapshot decoded
    assert re.search(r"^dti_sample +6 \(info\) ", stdout, re.M), stdout
    assert "Traceback" not in stdout and "usage:" not in stdout, stdout


def test_support_tour(guest, kernel, build_dir, modules, dti_tool, tmp_path):
    """The support engineer's commands on a dump of a guest that ran the
    sample driver and crashed: every command succeeds, the channel is
    listed, its records read from the dump, from its snapshot directory
    and from the excerpt."""
    sample = """
        insmod $DTI_MODDIR/dti.ko
        insmod $DTI_MODDIR/dti_sample.ko
        echo 20 > /sys/kernel/debug/dti_sample/submit
        sleep 2
        echo logged
    """
    res = dump.qemu_dump(sample, guest=guest, modules=modules, kernel=kernel,
                         build_dir=build_dir, formats=("elf",), timeout=guest.timeout)
    assert "logged" in res.stdout and res.elf
    outputs = []
    try:
        for cmd in tours()["support"]:
            cmd = cmd.replace("VMCORE", shlex.quote(str(res.elf)))
            cmd = cmd.replace("/tmp/", f"{tmp_path}/")
            r = subprocess.run(["sh", "-ec", f"PATH={dti_tool.parent}:$PATH; {cmd}"],
                               capture_output=True, text=True)
            assert r.returncode == 0, (cmd, r.stdout, r.stderr)
            outputs.append(r.stdout)
    finally:
        res.elf.unlink(missing_ok=True)
    listing, records, _, decoded, _, excerpt_listing = outputs
    assert "dti_sample" in listing and "dti_sample" in excerpt_listing
    assert len(records.splitlines()) == 3 and len(decoded.splitlines()) == 3, (records, decoded)
