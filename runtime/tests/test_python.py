"""libdti's Python binding (runtime/python/dti.py) against `dti decode -F
json` on the same snapshots: every record and field, the filters, the
errors, and the example (examples/python/snapshot_levels.py)."""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

RUNTIME = Path(__file__).resolve().parent.parent
os.environ["DTI_LIBDTI"] = str(RUNTIME / "build" / "libdti.so.0")
sys.path.insert(0, str(RUNTIME / "python"))
sys.path.insert(0, str(RUNTIME.parent / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import dti  # noqa: E402
import decode_events  # noqa: E402  (typed events as dti.ko writes them)
from test_cli import DTI, make_snap  # noqa: E402


def decoded(*args) -> list[dict]:
    out = subprocess.run([str(DTI), "decode", "-F", "json", *map(str, args)],
                         capture_output=True, text=True, check=True).stdout
    return [json.loads(x) for x in out.splitlines()]


def same_field(py, js) -> bool:
    """A field's value as the binding gives it and as JSON does (64-bit
    numbers and pointers as strings, byte arrays as hex)."""
    if isinstance(py, bytes):
        return py.hex() == js
    if isinstance(py, int) and isinstance(js, str):
        return py == int(js, 0)
    return py == js


def same(py: dict, js: dict) -> bool:
    """A binding record equals a JSON one (whose 64-bit numbers are strings)."""
    want = {"ts_ns": int(js["ts_ns"]), "cpu": js["cpu"], "level": js["level"],
            "seq": None if js["seq"] is None else int(js["seq"]), "flags": js["flags"],
            "caller": int(js["caller"], 16)}
    if any(py[k] != v for k, v in want.items()):
        return False
    if "event" in js:
        return py["event"] == js["event"] and py["id"] == js["id"] and \
            js["fields"].keys() == py["fields"].keys() and \
            all(same_field(py["fields"][k], v) for k, v in js["fields"].items())
    if "text" in js:
        return py["text"] == js["text"]
    return py["data"].hex() == js["data"]


def test_text_records(tmp_path):
    make_snap(tmp_path / "snap")
    recs = dti.load(tmp_path / "snap")
    js = decoded(tmp_path / "snap")
    assert len(recs) == len(js) == 6
    assert all(same(p, j) for p, j in zip(recs, js)), (recs[:2], js[:2])
    assert recs[0]["source"].endswith("trace0") and recs[0]["text"] == "zero-a"


def test_typed_events_and_filters(tmp_path):
    decode_events.snapshot(tmp_path / "ev", 300, typed=True)
    recs = dti.load(tmp_path / "ev")
    js = decoded(tmp_path / "ev")
    assert len(recs) == len(js) == 300
    assert all(same(p, j) for p, j in zip(recs, js))
    assert recs[1]["event"] == "xfer" and recs[1]["fields"] == \
        {"dev": 1, "irq": 18, "status": 0, "len": 1024}
    # the filters are libdti's, as dti decode's options
    for kw, args in [({"expr": "status != 0 && len > 1024"},
                      ["--filter", "status != 0 && len > 1024"]),
                     ({"grep": "irq 19"}, ["-g", "irq 19"]),
                     ({"since": "+10us", "until": "-10us"}, ["-S", "+10us", "-U", "-10us"]),
                     ({"priority": 6, "cpus": "0"}, ["-p", "6", "-c", "0"])]:
        got = [r["seq"] for r in dti.load(tmp_path / "ev", **kw)]
        want = [int(j["seq"]) for j in decoded(*args, tmp_path / "ev")]
        assert got == want and got, (kw, len(got), len(want))


def test_errors(tmp_path):
    with pytest.raises(dti.DTIError) as e:
        dti.load(tmp_path / "none")
    assert e.value.errno == errno.ENOENT and str(tmp_path / "none") in str(e.value)
    make_snap(tmp_path / "snap")
    with pytest.raises(dti.DTIError) as e:
        dti.load(tmp_path / "snap", expr="status !=")
    assert "a value was expected at column 10" in str(e.value)
    with pytest.raises(dti.DTIError) as e:
        dti.load(tmp_path / "snap", cpus="1-0")
    assert "runs backwards" in str(e.value)


def test_example(tmp_path):
    make_snap(tmp_path / "snap")
    env = dict(os.environ, PYTHONPATH=str(RUNTIME / "python"))
    r = subprocess.run([sys.executable, str(RUNTIME.parent / "examples" / "python" /
                                            "snapshot_levels.py"), str(tmp_path / "snap")],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "cpu0 err      3\ncpu1 err      3\n" \
        "first error at 1.000000000 on cpu0: zero-a\n", r.stdout


def test_merge_of_snapshots(tmp_path):
    """Reader.merge() of two snapshots: `dti decode DIR1 DIR2`'s records,
    each with its channel; the filters hold for the merged records."""
    from test_cli import make_other
    make_snap(tmp_path / "snap")
    make_other(tmp_path / "other")
    with dti.Reader.merge([dti.Reader.dir(tmp_path / "snap"),
                           dti.Reader.dir(tmp_path / "other")]) as r:
        recs = list(r)
    js = decoded(tmp_path / "snap", tmp_path / "other")
    assert len(recs) == len(js) == 11
    assert all(same(p, j) and p["channel"] == j["channel"] for p, j in zip(recs, js))
    with dti.Reader.merge([dti.Reader.dir(tmp_path / "other"),
                           dti.Reader.dir(tmp_path / "snap")], cpus="1", since="+6ns") as r:
        got = [(p["channel"], p["text"]) for p in r]
    assert got == [("other", "o1-a"), ("test", "one-b"), ("other", "o1-b"), ("test", "one-c")]


GUEST_SNAP = Path(__file__).resolve().parent / "guest-output" / "snap"


def guest_snap_with(tmp_path, name, offset):
    """The real guest snapshot with byte `offset` of its trace0 flipped."""
    d = tmp_path / name
    d.mkdir()
    for f in GUEST_SNAP.iterdir():
        (d / f.name).write_bytes(f.read_bytes())
    data = bytearray((d / "trace0").read_bytes())
    data[offset] ^= 0xff
    (d / "trace0").write_bytes(bytes(data))
    return d


def decode_stderr(*args) -> tuple[int, list[str]]:
    """dti decode's exit status and its messages, "dti: " (and "warning: ") off."""
    r = subprocess.run([str(DTI), "decode", "-F", "json", *map(str, args)],
                       capture_output=True, text=True)
    return r.returncode, [re.sub(r"^dti: (warning: )?", "", x) for x in r.stderr.splitlines()]


def test_random_bytes_raise(tmp_path):
    """Bytes that are no DTI data raise DTIDamageError with dti decode's
    message, where libdti reports the damage (not an empty list); strict
    too, with the message of `dti decode --strict`; on_damage takes it
    instead."""
    import random
    (tmp_path / "noise").write_bytes(random.Random(52).randbytes(4096))
    code, msgs = decode_stderr(tmp_path / "noise")
    assert code == 2 and len(msgs) == 1 and "bad magic" in msgs[0], msgs
    with pytest.raises(dti.DTIDamageError) as e:
        dti.load(tmp_path / "noise")
    assert isinstance(e.value, dti.DTIError) and e.value.errno == errno.EBADMSG
    assert e.value.strerror == msgs[0]
    assert (e.value.source, e.value.offset, e.value.skipped) == \
        (str(tmp_path / "noise"), 0, 4096)
    _, strict = decode_stderr("--strict", tmp_path / "noise")
    with pytest.raises(dti.DTIDamageError) as e:
        dti.load(tmp_path / "noise", strict=True)
    assert e.value.strerror == strict[0]
    got = []
    assert dti.load(tmp_path / "noise", on_damage=got.append) == []
    assert [x.strerror for x in got] == msgs


def test_damage_and_lost_records(tmp_path):
    """A real guest snapshot with one record's magic damaged: iterating
    gives the records before the damage, then raises DTIDamageError with
    dti decode's message; with on_damage reading goes on and gives what
    dti decode prints, and the records the damage cost come as a lost-record
    dict, with dti decode's message, before the record after them."""
    snap = guest_snap_with(tmp_path, "damaged", 384)
    code, msgs = decode_stderr(snap)
    js = decoded_any(snap)
    assert code == 2 and len(msgs) == 2, msgs
    seen = []
    with pytest.raises(dti.DTIDamageError) as e:
        for rec in dti.Reader.dir(snap):
            seen.append(rec)
    assert e.value.strerror == msgs[0] and e.value.offset == 384 and e.value.cpu == 0
    assert seen and all(same(p, j) for p, j in zip(seen, js))
    got = []
    recs = dti.load(snap, on_damage=got.append)
    assert [x.strerror for x in got] == [msgs[0]]
    lost = [i for i, r in enumerate(recs) if "lost" in r]
    assert len(lost) == 1
    gap = recs[lost[0]]
    assert {k: gap[k] for k in ("lost", "cpu", "from_seq", "to_seq", "message")} == \
        {"lost": 24, "cpu": 0, "from_seq": 6, "to_seq": 30, "message": msgs[1]}
    assert gap["source"].endswith("trace0") and "ts_ns" not in gap
    after = next(r for r in recs[lost[0]:] if r.get("cpu") == 0 and "lost" not in r)
    assert after["seq"] == 30
    plain = [r for r in recs if "lost" not in r]
    assert len(plain) == len(js) and all(same(p, j) for p, j in zip(plain, js))


def decoded_any(*args) -> list[dict]:
    """decode's JSON records whatever its exit status (damage is 2)."""
    out = subprocess.run([str(DTI), "decode", "-F", "json", *map(str, args)],
                         capture_output=True, text=True).stdout
    return [json.loads(x) for x in out.splitlines()]


def test_lost_records_of_a_gap(tmp_path):
    """A gap in a CPU's sequence numbers is a lost-record dict where it is,
    as dti decode warns; not for a CPU the filter leaves out (as -c)."""
    from test_cli import SUBBUF, SUBINFO, make_snap, rec, stream
    data = rec(0, 0, 1, SUBINFO.pack(4096, 4, 0, 4, 0, 0, b"test"), flags=SUBBUF, level=0)
    for seq in (0, 1, 5, 6):
        data += rec(0, seq, 1000 + seq, f"s{seq}")
    make_snap(tmp_path / "gap", {0: data, 1: stream(1, ["one-a"])})
    _, msgs = decode_stderr(tmp_path / "gap")
    assert msgs == ["3 records lost on cpu0 between seq 2 and 5"]
    recs = dti.load(tmp_path / "gap")
    assert [r.get("text", r.get("lost")) for r in recs] == ["s0", "s1", 3, "s5", "s6", "one-a"]
    assert recs[2]["message"] == msgs[0] and recs[2]["from_seq"] == 2
    assert [r["text"] for r in dti.load(tmp_path / "gap", cpus="1")] == ["one-a"]
    assert [r.get("lost") for r in dti.load(tmp_path / "gap", cpus="0")] == \
        [None, None, 3, None, None]


def test_warnings(tmp_path):
    """What dti decode warns of and reads as it is (here a real record's
    sequence number damaged: a step back, a record newer than the stats)
    is a DTIWarning with its message."""
    snap = guest_snap_with(tmp_path, "seq", 400)
    _, msgs = decode_stderr(snap)
    with pytest.warns(dti.DTIWarning) as w:
        recs = dti.load(snap)
    assert [str(x.message) for x in w] == [m for m in msgs if "records lost" not in m]
    assert [r["message"] for r in recs if "lost" in r] == \
        [m for m in msgs if "records lost" in m]


def test_filter_field_nothing_has(tmp_path):
    """expr naming a field no record and no event type read has raises
    where the records end, naming the field and the types' fields."""
    decode_events.snapshot(tmp_path / "ev", 30, typed=True)
    with pytest.raises(dti.DTIError) as e:
        dti.load(tmp_path / "ev", expr="stauts != 0")
    assert e.value.errno == errno.EINVAL
    assert 'no field stauts' in str(e.value) and "(dev, irq, status, len)" in str(e.value)
