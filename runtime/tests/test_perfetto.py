# SPDX-License-Identifier: GPL-2.0
"""dti export -F perfetto: the trace decoded by protoc against the schema
the writer follows (runtime/perfetto/dti_perfetto.proto, Perfetto's field
numbers) holds every record dti decode -F json prints, in its order, with
its time, CPU, level, seq, caller, message or event type and fields; its
tracks are a channel's and its CPUs'; lost records are slices between the
CPU's records around them.  Inputs: a guest's snapshot (text and typed
events), channels of real memory dumps saved as snapshots (replayed and
pending records, a wrapped ring), and made-up snapshots for losses,
binary records, bytes that are no UTF-8 and replayed records of another
CPU.

protoc is Debian's protobuf-compiler (.ci/install-deps).
Run after `make -C runtime`: python3 -m pytest -q runtime/tests/test_perfetto.py
"""
import json
import re
import shutil
import subprocess

import pytest

from test_cli import (DTI, LEVELS, RUNTIME, SUBBUF, SUBINFO, TEXT, make_debugfs, make_snap,
                      rec)

PROTO = RUNTIME / "perfetto" / "dti_perfetto.proto"
TESTS = RUNTIME / "tests"
CONSOLE = TESTS / "guest-output" / "console.log"
MONOTONIC = 3
TRUNCATED, REPLAYED = 0x02, 0x08


def stream(cpu, records, name=b"made"):
    """A CPU's trace file: a sub-buffer header, then `records` (rec()s)."""
    info = SUBINFO.pack(4096, 4, 0, len(records), 0, 0, name)
    return rec(cpu, 0, 1, info, flags=SUBBUF, level=0) + b"".join(records)


def dti(*args):
    return subprocess.run([str(DTI), *map(str, args)], capture_output=True, timeout=60)


def unescape(s):
    """A string as protoc's text format prints it (C escapes, octal bytes)."""
    out, i = bytearray(), 0
    simple = {"n": 10, "r": 13, "t": 9, '"': 34, "'": 39, "\\": 92, "a": 7, "b": 8,
              "f": 12, "v": 11, "?": 63}
    while i < len(s):
        c = s[i]
        if c != "\\":
            out += c.encode()
            i += 1
        elif s[i + 1] in simple:
            out.append(simple[s[i + 1]])
            i += 2
        elif s[i + 1] == "x":
            m = re.match(r"[0-9a-fA-F]{1,2}", s[i + 2:])
            out.append(int(m.group(), 16))
            i += 2 + len(m.group())
        else:
            m = re.match(r"[0-7]{1,3}", s[i + 1:])
            out.append(int(m.group(), 8))
            i += 1 + len(m.group())
    return out.decode("utf-8")     # strict: the writer's strings are UTF-8


def parse_text(text):
    """protoc --decode's text format as nested dicts of lists."""
    root, stack = {}, []
    cur = root
    for line in text.splitlines():
        line = line.strip()
        if line.endswith("{"):
            child = {}
            cur.setdefault(line[:-1].strip(), []).append(child)
            stack.append(cur)
            cur = child
        elif line == "}":
            cur = stack.pop()
        elif line:
            key, value = line.split(": ", 1)
            if value.startswith('"'):
                value = unescape(value[1:-1])
            elif re.fullmatch(r"-?\d+", value):
                value = int(value)
            cur.setdefault(key, []).append(value)
    assert not stack, "unbalanced braces in protoc's output"
    return root


def decode_trace(path):
    """The packets of the trace at `path`, decoded by protoc against the schema."""
    assert shutil.which("protoc"), "protoc missing: apt-get install protobuf-compiler (.ci/install-deps)"
    with open(path, "rb") as f:
        p = subprocess.run(["protoc", f"-I{PROTO.parent}", "--decode=perfetto.protos.Trace",
                            PROTO.name], stdin=f, capture_output=True, cwd=PROTO.parent,
                           timeout=120)
    assert p.returncode == 0 and not p.stderr, p.stderr.decode()
    return parse_text(p.stdout.decode()).get("packet", [])


def one(msg, key, default=None):
    values = msg.get(key)
    if values is None:
        return default
    assert len(values) == 1, (key, values)
    return values[0]


def annotation_value(a):
    for kind in ["bool_value", "uint_value", "int_value", "string_value", "pointer_value"]:
        if kind in a:
            return (kind, one(a, kind))
    return ("dict", {one(e, "name"): annotation_value(e) for e in a.get("dict_entries", [])})


class Trace:
    """A decoded trace: its tracks by uuid, its events in the file's order."""

    def __init__(self, path):
        self.packets = decode_trace(path)
        self.tracks, self.events = {}, []
        # SEQ_INCREMENTAL_STATE_CLEARED on the first packet
        assert [one(p, "sequence_flags") for p in self.packets][:2] == [1, None]
        # the trace's clock is MONOTONIC, said before the first time
        clock = [i for i, p in enumerate(self.packets) if "clock_snapshot" in p]
        assert len(clock) == 1 and all("timestamp" not in p for p in self.packets[:clock[0]])
        snap = one(self.packets[clock[0]], "clock_snapshot")
        assert one(snap, "primary_trace_clock") == "BUILTIN_CLOCK_MONOTONIC"
        assert one(one(snap, "clocks"), "clock_id") == MONOTONIC
        for p in self.packets:
            assert one(p, "trusted_packet_sequence_id") == 1
            if "track_descriptor" in p:
                t = one(p, "track_descriptor")
                uuid = one(t, "uuid")
                assert uuid not in self.tracks, "a track described twice"
                self.tracks[uuid] = t
            if "track_event" in p:
                e = one(p, "track_event")
                assert one(e, "track_uuid") in self.tracks, "an event before its track"
                assert one(p, "timestamp_clock_id") == MONOTONIC
                self.events.append({
                    "ts": one(p, "timestamp"), "type": one(e, "type"),
                    "track": self.track_path(one(e, "track_uuid")),
                    "name": one(e, "name"),
                    "ann": {one(a, "name"): annotation_value(a)
                            for a in e.get("debug_annotations", [])},
                })
        assert self.events, "no event in the trace"

    def track_path(self, uuid):
        t = self.tracks[uuid]
        parent = one(t, "parent_uuid")
        return (self.track_path(parent) if parent else ()) + (one(t, "name"),)

    def records(self):
        return [e for e in self.events if "level" in e["ann"]]

    def losses(self):
        """Slices' ends and instants named "lost N records"."""
        losses = [e for e in self.events if "level" not in e["ann"]]
        assert all(e["type"] == "TYPE_SLICE_END" or re.fullmatch(r"lost \d+ records", e["name"])
                   for e in losses)
        return losses


def json_records(*inputs, args=()):
    p = dti("decode", "-F", "json", *args, *inputs)
    assert p.returncode == 0, p.stderr
    return [json.loads(x) for x in p.stdout.decode().splitlines()]


def export(tmp_path, *inputs, args=()):
    out = tmp_path / "trace.pftrace"
    p = dti("export", "-F", "perfetto", *args, out, *inputs)
    assert p.returncode == 0, p.stderr
    return Trace(out)


def check_records(trace, recs):
    """Every record of dti decode -F json is its event, in its order."""
    events = trace.records()
    assert len(events) == len(recs) > 0
    for e, r in zip(events, recs):
        a = e["ann"]
        assert e["type"] == "TYPE_INSTANT"
        assert e["ts"] == int(r["ts_ns"])
        log_cpu = a.get("log_cpu", ("uint_value", r["cpu"]))[1]
        assert log_cpu == r["cpu"]
        assert e["track"][0] == r["channel"] and re.fullmatch(r"cpu\d+", e["track"][1])
        assert ("log_cpu" in a) == (r["flags"] & REPLAYED and e["track"][1] != f"cpu{r['cpu']}")
        assert a["level"] == ("string_value", LEVELS[r["level"]])
        assert a.get("seq") == (None if r["seq"] is None else ("uint_value", int(r["seq"])))
        assert a["caller"] == ("pointer_value", int(r["caller"], 16))
        assert ("replayed" in a) == bool(r["flags"] & REPLAYED)
        assert ("pending" in a) == (r["seq"] is None)
        assert ("truncated" in a) == bool(r["flags"] & TRUNCATED)
        if "event" in r:
            assert e["name"] == r["event"]
            kinds, fields = a["fields"]
            assert kinds == "dict" and list(fields) == list(r["fields"])
            for name, value in r["fields"].items():
                kind, got = fields[name]
                if kind == "pointer_value":
                    assert got == int(value, 16)
                elif kind == "string_value":
                    assert got == value
                else:
                    assert kind == ("int_value" if int(value) < 0 else kind)
                    assert got == int(value)
        elif r["flags"] & TEXT:
            text = r["text"]
            assert e["name"] == (text[:-1] if text.endswith("\n") else text)
        else:
            assert e["name"] == "binary" and a["data"] == ("string_value", r["data"])


def test_guest_snapshot(tmp_path):
    """A guest's snapshot: text records and typed events of every kind
    of field (signed, unsigned, hex, pointers, strings, bytes)."""
    snap = TESTS / "guest-output" / "snap"
    trace = export(tmp_path, snap)
    recs = json_records(snap)
    assert {r.get("event") for r in recs} >= {None, "ints", "mixed"}
    check_records(trace, recs)
    names = {one(t, "name") for t in trace.tracks.values()}
    assert names == {"sev", "cpu0", "cpu1"}
    # the CPUs' tracks are the channel's children, ranked by number
    for t in trace.tracks.values():
        if one(t, "name").startswith("cpu"):
            assert one(t, "sibling_order_rank", 0) == int(one(t, "name")[3:])
            assert one(trace.tracks[one(t, "parent_uuid")], "child_ordering") == "EXPLICIT"


def command_trace(tmp_path, args):
    """`dti ARGS -F perfetto -o FILE` and `dti ARGS -F json`: the trace and the records."""
    out = tmp_path / "trace.pftrace"
    p = dti(*args, "-F", "perfetto", "-o", out)
    assert p.returncode == 0, p.stderr
    p = dti(*args, "-F", "json")
    assert p.returncode == 0, p.stderr
    return Trace(out), [json.loads(x) for x in p.stdout.decode().splitlines()]


@pytest.mark.parametrize("name", ["h_early", "h_raw", "wrap8k"])
def test_dump_channels(tmp_path, name):
    """Channels of real memory dumps (dti dump -F perfetto): records an
    early handle replayed (h_early), a pending store's with no seq (h_raw),
    a wrapped ring's 1325 (wrap8k)."""
    trace, recs = command_trace(tmp_path, ["dump", "--channel", name,
                                           TESTS / "dump-excerpts" / f"{name}.elf"])
    check_records(trace, recs)


def test_console_log_channels(tmp_path):
    """The channels of a console log (dti console-log -F perfetto): one
    trace, a track for each, text and binary records."""
    trace, recs = command_trace(tmp_path, ["console-log", CONSOLE])
    check_records(trace, recs)
    channels = {r["channel"] for r in recs}
    assert len(channels) == 2
    roots = {one(t, "name") for t in trace.tracks.values() if "parent_uuid" not in t}
    assert roots == channels


def test_live_channel(tmp_path):
    """A live channel (dti read -F perfetto, a debugfs tree made up)."""
    make_debugfs(tmp_path / "fs")
    trace, recs = command_trace(tmp_path, ["--debugfs", tmp_path / "fs", "read", "ch"])
    check_records(trace, recs)


def test_losses_and_odd_records(tmp_path):
    """Records lost on cpu1 (seq 2..4) are a slice from its record before
    to its record after; binary records carry their bytes; text that is no
    UTF-8 keeps its bytes as characters; a replayed record of CPU 0 in
    cpu1's buffer sits on cpu1's track with log_cpu 0."""
    base = 2_000_000_000
    cpu0 = stream(0, [rec(0, i, base + 100 * i, f"c0 {i}\n", level=i) for i in range(4)]
                  + [rec(0, 4, base + 400, "cut\n", flags=TEXT | TRUNCATED)])
    cpu1 = stream(1, [rec(1, 0, base + 10, b"\x01\x02\xff", flags=0, level=6),
                      rec(1, 1, base + 50, b"caf\xc3\xa9 \xff\xc0 \t end", level=6),
                      rec(1, 5, base + 250, "after the gap", level=6),
                      rec(1, 6, base + 260, "replayed", flags=TEXT | REPLAYED, log_cpu=0)])
    snap = make_snap(tmp_path / "snap", {0: cpu0, 1: cpu1})
    trace = export(tmp_path, snap)
    recs = json_records(snap)
    check_records(trace, recs)
    assert recs[2]["text"] == "caf\u00e9 \u00ff\u00c0 \t end"
    replayed = [e for e in trace.records() if e["name"] == "replayed"]
    assert len(replayed) == 1 and replayed[0]["ann"]["log_cpu"] == ("uint_value", 0)
    assert replayed[0]["track"] == ("made", "cpu1")
    begin, end = trace.losses()
    assert begin["type"] == "TYPE_SLICE_BEGIN" and end["type"] == "TYPE_SLICE_END"
    assert begin["track"] == end["track"] == ("made", "cpu1")
    assert (begin["ts"], end["ts"]) == (base + 50, base + 250)
    assert begin["name"] == "lost 3 records" and begin["ann"] == {
        "count": ("uint_value", 3), "first_seq": ("uint_value", 2),
        "last_seq": ("uint_value", 4)}
    # the filters hold: cpu1 alone, its loss too
    trace = export(tmp_path, snap, args=["-c", "1"])
    check_records(trace, json_records(snap, args=["-c", "1"]))
    assert len(trace.losses()) == 2
    trace = export(tmp_path, snap, args=["-c", "0", "-p", "err"])
    check_records(trace, json_records(snap, args=["-c", "0", "-p", "err"]))
    # (the record replayed from CPU 0 is on the track of the buffer holding it)
    assert not trace.losses() and {e["track"] for e in trace.events
                                   if e["name"] != "replayed"} == {("made", "cpu0")}


def test_loss_at_the_end(tmp_path):
    """A loss whose next record the filter leaves out is an instant at the
    CPU's record before it; one before a CPU's first record an instant at
    that record."""
    base = 3_000_000_000
    cpu0 = stream(0, [rec(0, 0, base, "a"), rec(0, 1, base + 10, "b"),
                      rec(0, 9, base + 1000, "late")])
    cpu1 = stream(1, [rec(1, 0, base + 5, "x"), rec(1, 4, base + 1000, "y")])
    snap = make_snap(tmp_path / "snap", {0: cpu0, 1: cpu1})
    trace = export(tmp_path, snap, args=["-U", "+100ns"])
    check_records(trace, json_records(snap, args=["-U", "+100ns"]))
    losses = {e["track"][1]: e for e in trace.losses()}
    assert losses["cpu0"]["type"] == "TYPE_INSTANT" and losses["cpu0"]["ts"] == base + 10
    assert losses["cpu0"]["name"] == "lost 7 records"
    assert losses["cpu1"]["ts"] == base + 5
    trace = export(tmp_path, snap, args=["-S", "+100ns"])
    check_records(trace, json_records(snap, args=["-S", "+100ns"]))
    losses = {e["track"][1]: e for e in trace.losses()}
    assert losses["cpu0"]["type"] == "TYPE_INSTANT" and losses["cpu0"]["ts"] == base + 1000


def test_symbols(tmp_path):
    """--kallsyms: the caller's symbol beside its address."""
    snap = make_snap(tmp_path / "snap", {0: stream(0, [rec(0, 0, 5, "one")])})
    (tmp_path / "ksyms").write_text("ffffffffc0001000 t mod_a\t[dti_test]\n"
                                    "ffffffffc0002000 t mod_b\t[dti_test]\n")
    trace = export(tmp_path, snap, args=["--kallsyms", tmp_path / "ksyms"])
    assert trace.records()[0]["ann"]["symbol"] == ("string_value", "mod_a+0x234/0x1000 [dti_test]")


def test_standard_output(tmp_path):
    """FILE '-': the trace on standard output, the same bytes."""
    snap = TESTS / "guest-output" / "snap"
    p = dti("export", "-F", "perfetto", "-", snap)
    assert p.returncode == 0, p.stderr
    assert dti("export", "-F", "perfetto", tmp_path / "t", snap).returncode == 0
    assert p.stdout == (tmp_path / "t").read_bytes()


def test_write_error():
    """A full device: the write error is told, naming the file; exit 1."""
    p = dti("export", "-F", "perfetto", "/dev/full", TESTS / "guest-output" / "snap")
    assert p.returncode == 1
    assert p.stderr.decode() == "dti: writing /dev/full: No space left on device\n"


def test_several_channels(tmp_path):
    """dti export -F perfetto FILE SNAP1 SNAP2: one trace, a track for
    each channel (a second channel of the same name is NAME.1, as dti
    export names its CTF trace), every record on its own channel's track
    in time order, and a loss on the track of the channel that lost it,
    from its own records around the gap."""
    base = 2_000_000_000
    one_ = make_snap(tmp_path / "one", {1: stream(1, [
        rec(1, 0, base + 50, "one 0", level=6), rec(1, 4, base + 250, "one 4", level=6)])})
    two = make_snap(tmp_path / "two", {1: stream(1, [
        rec(1, i, base + 100 + i, f"two {i}", level=6) for i in range(3)])})
    trace = export(tmp_path, one_, two)
    recs = json_records(one_, two)
    events = trace.records()
    assert [e["name"] for e in events] == [r["text"] for r in recs] == \
        ["one 0", "two 0", "two 1", "two 2", "one 4"]
    assert [e["track"] for e in events] == [("made", "cpu1")] + [("made.1", "cpu1")] * 3 + \
        [("made", "cpu1")]
    begin, end = trace.losses()
    assert begin["track"] == end["track"] == ("made", "cpu1")
    assert (begin["ts"], end["ts"]) == (base + 50, base + 250)
