# SPDX-License-Identifier: GPL-2.0
"""What babeltrace2 reads in a CTF trace that `dti export` (or -F ctf)
wrote, checked against what dti itself prints of the same input: every
record of `dti ... -F json` in the same order with every field equal, and
the discarded events of each CPU's stream equal to the losses dti tells
("N records lost on cpuC between seq A and B"), between the same records.

babeltrace2's Python bindings (python3-bt2) read the trace, and its
command (babeltrace2) must read it without an error.  Used by
runtime/tests/test_cli.py on saved traces and by testsuite/test_export.py
on the channels of a guest.
"""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import bt2

PENDING = 0x10
LOST = re.compile(r"(\d+) records lost on cpu(\d+) between seq (\d+) and (\d+)")


def _value(field, length=None):
    """A payload field as dti's JSON has it, given the CTF field's class;
    a text as long as its length field says (babeltrace2 2.0 gives an
    empty one the text of the event before)."""
    if isinstance(field, bt2._StringFieldConst):
        return str(field)[:length]
    if isinstance(field, bt2._ArrayFieldConst):
        return bytes(int(x) for x in field).hex()
    return int(field)


def _json_value(value, like):
    """A JSON field value as comparable with _value()'s of the same field:
    64-bit numbers and addresses are strings there."""
    if isinstance(like, int) and isinstance(value, str):
        return int(value, 0)
    return value


def _length(payload, name: str) -> int | None:
    """The value of the length field of sequence `name`, if it has one."""
    key = f"_{name}_length"
    return int(payload[key]) if key in payload and name in payload else None


def _is_length(payload, key: str) -> bool:
    """Whether field `key` is the length of a sequence (_NAME_length)."""
    name = key.removeprefix("_").removesuffix("_length")
    return key == f"_{name}_length" and name in payload


def read_ctf(path: Path) -> tuple[list[dict], list[dict]]:
    """The events of the trace at `path` (one trace) as dti's JSON records
    (ts_ns, channel, cpu, level, seq, flags, caller, and text, data or
    event and fields), in babeltrace2's order; and its discarded-events
    messages as {cpu, count, after, before}: the seq of the stream's
    events around them (None at either end)."""
    events, lost = [], []
    cpu_of, last_seq, waiting = {}, {}, {}
    for msg in bt2.TraceCollectionMessageIterator(str(path)):
        kind = type(msg).__name__
        if kind == "_PacketBeginningMessageConst":
            cpu_of[msg.packet.stream.addr] = int(msg.packet.context_field["cpu_id"])
        elif kind == "_DiscardedEventsMessageConst":
            s = msg.stream.addr
            d = {"cpu": cpu_of[s], "count": msg.count, "after": last_seq.get(s),
                 "before": None}
            waiting.setdefault(s, []).append(d)
            lost.append(d)
        elif kind == "_EventMessageConst":
            ev = msg.event
            ctx = ev.common_context_field
            flags = int(ctx["flags"])
            rec = {
                "ts_ns": msg.default_clock_snapshot.value,
                "channel": str(ev.stream.trace.environment["channel"]),
                "cpu": int(ctx["cpu"]), "level": int(ctx["level"]),
                "seq": None if flags & PENDING else int(ctx["seq"]),
                "flags": flags, "caller": int(ctx["caller"]),
            }
            payload = ev.payload_field
            fields = {k: _value(v, _length(payload, k)) for k, v in payload.items()
                      if not _is_length(payload, k)}
            if ev.name == "text":
                rec["text"] = fields["text"]
            elif ev.name == "binary":
                rec["data"] = fields["data"]
            else:
                rec["event"] = ev.name
                rec["fields"] = fields
            s = ev.stream.addr
            for d in waiting.pop(s, []):
                d["before"] = rec["seq"]
            last_seq[s] = rec["seq"]
            events.append(rec)
    return events, lost


def json_records(text: str) -> list[dict]:
    """`dti ... -F json` output as read_ctf() gives the records."""
    out = []
    for line in text.splitlines():
        r = json.loads(line)
        rec = {k: r[k] for k in ("ts_ns", "channel", "cpu", "level", "seq", "flags")}
        rec["ts_ns"] = int(rec["ts_ns"])
        rec["seq"] = None if rec["seq"] is None else int(rec["seq"])
        rec["caller"] = int(r["caller"], 16)
        if "fields" in r:
            rec["event"], rec["fields"] = r["event"], r["fields"]
        elif "text" in r:
            rec["text"] = r["text"]
        else:
            rec["data"] = r["data"]
        out.append(rec)
    return out


def losses(stderr: str) -> list[dict]:
    """The losses dti told on standard error, in order."""
    return [{"cpu": int(m[2]), "count": int(m[1]), "from": int(m[3]), "to": int(m[4])}
            for m in LOST.finditer(stderr)]


def babeltrace2_reads(path: Path) -> int:
    """babeltrace2's text output of the trace: it must read it with no
    error and no warning but those of discarded events.  Its lines."""
    r = subprocess.run(["babeltrace2", str(path)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, f"babeltrace2 {path}: {r.stderr[-2000:]}"
    other = [x for x in r.stderr.splitlines()
             if x and "discarded" not in x and not x.startswith(" ")]
    assert not other, f"babeltrace2 {path}: {r.stderr[-2000:]}"
    return len(r.stdout.splitlines())


def check(path: Path, json_text: str, stderr: str, exact_gaps: bool = True) -> dict:
    """Compare the trace at `path` with dti's JSON of the same records and
    the losses in dti's standard error `stderr`.  With `exact_gaps` (no
    filter), each loss lies between the records of the seq numbers dti
    names.  Returns counts for the test's own assertions."""
    want = json_records(json_text)
    got, lost = read_ctf(path)
    assert babeltrace2_reads(path) == len(want), path
    assert len(got) == len(want), (path, len(got), len(want))
    for i, (g, w) in enumerate(zip(got, want)):
        if "fields" in w:
            w = dict(w, fields={k: _json_value(v, g["fields"].get(k))
                                for k, v in w["fields"].items()})
        assert g == w, f"{path}: record {i}:\n ctf  {g}\n json {w}"
    told = losses(stderr)
    for cpu in {d["cpu"] for d in lost + told}:
        mine = [d for d in lost if d["cpu"] == cpu]
        theirs = [t for t in told if t["cpu"] == cpu]
        assert [d["count"] for d in mine] == [t["count"] for t in theirs], \
            (path, cpu, mine, theirs)
        for d, t in zip(mine, theirs) if exact_gaps else ():
            if d["after"] is not None:
                assert d["after"] == t["from"] - 1, (path, d, t)
            if d["before"] is not None:
                assert d["before"] == t["to"], (path, d, t)
    return {"records": len(got), "lost": sum(d["count"] for d in lost),
            "intervals": len(lost)}
