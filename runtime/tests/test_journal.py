# SPDX-License-Identifier: GPL-2.0
"""The journal: `dti decode -F export` (systemd's Journal Export Format)
read by systemd-journal-remote into a journal file, read back with
`journalctl --file FILE -o json`, must hold every record and every field
that `dti decode -F json` prints of the same input: the real guest
snapshot (text records, typed events, callers through its kallsyms) and
a made one with what the export format must carry binary-safe (newlines
in a text and in an event's string, bytes that are not UTF-8, an empty
text, a binary record).

Needs systemd-journal-remote and journalctl (.ci/install-deps).  Run
after `make -C runtime` (`make -C runtime check` does):
    python3 -m pytest -q runtime/tests/test_journal.py
"""
from __future__ import annotations

import json
import shutil
import sys
import struct
import subprocess
from pathlib import Path

import pytest

from test_cli import (CALLER, DTI, HDR, MAGIC, RUNTIME, SAMPLE, SUBBUF, SUBINFO, TEXT,
                      make_snap, modules_text, run, sample_facts, work)  # noqa: F401 (work)

GUEST = RUNTIME / "tests" / "guest-output"
JOURNAL_REMOTE = Path("/lib/systemd/systemd-journal-remote")
FORMAT, TYPED = 0x20, 0x40
EVFMT = struct.Struct("<HBBHH")         # struct dti_event_format


def record(seq: int, ts: int, payload: bytes, flags: int, level: int = 6) -> bytes:
    raw = HDR.pack(MAGIC, 1, flags, level, HDR.size, 0, len(payload), 0, seq, ts,
                   CALLER) + payload
    return raw + bytes(-len(raw) % 8)


def odd_snapshot(d: Path) -> Path:
    """One CPU: texts with a newline inside, bytes that are not UTF-8, an
    empty one, a binary record, and events of a type "note" ("%s %u")
    whose string has a newline."""
    name, layout, fields, fmt = b"note", b"sI", b"msg,count", b"note %s %u"
    fmt_rec = EVFMT.pack(1, len(layout), len(name), len(fields), len(fmt)) + \
        name + layout + fields + fmt

    def note(msg: bytes, count: int) -> bytes:
        return struct.pack("<HH", 1, len(msg)) + msg + struct.pack("<I", count)

    recs = [(b"plain line\n", TEXT, 6), (b"two\nlines", TEXT, 3),
            (b"not \xff\xfe utf-8", TEXT, 0), (b"", TEXT, 7),
            (bytes(range(0, 256, 17)), 0, 4),
            (note(b"first\nsecond", 7), TYPED, 5), (note(b"tab\there", 4294967295), TYPED, 2)]
    body = record(0, 1, fmt_rec, FORMAT, level=0)
    for i, (payload, flags, level) in enumerate(recs):
        body += record(i, 2_000_000_000 + 1000 * i, payload, flags, level)
    info = SUBINFO.pack(4096, 4, 0, len(recs) + 1, 0, 0, b"odd")
    return make_snap(d, {0: record(0, 1, info, SUBBUF, level=0) + body})


def want(js: dict) -> dict[str, str]:
    """The journal fields a record of `dti decode -F json` exports to."""
    out = {"PRIORITY": str(js["level"]), "SYSLOG_IDENTIFIER": js.get("channel", "dti"),
           "DTI_TS_NS": js["ts_ns"], "DTI_CPU": str(js["cpu"]),
           "DTI_FLAGS": str(js["flags"]), "DTI_CALLER": js["caller"],
           "__MONOTONIC_TIMESTAMP": str(int(js["ts_ns"]) // 1000),
           # decode knows no boot: the wall clock is the time since boot
           "__REALTIME_TIMESTAMP": str(int(js["ts_ns"]) // 1000)}
    if "channel" in js:
        out["DTI_CHANNEL"] = js["channel"]
    if js["seq"] is not None:
        out["DTI_SEQ"] = js["seq"]
    if "symbol" in js:
        out["DTI_SYMBOL"] = js["symbol"]
        out["CODE_FUNC"] = js["symbol"].split("+")[0]
    # the caller's source line (--lines)
    for key, field in (("function", "CODE_FUNC"), ("offset", "DTI_CALLER_OFFSET"),
                       ("size", "DTI_CALLER_SIZE"), ("module", "DTI_MODULE"),
                       ("file", "CODE_FILE"), ("line", "CODE_LINE"),
                       ("column", "DTI_CALLER_COLUMN")):
        if key in js:
            out[field] = str(js[key])
    if js.get("inlined"):
        out["DTI_INLINED"] = ", ".join(f"{i['function']} inlined at {i['file']}:{i['line']}:"
                                       f"{i['column']}" for i in js["inlined"])
    if "event" in js:
        out["DTI_EVENT"], out["DTI_EVENT_ID"] = js["event"], str(js["id"])
        for k, v in js["fields"].items():
            out["DTI_FIELD_" + k.upper()] = str(v)
    if "data" in js:
        out["DTI_DATA"] = js["data"]
        out["MESSAGE"] = " ".join(js["data"][i:i + 2] for i in range(0, len(js["data"]), 2))
    else:
        out["MESSAGE"] = js["text"][:-1] if js["text"].endswith("\n") else js["text"]
    return out


def as_text(v) -> str:
    """A journalctl JSON value as dti's JSON has text: bytes that are not
    UTF-8 (journalctl: an array of numbers) as the characters of their values."""
    if isinstance(v, str):
        return v
    raw = bytes(v).decode("utf-8", "surrogateescape")
    return "".join(chr(ord(c) - 0xdc00) if 0xdc80 <= ord(c) <= 0xdcff else c for c in raw)


def round_trip(tmp_path: Path, args: list[str]) -> tuple[list[dict], list[dict], bytes]:
    """(dti decode -F json, the journal's entries as journalctl -o json, the export)"""
    if not JOURNAL_REMOTE.exists() or not shutil.which("journalctl"):
        pytest.fail("systemd-journal-remote and journalctl are needed: "
                    "apt-get install systemd-journal-remote (.ci/install-deps)")
    js = subprocess.run([str(DTI), "decode", "-F", "json", *args], capture_output=True,
                        check=True).stdout
    export = subprocess.run([str(DTI), "decode", "-F", "export", *args],
                            capture_output=True, check=True).stdout
    journal = tmp_path / "dti.journal"
    subprocess.run([str(JOURNAL_REMOTE), "-o", str(journal), "-"], input=export,
                   capture_output=True, check=True)
    out = subprocess.run(["journalctl", "--file", str(journal), "-o", "json", "--all",
                          "--no-pager"], capture_output=True, check=True).stdout
    return ([json.loads(x) for x in js.splitlines()],
            [json.loads(x) for x in out.splitlines()], export)


def check_same(records: list[dict], entries: list[dict]) -> None:
    assert len(entries) == len(records) > 0
    for js, entry in zip(records, entries):
        got = {k: as_text(v) for k, v in entry.items()
               if k not in ("__CURSOR", "_BOOT_ID", "__SEQNUM", "__SEQNUM_ID")}
        assert got == want(js), js


def test_guest_snapshot(tmp_path):
    """Text records and typed events of a real guest, callers as symbols."""
    records, entries, _ = round_trip(tmp_path, ["--kallsyms", str(GUEST / "kallsyms"),
                                                str(GUEST / "snap")])
    check_same(records, entries)
    assert any("event" in r for r in records) and all("symbol" in r for r in records)


def test_binary_safe(tmp_path):
    """Newlines, bytes that are not UTF-8, empty and binary payloads."""
    records, entries, export = round_trip(tmp_path, [str(odd_snapshot(tmp_path / "odd"))])
    check_same(records, entries)
    assert len(records) == 7
    # the values with a newline went in the binary form: length, bytes
    assert b"\nMESSAGE\n" + struct.pack("<Q", 9) + b"two\nlines\n" in export
    assert b"\nDTI_FIELD_MSG\n" + struct.pack("<Q", 12) + b"first\nsecond\n" in export
    assert [e["PRIORITY"] for e in entries] == ["6", "3", "0", "7", "4", "5", "2"]


def test_filters_hold(tmp_path):
    """-p applies to the export as to every format."""
    snap = str(odd_snapshot(tmp_path / "odd"))
    records, entries, _ = round_trip(tmp_path, ["-p", "err", snap])
    check_same(records, entries)
    assert sorted(e["PRIORITY"] for e in entries) == ["0", "2", "3"]


def test_source_lines(tmp_path, work):
    """With --lines: CODE_FUNC, CODE_FILE, CODE_LINE and the rest of the
    caller's line, as JSON has them."""
    build_id, first, line = sample_facts()
    (work / "fs/dti/.modules").write_text(modules_text(build_id, first))
    assert run(["--debugfs", "{fs}", "snapshot", "ch", "new"], work).returncode == 0
    records, entries, _ = round_trip(tmp_path, ["-d", str(SAMPLE), str(work / "new")])
    check_same(records, entries)
    assert all(e["CODE_FUNC"] == "lines_first" and e["CODE_LINE"] == str(line) and
               e["CODE_FILE"].endswith("lines_sample.c") for e in entries), entries[0]


# A journald of our own for --journal: in a mount namespace (unshare -rm),
# a tmpfs on /run with a datagram socket at journald's place, whose
# datagrams (the native protocol: fields as the export format has them,
# no empty line) are printed as JSON, one list of fields each
FAKE_JOURNALD = r"""
import json, os, select, socket, subprocess, sys
subprocess.run(["mount", "-t", "tmpfs", "none", "/run"], check=True)
os.makedirs("/run/systemd/journal")
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/run/systemd/journal/socket")
p = subprocess.Popen(sys.argv[1:], stderr=subprocess.PIPE)
got = []
while True:
    done = p.poll() is not None
    while select.select([s], [], [], 0 if done else 0.05)[0]:
        got.append(s.recv(1 << 20).hex())
    if done:
        break
print(json.dumps({"rc": p.returncode, "stderr": p.stderr.read().decode(), "got": got}))
"""


def native_fields(data: bytes) -> dict[str, str]:
    """A datagram of journald's native protocol as {name: value}."""
    out, pos = {}, 0
    while pos < len(data):
        nl = data.index(b"\n", pos)
        line = data[pos:nl]
        if b"=" in line:
            name, value = line.split(b"=", 1)
            pos = nl + 1
        else:
            n = struct.unpack_from("<Q", data, nl + 1)[0]
            name, value = line, data[nl + 9:nl + 9 + n]
            pos = nl + 9 + n + 1
        out[name.decode()] = as_text(list(value))
    return out


def test_journal_live(tmp_path):
    """--journal sends every record, with every field of the export but
    those journald sets itself (the timestamps, _BOOT_ID)."""
    snap = str(odd_snapshot(tmp_path / "odd"))
    if subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode:
        pytest.skip("unshare -rm (a user and mount namespace) is not allowed here")
    if "--journal: libsystemd" not in run(["--version"]).stdout.decode():
        pytest.fail("dti built without libsystemd: apt-get install libsystemd-dev")
    # --kallsyms: callers as symbols, and the default of -F ts it brings is not taken
    ksyms = tmp_path / "kallsyms"
    ksyms.write_text("ffffffffc0001000 t odd_log\t[odd]\nffffffffc0002000 t odd_end\t[odd]\n")
    args = ["-p", "warning", "--kallsyms", str(ksyms), snap]
    p = subprocess.run(["unshare", "-rm", sys.executable, "-c", FAKE_JOURNALD, str(DTI),
                        "decode", "--journal", *args], capture_output=True, check=True)
    res = json.loads(p.stdout)
    assert res["rc"] == 0 and res["stderr"] == "", res
    records, _, _ = round_trip(tmp_path, args)
    assert all(r["symbol"] == "odd_log+0x234/0x1000 [odd]" for r in records), records
    assert len(res["got"]) == len(records) == 4
    for js, dgram in zip(records, res["got"]):
        want_fields = {k: v for k, v in want(js).items() if not k.startswith("_")}
        assert native_fields(bytes.fromhex(dgram)) == want_fields


def test_journal_usage():
    """--journal is an output of its own: no -F, -o or --report with it."""
    for extra in (["-F", "json"], ["-o", "x"], ["--report"]):
        p = run(["decode", "--journal", *extra, "nothing"])
        assert p.returncode == 129
        assert b"--journal sends the records to the journal: no -F, -o or --report" \
            in p.stderr
