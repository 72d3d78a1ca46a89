"""The writing helpers around __dti_printk() (issue 55), in a real guest
kernel, through dti_test:

* __dti_printk_ratelimited(): one call site stores printk_ratelimited()'s
  10 records of 100 in a burst, the rest refused before they take a
  sequence number (so the accounting counts them nowhere);
* __dti_printk_rs() with a limit of 10 a second: the next window's first
  record is preceded by one saying how many were suppressed;
* a filtered call does not use up the rate limit;
* __dev_dti_printk(): "DRIVER DEVICE: " before the text, as dev_printk().
"""

from __future__ import annotations

from dtirec import accounting_errors, parse_stats
from guestlib import PRELUDE


def test_ratelimited_and_dev_records(dti_guest):
    res = dti_guest.run(PRELUDE + """
        ctl register rl 262144 6
        ctl ratelimit_rs rl 7 100
        ctl ratelimit_rs rl 6 50
        sleep 1.5
        ctl ratelimit_rs rl 6 5
        ctl ratelimited rl 6 100
        ctl devprintk rl 3
        snap rl s
    """, smp=2, timeout=300).check()
    merged = (res.outdir / "s" / "merged").read_text().splitlines()
    want = ([f"rl {i}" for i in range(10)] +
            ["dti: 40 records suppressed by a rate limit"] +
            [f"rl {i}" for i in range(5)] +
            [f"rl {i}" for i in range(10)] +
            ["platform dti_test_dev.3: probed 7"])
    assert merged == want, merged
    st = parse_stats((res.outdir / "s" / "stats").read_text())
    assert st["total"]["written"] == len(want), st
    assert st["total"]["filtered"] == 100, st
    assert not accounting_errors(st)
