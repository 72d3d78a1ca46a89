"""Event types: binary records that describe themselves (issue 22).

dti_test defines two event types that cover every conversion DTI
supports (ints: signed and unsigned 8/16/32/64-bit, hex, a long;
mixed: a pointer, strings of every length from empty to the maximum,
with width and precision, byte arrays of every length up to the maximum,
in two of the kernel's hex styles, and %%), and logs each event into one
channel as a packed event and into another, with the same template and
values, as dti_printk() text.

* Each malformed or conflicting registration is refused with its errno,
  and the `formats` file lists the registered types.
* From every CPU, in process and hardirq context, into a channel whose
  rings wrap many times: every event that survives prints, in the
  kernel's merged views, exactly as dti_printk() printed the same values.
* A type registered while another CPU logs it the moment it can (issue
  40 item 7): a watchpoint holds the registering CPU right after the
  store that makes the type loggable, while the other CPU logs one
  event; that event prints through its format, so the channel's table
  of types was published first.
* A persistent channel with event types, reset with sysrq-b: the next
  boot's .previous view and `dti read --previous` print its events
  through the formats the region kept.
* A QEMU dump of a crashed guest: `dti dump` prints the events of a
  channel that wrapped through the formats its sub-buffers carry,
  exactly as the kernel's view showed them, and names their fields.

Timings on the reference host: ~15 s per test, ~40 s with the reset,
~30 s for the dump.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from dtirec import json_record, parse_merged_ts, parse_stats
from guestlib import PRELUDE, persist_prelude
from harness import dump, vm
from harness.initramfs import DRAIN_OUTPUT

# errno values of the registrations refused
EBUSY, EEXIST, ENODEV, EINVAL, E2BIG, ENAMETOOLONG, ENOSPC = 16, 17, 19, 22, 7, 36, 28

INTS_FMT = (r"s8 %hhd u8 %hhu x8 %hhx s16 %hd u16 %hu x16 %#hx s32 %d u32 %u x32 %08x "
            r"X32 %X s64 %lld u64 %llu x64 %#llx l %ld i %+5i n %u\n")
MIXED_FMT = "ptr %px str '%s' w '%-6s|%5.2s' hex %*ph hc %*phC pct 100%% n %u"


def test_registration_errors_and_formats_file(dti_guest):
    res = dti_guest.run(PRELUDE + """
        ctl register_sub ev 4096 4 7 0
        ctl register_sub tiny 512 4 7 0
        ctl evreg ev ints
        ctl evreg ev mixed
        for t in ints dupid dupname conv hashed lenstr many badname long; do
            echo "$t $(try evbad ev $t)" >> /out/bad
        done
        echo "wide-tiny $(try evbad tiny wide)" >> /out/bad
        echo "wide-raw $(try evbad h_raw wide)" >> /out/bad
        cat $D/ev/formats > /out/formats
        cat $D/tiny/formats > /out/formats-tiny
    """).check()
    got = dict(re.findall(r"^(\S+) ret=0 err=(-?\d+)$", (res.outdir / "bad").read_text(), re.M))
    want = {"ints": -EBUSY, "dupid": -EEXIST, "dupname": -EEXIST, "conv": -EINVAL,
            "hashed": -EINVAL, "lenstr": -EINVAL, "many": -E2BIG, "badname": -EINVAL,
            "long": -ENAMETOOLONG, "wide-tiny": -ENOSPC, "wide-raw": -ENODEV}
    assert {k: int(v) for k, v in got.items()} == want
    assert (res.outdir / "formats").read_text() == (
        '1 ints bBBhHHiIIIqQQqiI s8,u8,x8,s16,u16,x16,s32,u32,x32,X32,s64,u64,x64,l,i,n '
        f'"{INTS_FMT}"\n'
        '2 mixed psssaaI ptr,str,w,arg3,hex,hc,n '
        f'"{MIXED_FMT}"\n')
    assert (res.outdir / "formats-tiny").read_text() == ""


def texts_by_key(text: str) -> dict[tuple[int, int], str]:
    return {(r.cpu, r.seq): r.text for r in parse_merged_ts(text)}


def event_channels(ev: str, ev_subbufs: int, txt: str, txt_subbufs: int) -> str:
    """Shell: channel EV (4 KiB sub-buffers) with both event types, and
    TXT (64 KiB sub-buffers) for their dti_printk twins; NCPU set."""
    return f"""
NCPU=$(grep -c ^processor /proc/cpuinfo)
ctl register_sub {ev} 4096 {ev_subbufs} 7 0
ctl register_sub {txt} 65536 {txt_subbufs} 7 0
ctl evreg {ev} ints
ctl evreg {ev} mixed
"""


LOG_EVERYWHERE = PRELUDE + event_channels("ev", 8, "txt", 32) + """
    c=0
    while [ $c -lt $NCPU ]; do
        ctl evlog ev 6 700 $c process txt
        ctl evlog ev 6 300 $c hardirq txt
        c=$((c + 1))
    done
    for ch in ev txt; do
        cat $D/$ch/merged-ts > /out/$ch.ts
        cat $D/$ch/merged > /out/$ch.merged
        cat $D/$ch/stats > /out/$ch.stats
    done
    dti read ev > /out/ev.read
    dti read -F json ev > /out/ev.json
"""


def test_events_print_as_dti_printk_after_wrapping(dti_guest, dti_tool):
    dti_guest.extra_files[str(dti_tool)] = "/bin/dti"
    res = dti_guest.run(LOG_EVERYWHERE, smp=4).check()
    ev = texts_by_key((res.outdir / "ev.ts").read_text())
    txt = texts_by_key((res.outdir / "txt.ts").read_text())
    ev_stats = parse_stats((res.outdir / "ev.stats").read_text())["total"]
    txt_stats = parse_stats((res.outdir / "txt.stats").read_text())["total"]
    # 4 CPUs x 1000 events each, none lost; the small rings wrapped many times
    assert txt_stats["written"] == ev_stats["written"] == 4 * 1000
    assert txt_stats["overwritten"] == 0 and len(txt) == 4000
    assert ev_stats["overwritten"] > 3 * len(ev), ev_stats
    for key in ("dropped", "nested", "nmi", "lost", "unavailable", "rejected"):
        assert ev_stats[key] == 0 and txt_stats[key] == 0, key
    # every surviving event is text, exactly as dti_printk() wrote it
    assert len(ev) > 100
    bad = [(k, t, txt.get(k)) for k, t in ev.items() if txt.get(k) != t]
    assert not bad, bad[:3]
    assert {t.split(" ", 1)[0] for t in ev.values()} == {"s8", "ptr"}
    # strings of the maximum length and empty ones, byte arrays of 64 bytes
    assert any("str ''" in t for t in txt.values())
    assert any(len(re.search(r"str '([^']*)'", t).group(1)) == 255
               for t in txt.values() if t.startswith("ptr"))
    # the plain view: the newest lines of each are the same text
    ev_lines = (res.outdir / "ev.merged").read_text().splitlines()
    assert set(ev_lines) <= set((res.outdir / "txt.merged").read_text().splitlines())
    # dti read prints what the kernel's view prints; JSON names the fields
    assert (res.outdir / "ev.read").read_text().splitlines() == ev_lines
    recs = [json_record(line) for line in (res.outdir / "ev.json").read_text().splitlines()]
    assert len(recs) == len(ev_lines)
    for r in recs:
        assert r["event"] in ("ints", "mixed") and r["id"] == (1 if r["event"] == "ints" else 2)
        assert r["text"].rstrip("\n") == txt[(r["cpu"], r["seq"])]
        if r["event"] == "ints":
            assert set(r["fields"]) == {"s8", "u8", "x8", "s16", "u16", "x16", "s32", "u32",
                                        "x32", "X32", "s64", "u64", "x64", "l", "i", "n"}
            assert r["fields"]["s8"] == (-128 if r["fields"]["n"] % 4 == 0 else r["fields"]["s8"])
        else:
            assert len(r["fields"]["str"]) == r["fields"]["n"] // 2 % 256
            assert len(r["fields"]["hex"]) == 2 * (r["fields"]["n"] // 2 % 65)


PERSIST_REGION = "16M@0x30000000"
PERSIST_MEMMAP = "memmap=16M$0x30000000"
PREVIOUS = persist_prelude(PERSIST_REGION, "$D/.persist") + r"""
if [ "$BOOTNO" = 1 ]; then
    ctl register_sub pev 4096 4 7 2
    ctl register_sub ptxt 65536 8 7 0
    ctl evreg pev ints
    ctl evreg pev mixed
    ctl evlog pev 6 400 0 process ptxt
    ctl evlog pev 6 400 1 hardirq ptxt
    say "SUM $(md5sum < $D/pev/merged | cut -c1-32) $(wc -l < $D/pev/merged)"
    sync
    """ + DRAIN_OUTPUT + r"""
    echo b > /proc/sysrq-trigger
    sleep 30
fi
say "PREV $(md5sum < $D/.previous/pev/merged | cut -c1-32) $(wc -l < $D/.previous/pev/merged)"
say "READ $(dti read --previous pev | md5sum | cut -c1-32)"
head -3 $D/.previous/pev/merged | sed 's/^/@@LINE /'
"""


EVRACE_SCRIPT = PRELUDE + """
ctl register_sub er 4096 4 7 0
ctl register_sub erx 4096 4 7 0
ctl evreg er ints
ctl evlog er 6 3 -1 process erx
ctl evrace er
cat $T > /out/result
cat $D/er/merged > /out/merged
cat $D/er/stats > /out/stats
dti read er > /out/read
"""


def test_event_logged_the_moment_it_is_registered_prints(dti_guest, dti_tool):
    dti_guest.extra_files[str(dti_tool)] = "/bin/dti"
    res = dti_guest.run(EVRACE_SCRIPT, smp=2, timeout=300).check()
    r = dict(re.findall(r"(\w+)=(\S+)", (res.outdir / "result").read_text()))
    # the watchpoint fired and the other CPU logged while it held
    assert r["ret"] == "0" and int(r["hits"]) >= 1 and r["logged"] == "1", r
    # evlog's odd events are of the type "mixed", not registered here
    for view in ("merged", "read"):
        lines = (res.outdir / view).read_text().splitlines()
        assert len(lines) == 3 and lines[0].startswith("s8 -128 ") and \
            lines[-1] == "race 1", (view, lines)
    assert parse_stats((res.outdir / "stats").read_text())["total"]["written"] == 3


def test_previous_boot_prints_its_events(modules, kernel, build_dir, dti_tool):
    res = vm.run(PREVIOUS, modules=modules, kernel=kernel, build_dir=build_dir, smp=2,
                 mem=1024, append=PERSIST_MEMMAP, reboot=True, timeout=600,
                 extra_files={str(dti_tool): "/bin/dti"}).check()
    text = res.console + res.stdout
    first = re.search(r"^@@SUM (\w+) (\d+)", text, re.M)
    prev = re.search(r"^@@PREV (\w+) (\d+)", text, re.M)
    assert first and prev, text[-3000:]
    assert int(first.group(2)) > 10
    assert prev.groups() == first.groups()
    assert re.search(r"^@@READ (\w+)", text, re.M).group(1) == first.group(1)
    lines = re.findall(r"^@@LINE (.*)$", res.stdout, re.M)
    assert lines and all(ln.startswith(("s8 ", "ptr ")) for ln in lines), lines


DUMP_SCRIPT = PRELUDE + event_channels("dev", 4, "dtxt", 16) + """
c=0
while [ $c -lt $NCPU ]; do ctl evlog dev 6 300 $c process dtxt; c=$((c + 1)); done
echo "@@VIEW dev"
cat $D/dev/merged-ts
echo "@@END dev"
echo "@@READY"
"""
DTI_HOST = Path(__file__).resolve().parent.parent / "runtime" / "build" / "dti"


def test_dump_prints_events(request, modules, kernel, build_dir, dti_tool):
    failed = request.session.testsfailed
    res = dump.qemu_dump(DUMP_SCRIPT, modules=modules, kernel=kernel, build_dir=build_dir,
                         formats=("elf",))
    view = re.search(r"^@@VIEW dev\n(.*?)^@@END dev$", res.stdout, re.M | re.S)
    assert view and "@@READY" in res.stdout, res.stdout[-3000:]
    want = [(x.cpu, x.seq, x.ts_ns, x.level, x.text) for x in parse_merged_ts(view.group(1))]
    assert len(want) > 50 and all(t.startswith(("s8 ", "ptr ")) for *_, t in want)
    vmcore = res.files["elf"]
    r = subprocess.run([str(DTI_HOST), "dump", vmcore, "--channel", "dev", "-F", "json"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    recs = [json_record(line) for line in r.stdout.splitlines()]
    got = [(o["cpu"], o["seq"], o["ts_ns"], o["level"], o["text"].rstrip("\n")) for o in recs]
    assert got == want
    assert all(o["event"] in ("ints", "mixed") and o["fields"] for o in recs)
    if request.session.testsfailed == failed:
        vmcore.unlink(missing_ok=True)
