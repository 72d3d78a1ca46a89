"""The crash utility's `dti` command (runtime/crash/dti.so, issue 19).

The guest runs dumpcase.SCRIPT (channels of every kind, see there) and
crashes with sysrq-c; its dump comes to the host by the QEMU path (ELF,
dump-guest-memory) or the kdump path (makedumpfile -c -d 31).  Then crash
runs in batch mode on it with the guest kernel's vmlinux from Debian's
linux-image-KVER-dbg: `extend dti.so`, `dti`, `dti -c NAME -f json` for
every channel, `dti -d DIR`, each command's output redirected to a file.

The extension shares libdti with `dti dump`, so it must print exactly what
runtime/build/dti prints:
  * `dti -c NAME -f json` is byte for byte `dti dump VMCORE --channel NAME
    --format json`, for every channel, and not empty for the live ones,
    whose last records are those the kernel's merged-ts view showed;
  * `dti` lists the channels byte for byte as `dti dump --list` does (the
    unregistered one not among them), but for the MiB of memory scanned;
  * `dti -d DIR` writes DIR/NAME that `dti decode DIR/NAME --format json`
    decodes to the same bytes again (a channel without buffers: its info
    alone);
  * `dti -c mid64k -f raw > FILE` is `dti dump --format raw` (no message
    in the file);
  * callers in modules are named as the kernel's %pS names them, module
    included (`func+0x1c [module]`), for every record the guest's
    merged-ts view showed too;
  * `dti -x FILE` (every channel) and `dti -c mid64k -x FILE` write the
    very bytes `dti dump --excerpt FILE` writes, and `dti dump FILE` reads
    from them what crash's `dti -c` printed;
  * `dti -m` prints the module table `dti dump --out` saves as
    DIR/NAME/modules, which has the module the records' callers are in;
  * `dti -c wrap8k -L -D DIR` prints what `dti dump --lines -d DIR`
    prints: every caller with its source file and line;
  * an unknown channel is an error naming it; `help dti` works.

Needs crash, zlib1g-dev (crash's defs.h includes zlib.h) and the vmlinux
of the guest kernel: when one is missing the tests are skipped at
collection, unless DTI_CHECK_CRASH=1 (set by `make check-crash`, which
installs them) makes that a failure.
Timings on the reference host: QEMU path ~25 s, kdump path ~50 s (one boot
each; crash ~10 s of it: loading vmlinux, then the scan, under 1 s).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import dumpcase
from dumpcase import from_json, from_ts
from dtirec import parse_merged_ts
from harness import dump
from harness.kernel import KernelNotFound, find_kernel
from dtirec import json_record

REPO = Path(__file__).resolve().parent.parent
EXT_DIR = REPO / "runtime" / "crash"
EXT = REPO / "runtime" / "build" / "crash" / "dti.so"
DTI = REPO / "runtime" / "build" / "dti"
CRASH_DEFS = Path("/usr/include/crash/defs.h")
CRASH_TIMEOUT = 600             # seconds for one crash session
TAIL = 50                       # records of each view checked for in the output
CHANNELS = (*dumpcase.LIVE, dumpcase.GONE, dumpcase.PENDING)
RAW_CHANNEL = "mid64k"          # binary records, also compared in raw format


def vmlinux_for(release: str) -> Path | None:
    """The kernel with debuginfo that Debian's linux-image-RELEASE-dbg installs."""
    for p in (Path(f"/usr/lib/debug/boot/vmlinux-{release}"),
              Path(f"/usr/lib/debug/lib/modules/{release}/vmlinux")):
        if p.is_file():
            return p
    return None


def missing() -> str | None:
    """What this host lacks to run these tests, or None."""
    if not shutil.which("crash"):
        return "crash not installed: apt-get install crash"
    if not CRASH_DEFS.is_file():
        return f"{CRASH_DEFS} missing: apt-get install crash"
    try:
        release = find_kernel().release
    except KernelNotFound:
        return None                     # the kernel fixture says it
    if not vmlinux_for(release):
        return (f"no vmlinux for {release}: "
                f"apt-get install linux-image-{release}-dbg")
    return None


# Looked at once, when collected: skipping costs nothing in make check.
MISSING = missing()
pytestmark = pytest.mark.skipif(
    MISSING is not None and os.environ.get("DTI_CHECK_CRASH") != "1",
    reason=f"{MISSING} (make check-crash installs it)")


@pytest.fixture(scope="module")
def dti_host() -> Path:
    """runtime/build/dti, the host's dti with `dti dump` (libkdumpfile); not
    the dti_tool fixture's static one, made for the guest."""
    r = subprocess.run(["make", "-C", str(REPO / "runtime")], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"make -C runtime failed:\n{r.stdout[-3000:]}{r.stderr[-3000:]}",
                    pytrace=False)
    return DTI


@pytest.fixture(scope="module")
def crash_setup(kernel, dti_host) -> tuple[str, Path]:
    """(crash binary, the guest kernel's vmlinux); builds dti.so."""
    if MISSING:                         # DTI_CHECK_CRASH=1: a failure
        pytest.fail(f"{MISSING} (make check-crash installs it)", pytrace=False)
    r = subprocess.run(["make", "-C", str(EXT_DIR)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"make -C runtime/crash failed:\n{r.stdout[-3000:]}{r.stderr[-3000:]}",
                    pytrace=False)
    return shutil.which("crash"), vmlinux_for(kernel.release)


def run_crash(crash: str, vmlinux: Path, vmcore: Path, commands: list[str],
              cwd: Path) -> str:
    """Run crash in batch mode on `vmcore` with `commands`; its stdout."""
    script = cwd / "crash.in"
    script.write_text("\n".join(["set scroll off", *commands, "quit"]) + "\n")
    r = subprocess.run([crash, "-s", str(vmlinux), str(vmcore), "-i", str(script)],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       cwd=cwd, timeout=CRASH_TIMEOUT)
    (cwd / "crash.out").write_text(r.stdout + r.stderr)
    assert r.returncode == 0, f"crash exited {r.returncode}:\n{r.stdout[-3000:]}{r.stderr[-3000:]}"
    assert "shared object loaded" in r.stdout, f"extend {EXT} failed:\n{r.stdout[-3000:]}"
    return r.stdout


def run_dti(dti: Path, *args) -> str:
    r = subprocess.run([str(dti), *map(str, args)], capture_output=True, text=True,
                       timeout=CRASH_TIMEOUT)
    assert r.returncode == 0, f"dti {' '.join(map(str, args))} exited {r.returncode}:\n" \
                              f"{r.stderr[-3000:]}"
    return r.stdout


def unsymbolled(json_lines: str) -> str:
    """JSON records without their "symbol" fields: crash's dti resolves
    callers through crash's symbol table, dti dump has none to."""
    return re.sub(r',"symbol":"(?:[^"\\]|\\.)*"', "", json_lines)


def listed_names(listing: str) -> set[str]:
    """Channel names of a listing: the first word of each line but the
    header, the summary and the indented ones (what is wrong, notes)."""
    return {line.split()[0] for line in listing.splitlines()[1:-1]
            if line.strip() and not line[0].isspace()}


def caller_module(caller: str) -> str | None:
    """The module of a caller as %pS prints it, "func+0x1c/0x80 [mod]"."""
    m = re.search(r" \[(\w+)\]$", caller)
    return m[1] if m else None


def check_modules_named(ts: str, view) -> None:
    """Callers of crash's `-f ts` are the kernel's %pS of the guest's
    merged-ts view for the same records (crash's has no "/0xsize"), their
    module's name included."""
    kernel = {(x.cpu, x.seq, x.ts_ns): re.sub(r"/0x[0-9a-f]+", "", x.caller, count=1)
              for x in view}
    ours = {(x.cpu, x.seq, x.ts_ns): x.caller for x in parse_merged_ts(ts)}
    both = kernel.keys() & ours.keys()
    assert both and all(caller_module(kernel[k]) for k in both), sorted(kernel.values())[:3]
    differ = [(ours[k], kernel[k]) for k in sorted(both) if ours[k] != kernel[k]]
    assert not differ, f"crash's callers are not the kernel's %pS: {differ[:3]}"


def check_crash_ext(crash_setup, dti: Path, vmcore: Path, views, work: Path,
                    modules: list[Path]) -> None:
    crash, vmlinux = crash_setup
    out = work / "out"
    snap = work / "snap"
    out.mkdir()
    live = dumpcase.LIVE[0]
    # the module the live channel's records come from, and where it was built
    mod = caller_module(views[live][-1].caller)
    ko = next(k for k in modules if k.stem == mod)
    commands = [f"extend {EXT}", f"dti > {out}/list", f"dti -l > {out}/list-l",
                f"help dti > {out}/help",
                *(f"dti -c {ch} -f json > {out}/{ch}.json" for ch in CHANNELS),
                f"dti -c {live} -f ts > {out}/{live}.ts",
                f"dti -c {live} -f json -p info -C 0 > {out}/{live}.p.json",
                f"dti -c {live} -f json -U -0 -e cpu==1 -g w1.5 > {out}/{live}.s.json",
                f"dti -c {RAW_CHANNEL} -f raw > {out}/{RAW_CHANNEL}.raw",
                f"dti -c {dumpcase.UNREGISTERED}", f"dti -d {snap}",
                f"dti -x {out}/all.elf > {out}/all.x",
                f"dti -c {RAW_CHANNEL} -x {out}/one.elf > {out}/one.x",
                f"dti -m > {out}/modules",
                f"dti -c {live} -f json -L -D {ko.parent} > {out}/{live}.lines.json"]
    stdout = run_crash(crash, vmlinux, vmcore, commands, work)

    # the scan ran once for the session, and said so sparingly
    assert stdout.count("scanning") == 1, stdout[-3000:]
    assert f"no channel {dumpcase.UNREGISTERED} in the dump" in stdout, stdout[-3000:]
    assert "DTI" in (out / "help").read_text()

    listing = (out / "list").read_text()
    assert (out / "list-l").read_text() == listing
    names = listed_names(listing)
    # dti dump's filters, the same records; callers through crash's symbols
    for name, args in (("p", ["-p", "info", "-c", "0"]),
                       ("s", ["-U", "-0", "--filter", "cpu==1", "-g", "w1.5"])):
        got = unsymbolled((out / f"{live}.{name}.json").read_text())
        same = got == run_dti(dti, "dump", vmcore, "--channel", live, "-F", "json", *args)
        assert same and got, f"{live}: crash's dti and dti dump {args} differ"
    ts = (out / f"{live}.ts").read_text().splitlines()
    assert ts and all(re.match(r"\[ *\d+\.\d{9}\] cpu\d+ L\d #\S+ [A-Za-z_.][\w.]*\+0x[0-9a-f]+"
                               r"( \[\w+\])?: ", x) for x in ts), ts[:3]
    assert set(CHANNELS) <= names, listing
    assert dumpcase.UNREGISTERED not in names, listing
    # The last line says how much memory was scanned: what crash can read
    # of its memory nodes, what dti dump reads of the file; the rest is libdti's.
    cli = run_dti(dti, "dump", vmcore, "--list").splitlines()
    ours = listing.splitlines()
    assert ours[:-1] == cli[:-1], f"crash's dti and dti dump --list differ:\n{listing}"
    assert ours[-1].split(" in ")[0] == cli[-1].split(" in ")[0] == \
        f"{len(names)} channels", (ours[-1], cli[-1])

    for ch in CHANNELS:
        # crash's has each caller's symbol beside the address (crash's symbols)
        symbolled = (out / f"{ch}.json").read_text()
        got = unsymbolled(symbolled)
        assert not got or '"symbol":"' in symbolled, ch
        same = got == run_dti(dti, "dump", vmcore, "--channel", ch, "--format", "json")
        assert same, f"{ch}: crash's dti and dti dump print different records"
        if ch == dumpcase.GONE:         # no buffers: its info, no records
            assert got == "" and (snap / ch / "info").is_file(), got
            continue
        decoded = run_dti(dti, "decode", snap / ch, "--format", "json")
        same = decoded == got
        assert same, f"{ch}: {snap / ch} decodes to other records"
        if ch in dumpcase.LIVE:
            recs = [from_json(json_record(x)) for x in got.splitlines()]
            want = [from_ts(x, binary=(ch == "mid64k")) for x in views[ch][-TAIL:]]
            assert want and set(want) <= set(recs), \
                f"{ch}: the last records of the guest's view are not in crash's output"
    # binary output, its messages kept out of the file
    raw = subprocess.run([str(dti), "dump", str(vmcore), "--channel", RAW_CHANNEL,
                          "--format", "raw"], capture_output=True, timeout=CRASH_TIMEOUT)
    assert raw.returncode == 0 and raw.stdout, raw.stderr[-3000:]
    assert (out / f"{RAW_CHANNEL}.raw").read_bytes() == raw.stdout, \
        f"{RAW_CHANNEL}: crash's dti -f raw and dti dump --format raw differ"

    pend = [json_record(x) for x in (out / f"{dumpcase.PENDING}.json").read_text().splitlines()]
    assert len(pend) == dumpcase.PENDING_RECORDS, pend

    check_modules_named((out / f"{live}.ts").read_text(), views[live])
    check_excerpts(dti, vmcore, out, work)

    # the module table, as dti dump --out saves it; it has the records' module
    run_dti(dti, "dump", vmcore, "--channel", live, "--out", work / "cli")
    table = (out / "modules").read_text()
    assert table == (work / "cli" / live / "modules").read_text(), table
    assert mod in [x.split()[0] for x in table.splitlines()], table

    # source lines: what dti dump --lines prints, and a line for every caller
    lines = (out / f"{live}.lines.json").read_text()
    assert lines == run_dti(dti, "dump", vmcore, "--channel", live, "-F", "json",
                            "--lines", "-d", ko.parent), f"{live}: crash's dti -L differs"
    recs = [json_record(x) for x in lines.splitlines()]
    assert recs and all(r.get("line") and r.get("module") == mod for r in recs), recs[:2]


def check_excerpts(dti: Path, vmcore: Path, out: Path, work: Path) -> None:
    """crash's `dti -x` writes the bytes `dti dump --excerpt` writes, from
    which `dti dump` reads what crash's `dti -c` printed."""
    for name, args in (("all", []), ("one", ["--channel", RAW_CHANNEL])):
        said = (out / f"{name}.x").read_text()
        assert re.match(rf"^{out}/{name}\.elf: \d+ channels? in \d+ pages ", said), said
        cli = run_dti(dti, "dump", "-q", vmcore, *args, "--excerpt", work / f"cli-{name}.elf")
        assert said.split(" of ")[0].split(": ")[1] == cli.split(" of ")[0].split(": ")[1]
        same = (out / f"{name}.elf").read_bytes() == (work / f"cli-{name}.elf").read_bytes()
        assert same, f"crash's dti -x and dti dump --excerpt {args} wrote different files"
    for ch in CHANNELS:
        got = run_dti(dti, "dump", out / "all.elf", "--channel", ch, "--format", "json")
        assert got == unsymbolled((out / f"{ch}.json").read_text()), \
            f"{ch}: dti dump of crash's excerpt reads other records"
    listed = listed_names(run_dti(dti, "dump", "--list", out / "one.elf"))
    assert listed == {RAW_CHANNEL}, listed
    raw = subprocess.run([str(dti), "dump", str(out / "one.elf"), "--channel", RAW_CHANNEL,
                          "--format", "raw"], capture_output=True, timeout=CRASH_TIMEOUT)
    assert raw.returncode == 0 and raw.stdout == (out / f"{RAW_CHANNEL}.raw").read_bytes()


def test_crash_ext_qemu_elf(crash_setup, guest, modules, dti_host, tmp_path):
    """QEMU's ELF dump (crash finds KASLR's offset from VMCOREINFO)."""
    res = dump.qemu_dump(dumpcase.SCRIPT, guest=guest, modules=modules,
                         formats=("elf",), timeout=guest.timeout)
    views = dumpcase.parse_guest_output(res.stdout)
    check_crash_ext(crash_setup, dti_host, res.elf, views, tmp_path, modules)
    res.elf.unlink()            # passed: the guest's RAM need not stay


def test_crash_ext_kdump(crash_setup, guest, modules, dti_host, tmp_path):
    """makedumpfile -c -d 31: excluded pages are holes crash cannot read."""
    res = dump.kdump(dumpcase.SCRIPT, guest=guest, modules=modules,
                     timeout=guest.timeout)
    views = dumpcase.parse_guest_output(res.stdout)
    with dumpcase.unless_makedumpfile_unsupported(res):
        check_crash_ext(crash_setup, dti_host, res.vmcore, views, tmp_path, modules)
