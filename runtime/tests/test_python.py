"""libdti's Python binding (runtime/python/dti.py) against `dti decode -F
json` on the same snapshots: every record and field, the filters, the
errors, and the example (examples/python/snapshot_levels.py)."""

from __future__ import annotations

import errno
import json
import os
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


def same(py: dict, js: dict) -> bool:
    """A binding record equals a JSON one (whose 64-bit numbers are strings)."""
    want = {"ts_ns": int(js["ts_ns"]), "cpu": js["cpu"], "level": js["level"],
            "seq": None if js["seq"] is None else int(js["seq"]), "flags": js["flags"],
            "caller": int(js["caller"], 16)}
    if any(py[k] != v for k, v in want.items()):
        return False
    if "event" in js:
        return py["event"] == js["event"] and py["id"] == js["id"] and \
            {k: (int(v) if isinstance(v, str) and k != "s" else v)
             for k, v in js["fields"].items()} == py["fields"]
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
