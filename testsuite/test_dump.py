"""`dti dump` on real crashes of a guest (issue 19).

The guest runs dumpcase.SCRIPT (channels of every kind, see there) and
crashes for real with sysrq-c; each path brings its dump to the host:

* the QEMU path: pvpanic pauses the guest and QMP dump-guest-memory
  writes an ELF dump and a kdump-zlib one (QEMU writes that flattened;
  `dti dump` reads the file QEMU wrote);
* the kdump path: a capture kernel loaded with `kexec -p` runs Debian's
  default `makedumpfile -c -d 31` on /proc/vmcore.

On the host, the dynamically linked runtime/build/dti (the one with
libkdumpfile) must recover for every channel exactly the records the
kernel's merged-ts view showed just before the crash, plus those written
after it, in order, nothing invented; without vmlinux or System.map.

test_excerpts_* check that `dti dump --excerpt` of each dump, of all
channels and of each alone, reads as the dump does; DTI_SAVE_EXCERPTS=DIR
keeps the QEMU dump's (runtime/tests/dump-excerpts, the fuzz corpus's
real dumps, come from there).

test_dump_mid_write_nmi floods a channel from every CPU and panics the
guest with an NMI on every vCPU (QMP inject-nmi, unknown_nmi_panic), so
that CPUs stop in the middle of writes: only whole records may come out.

Timings on the reference host: QEMU path ~60 s, kdump path ~60 s,
mid-write ~40 s.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import dumpcase
from dumpcase import Rec, from_json, from_ts
from harness import dump
from dtirec import crec_size, json_record

REPO = Path(__file__).resolve().parent.parent
DTI = REPO / "runtime" / "build" / "dti"
REC_PENDING = 0x10              # DTI_REC_PENDING
MIDWRITE_CHANNEL = "flood"
MIDWRITE_SMP = 4                # more vCPUs than host cores: writers get preempted
FLOOD = re.compile(r"flood (\d+) (\d+)")
# The most records the AFTER ones can have displaced from wrap8k: one
# sub-buffer of the smallest text records ("w0 0\n", 16 bytes each).
MAX_DISPLACED = dumpcase.WRAP_SUBBUF // crec_size(len("w0 0\n"), caller=False)


@pytest.fixture(scope="module")
def dti_dump_tool() -> Path:
    r = subprocess.run(["make", "-C", str(REPO / "runtime")], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"make -C runtime failed:\n{r.stdout[-3000:]}{r.stderr[-3000:]}",
                    pytrace=False)
    return DTI


def run_dti(*args, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run([str(DTI), *map(str, args)], capture_output=True, text=True,
                       timeout=600)
    if check and r.returncode != 0:
        raise AssertionError(f"dti {' '.join(map(str, args))} exited {r.returncode}:\n"
                             f"{r.stderr[-3000:]}")
    return r


def dump_json(path: Path, channel: str) -> list[dict]:
    r = run_dti("dump", path, "--channel", channel, "--format", "json")
    return [json_record(line) for line in r.stdout.splitlines() if line.strip()]


def remove_if_passed(request, failed_before: int, paths) -> None:
    """Dumps are as large as the guest's RAM: keep them only for a look
    at a failure."""
    if request.session.testsfailed == failed_before:
        for p in paths:
            Path(p).unlink(missing_ok=True)


@pytest.fixture(scope="module")
def qemu_crash(request, kernel, build_dir, modules, dti_dump_tool):
    failed = request.session.testsfailed
    res = dump.qemu_dump(dumpcase.SCRIPT, modules=modules, kernel=kernel,
                         build_dir=build_dir)
    yield res, dumpcase.parse_guest_output(res.stdout)
    remove_if_passed(request, failed, res.files.values())


@pytest.fixture(scope="module")
def kdump_crash(request, kernel, build_dir, modules, dti_dump_tool):
    if kernel.foreign:
        pytest.skip(f"the kdump path puts the host's x86-64 kexec and makedumpfile in the "
                    f"guest; {kernel.arch}'s are not packed into its initramfs yet "
                    f"(the QEMU path's dumps of {kernel.arch} are tested)")
    failed = request.session.testsfailed
    res = dump.kdump(dumpcase.SCRIPT, modules=modules, kernel=kernel, build_dir=build_dir)
    yield res, dumpcase.parse_guest_output(res.stdout)
    remove_if_passed(request, failed, [res.vmcore])


def check_live(path: Path, views) -> None:
    """Every live channel: the dump holds what merged-ts showed, plus the
    records written after it, minus only what those overwrote."""
    for ch in dumpcase.LIVE:
        got = [from_json(o) for o in dump_json(path, ch)]
        want = [from_ts(x, binary=(ch == "mid64k")) for x in views[ch]]
        assert want, f"{ch}: the guest's view was empty"
        if ch == dumpcase.AFTER_CHANNEL:
            n = dumpcase.AFTER_RECORDS
            after, got = got[-n:], got[:-n]
            assert [(r.cpu, r.text) for r in after] == \
                [(dumpcase.AFTER_CPU, f"{dumpcase.AFTER_TAG} {i}") for i in range(n)], \
                f"{ch}: the records written after the view are not last: {after}"
            last = max(r.seq for r in want if r.cpu == dumpcase.AFTER_CPU)
            assert [r.seq for r in after] == list(range(last + 1, last + 1 + n))
            displaced = want[:len(want) - len(got)]
            assert len(displaced) <= MAX_DISPLACED and \
                all(r.cpu == dumpcase.AFTER_CPU for r in displaced), \
                f"{ch}: {len(displaced)} records missing, beyond what {n} can overwrite"
            want = want[len(displaced):]
        assert got == want, f"{ch}: {diff(got, want)}"


def diff(got: list[Rec], want: list[Rec]) -> str:
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            return f"first difference at record {i}: dump {g} != view {w}"
    return f"dump has {len(got)} records, the view {len(want)}"


def check_others(path: Path) -> None:
    """The pending store, the destroyed and the unregistered channel."""
    pend = dump_json(path, dumpcase.PENDING)
    assert [o.get("text", "").rstrip("\n") for o in pend] == \
        [f"{dumpcase.PENDING_TAG} {i}" for i in range(dumpcase.PENDING_RECORDS)]
    assert all(o["flags"] & REC_PENDING for o in pend), pend
    assert dump_json(path, dumpcase.GONE) == []
    listing = run_dti("dump", path, "--list").stdout
    names = set(re.findall(r"^\s*(\S+)", listing, re.M))
    for ch in (*dumpcase.LIVE, dumpcase.GONE, dumpcase.PENDING):
        assert ch in names, f"{ch} not in --list:\n{listing}"
    assert dumpcase.UNREGISTERED not in names, listing
    r = run_dti("dump", path, "--channel", dumpcase.UNREGISTERED, check=False)
    assert r.returncode != 0 and dumpcase.UNREGISTERED in r.stderr


def test_qemu_elf_dump(qemu_crash):
    res, views = qemu_crash
    check_live(res.files["elf"], views)
    check_others(res.files["elf"])


def test_qemu_kdump_zlib_dump(qemu_crash):
    """QEMU's own kdump-zlib file (flattened), and its reassembled copy.
    QEMU 7.2 writes an arm64 guest's with 64 KiB blocks for 4 KiB pages,
    which libkdumpfile 0.5.1 cannot decompress (and crashed on): dti dump
    refuses such a file with a message that names the ELF format."""
    res, views = qemu_crash
    for path in (res.files["kdump-zlib-flat"], res.files["kdump-zlib"]):
        block = kdump_block_size(res.files["kdump-zlib"])
        if block != PAGE_SIZE:
            r = run_dti("dump", path, "--list", check=False)
            assert r.returncode == 1 and f"blocks are {block} bytes" in r.stderr and \
                "ELF format" in r.stderr, r
            continue
        check_live(path, views)


PAGE_SIZE = 4096                # Debian's x86-64 and arm64 kernels
DISKDUMP_BLOCK_SIZE_AT = 428    # struct disk_dump_header's block_size (64-bit)


def kdump_block_size(path: Path) -> int:
    """The block size in a kdump-compressed file's header (little-endian)."""
    with open(path, "rb") as f:
        f.seek(DISKDUMP_BLOCK_SIZE_AT)
        return int.from_bytes(f.read(4), "little")
        check_others(path)


def test_kdump_level31_dump(kdump_crash):
    """makedumpfile -c -d 31 keeps relay's pages: they are not page cache,
    not free, not user and not zero pages."""
    res, views = kdump_crash
    with dumpcase.unless_makedumpfile_unsupported(res):
        check_live(res.vmcore, views)
        check_others(res.vmcore)


def test_out_dir_decodes_the_same(qemu_crash, tmp_path):
    res, _ = qemu_crash
    run_dti("dump", res.files["elf"], "--out", tmp_path)
    for ch in ("wrap8k", "mid64k", dumpcase.PENDING):
        dec = run_dti("decode", tmp_path / ch, "--format", "json").stdout
        assert dec.splitlines() == \
            run_dti("dump", res.files["elf"], "--channel", ch, "--format", "json") \
            .stdout.splitlines(), ch



def test_channels_merged_in_one_timeline(qemu_crash):
    """dti dump --channel A,B of a real dump: one timeline, each record of
    the channels read alone, in time order (ties: A's first), text lines
    after their channel's name."""
    res, _ = qemu_crash
    elf = res.files["elf"]
    a, b = "wrap8k", "mid64k"
    alone = [dump_json(elf, ch) for ch in (a, b)]
    both = dump_json(elf, f"{a},{b}")
    want = sorted(alone[0] + alone[1], key=lambda r: int(r["ts_ns"]))
    assert len(alone[0]) > 0 and len(alone[1]) > 0
    assert both == want
    text = run_dti("dump", elf, "--channel", a, "--channel", b, "-F", "text").stdout
    assert [line.split()[0] for line in text.splitlines()] == [r["channel"] for r in want]

def test_damaged_descriptor_skips_only_its_channel(qemu_crash, tmp_path):
    """A flipped bit in wrap8k's descriptor: wrap8k is reported and
    skipped, every other channel still comes out."""
    res, views = qemu_crash
    data = bytearray(res.files["elf"].read_bytes())
    marker = b"__DTI__wrap8k\0"
    hits = [m.start() for m in re.finditer(re.escape(marker), data)]
    assert hits, "no wrap8k marker in the ELF dump"
    for at in hits:             # every copy, wherever the scan may look
        data[at + 60] ^= 0x10   # inside the descriptor, past its marker
    bad = tmp_path / "vmcore.flipped"
    bad.write_bytes(data)
    del data
    r = run_dti("dump", bad, "--list", check=False)
    assert "wrap8k" in r.stdout + r.stderr
    assert re.search(r"^wrap8k .*\n\s+error: .*CRC mismatch", r.stdout, re.M), r.stdout
    r = run_dti("dump", bad, "--channel", "big1m", "--format", "json")
    assert [from_json(json_record(x)) for x in r.stdout.splitlines()] == \
        [from_ts(x) for x in views["big1m"]]


def test_truncated_and_foreign_files(qemu_crash, tmp_path):
    res, _ = qemu_crash
    cut = tmp_path / "vmcore.cut"
    with open(res.files["elf"], "rb") as f:
        cut.write_bytes(f.read(4096))
    r = run_dti("dump", cut, check=False)
    assert r.returncode != 0 and str(cut) in r.stderr, r.stderr
    r = run_dti("dump", "/bin/sh", check=False)
    assert r.returncode != 0 and "/bin/sh" in r.stderr, r.stderr


# Channels whose excerpts are the fuzz corpus's real dumps (runtime/tests/
# dump-excerpts): small rings of every kind, a pending store, destroyed.
EXCERPT_CHANNELS = ("wrap8k", "noover", "h_early", dumpcase.PENDING, dumpcase.GONE)


def check_excerpts(src: Path, tmp_path: Path, keep: str | None = None) -> None:
    """`dti dump --excerpt` of every channel, and of each alone, reads as
    the dump it came from does; the ones of EXCERPT_CHANNELS are copied
    into directory `keep` if given."""
    whole = tmp_path / "all.elf"
    run_dti("dump", src, "--excerpt", whole)
    assert whole.stat().st_size < src.stat().st_size // 2
    assert run_dti("dump", "-q", "--list", whole).stdout == \
        run_dti("dump", "-q", "--list", src).stdout
    assert run_dti("dump", "-F", "json", whole).stdout == \
        run_dti("dump", "-F", "json", src).stdout
    for ch in EXCERPT_CHANNELS:
        one = tmp_path / f"{ch}.elf"
        run_dti("dump", src, "--channel", ch, "--excerpt", one)
        listing = run_dti("dump", "-q", "--list", one).stdout
        assert re.findall(r"^(\S+) ", listing, re.M)[1:] == [ch], listing
        got = run_dti("dump", "-F", "json", "--channel", ch, one).stdout
        assert got == run_dti("dump", "-F", "json", "--channel", ch, src).stdout, ch
        if keep:
            shutil.copy(one, Path(keep) / one.name)


def test_excerpts_qemu_elf(qemu_crash, tmp_path):
    """DTI_SAVE_EXCERPTS=DIR keeps the excerpts there, to renew
    runtime/tests/dump-excerpts (the fuzz corpus's real dumps)."""
    check_excerpts(qemu_crash[0].files["elf"], tmp_path,
                   os.environ.get("DTI_SAVE_EXCERPTS"))


def test_excerpts_kdump_level31(kdump_crash, tmp_path):
    with dumpcase.unless_makedumpfile_unsupported(kdump_crash[0]):
        check_excerpts(kdump_crash[0].vmcore, tmp_path)



def test_save_kdump_beside_a_kdump_dump(kdump_crash, tmp_path):
    """dti save-kdump, as the dti-save-kdump service runs it at the next
    boot, on the real kdump path's dump (makedumpfile -c -d 31 in the
    capture kernel) laid out as kdump-tools saves it: the excerpt beside
    the dump holds every channel, each read the same from either."""
    res = kdump_crash[0]
    with dumpcase.unless_makedumpfile_unsupported(res):
        stamp = tmp_path / "crash" / "202611281600"
        stamp.mkdir(parents=True)
        dumped = stamp / "dump.202611281600"
        os.symlink(res.vmcore, dumped)
        r = run_dti("save-kdump", "--dir", tmp_path / "crash")
        excerpt = stamp / "dti-excerpt.elf"
        assert r.stdout.startswith(f"{excerpt}: ") and excerpt.stat().st_size > 0, r.stdout
        listing = run_dti("dump", "-q", "--list", excerpt).stdout
        names = re.findall(r"^(\S+) ", listing, re.M)[1:]
        assert set(dumpcase.LIVE) <= set(names), listing
        for ch in names:
            assert run_dti("dump", "-F", "json", "--channel", ch, excerpt).stdout == \
                run_dti("dump", "-F", "json", "--channel", ch, dumped).stdout, ch
        assert "no dump without" in run_dti("save-kdump", "--dir", tmp_path / "crash").stdout

MIDWRITE_SCRIPT = dumpcase.PRELUDE + rf"""
if [ -e /proc/sys/kernel/unknown_nmi_panic ]; then echo 1 > /proc/sys/kernel/unknown_nmi_panic; fi
ctl register_sub {MIDWRITE_CHANNEL} 8192 4 7 0
echo "flood {MIDWRITE_CHANNEL} 20000" > $T &
sleep 2
echo "@@FLOODING"
sleep 120
"""


def test_dump_mid_write_nmi(request, kernel, build_dir, modules, dti_dump_tool):
    """Every CPU floods; an NMI on every vCPU panics the guest, so CPUs
    stop wherever they are, in the middle of records too.  The dump must
    hold only whole records: each one's text is intact, and each CPU's
    run of records is unbroken up to its last.  Where QEMU has no NMI to
    inject (arm64's virt machine), QMP's stop halts every vCPU as
    abruptly, and the machine is dumped with no panic at all."""
    stop = {"nmi_on": "@@FLOODING"} if kernel.arch == "x86_64" else {"stop_on": "@@FLOODING"}
    res = dump.qemu_dump(MIDWRITE_SCRIPT, modules=modules, kernel=kernel,
                         build_dir=build_dir, smp=MIDWRITE_SMP, crash="",
                         formats=("elf",), **stop)
    r = run_dti("dump", res.files["elf"], "--channel", MIDWRITE_CHANNEL, "--format", "json")
    assert "damage" not in r.stderr.lower(), r.stderr
    per_cpu: dict[int, list[tuple[int, int]]] = {}
    for line in r.stdout.splitlines():
        o = json_record(line)
        m = FLOOD.fullmatch(o["text"].rstrip("\n"))
        assert m and int(m[1]) == o["cpu"], f"not a whole record: {o}"
        per_cpu.setdefault(o["cpu"], []).append((o["seq"], int(m[2])))
    assert len(per_cpu) == MIDWRITE_SMP, sorted(per_cpu)
    for cpu, recs in per_cpu.items():
        assert len(recs) > 100, f"cpu{cpu}: only {len(recs)} records"
        seqs = [s for s, _ in recs]
        nums = [i for _, i in recs]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), f"cpu{cpu}: seq gap"
        assert nums == list(range(nums[0], nums[0] + len(nums))), f"cpu{cpu}: flood gap"
    res.files["elf"].unlink()
