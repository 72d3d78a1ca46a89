"""The crash that issue 19's dump tests (test_dump.py, test_crash_ext.py) read.

SCRIPT (after guestlib.PRELUDE) has dti_test write known records to
channels of every kind a dump reader meets, prints what the kernel's
merged-ts view shows of each just before the crash, writes a few records
more, and leaves the crash to the caller:

  wrap8k   8 KiB x 4 sub-buffers, text records that wrap each ring
           several times; AFTER_RECORDS more on cpu0 after the read
  mid64k   64 KiB x 4, binary records (dti_test's payload pattern) that
           wrap the ring
  big1m    1 MiB x 2, text records from softirq context, no wrap
  noover   8 KiB x 4, DTI_F_NO_OVERWRITE, more records than fit (dropped)
  gone     level "destroy" before the crash: a channel without buffers
  unreg    unregistered before the crash: must not show
  h_raw    an early handle never initialised: PENDING_RECORDS records
           waiting in its static pending store
  h_early, h_demand   dti_test's handles (h_early replayed its early
           records at load)

parse_guest_output() returns the merged-ts views the script printed.
Records are compared by (cpu, seq, ts_ns, level) and, for text, the text:
merged-ts prints callers as symbols, a dump reader without symbols as
addresses.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass

import pytest

from dtirec import TsLine, parse_merged_ts
from guestlib import PRELUDE
from harness.dump import KdumpResult

# Channels whose merged-ts view the script prints before the crash.
LIVE = ("wrap8k", "mid64k", "big1m", "noover", "h_early", "h_demand")
GONE = "gone"                   # level destroy: listed, no buffers
UNREGISTERED = "unreg"          # must not be found
PENDING = "h_raw"               # records in the pending store only
PENDING_RECORDS = 12
PENDING_TAG = "pend"
AFTER_CHANNEL = "wrap8k"        # records written after the views were read
AFTER_RECORDS = 5
AFTER_TAG = "after"
AFTER_CPU = 0
WRAP_SUBBUF = 8192              # the most records the AFTER ones can displace
                                # is one sub-buffer of wrap8k

SCRIPT = PRELUDE + rf"""
NCPU=$(grep -c ^processor /proc/cpuinfo)
ctl register_sub wrap8k {WRAP_SUBBUF} 4 7 0
ctl register_sub mid64k 65536 4 7 0
ctl register_sub big1m 1048576 2 7 0
ctl register_sub noover 8192 4 7 1
ctl register_sub {GONE} 8192 4 7 0
ctl register {UNREGISTERED} 65536 7
c=0
while [ $c -lt $NCPU ]; do
    ctl printk wrap8k 6 6000 $c process w$c
    ctl event mid64k 5 2500 $c process 120
    ctl printk big1m 6 2000 $c softirq b$c
    ctl printk noover 6 3000 $c process n$c
    ctl printk {GONE} 6 50 $c process g$c
    ctl printk {UNREGISTERED} 6 50 $c process u$c
    c=$((c + 1))
done
ctl set_level {GONE} -2
ctl unregister {UNREGISTERED}
ctl hprintk {PENDING} 6 {PENDING_RECORDS} {PENDING_TAG}
ctl hprintk h_demand 6 30 hd
n=0
until [ -e $D/h_demand/merged-ts ] || [ $n -gt 100 ]; do sleep 0.1; n=$((n+1)); done
for ch in {' '.join(LIVE)}; do
    echo "@@VIEW $ch"
    cat $D/$ch/merged-ts
    echo "@@END $ch"
done
ctl printk {AFTER_CHANNEL} 6 {AFTER_RECORDS} {AFTER_CPU} process {AFTER_TAG}
echo "@@READY"
"""

_VIEW = re.compile(r"^@@VIEW (\S+)\n(.*?)^@@END \1$", re.M | re.S)


def parse_guest_output(stdout: str) -> dict[str, list[TsLine]]:
    """The merged-ts views SCRIPT printed, by channel."""
    views = {m[1]: parse_merged_ts(m[2]) for m in _VIEW.finditer(stdout)}
    missing = set(LIVE) - set(views)
    if missing or "@@READY" not in stdout:
        raise AssertionError(f"guest script did not finish (views of {sorted(missing)} "
                             f"missing):\n{stdout[-3000:]}")
    return views


@dataclass(frozen=True)
class Rec:
    """What identifies a record across merged-ts and a dump reader's JSON."""
    cpu: int
    seq: int
    ts_ns: int
    level: int
    text: str | None            # None: a binary record


def from_ts(line: TsLine, binary: bool = False) -> Rec:
    return Rec(line.cpu, line.seq, line.ts_ns, line.level, None if binary else line.text)


def from_json(obj: dict) -> Rec:
    """A record of `dti ... --format json`; merged-ts shows text without
    the newline a record may end in."""
    text = obj.get("text")
    if text is not None and text.endswith("\n"):
        text = text[:-1]
    return Rec(obj["cpu"], obj["seq"], obj["ts_ns"], obj["level"], text)


@contextlib.contextmanager
def unless_makedumpfile_unsupported(res: KdumpResult):
    """Run the checks of a kdump's vmcore; if they fail and makedumpfile
    said it does not support the crashed kernel, the test is an expected
    failure (xfail) quoting makedumpfile and the check, not a DTI
    failure.  They run all the same: Debian 13's 1.7.6 says so of its
    6.12 too, and its -d 31 dumps of 6.12 keep every DTI page."""
    try:
        yield
    except AssertionError as e:
        why = res.makedumpfile_unsupported()
        if not why:
            raise
        first = str(e).strip().splitlines()[:1] or ["?"]
        pytest.xfail(f"{why}; and the check failed: {first[0][:300]}")
