"""dti.ko's persistent region and persistent channels (issue 21).

* A range that is not reserved RAM is refused at load, with a message
  that says why and how to reserve it: ordinary RAM, a range the memory
  map does not call reserved, one it calls reserved only in part, a
  misaligned one, a value that does not parse, a reserve_mem= name the
  kernel does not have (or, before 6.11, any name).
* A reserve_mem= region, given by name (issue 40, item 4), on kernels
  that find such regions by name: records survive a reset in it as in a
  memmap= range.
* Reset survival: a guest booted with memmap= logs from every CPU into
  two persistent channels (one registered with DTI_F_PERSIST, one a
  DEFINE_DTI_PERSIST_HANDLE handle) and one ordinary channel, then
  resets with sysrq-b (at once, no notifier).  In the same QEMU process
  the next boot's dti.ko shows both persistent channels' records under
  .previous/NAME/, exactly as the first boot's merged views showed them,
  and nothing of the ordinary channel.  Registered again, the channel
  writes fresh space: the previous records stay as they were.
* The same after a panic with panic=1.
* Damage: part of the region is overwritten before the reset.  The
  damaged sub-buffer and records are counted and left out; every other
  record is there; nothing crashes.
* A write to clear releases the records: the directory goes, and the
  boot after does not show them again.
* Forged regions: the area a channel wrote is rewritten the way an
  attacker or a wild write would (sub-buffer numbers near 2^64 or
  around SIZE_MAX / 2, random numbers, area and slot fields under a
  good CRC, sub-buffer and record headers, random bytes), and each
  load of dti.ko finishes and its files read.
* Stale records: boot N-2's records, in the area boot N writes, are not
  shown after a reset even where boot N's sub-buffer header counts more
  records than reached RAM: the area is zeroed when a boot takes it.
* `dti dump` finds the region in a QEMU dump of the boot after a reset:
  the dumped boot's rings are the channel's, the previous boot's are
  channels NAME@boot1, exactly the records that boot showed, also in an
  excerpt of the dump.

Timings on the reference host: ~10 s for the refusals, ~30 s per test
with a reset, ~90 s for the dump.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from dtirec import crec_layout, json_record, parse_merged_ts
from guestlib import persist_prelude
from harness import dump, initramfs, kernels, vm

GUEST_MEM = 1024                        # MiB: the region lies below its end
REGION_BASE = 0x30000000
REGION = "16M@0x30000000"
MEMMAP = "memmap=16M$0x30000000"
PERSIST = "/sys/kernel/debug/dti/.persist"
PREV = "/sys/kernel/debug/dti/.previous"
SMP = 4

REFUSE_SCRIPT = r"""
try_load() {
    if insmod $DTI_MODDIR/dti.ko persist=$1 2>/dev/null; then
        echo "@@LOADED $1"; rmmod dti
    else
        echo "@@REFUSED $1"
    fi
}
try_load 16M@0x10000000
try_load 16M@0x7f000000
try_load 16M@0x30000800
try_load 16M@0x3f800000
try_load 16Mx@zz
try_load nosuchregion
dmesg | grep "dti: persist=" | sed 's/^\[[^]]*\] /@@MSG /'
"""


# The tests that need no memmap= (reserve_mem= is every architecture's)
NO_MEMMAP = {"test_records_survive_reset_in_a_reserve_mem_region"}


@pytest.fixture(autouse=True)
def _memmap_is_x86s(request, kernel):
    """memmap=SIZE$ADDR is x86's (arch/x86's e820 reads it): on another
    architecture the tests that reserve their region with it, at fixed
    x86 guest addresses, are skipped by name."""
    if kernel.arch != "x86_64" and request.node.originalname not in NO_MEMMAP:
        pytest.skip(f"memmap= is x86-only: on {kernel.arch} persistence takes "
                    "reserve_mem= (6.11 and later), "
                    "test_records_survive_reset_in_a_reserve_mem_region")


def reserve_mem_by_name() -> bool:
    """Whether the dti.ko built for the kernel under test finds reserve_mem=
    regions by name (its feature test, kmod/dti_conf.h)."""
    conf = Path(__file__).resolve().parent.parent / "kmod" / "dti_conf.h"
    return kernels.conf_features(conf).get("DTI_HAVE_RESERVE_MEM_FIND_BY_NAME", False)


def test_wrong_range_is_refused(modules, kernel, build_dir):
    """With only the last 8 MiB of RAM reserved: RAM the kernel uses, a
    range beyond it, a misaligned one, one whose first half is those 8
    MiB and whose second lies past the end of RAM, garbage, and a name
    no reserve_mem= gave are all refused."""
    res = vm.run(REFUSE_SCRIPT, modules=modules, kernel=kernel, build_dir=build_dir,
                 mem=GUEST_MEM, append="memmap=8M$0x3f800000").check()
    out = res.stdout
    for arg in ("16M@0x10000000", "16M@0x7f000000", "16M@0x30000800", "16M@0x3f800000",
                "16Mx@zz", "nosuchregion"):
        assert f"@@REFUSED {arg}" in out, out
    msgs = re.findall(r"^@@MSG (.*)$", out, re.M)
    assert any("16M@0x10000000: the range is RAM the kernel uses; reserve it first: "
               "memmap=0x1000000$0x10000000" in m for m in msgs), msgs
    assert any("16M@0x7f000000: the memory map does not say the range is reserved" in m
               for m in msgs), msgs
    assert any("16M@0x30000800: the region (16777216 bytes at 0x0000000030000800) must start "
               "and end on a page boundary" in m for m in msgs), msgs
    assert any("16M@0x3f800000: the memory map says only the first 8388608 bytes of the "
               "range are reserved" in m and "memmap=0x1000000$0x3f800000" in m
               for m in msgs), msgs
    assert any("persist=16Mx@zz: not SIZE@ADDR" in m for m in msgs), msgs
    if reserve_mem_by_name():
        want = "nosuchregion: no reserve_mem= region of that name; set one aside"
    else:
        want = "nosuchregion: this kernel cannot find reserve_mem= regions by name"
    assert any(want in m for m in msgs), msgs


# Every boot starts with guestlib.persist_prelude()'s shell.  `digest DIR` prints, for the merged
# views in DIR, the number of lines and an md5 of merged and of merged-ts
# with the caller left out (a live view prints it as a symbol, the
# previous boot's view as an address, as this boot's symbols do not apply).

# First boot: every CPU floods the persistent channel pa (wrapping its
# rings) and the ordinary channel; the handle h_persist and pb get
# records of their own.
LOG_AND_RESET = r"""
if [ "$BOOTNO" = 1 ]; then
    ctl register_sub pa 2048 8 7 2
    ctl register_sub pb 4096 4 7 2
    ctl register plain 65536 7
    ctl handle_init h_persist
    ctl flood pa 300
    ctl flood plain 100
    ctl printk pb 3 50 -1 process pb
    # The handle's buffers come from a work item after its first record.
    ctl hprintk h_persist 3 1 first
    n=0
    until [ -e $D/h_persist/merged ] || [ $n -gt 100 ]; do sleep 0.1; n=$((n+1)); done
    ctl hprintk h_persist 3 40 hp
    for c in pa pb h_persist plain; do digest $D/$c $c; done
    DAMAGE
    sync
    DRAIN
    RESET
fi
"""

SECOND_BOOT = rf"""
ls {PREV} | tr '\n' ' ' | sed 's/^/@@PREVIOUS /; s/$/\n/'
for c in $(ls {PREV}); do
    digest {PREV}/$c $c
    echo "@@STATUS $c $(tr '\n' ' ' < {PREV}/$c/status)"
done
"""


def boot_twice(modules, kernel, build_dir, *, reset="echo b > /proc/sysrq-trigger",
               damage="", second="", append="", dti_tool=None, region=REGION,
               memmap=MEMMAP):
    script = (persist_prelude(region, PERSIST) + LOG_AND_RESET.replace("DAMAGE", damage or ":")
              .replace("DRAIN", initramfs.DRAIN_OUTPUT).replace("RESET", reset)
              + SECOND_BOOT + second)
    res = vm.run(script, modules=modules, kernel=kernel, build_dir=build_dir,
                 extra_files={str(dti_tool): "/bin/dti"} if dti_tool else None,
                 mem=GUEST_MEM, smp=SMP, append=f"{memmap} {append}".strip(),
                 reboot=True, timeout=600)
    res.check()
    # Each boot's lines from the console and from the output device, which
    # keeps both boots' (the console can lose the last lines before
    # sysrq-b resets: the UART's buffer goes with the machine).
    first, _, last = res.console.partition("@@BOOT 2")
    out_first, _, out_last = res.stdout.partition("@@BOOT 2")
    digests = [{}, {}]
    for i, text in enumerate((first + "\n" + out_first, last + "\n" + out_last)):
        for name, n, m, t in re.findall(r"^@@DIGEST (\S+) (\d+) (\w+) (\w+)", text, re.M):
            digests[i][name] = (int(n), m, t)
    status = {}
    for name, fields in re.findall(r"^@@STATUS (\S+) (.*)$", res.stdout, re.M):
        status[name] = dict(re.findall(r"(\w+): (\S+)", fields))
    prev = re.search(r"^@@PREVIOUS (.*)$", res.stdout, re.M)
    assert "@@BOOT 2" in res.console + res.stdout, res.console[-3000:]
    return res, digests, status, (prev.group(1).split() if prev else [])


def check_survived(digests, status, previous):
    first, second = digests
    assert sorted(previous) == ["h_persist", "pa", "pb"], previous
    for c in ("pa", "pb", "h_persist"):
        assert second[c] == first[c], (c, first[c], second[c])
        assert status[c]["damaged_subbufs"] == "0", status[c]
        assert status[c]["damaged_records"] == "0", status[c]
        assert int(status[c]["records"]) == first[c][0], status[c]
        assert status[c]["boot"] == "1" and status[c]["this_boot"] == "2", status[c]
    assert first["pb"][0] == 50 and first["h_persist"][0] == 41, first
    assert first["pa"][0] > 500 and first["plain"][0] > 0, first


# In the second boot `dti read --previous` prints what the previous
# merged view shows, and refuses a channel with nothing kept; then pa is
# registered again and logs: new records go to the other area, the
# previous ones stay.
AGAIN = rf"""
for c in pa pb h_persist; do
    say "READ $c $(dti read --previous $c | md5sum | cut -c1-32) $(md5sum < {PREV}/$c/merged | cut -c1-32)"
    # the report and a filter, against the kernel's view counted with grep
    say "PREV-REPORT $c $(dti read --previous $c --report | sed -n 's/^records: \([0-9]*\) .*/\1/p') $(grep -c '' {PREV}/$c/merged-ts)"
    say "PREV-FILTER $c $(dti read --previous $c -p warning -c 1 | grep -c '') $(grep -c '] cpu1 L[0-4] ' {PREV}/$c/merged-ts)"
done
if dti read --previous plain 2> /tmp/err; then say "READ-PLAIN accepted"; fi
say "READ-PLAIN $(cat /tmp/err)"
ctl register_sub pa 2048 8 7 2
ctl printk pa 3 3000 -1 process again
digest {PREV}/pa pa-after
digest $D/pa pa-live
"""


def test_records_survive_sysrq_reset(modules, kernel, build_dir, dti_tool):
    """sysrq-b resets at once, no notifier runs."""
    res, digests, status, previous = boot_twice(modules, kernel, build_dir, second=AGAIN,
                                                dti_tool=dti_tool)
    check_survived(digests, status, previous)
    reads = re.findall(r"^@@READ (\S+) (\w+) (\w+)$", res.stdout, re.M)
    assert sorted(c for c, _, _ in reads) == ["h_persist", "pa", "pb"], reads
    assert all(a == b for _, a, b in reads), reads
    # the previous boot's report and filters count what its view shows
    for what in ("PREV-REPORT", "PREV-FILTER"):
        counts = re.findall(rf"^@@{what} (\S+) (\d+) (\d+)$", res.stdout, re.M)
        assert sorted(c for c, _, _ in counts) == ["h_persist", "pa", "pb"], res.stdout[-3000:]
        assert all(a == b for _, a, b in counts), (what, counts)
    assert any(int(a) > 0 for c, a, _ in re.findall(r"^@@PREV-REPORT (\S+) (\d+) (\d+)$",
                                                      res.stdout, re.M)), res.stdout[-3000:]
    assert "no records of channel plain from a previous boot" in res.stdout, res.stdout[-2000:]
    assert "READ-PLAIN accepted" not in res.stdout
    assert digests[1]["pa-after"] == digests[0]["pa"]
    assert digests[1]["pa-live"][0] > 100



# In the second boot `dti save-previous` (what dti-save-previous.service
# runs at boot) saves every persistent channel's previous records; each
# saved directory decodes as `dti read --previous` reads the channel; a
# second run saves nothing twice; --keep 2 with two older boots' dirs
# removes the older.
SAVE = rf"""
dti save-previous --dir /tmp/saved --keep 2 > /tmp/save.out 2>&1; say "SAVE-RC $?"
sed 's/^/@@SAVE-LINE /' /tmp/save.out
for c in pa pb h_persist; do
    d=$(ls -d /tmp/saved/*/$c)
    say "SAVED $c $(dti decode -F json $d | md5sum | cut -c1-32) $(dti read --previous -F json $c | md5sum | cut -c1-32) $(dti decode $d | grep -c '') $(ls $d | tr '\n' ' ')"
done
dti save-previous --dir /tmp/saved > /tmp/save2.out 2>&1
say "SAVE-AGAIN $? $(grep -c 'were saved in .* already' /tmp/save2.out) $(ls /tmp/saved | grep -c '')"
mkdir -p /tmp/saved/20000101T000000-00000000000000000000000000000001/pa \
         /tmp/saved/20000102T000000-00000000000000000000000000000002/pa
dti save-previous --dir /tmp/saved --keep 2 > /tmp/save3.out 2>&1
say "SAVE-KEEP $? $(ls /tmp/saved | cut -c1-16 | tr '\n' ' ')"
"""


def test_save_previous_after_reset(modules, kernel, build_dir, dti_tool):
    """After sysrq-b, dti save-previous writes the previous boot's
    channels as directories that `dti decode` prints as `dti read
    --previous` does, once per boot, and keeps the last N boots'."""
    res, digests, status, previous = boot_twice(modules, kernel, build_dir, second=SAVE,
                                                dti_tool=dti_tool)
    check_survived(digests, status, previous)
    out = res.stdout
    assert "@@SAVE-RC 0" in out, out[-3000:]
    lines = re.findall(r"^@@SAVE-LINE (\S+): (\d+) records of the previous boot \(boot 1 ", out,
                       re.M)
    assert sorted(lines) == sorted((c, str(digests[0][c][0])) for c in ("h_persist", "pa", "pb")), \
        out[-3000:]
    saved = re.findall(r"^@@SAVED (\S+) (\w+) (\w+) (\d+) (.*)$", out, re.M)
    assert sorted(c for c, *_ in saved) == ["h_persist", "pa", "pb"], out[-3000:]
    for c, got, want, n, files in saved:
        assert got == want and int(n) == digests[0][c][0], (c, got, want, n)
        assert {"modules", "release", "status", "trace0", "trace1"} <= set(files.split()), files
    assert "@@SAVE-AGAIN 0 3 1" in out, out[-3000:]
    keep = re.search(r"^@@SAVE-KEEP 0 (.*)$", out, re.M)
    assert keep and keep.group(1).split()[0] == "20000102T000000-", out[-3000:]
    assert len(keep.group(1).split()) == 2, keep.group(1)

def test_records_survive_reset_in_a_reserve_mem_region(modules, kernel, build_dir):
    """persist=NAME takes the region reserve_mem=SIZE:ALIGN:NAME set
    aside (RAM the kernel manages, out of its allocator): it is found,
    and records survive sysrq-b there.  nokaslr keeps the region in its
    place: a kernel image placed at random can move it."""
    if not reserve_mem_by_name():
        pytest.skip(f"{kernel.release} has no reserve_mem_find_by_name() (6.11 and later): "
                    "test_wrong_range_is_refused checks the refusal of a name instead")
    res, digests, status, previous = boot_twice(
        modules, kernel, build_dir, region="dtipersist",
        memmap="reserve_mem=16M:4096:dtipersist nokaslr")
    check_survived(digests, status, previous)
    # the same place both boots, kept by the second
    found = re.findall(r"persistent region (0x[0-9a-f]+), 16777216 bytes, boot (\d): (.*)$",
                       res.console, re.M)
    assert [b for _, b, _ in found] == ["1", "2"] and found[1][2] == "kept", found
    assert found[0][0] == found[1][0], found


def test_records_survive_panic_reboot(modules, kernel, build_dir):
    """A panic with panic=1 reboots after a second."""
    res, digests, status, previous = boot_twice(
        modules, kernel, build_dir, reset="echo c > /proc/sysrq-trigger", append="panic=1")
    check_survived(digests, status, previous)


# CPU 0 of pd logs "dmg <i>" records (compact ones of 15 to 20 bytes)
# into 4 sub-buffers of 4096 bytes: enough to fill 4 and half a fifth
# (DMG_N), so the ring wraps and sub-buffer numbers 1..4 are kept.  Then
# the header of the sub-buffer in slot 1 (number 1) is overwritten, and
# the header of record 20 of the one in slot 2 (number 2).
DMG_SUBBUF = 4096
_DMG = crec_layout([len(f"dmg {i}\n") for i in range(5000)], DMG_SUBBUF)
DMG_N = sum(len(x) for x in _DMG[:4]) + len(_DMG[4]) // 2
DMG_MISSING = len(_DMG[1]) + len(_DMG[2]) - 20
DAMAGE = rf"""
ctl register_sub pd {DMG_SUBBUF} 4 7 2
ctl printk pd 3 {DMG_N} 0 process dmg
digest $D/pd pd
off=$(awk '$1=="area" && $4=="offset" && $6=="boot" {{print $2, $5}}' {PERSIST} |
      while read s o; do
          if grep -q "^slot $s pd " {PERSIST}; then echo $o; fi
      done)
ctl scribble $(printf '%#x' $(({REGION_BASE} + off + {DMG_SUBBUF}))) 64 0x5a
ctl scribble $(printf '%#x' $(({REGION_BASE} + off + 2 * {DMG_SUBBUF} + {_DMG[2][20]}))) 16 0xa5
"""


def test_damaged_region_is_reported_and_skipped(modules, kernel, build_dir):
    res, digests, status, previous = boot_twice(
        modules, kernel, build_dir, damage=DAMAGE,
        second=f"nocaller {PREV}/pd/merged-ts | sed 's/^/@@PD /'\n")
    assert "pd" in previous, previous
    st = status["pd"]
    assert st["damaged_subbufs"] == "1", st
    assert int(st["damaged_records"]) >= 1, st
    # Every other channel is whole.
    for c in ("pa", "pb", "h_persist"):
        assert digests[1][c] == digests[0][c], c
    lines = re.findall(r"^@@PD (.*)$", res.stdout, re.M)
    assert len(lines) == int(st["records"])
    seqs = [int(re.search(r"#(\d+):", ln).group(1)) for ln in lines]
    texts = [ln.split(": ", 1)[1] for ln in lines]
    # Each record left is the one logged with that number, in order ...
    assert all(t == f"dmg {s}" for s, t in zip(seqs, texts)), lines[:5]
    assert seqs == sorted(seqs), seqs
    # ... the newest is there, and a sub-buffer and a part of another
    # are missing.
    shown = digests[0]["pd"][0]
    assert seqs[-1] == DMG_N - 1, seqs[-5:]
    missing = shown - len(lines)
    assert missing == DMG_MISSING, (shown, len(lines))
    gaps = [(a, b) for a, b in zip(seqs, seqs[1:]) if b != a + 1]
    assert len(gaps) == 1, gaps      # the two damaged parts are adjacent
    assert "Oops" not in res.console and "BUG" not in res.console


# Forged regions (issue 40, item 3).  Each round fills CPU 0's and CPU
# 1's rings of the persistent channel pf (8 sub-buffers of 4096 bytes:
# about 250 records "fN <i>" each, so FORGE_N records wrap them), lets it
# go, forges
# the area it wrote (dti_test's forge: a kind and its randomness from
# the seed), and loads dti.ko again, which reads that area as the
# previous records; every file of them is read.  Then the region's
# header is wiped, so the next round's load sets it up anew.  A load
# that does not finish (a loop over a sub-buffer range that wraps) ends
# the guest's output at that round.
# 2 of each of dti_test's 9 kinds (its seed picks the kind and what it
# does); DTI_FORGE_ROUNDS=N for a longer run.  About 3 s a round.
FORGE_ROUNDS = int(os.environ.get("DTI_FORGE_ROUNDS", "18"))
FORGE_N = 3 * len(crec_layout([len(f"f0 {i}\n") for i in range(1000)], 4096)[0]) * 4
FORGE_SCRIPT = persist_prelude(REGION, PERSIST) + rf"""
round=0
while [ $round -lt {FORGE_ROUNDS} ]; do
    ctl register_sub pf 4096 8 7 2
    ctl printk pf 3 {FORGE_N} 0 process f0
    ctl printk pf 3 {FORGE_N} 1 process f1
    ctl unregister pf
    echo "forge {REGION_BASE:#x} 0x1000000 $round" > $T
    say "FORGED $round $(cat $T)"
    rmmod dti_test
    rmmod dti
    insmod $DTI_MODDIR/dti.ko persist={REGION}
    say "LOADED $round"
    if [ -d {PREV}/pf ]; then
        for f in {PREV}/pf/*; do
            case $f in */clear) ;; *) cat $f > /dev/null;; esac
        done
        say "READ $round $(tr '\n' ' ' < {PREV}/pf/status)"
    else
        say "READ $round none"
    fi
    insmod $DTI_MODDIR/dti_test.ko
    ctl scribble {REGION_BASE:#x} 64 0
    rmmod dti_test
    rmmod dti
    insmod $DTI_MODDIR/dti.ko persist={REGION}
    insmod $DTI_MODDIR/dti_test.ko
    round=$((round + 1))
done
dmesg | grep -E "dti: pf: |persistent region: slot" | sed 's/^\[[^]]*\] /@@MSG /'
"""


def test_forged_regions_load_in_bounded_time(modules, kernel, build_dir):
    """Every forged area loads, in bounded time, and its files read: a
    sub-buffer numbered past any ring's is left out and said, a damaged
    slot is said, and nothing splats."""
    res = vm.run(FORGE_SCRIPT, modules=modules, kernel=kernel, build_dir=build_dir,
                 mem=GUEST_MEM, smp=2, append=MEMMAP, timeout=900)
    out = res.stdout
    forged = dict(re.findall(r"^@@FORGED (\d+) ret=0 kind=(\S+)", out, re.M))
    loaded = re.findall(r"^@@LOADED (\d+)$", out, re.M)
    read = dict(re.findall(r"^@@READ (\d+) (.*)$", out, re.M))
    assert len(forged) == FORGE_ROUNDS, out[-3000:]
    assert len(loaded) == FORGE_ROUNDS and len(read) == FORGE_ROUNDS, \
        (loaded[-3:], res.console[-4000:])
    for bad in ("soft lockup", "BUG", "Oops", "WARNING:", "RCU stall", "rcu_.* detected stall"):
        assert not re.search(bad, res.console), bad
    res.check()
    msgs = re.findall(r"^@@MSG (.*)$", out, re.M)
    wild = [r for r, k in forged.items() if k in ("top", "shift")]
    for r in wild:
        # the forged sub-buffers were left out, and counted
        st = dict(re.findall(r"(\w+): (\S+)", read[r]))
        assert int(st["damaged_subbufs"]) >= 1, (r, read[r])
    assert sum("claim numbers no ring reaches" in m for m in msgs) >= len(wild), msgs
    # a slot made inconsistent under a good CRC is refused, and said
    assert any("persistent region: slot" in m and "damaged" in m for m in msgs), msgs


# Stale records (issue 40, item 5).  Loads 1 to 3 of dti.ko (reloads,
# each a boot to the region) write channel ps: load 1 "old <i>" into
# area 0, load 2 into area 1, load 3 "new <i>" into area 0 again, ten
# records on CPU 0, the same sizes as load 1's.  Then the header of that
# sub-buffer is made to count 60 records, as if the count had reached
# RAM before the records it counts, and the guest resets.  What the next
# boot shows of ps must be load 3's records alone.
STALE_SCRIPT = persist_prelude(REGION, PERSIST) + rf"""
reload() {{
    rmmod dti_test
    rmmod dti
    insmod $DTI_MODDIR/dti.ko persist={REGION}
    insmod $DTI_MODDIR/dti_test.ko
}}
if [ "$BOOTNO" = 1 ]; then
    ctl register_sub ps 4096 4 7 2
    ctl printk ps 3 60 0 process old
    ctl unregister ps
    reload
    ctl register_sub ps 4096 4 7 2
    ctl printk ps 3 5 0 process mid
    ctl unregister ps
    reload
    ctl register_sub ps 4096 4 7 2
    ctl printk ps 3 10 0 process new
    ctl unregister ps
    echo "forge_count {REGION_BASE:#x} 0x1000000 0 60" > $T
    say "COUNT $(cat $T)"
    sync
    {initramfs.DRAIN_OUTPUT}
    echo b > /proc/sysrq-trigger
    sleep 30
fi
say "STATUS $(tr '\n' ' ' < {PREV}/ps/status)"
sed 's/^/@@PS /' {PREV}/ps/merged
"""


def test_reset_shows_only_the_last_boots_records(modules, kernel, build_dir):
    """Boot N-2's records, left in the area boot N wrote, are never shown
    as boot N's, even where boot N's header counts records there."""
    res = vm.run(STALE_SCRIPT, modules=modules, kernel=kernel, build_dir=build_dir,
                 mem=GUEST_MEM, smp=2, append=MEMMAP, reboot=True, timeout=600).check()
    out = res.stdout
    assert re.search(r"^@@COUNT ret=0 subbuf=0 records=10$", out, re.M), out[-3000:]
    texts = re.findall(r"^@@PS (.*)$", out, re.M)
    assert texts == [f"new {i}" for i in range(10)], texts
    st = dict(re.findall(r"(\w+): (\S+)", re.search(r"^@@STATUS (.*)$", out, re.M).group(1)))
    assert st["boot"] == "3" and st["records"] == "10", st
    assert st["damaged_records"] == "50", st


CLEAR = rf"""
echo 1 > {PREV}/pb/clear
n=0
while [ -e {PREV}/pb ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n+1)); done
echo "@@AFTER-CLEAR $(ls {PREV} | tr '\n' ' ')"
if echo 1 > {PREV}/pa/clear-not-there 2>/dev/null; then echo "@@BAD"; fi
grep "^area" {PERSIST} | sed 's/^/@@AREA /'
# Unload with records shown, released, and released with the removal
# perhaps still to come.
echo 1 > {PREV}/h_persist/clear
rmmod dti_test
rmmod dti
echo "@@UNLOADED"
"""


def test_clear_releases_the_previous_records(modules, kernel, build_dir):
    res, digests, status, previous = boot_twice(modules, kernel, build_dir, second=CLEAR)
    check_survived(digests, status, previous)
    after = re.search(r"^@@AFTER-CLEAR (.*)$", res.stdout, re.M).group(1).split()
    assert sorted(after) == ["h_persist", "pa"], after
    areas = re.findall(r"^@@AREA (.*)$", res.stdout, re.M)
    assert not any("previous" in a for a in areas if a.split()[0] == "1"), areas
    assert "@@UNLOADED" in res.stdout
    for bad in ("BUG", "WARNING:", "Oops", "refcount"):
        assert bad not in res.console, bad


# The dump test's region lies in the RAM of a guest of dump.QEMU_DUMP_MEM
# MiB: the ELF dump is as large as the guest.
DUMP_REGION = "8M@0x18000000"
DUMP_MEMMAP = "memmap=8M$0x18000000"
DTI_HOST = Path(__file__).resolve().parent.parent / "runtime" / "build" / "dti"
VIEW = re.compile(r"^@@VIEW (\S+)\n(.*?)^@@END \1$", re.M | re.S)

# Boot 1 logs into pa (every CPU, wrapping its rings) and pb, prints
# their merged-ts views and resets.  Boot 2 registers pa again, logs a
# few records into it, prints its view and panics: QEMU dumps the guest.
DUMP_SCRIPT = persist_prelude(DUMP_REGION, PERSIST) + rf"""
view() {{ echo "@@VIEW $2"; cat $D/$1/merged-ts; echo "@@END $2"; }}
NCPU=$(grep -c ^processor /proc/cpuinfo)
ctl register_sub pa 2048 8 7 2
c=0
if [ "$BOOTNO" = 1 ]; then
    ctl register_sub pb 4096 4 7 2
    while [ $c -lt $NCPU ]; do ctl printk pa 6 400 $c process a$c; c=$((c + 1)); done
    ctl printk pb 3 50 -1 process pb
    view pa pa@boot1
    view pb pb@boot1
    sync
    {initramfs.DRAIN_OUTPUT}
    echo b > /proc/sysrq-trigger
    sleep 30
fi
while [ $c -lt $NCPU ]; do ctl printk pa 6 30 $c process again$c; c=$((c + 1)); done
view pa pa
echo "@@READY"
"""


def dti_host(*args) -> subprocess.CompletedProcess:
    r = subprocess.run([str(DTI_HOST), *map(str, args)], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, f"dti {' '.join(map(str, args))}: {r.returncode}\n{r.stderr}"
    return r


def dump_records(vmcore: Path, channel: str) -> list[tuple]:
    out = dti_host("dump", vmcore, "--channel", channel, "--format", "json").stdout
    recs = [json_record(line) for line in out.splitlines() if line.strip()]
    return [(o["cpu"], o["seq"], o["ts_ns"], o["level"], o["text"].rstrip("\n"))
            for o in recs]


def test_dump_finds_the_region(request, modules, kernel, build_dir, dti_tool, tmp_path):
    """dti dump of the boot after a reset: pa is this boot's rings (its
    descriptor's), pa@boot1 and pb@boot1 the previous boot's, read from
    the region alone, the same in an excerpt of the dump."""
    failed = request.session.testsfailed
    res = dump.qemu_dump(DUMP_SCRIPT, modules=modules, kernel=kernel, build_dir=build_dir,
                         smp=SMP, append=DUMP_MEMMAP, formats=("elf",), reboot=True)
    assert "@@BOOT 2" in res.stdout and "@@READY" in res.stdout, res.stdout[-3000:]
    views = {m[1]: [(x.cpu, x.seq, x.ts_ns, x.level, x.text) for x in parse_merged_ts(m[2])]
             for m in VIEW.finditer(res.stdout)}
    assert sorted(views) == ["pa", "pa@boot1", "pb@boot1"], sorted(views)
    vmcore = res.files["elf"]
    listing = dti_host("dump", "--list", vmcore).stdout
    names = re.findall(r"^(\S+) ", listing, re.M)[1:]
    for ch in ("pa", "pa@boot1", "pb@boot1"):
        assert ch in names, listing
        assert dump_records(vmcore, ch) == views[ch], ch
        # the report and a filter of the dump count what the view shows
        report = dti_host("dump", vmcore, "--channel", ch, "--report").stdout
        assert report.startswith(f"records: {len(views[ch])} "), report[:300]
        cpu1 = dti_host("dump", vmcore, "--channel", ch, "-c", "1", "-p", "warning",
                        "-F", "json").stdout.splitlines()
        assert [(o["cpu"], o["seq"]) for o in map(json_record, cpu1)] == \
            [(v[0], v[1]) for v in views[ch] if v[0] == 1 and v[3] <= 4], ch
        assert {json_record(x)["channel"] for x in cpu1} <= {ch}
    assert re.search(r"^pa +\d+ \(debug\) +buffers,persist ", listing, re.M), listing
    for ch, boot in (("pa", 2), ("pa@boot1", 1), ("pb@boot1", 1)):
        assert re.search(rf"^{ch} .*\n(  .*\n)*  rings written by boot {boot}, in the "
                         r"persistent region at physical 0x18000000$", listing, re.M), listing
    assert re.search(r"region: persistent region at physical 0x18000000: 8192 KiB, "
                     r"taken by 2 boots of dti.ko, 2 of 32 slots used", listing), listing
    assert len(views["pa@boot1"]) > 4 * 300 and len(views["pb@boot1"]) == 50
    # An excerpt holds what the channels are read from, the region's among it.
    excerpt = tmp_path / "excerpt.elf"
    dti_host("dump", vmcore, "--excerpt", excerpt)
    for ch in ("pa", "pa@boot1", "pb@boot1"):
        assert dump_records(excerpt, ch) == views[ch], ch
    one = tmp_path / "one.elf"
    dti_host("dump", vmcore, "--channel", "pb@boot1", "--excerpt", one)
    assert dump_records(one, "pb@boot1") == views["pb@boot1"]
    if request.session.testsfailed == failed:
        vmcore.unlink(missing_ok=True)
