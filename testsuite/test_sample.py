"""The sample driver (examples/dti_sample) and the minimal handle example,
checked against what DTI recorded, in a guest kernel."""

from __future__ import annotations

import re

from dtirec import parse_merged_ts
from guestlib import SAMPLE

SAMPLE_PRELUDE = "insmod $DTI_MODDIR/dti.ko\n" + SAMPLE

# The sample driver's event type "req", as its template prints it (the
# kernel's %#x of 0 is "0x0")
REQ = re.compile(r"req id=(?P<id>\d+) state=(?P<state>[A-Z]+) submit=(?P<submit>\d+) "
                 r"latency=(?P<latency>\d+)ns result=(?P<result>-?\d+) "
                 r"flags=(?P<flags>0x[0-9a-f]+)(?P<fault>( \(fault\))?)")
ETIMEDOUT = 110


def out(res, *parts) -> str:
    return res.outdir.joinpath(*parts).read_text()


def test_sample_driver_counters_match_dti(dti_guest):
    res = dti_guest.run(SAMPLE_PRELUDE + """
        ls /sys/kernel/debug/dti > /out/channels
        echo 4000 > $S/rate_hz
        echo 5 > $S/timeout_ms
        echo 40 > $S/submit
        wait_idle
        echo timeout > $S/fault
        echo 30 > $S/submit
        wait_idle
        mkdir -p /out/s
        cat $S/counters > /out/counters
        cat $C/merged > /out/s/merged
        cat $C/merged-ts > /out/s/merged-ts
        cat $C/stats > /out/s/stats
        if printf 'explode' > $S/fault 2>/dev/null; then echo ACCEPTED; else echo REFUSED; fi > /out/badfault
        if printf '0' > $S/rate_hz 2>/dev/null; then echo ACCEPTED; else echo REFUSED; fi > /out/badrate
        rmmod dti_sample
        ls /sys/kernel/debug/dti > /out/channels-after
    """, smp=2).check()
    c = {k: int(v) for k, v in (line.split() for line in out(res, "counters").splitlines())}
    assert c["submitted"] == 70 and c["started"] == 70
    assert c["completed"] == 69 and c["timeouts"] == 1 and c["resets"] == 1
    assert c["log_errors"] == 0
    assert "dti_sample" in out(res, "channels")

    merged = out(res, "s", "merged").splitlines()
    lines = parse_merged_ts(out(res, "s", "merged-ts"))
    # the requests are events of the type "req", printed through its template
    reqs = [REQ.fullmatch(m) for m in merged if m.startswith("req id=")]
    text = [m for m in merged if not m.startswith("req id=")]
    assert len(text) == c["text_records"]
    assert len(reqs) == c["event_records"] == 70 and all(reqs), merged[:3]
    assert sum("-> QUEUED" in t for t in text) == 70
    assert sum("-> ACTIVE" in t for t in text) == 70
    assert sum("-> DONE" in t for t in text) == c["completed"]
    assert sum("-> TIMEOUT" in t for t in text) == 1
    assert sum(t.startswith("controller reset") for t in text) == 1
    assert text[0] == "dti_sample loaded: 1000 Hz, timeout 20 ms"

    assert [int(r["id"]) for r in reqs] == list(range(70))
    timed_out = [r for r in reqs if r["state"] == "TIMEOUT"]
    assert len(timed_out) == 1 and timed_out[0]["id"] == "40"
    assert int(timed_out[0]["result"]) == -ETIMEDOUT and timed_out[0]["flags"] == "0x1"
    assert timed_out[0]["fault"] == " (fault)"
    assert all(r["state"] == "DONE" and r["result"] == "0" and r["flags"] == "0x0" and
               not r["fault"] for r in reqs if r["id"] != "40")
    assert all(int(r["latency"]) > 0 and int(r["submit"]) > 0 for r in reqs)

    # Each request's story in order: queued, active, then done or timeout.
    for rid in (0, 40, 69):
        story = [t.split(": ")[1] for t in text if t.startswith(f"req {rid}:")]
        end = "ACTIVE -> TIMEOUT" if rid == 40 else "ACTIVE -> DONE"
        assert story == ["IDLE -> QUEUED", "QUEUED -> ACTIVE", end], story
    # The timeout came from the watchdog's softirq after the hung request.
    levels = {x.text: x.level for x in lines}
    assert levels["req 40: ACTIVE -> TIMEOUT"] == 3
    assert levels["controller reset after req 40"] == 3

    assert out(res, "badfault") == "REFUSED\n" and out(res, "badrate") == "REFUSED\n"
    assert "dti_sample" not in out(res, "channels-after")


def test_hello_example(dti_guest):
    res = dti_guest.run("""
        insmod $DTI_MODDIR/dti.ko
        insmod $DTI_MODDIR/dti_hello.ko
        sleep 0.3
        cat /sys/kernel/debug/dti/hello/merged > /out/merged
        rmmod dti_hello
        rmmod dti
    """, smp=2).check()
    assert re.fullmatch(r"hello from cpu \d\n", out(res, "merged"))
