"""User-space markers: marker, marker_raw, marker_level and `dti write`
(issue 23).

* A shell loop writes markers while the kernel logs into the same channel
  from every CPU; `dti read` shows every marker once, stamped with the
  shell's comm and pid, in time order among the driver's records, with
  the driver's records between them.  `dti write` adds its arguments as
  one record and each line of its input as one record.
* The edges, as dti_usermark.c documents them: a write over the limit is
  cut and flagged and still one record; a write of no bytes stores
  nothing, a lone newline an empty marker; a "<N>" prefix sets the level,
  marker_level the level of the others, and takes only record levels; a
  marker the level filters out is not an error, one that finds no room
  fails with ENOSPC; marker_raw keeps the bytes exactly; the files are
  root's only.

About 20 s per test on the reference host.
"""

from __future__ import annotations

import re

from dtirec import json_record, parse_stats
from guestlib import PRELUDE

MARKS = 200                 # markers the shell loop writes
TEXT_MAX = 1024             # DTI_TEXT_MAX: a text record holds 1023 bytes
TRUNCATED = 0x02            # DTI_REC_TRUNCATED
TEXT = 0x01                 # DTI_REC_TEXT


def records(path) -> list[dict]:
    return [json_record(line) for line in path.read_text().splitlines()]


def test_markers_among_driver_records(dti_guest, dti_tool):
    dti_guest.extra_files[str(dti_tool)] = "/bin/dti"
    res = dti_guest.run(PRELUDE + f"""
        ctl register_sub drv 65536 8 7 0
        # The driver logs from every CPU while the shell writes markers.
        drv() {{
            j=0
            while [ -e /tmp/run ]; do
                echo "printk drv 6 4 $1 process d$1-$j" > $T
                j=$((j + 1))
            done
        }}
        touch /tmp/run
        drv 0 & P0=$!
        drv 1 & P1=$!
        i=0
        while [ $i -lt {MARKS} ]; do
            echo "mark $i" > $D/drv/marker
            i=$((i + 1))
        done
        rm /tmp/run
        wait $P0 $P1
        echo $$ > /out/pid
        dti write drv --level 2 two words
        printf 'line one\\nline two\\nlast without newline' | dti write drv
        cat $D/drv/stats > /out/stats
        dti read --format json drv > /out/read
    """, smp=2).check()
    pid = int((res.outdir / "pid").read_text())
    recs = records(res.outdir / "read")
    stats = parse_stats((res.outdir / "stats").read_text())
    assert stats["total"]["written"] == len(recs)
    assert all(stats["total"][c] == 0 for c in ("dropped", "lost"))

    ts = [r["ts_ns"] for r in recs]
    assert ts == sorted(ts)
    marks = [i for i, r in enumerate(recs) if r["text"].startswith("sh[")]
    assert [recs[i]["text"] for i in marks] == [f"sh[{pid}]: mark {n}" for n in range(MARKS)]
    assert all(recs[i]["level"] == 3 and recs[i]["flags"] == TEXT for i in marks)
    # The driver's records from both CPUs are interleaved with the markers.
    between = [r for r in recs[marks[0]:marks[-1]] if r["text"].startswith("d")]
    assert {r["text"].split("-")[0] for r in between} == {"d0", "d1"}

    tool = [r for r in recs if r["text"].startswith("dti[")]
    assert [re.sub(r"^dti\[\d+\]: ", "", r["text"]) for r in tool] == [
        "two words", "line one", "line two", "last without newline"]
    assert [r["level"] for r in tool] == [2, 3, 3, 3]


def test_marker_edges(dti_guest, dti_tool):
    dti_guest.extra_files[str(dti_tool)] = "/bin/dti"
    res = dti_guest.run(PRELUDE + """
        ctl register_sub drv 65536 4 5 0
        ctl register_sub tiny 1024 2 7 1
        stat -c '%a %n' $D/drv/marker $D/drv/marker_raw $D/drv/marker_level > /out/modes
        cat $D/drv/marker_level > /out/mlevel
        head -c 3000 /dev/zero | tr '\\0' x > /tmp/long
        dd if=/tmp/long of=$D/drv/marker bs=3000 count=1 2>/dev/null
        dti write drv ''
        echo > $D/drv/marker
        echo '<1>urgent' > $D/drv/marker
        echo '<9>not a level' > $D/drv/marker
        badwrite $D/drv/marker_level 9 > /out/ml9
        badwrite $D/drv/marker_level off > /out/mloff
        echo 6 > $D/drv/marker_level
        echo filtered > $D/drv/marker && echo OK > /out/filtered
        echo '<4>kept' > $D/drv/marker
        head -c 2000 /dev/urandom > /tmp/bin
        dd if=/tmp/bin of=$D/tiny/marker_raw bs=2000 count=1 2>/dev/null
        printf 'a\\000b\\n' > $D/tiny/marker_raw
        # tiny keeps its oldest records (one CPU: one ring): fill it, then a
        # marker finds no room.
        i=0
        while [ $i -lt 40 ]; do echo "fill $i" > $D/tiny/marker 2>/dev/null || :; i=$((i + 1)); done
        badwrite $D/tiny/marker "no room\\n" > /out/full
        cat $D/drv/stats > /out/stats
        dti read --format json drv > /out/drv
        dti read --format json tiny > /out/tiny
        cp /tmp/bin /out/bin
        cat $D/tiny/info > /out/tiny-info
    """, smp=1).check()
    out = res.outdir
    assert (out / "modes").read_text().split() == [
        "200", "/sys/kernel/debug/dti/drv/marker",
        "200", "/sys/kernel/debug/dti/drv/marker_raw",
        "600", "/sys/kernel/debug/dti/drv/marker_level"]
    assert (out / "mlevel").read_text() == "3\n"
    assert (out / "ml9").read_text().strip() == "REFUSED"
    assert (out / "mloff").read_text().strip() == "REFUSED"
    assert (out / "filtered").read_text().strip() == "OK"
    assert (out / "full").read_text().strip() == "REFUSED"

    drv = records(out / "drv")
    stamp = re.compile(r"^(\w+)\[\d+\]: ")
    got = [(r["level"], r["flags"], stamp.sub(r"\1: ", r["text"])) for r in drv]
    long_text = got[0][2]
    assert got[0][:2] == (3, TEXT | TRUNCATED)
    assert len(drv[0]["text"]) == TEXT_MAX - 1
    assert long_text.startswith("dd: xxx") and set(long_text[4:]) == {"x"}
    # "dti write drv ''" stored nothing; the lone newline an empty marker.
    assert got[1:] == [(3, TEXT, "sh: "), (1, TEXT, "sh: urgent"),
                       (3, TEXT, "sh: <9>not a level"), (4, TEXT, "sh: kept")]
    assert parse_stats((out / "stats").read_text())["total"]["filtered"] == 1

    tiny = records(out / "tiny")
    limit = int(re.search(r"^max_payload: (\d+)$", (out / "tiny-info").read_text(),
                          re.M).group(1))
    raw = bytes.fromhex(tiny[0]["data"])
    assert tiny[0]["flags"] == TRUNCATED
    assert raw == (out / "bin").read_bytes()[:limit] and len(raw) == limit
    assert tiny[1]["flags"] == 0 and bytes.fromhex(tiny[1]["data"]) == b"a\0b\n"
    assert [r["text"].split(": ", 1)[1] for r in tiny[2:]] == [
        f"fill {i}" for i in range(len(tiny) - 2)]
    assert "no room" not in (out / "tiny").read_text()
