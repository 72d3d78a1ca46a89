"""Context records and blobs (issue 55), in a real guest kernel.

Context records: a channel whose `context` file names sched (and irq)
stores every CPU's context switches (and hardware interrupt handlers'
entries) beside its driver's records, as events of types dti.ko
registers on it, so that every reader prints them with no knowledge of
their kind:

* the kernel's merged views, `dti read` (text and JSON), `dti snapshot`
  decoded, the trace files copied and decoded, and the Python binding on
  the copy, all give the same records, with the types' names and fields;
* the switches are the scheduler's own: on each CPU, each switch's next
  task (its pid) is the task the following switch takes off the CPU, so
  none was made up or reordered (nothing is lost: the ring is big
  enough);
* "none" stops them: the channel stores nothing more while nothing logs;
  dti_set_context() (dti_test's "context", on a second channel) does
  what the file does, and
  refuses an unknown bit; the file refuses what is not a set of words.

Blobs (dti_blob()): bytes of any length with a media type, of every
size from 0 to 100,000 bytes among text records, in 1 MiB sub-buffers:

* the merged view and `dti read` print "blob TYPE LEN: HEX", the JSON of
  `dti read`, of a decoded snapshot and of the records-alone stream
  (`dti read -F raw`, decoded) give the media type and every byte, and
  so does the Python binding; the journal export names the media type;
* a blob too big for the channel is refused with EMSGSIZE and counted as
  rejected, a media type over DTI_BLOB_TYPE_MAX (127) bytes with EINVAL.

Both where the guest no longer runs: `dti dump` of a QEMU dump of the
live guest, and a persistent channel's records after sysrq-b (its
.previous merged view unchanged, `dti read --previous`), give the
blobs whole, up to 100,000 bytes, and the switches.  (The panic print
shows events and blobs as a binary record's bytes, cut to a console
line: not a reader that gives them whole.)
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dtirec import json_record, parse_kv, parse_merged_ts, parse_stats
from guestlib import PRELUDE, persist_prelude
from harness import dump, vm
from harness.initramfs import DRAIN_OUTPUT
from test_persist import reserve_mem_by_name

RUNTIME = Path(__file__).resolve().parent.parent / "runtime"
EINVAL, EMSGSIZE = 22, 90


def out(res, *parts) -> str:
    return res.outdir.joinpath(*parts).read_text()


def jsonl(res, name) -> list[dict]:
    return [json_record(x) for x in out(res, name).splitlines()]


def binding():
    """libdti's Python binding, on the host's libdti."""
    os.environ["DTI_LIBDTI"] = str(RUNTIME / "build" / "libdti.so.0")
    sys.path.insert(0, str(RUNTIME / "python"))
    import dti  # noqa: PLC0415
    return dti


def python_records(path: Path) -> list[dict]:
    """The records the binding reads from a snapshot or a stream, no notices."""
    return [d for d in binding().load(str(path)) if "lost" not in d]


CONTEXT_SCRIPT = PRELUDE + """
ctl register_sub cx 262144 8 7 0
cat $D/cx/context > /out/ctx0
echo sched,irq > $D/cx/context
cat $D/cx/context > /out/ctx1
cat $D/cx/info > /out/info1
ctl printk cx 6 20 0 process mark
i=0
while [ $i -lt 20 ]; do
    sleep 0.05
    echo "tick $i" > /dev/console
    i=$((i + 1))
done
ctl printk cx 6 20 1 process mark
echo none > $D/cx/context
cat $D/cx/context > /out/ctx2
cat $D/cx/stats > /out/stats_a
sleep 0.5
cat $D/cx/stats > /out/stats_b
badwrite $D/cx/context 'sched,' > /out/bad_comma
badwrite $D/cx/context 'bogus' > /out/bad_word
badwrite $D/cx/context '\n' > /out/bad_empty
ctl register_sub cy 65536 4 7 0
try context cy 4 > /out/api_bad
try context cy 1 > /out/api_on
cat $D/cy/context > /out/ctx3
try context cy 0 > /out/api_off
cat $D/cy/context > /out/ctx4
snap cx s
dti read cx > /out/read.txt
dti snapshot cx /out/snapd > /dev/null 2> /out/snap.err
dti decode -F json /out/snapd > /out/snap.json 2>> /out/snap.err
echo 1 > $D/cx/reset_consumed
dti read -F json cx > /out/read.json 2> /out/read.err
echo 1 > $D/cx/reset_consumed
dti read -F raw cx > /out/raw 2>> /out/read.err
dti decode -F json /out/raw > /out/raw.json 2>> /out/read.err
"""

SWITCH = re.compile(r"prev_comm=(.*) prev_pid=(\d+) prev_prio=(-?\d+) prev_state=(\S+) "
                    r"==> next_comm=(.*) next_pid=(\d+) next_prio=(-?\d+)$")


def test_context_records_through_every_reader(dti_guest, dti_tool):
    dti_guest.extra_files[str(dti_tool)] = "/bin/dti"
    res = dti_guest.run(CONTEXT_SCRIPT, smp=2, timeout=300).check()
    assert out(res, "ctx0") == "none\n"
    assert out(res, "ctx1") == "sched,irq\n"
    assert parse_kv(out(res, "info1"))["context"] == "sched,irq"
    assert out(res, "ctx2") == "none\n"
    for bad in ("bad_comma", "bad_word", "bad_empty"):
        assert out(res, bad) == "REFUSED\n", bad
    assert out(res, "api_bad").strip() == f"ret=-{EINVAL}"
    assert out(res, "api_on").strip() == "ret=0" and out(res, "ctx3") == "sched\n"
    assert out(res, "api_off").strip() == "ret=0" and out(res, "ctx4") == "none\n"
    # off: nothing more is stored
    a, b = (parse_stats(out(res, f))["total"] for f in ("stats_a", "stats_b"))
    assert a["written"] == b["written"], (a, b)
    st = parse_stats(out(res, "s", "stats"))["total"]
    assert st["overwritten"] == st["dropped"] == st["lost"] == 0, st

    # the kernel's view: the driver's records and both kinds of context record
    view = parse_merged_ts(out(res, "s", "merged-ts"))
    texts = [r.text for r in view]
    assert sum(t.startswith("mark ") for t in texts) == 40
    switches = [r for r in view if SWITCH.match(r.text)]
    irqs = [r for r in view if re.fullmatch(r"irq=\d+ name=\S*", r.text)]
    assert len(switches) > 40 and {r.cpu for r in switches} == {0, 1}, texts[:20]
    assert irqs, "no interrupt handler's entry was recorded"
    assert len(switches) + len(irqs) + 40 == len(view), \
        [t for t in texts if not t.startswith("mark ")][:5]

    # on each CPU the switches chain: the task put on is the next taken off
    for cpu in (0, 1):
        seq = [SWITCH.match(r.text) for r in sorted(switches, key=lambda r: r.seq)
               if r.cpu == cpu]
        for before, after in zip(seq, seq[1:]):
            # (the pid: exec renames a task between two switches)
            assert before[6] == after[2], (cpu, before[0], after[0])
        assert all(m[4].rstrip("+") in "RSDTtXZPI" for m in seq), [m[4] for m in seq]

    # dti read prints the view's lines; every JSON reader has the same records
    assert out(res, "read.txt").splitlines() == out(res, "s", "merged").splitlines()
    assert out(res, "snap.err") == "" and out(res, "read.err") == ""
    want = {(r.cpu, r.seq): r.text for r in view}
    for name in ("read.json", "snap.json", "raw.json"):
        recs = jsonl(res, name)
        assert {(o["cpu"], o["seq"]): o["text"].rstrip("\n") for o in recs} == want, name
        kinds = {o.get("event") for o in recs}
        assert kinds == {None, "sched_switch", "irq_handler_entry"}, (name, kinds)
        for o in recs:
            if o.get("event") == "sched_switch":
                assert o["id"] == 0xff00
                assert set(o["fields"]) == {"prev_comm", "prev_pid", "prev_prio", "prev_state",
                                            "next_comm", "next_pid", "next_prio"}
            elif o.get("event") == "irq_handler_entry":
                assert o["id"] == 0xff01 and set(o["fields"]) == {"irq", "name"}
    # the Python binding, on the records-alone stream
    py = python_records(res.outdir / "raw")
    assert {(d["cpu"], d["seq"]): d.get("event") for d in py} == \
        {(o["cpu"], o["seq"]): o.get("event") for o in jsonl(res, "raw.json")}


BLOB_SIZES = [0, 1, 2, 3, 4, 7, 63, 64, 65, 255, 256, 4095, 4096, 65535, 65536, 65537, 100000]
MEDIA = "application/vnd.dti.test"


def blob_bytes(n: int) -> bytes:
    return bytes((i * 131 + n) & 0xff for i in range(n))


def test_blobs_of_every_size_through_every_reader(dti_guest, dti_tool):
    dti_guest.extra_files[str(dti_tool)] = "/bin/dti"
    writes = "\n".join(f"ctl blob bl 6 {n} {MEDIA}\nctl printk bl 5 1 0 process after{n}"
                       for n in BLOB_SIZES)
    long_type = "x" * 128
    res = dti_guest.run(PRELUDE + f"""
        ctl register_sub bl 1048576 4 7 0
        {writes}
        ctl blob bl 6 5 -
        try blob bl 6 4 {long_type} > /out/longtype
        try blob bl 6 4 {"y" * 127} > /out/maxtype
        snap bl s
        dti read bl > /out/read.txt 2> /out/read.err
        dti snapshot bl /out/snapd > /dev/null 2>> /out/read.err
        dti decode -F json /out/snapd > /out/snap.json 2>> /out/read.err
        echo 1 > $D/bl/reset_consumed
        dti read -F json bl > /out/read.json 2>> /out/read.err
        echo 1 > $D/bl/reset_consumed
        dti read -F raw bl > /out/raw 2>> /out/read.err
        dti decode -F json /out/raw > /out/raw.json 2>> /out/read.err
        dti decode -F export /out/raw > /out/raw.export 2>> /out/read.err
        try blob bl 6 1048576 {MEDIA} > /out/toobig
        cat $D/bl/stats > /out/stats
    """, smp=2, mem=1024, timeout=600).check()
    assert out(res, "toobig").strip() == f"ret=-{EMSGSIZE}"
    assert out(res, "longtype").strip() == f"ret=-{EINVAL}"
    assert out(res, "maxtype").strip() == "ret=0"
    assert out(res, "read.err") == ""
    st = parse_stats(out(res, "s", "stats"))["total"]
    assert st["rejected"] == 0 and st["written"] == 2 * len(BLOB_SIZES) + 2, st
    st = parse_stats(out(res, "stats"))["total"]
    assert st["rejected"] == 1 and st["written"] == 2 * len(BLOB_SIZES) + 2, st

    want = []
    for n in BLOB_SIZES:
        want += [("blob", MEDIA, blob_bytes(n)), ("text", f"after{n} 0")]
    want += [("blob", "", blob_bytes(5)), ("blob", "y" * 127, blob_bytes(4))]

    def line(w):
        if w[0] == "text":
            return w[1]
        return f"blob {w[1]} {len(w[2])}:" + (" " + w[2].hex(" ") if w[2] else "")

    # the kernel's view and dti read: "blob TYPE LEN: HEX"
    lines = [line(w) for w in want]
    assert out(res, "s", "merged").splitlines() == lines
    assert out(res, "read.txt").splitlines() == lines
    # JSON: the media type and every byte, from three readers
    for name in ("read.json", "snap.json", "raw.json"):
        got = []
        for o in jsonl(res, name):
            if o.get("event") == "blob":
                got.append(("blob", o["media_type"], bytes.fromhex(o["data"])))
            else:
                got.append(("text", o["text"].rstrip("\n")))
        assert got == want, name
    # the Python binding
    py = python_records(res.outdir / "raw")
    assert [("blob", d["media_type"], d["data"]) if d.get("event") == "blob" else
            ("text", d["text"].rstrip("\n")) for d in py] == want
    # the journal export names the media type and carries the bytes
    export = out(res, "raw.export")
    assert export.count(f"DTI_MEDIA_TYPE={MEDIA}\n") == len(BLOB_SIZES)
    assert f"DTI_DATA={blob_bytes(100000).hex()}\n" in export
    # the sizes decoded from the raw stream: the whole blob, not a cut
    assert max(len(bytes.fromhex(o["data"])) for o in jsonl(res, "raw.json")
               if o.get("event") == "blob") == 100000
    assert json.loads(out(res, "raw.json").splitlines()[0])["event"] == "blob"


# Context records and blobs kept where the guest does not run any more:
# a memory dump of the live guest (dti dump) and, in a persistent
# channel, the next boot (dti read --previous).
KEPT = [0, 1, 64, 65, 4096, 65536, 100000]


def kept_writes(ch: str) -> str:
    return "\n".join(f"ctl blob {ch} 6 {n} {MEDIA}\nctl printk {ch} 5 1 0 process after{n}"
                     for n in KEPT)


def check_kept(recs: list[dict], what: str) -> None:
    """The blobs of KEPT in order, whole, and context switches, in `recs`
    (JSON records of one channel)."""
    blobs = [bytes.fromhex(o["data"]) for o in recs if o.get("event") == "blob"]
    assert blobs == [blob_bytes(n) for n in KEPT], \
        (what, [len(b) for b in blobs])
    assert all(o["media_type"] == MEDIA for o in recs if o.get("event") == "blob"), what
    texts = [o["text"].rstrip("\n") for o in recs if "text" in o and o.get("event") is None]
    assert texts == [f"after{n} 0" for n in KEPT], (what, texts)
    sw = [o for o in recs if o.get("event") == "sched_switch"]
    assert sw and all(set(o["fields"]) >= {"prev_pid", "next_pid"} for o in sw), what


DUMP_KEPT = PRELUDE + f"""
ctl register_sub dk 1048576 4 7 0
echo sched > $D/dk/context
{kept_writes("dk")}
echo none > $D/dk/context
echo "@@COUNT $(wc -l < $D/dk/merged)"
echo "@@READY"
"""
DTI_HOST = RUNTIME / "build" / "dti"


def test_dump_keeps_context_records_and_blobs(request, modules, kernel, build_dir, dti_tool):
    failed = request.session.testsfailed
    res = dump.qemu_dump(DUMP_KEPT, modules=modules, kernel=kernel, build_dir=build_dir,
                         formats=("elf",), mem=1024)
    count = re.search(r"^@@COUNT (\d+)$", res.stdout, re.M)
    assert count and "@@READY" in res.stdout, res.stdout[-3000:]
    vmcore = res.files["elf"]
    r = subprocess.run([str(DTI_HOST), "dump", vmcore, "--channel", "dk", "-F", "json"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    recs = [json_record(x) for x in r.stdout.splitlines()]
    assert len(recs) == int(count[1])
    check_kept(recs, "dti dump")
    if request.session.testsfailed == failed:
        vmcore.unlink(missing_ok=True)


PERSIST_REGION = "16M@0x30000000"
PERSIST_MEMMAP = "memmap=16M$0x30000000"


def test_previous_boot_keeps_context_records_and_blobs(modules, kernel, build_dir, dti_tool):
    # memmap= is x86's; elsewhere a reserve_mem= region by name (6.11 and later)
    region, append = PERSIST_REGION, PERSIST_MEMMAP
    if kernel.arch != "x86_64":
        if not reserve_mem_by_name():
            pytest.skip(f"memmap= is x86-only and {kernel.release} finds no reserve_mem= "
                        "region by name (6.11 and later)")
        region, append = "dtipersist", "reserve_mem=16M:4096:dtipersist nokaslr"
    script = persist_prelude(region, "$D/.persist") + f"""
if [ "$BOOTNO" = 1 ]; then
    ctl register_sub pk 262144 4 7 2
    echo sched > $D/pk/context
    {kept_writes("pk")}
    echo none > $D/pk/context
    say "SUM $(md5sum < $D/pk/merged | cut -c1-32) $(wc -l < $D/pk/merged)"
    sync
    """ + DRAIN_OUTPUT + """
    echo b > /proc/sysrq-trigger
    sleep 30
fi
say "PREV $(md5sum < $D/.previous/pk/merged | cut -c1-32) $(wc -l < $D/.previous/pk/merged)"
dti read --previous -F json pk > /out/prev.json 2> /out/prev.err
"""
    res = vm.run(script, modules=modules, kernel=kernel, build_dir=build_dir, smp=2,
                 mem=1024, append=append, reboot=True, timeout=600,
                 extra_files={str(dti_tool): "/bin/dti"}).check()
    text = res.console + res.stdout
    first = re.search(r"^@@SUM (\w+) (\d+)", text, re.M)
    prev = re.search(r"^@@PREV (\w+) (\d+)", text, re.M)
    assert first and prev, text[-3000:]
    assert prev.groups() == first.groups()
    assert out(res, "prev.err") == ""
    check_kept(jsonl(res, "prev.json"), "dti read --previous")
