"""The SystemTap scripts on the sample driver (examples/dti_sample): the
watch totals equal the driver's own counters, and a freeze on its fault
pattern leaves exactly the records up to the match plus N."""

from __future__ import annotations

import re

from guestlib import PRELUDE, SAMPLE, STOP, start_stap
from test_scripts_load import guard_opts, guard_skips
from test_tapset_guest import SCRIPTS, compile_for_test, wait_exit



def counters(res) -> dict[str, int]:
    text = (res.outdir / "counters").read_text()
    return {k: int(v) for k, v in (line.split() for line in text.splitlines())}


def test_watch_totals_equal_sample_counters(tapset_guest, stap):
    """dti_watch's totals equal the driver's own counters, by level.  On the
    debug kernel SystemTap's stack guard may skip probes of records the
    driver logs from its timer's hardirq (test_scripts_load.guard_skips()):
    there the totals may fall short by no more than it says it skipped."""
    mod = compile_for_test(stap, SCRIPTS / "dti_watch.stp", "dti_watch",
                           opts=guard_opts(tapset_guest.kernel))
    script = PRELUDE + start_stap(mod, "/out/watch.txt", ready="dti_watch: watching",
                                  params="quiet=1", err_file="/out/watch.err") + SAMPLE + """
        echo 3000 > $S/rate_hz
        echo 30 > $S/submit
        wait_idle
        echo timeout > $S/fault
        echo 10 > $S/submit
        wait_idle
        cat $S/counters > /out/counters
    """ + STOP
    res = tapset_guest.run(script, smp=2, extra_files=stap.guest_files(mod)).check()
    c = counters(res)
    assert c["log_errors"] == 0 and c["timeouts"] == 1
    totals: dict[int, int] = {}
    for m in re.finditer(r"^total channel=dti_sample cpu=(\d+) level=(\d+) records=(\d+) ",
                         (res.outdir / "watch.txt").read_text(), re.M):
        totals[int(m[2])] = totals.get(int(m[2]), 0) + int(m[3])
    want = c["text_records"] + c["event_records"]
    skipped = guard_skips(tapset_guest.kernel, (res.outdir / "watch.err").read_text())
    if skipped:
        assert want - skipped <= sum(totals.values()) <= want, (totals, c, skipped)
        return
    assert sum(totals.values()) == want
    assert totals[7] == c["event_records"] == 40
    assert totals[3] == 2 * c["timeouts"]            # timeout and reset
    assert totals[5] == c["completed"] + 1           # done, and "loaded"


def test_freeze_on_the_sample_fault(tapset_guest, stap):
    mod = compile_for_test(stap, SCRIPTS / "dti_freeze.stp", "dti_freeze",
                           args=["dti_sample", "ACTIVE -> TIMEOUT", "2"])
    script = PRELUDE + SAMPLE + start_stap(mod, "/out/freeze.txt", ready="dti_freeze: channel") + """
        echo 5 > $S/submit
        wait_idle
        echo timeout > $S/fault
        echo 5 > $S/submit
    """ + wait_exit(300) + """
        wait_idle
        cat $C/merged > /out/merged
        cat $C/level > /out/level
        cat $S/counters > /out/counters
        dti read dti_sample > /out/read
    """
    res = tapset_guest.run(script, smp=2, extra_files=stap.guest_files(mod)).check()
    merged = (res.outdir / "merged").read_text().splitlines()
    assert (res.outdir / "level").read_text() == "-1\n"
    assert (res.outdir / "read").read_text().splitlines() == merged
    # The match, the request's event, the reset: then nothing more,
    # although the driver went on with requests 6..9.
    assert merged[-3] == "req 5: ACTIVE -> TIMEOUT"
    assert merged[-2].startswith("req id=5 state=TIMEOUT ") and merged[-2].endswith(" (fault)")
    assert merged[-1] == "controller reset after req 5"
    assert counters(res)["completed"] == 9
    assert "dti_freeze: MATCH channel=dti_sample" in (res.outdir / "freeze.txt").read_text()
