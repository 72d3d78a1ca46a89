"""The reader a support engineer needs (issue 42), in a guest: the filters
(-c LIST, -p, -g, --filter, -S/-U) and the report on a live channel and on
its snapshot, each checked against the records counted another way: the
JSON of every record, filtered here in Python, and the kernel's own
accounting (the stats file) for the records lost.
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from pathlib import Path

from dtirec import json_record, parse_stats
from guestlib import PRELUDE

HOST_DTI = Path(__file__).resolve().parent.parent / "runtime" / "build" / "dti"
LEVELS = ["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"]

SCRIPT = PRELUDE + """
NCPU=$(grep -c ^processor /proc/cpuinfo)
ctl register_sub ev 65536 4 7 0
ctl register_sub txt 65536 8 7 0
ctl evreg ev ints
ctl evreg ev mixed
c=0
while [ $c -lt $NCPU ]; do
    ctl evlog ev 6 40 $c process txt
    ctl printk txt $((c + 2)) 5 $c softirq lvl$c
    c=$((c + 1))
done
dti read txt -F json > /out/all.json
dti read txt -F json -c 0,2-3 > /out/cpus.json
dti read txt -F json -c 1 -c 3 > /out/cpus13.json
dti read txt -F json -p warning > /out/warning.json
dti read txt -F json -g '^lvl[12] ' > /out/grep.json
dti read txt -F json --filter 'level >= err && cpu != 0' > /out/expr.json
dti read txt -F json -U -0 > /out/until-now.json
dti read txt --report > /out/report
dti read ev -F json > /out/ev.json
dti read ev -F json --filter 'event == ints && n < 20' > /out/ev-ints.json
cat $D/txt/stats > /out/txt.stats
dti snapshot txt /out/snap > /dev/null
# no-overwrite: records refused when full, a gap once space is free again
ctl register_sub no 1024 4 7 1
ctl printk no 3 600 0 process keep
dti read no > /dev/null
ctl printk no 3 3 0 process after
cat $D/no/stats > /out/no.stats
dti read no -F json > /out/no.json 2> /dev/null
dti read no --report > /out/no.report 2> /out/no.err
"""


def records(path: Path) -> list[dict]:
    return [json_record(x) for x in path.read_text().splitlines()]


def host_dti(*args) -> str:
    r = subprocess.run([str(HOST_DTI), *map(str, args)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def report_counts(text: str, section: str) -> dict[str, int]:
    """A report section's "NAME COUNT" lines (level, kind) as a dict."""
    body = text.split(f"\n{section} ", 1)[1].split("\n\n", 1)[0]
    return {m[1]: int(m[2]) for m in re.finditer(r"^(.+?) +(\d+)$", body, re.M)}


def check_report(text: str, recs: list[dict], lost: int = 0) -> None:
    assert text.startswith(f"records: {len(recs)} from "), text[:200]
    assert f"\nlost: {lost} records in " in text, text
    assert report_counts(text, "level") == \
        {LEVELS[k]: n for k, n in Counter(r["level"] for r in recs).items()}, text
    cpus = {int(m[1]): (int(m[2]), int(m[3])) for m in
            re.finditer(r"^(\d+) +(\d+) +\S+ +\S+ +\S+ +(\d+)$", text, re.M)}
    assert {c: n for c, (n, _) in cpus.items()} == Counter(r["cpu"] for r in recs), text
    kinds = Counter("event " + r["event"] if "event" in r else
                    "text" if "text" in r else "binary" for r in recs)
    assert report_counts(text, "kind") == dict(kinds), text


def test_filters_and_report_live_and_snapshot(dti_guest, dti_tool):
    dti_guest.extra_files[str(dti_tool)] = "/bin/dti"
    res = dti_guest.run(SCRIPT, smp=4).check()
    out = res.outdir
    recs = records(out / "all.json")
    assert len(recs) == 4 * (40 + 5), len(recs)
    assert {r["channel"] for r in recs} == {"txt"}

    def want(pred) -> list[tuple]:
        return [(r["cpu"], r["seq"]) for r in recs if pred(r)]

    def got(name: str) -> list[tuple]:
        return [(r["cpu"], r["seq"]) for r in records(out / name)]

    assert got("cpus.json") == want(lambda r: r["cpu"] in (0, 2, 3))
    assert got("cpus13.json") == want(lambda r: r["cpu"] in (1, 3))
    assert got("warning.json") == want(lambda r: r["level"] <= 4) and got("warning.json")
    assert got("grep.json") == want(lambda r: re.match(r"lvl[12] ", r["text"]))
    assert len(got("grep.json")) == 10
    assert got("expr.json") == want(lambda r: r["level"] >= 3 and r["cpu"] != 0)
    assert got("until-now.json") == want(lambda r: True)
    ev = records(out / "ev.json")
    ints = [(r["cpu"], r["seq"]) for r in ev
            if r["event"] == "ints" and int(r["fields"]["n"]) < 20]
    assert ints and got("ev-ints.json") == ints
    # the report of the live channel, and of its snapshot, count what JSON has
    check_report((out / "report").read_text(), recs)
    stats = parse_stats((out / "txt.stats").read_text())["total"]
    assert stats["written"] == len(recs)
    snap = out / "snap"
    snap_report = host_dti("report", snap)
    check_report(snap_report, recs)
    assert "\naccounting (" in snap_report and f"{snap}/stats" in snap_report
    # a time range from boot on the snapshot, on the host
    ts = sorted(r["ts_ns"] for r in recs)
    lo, hi = ts[len(ts) // 4], ts[3 * len(ts) // 4]
    span = host_dti("decode", "-F", "json", "-S", f"{lo // 10**9}.{lo % 10**9:09d}",
                    "-U", f"{hi // 10**9}.{hi % 10**9:09d}", snap)
    assert [(r["cpu"], r["seq"]) for r in map(json_record, span.splitlines())] == \
        want(lambda r: lo <= r["ts_ns"] <= hi)
    # since the last record, until the first
    last = host_dti("decode", "-F", "json", "-S", "-0", snap)
    assert [r["ts_ns"] for r in map(json_record, last.splitlines())] == [ts[-1]] * \
        ts.count(ts[-1])
    first = host_dti("decode", "-F", "json", "-U", "+0", snap)
    assert [r["ts_ns"] for r in map(json_record, first.splitlines())] == [ts[0]] * \
        ts.count(ts[0])
    # lost records: the report's interval is the gap the kernel counted
    no = records(out / "no.json")
    no_stats = parse_stats((out / "no.stats").read_text())["total"]
    lost = no_stats["dropped"]      # refused when full: they took sequence numbers
    seqs = sorted(r["seq"] for r in no)
    assert lost > 0 and seqs[-1] - seqs[0] + 1 - len(seqs) == lost, (no_stats, seqs)
    no_report = (out / "no.report").read_text()
    check_report(no_report, no, lost=lost)
    assert re.search(rf"\ncpu0 +\d+\.\.\d+ \({lost}\)  \d+\.\d{{9}} \.\. \d+\.\d{{9}}\n",
                     no_report), no_report


MERGE_SCRIPT = PRELUDE + """
NCPU=$(grep -c ^processor /proc/cpuinfo)
ctl register_sub alpha 65536 8 7 0
ctl register_sub beta 65536 8 7 0
ctl evreg beta ints
ctl evreg beta mixed
write_both() {  # $1: tag; the channels take turns, on every CPU
    i=0
    while [ $i -lt $((NCPU * 3)) ]; do
        ctl printk alpha 3 2 $((i % NCPU)) process "a$1$i"
        ctl printk beta 4 1 $((i % NCPU)) softirq "b$1$i"
        ctl evlog beta 6 1 $((i % NCPU)) process alpha
        i=$((i + 1))
    done
}
write_both x
dti read alpha -F json > /out/alpha.json
dti read beta -F json > /out/beta.json
dti read alpha beta -F json > /out/both.json
dti read alpha beta -F ts > /out/both.ts
dti read alpha beta -F json -p err > /out/both-err.json
dti read -f alpha beta -F json > /out/follow.json 2> /out/follow.err &
pid=$!
sleep 1
write_both y
sleep 1
kill -INT $pid
wait $pid && echo $? > /out/follow-rc || echo $? > /out/follow-rc
dti read alpha beta -F json > /out/after.json
"""


def test_channels_in_one_timeline(dti_guest, dti_tool):
    """`dti read alpha beta`: two live channels written in turns, as one
    timeline: the union of each channel read alone, by time (ties: the
    channel named first); the filters hold on it; -f follows both."""
    dti_guest.extra_files[str(dti_tool)] = "/bin/dti"
    out = dti_guest.run(MERGE_SCRIPT, smp=2).check().outdir
    alpha, beta = records(out / "alpha.json"), records(out / "beta.json")
    both = records(out / "both.json")
    # 2 CPUs x 3 turns: alpha 2 records and an event's text each, beta 1 and the event
    assert {r["channel"] for r in alpha} == {"alpha"} and len(alpha) == 6 * 3
    assert {r["channel"] for r in beta} == {"beta"} and len(beta) == 6 * 2
    assert any("event" in r for r in beta)
    assert both == sorted(alpha + beta, key=lambda r: r["ts_ns"])
    # ts: each line after its channel, padded to the longest name
    ts = (out / "both.ts").read_text().splitlines()
    assert [x.split(" [", 1)[0].strip() for x in ts] == [r["channel"] for r in both]
    assert all(x.startswith(("alpha [", "beta  [")) for x in ts), ts[:4]
    assert records(out / "both-err.json") == [r for r in both if r["level"] <= 3]
    # following both: every record there is, those written meanwhile too,
    # each channel's in its order
    follow, after = records(out / "follow.json"), records(out / "after.json")
    assert (out / "follow-rc").read_text().strip() == "0"
    assert (out / "follow.err").read_text() == ""
    assert len(after) == 2 * len(both)
    for ch in ("alpha", "beta"):
        assert [r for r in follow if r["channel"] == ch] == \
            [r for r in after if r["channel"] == ch]
    assert after == sorted(after, key=lambda r: r["ts_ns"])
