"""The sample driver (examples/dti_sample) and the minimal handle example,
checked against what DTI recorded, in a guest kernel."""

from __future__ import annotations

import re
import struct

from dtirec import parse_merged_ts
from guestlib import SAMPLE

SAMPLE_PRELUDE = "insmod $DTI_MODDIR/dti.ko\n" + SAMPLE

REQ = struct.Struct("<IIQQiI")
DONE, TIMEOUT = 3, 4
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
    hexre = re.compile(r"^([0-9a-f]{2} ){31}[0-9a-f]{2}$")
    binary = [bytes.fromhex(m.replace(" ", "")) for m in merged if hexre.match(m)]
    text = [m for m in merged if not hexre.match(m)]
    assert len(text) == c["text_records"]
    assert len(binary) == c["event_records"] == 70
    assert sum("-> QUEUED" in t for t in text) == 70
    assert sum("-> ACTIVE" in t for t in text) == 70
    assert sum("-> DONE" in t for t in text) == c["completed"]
    assert sum("-> TIMEOUT" in t for t in text) == 1
    assert sum(t.startswith("controller reset") for t in text) == 1
    assert text[0] == "dti_sample loaded: 1000 Hz, timeout 20 ms"

    reqs = [REQ.unpack(b) for b in binary]
    assert [r[0] for r in reqs] == list(range(70))
    timed_out = [r for r in reqs if r[1] == TIMEOUT]
    assert len(timed_out) == 1 and timed_out[0][0] == 40
    assert timed_out[0][4] == -ETIMEDOUT and timed_out[0][5] == 1
    assert all(r[1] == DONE and r[4] == 0 for r in reqs if r[0] != 40)
    assert all(r[3] > 0 for r in reqs)

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
