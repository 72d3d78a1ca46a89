#!/usr/bin/python3
"""Load a DTI snapshot into a list of dicts (libdti's Python binding) and
print how many records each CPU logged at each level, the first error
and the records lost.  Usage: snapshot_levels.py SNAPSHOT_DIR

    $ dti snapshot mydrv /var/tmp/mydrv.snap
    $ python3 snapshot_levels.py /var/tmp/mydrv.snap
"""

import sys
from collections import Counter

import dti

recs = dti.load(sys.argv[1])
# records lost (gaps in a CPU's sequence numbers) come among them
lost = [r for r in recs if "lost" in r]
recs = [r for r in recs if "lost" not in r]
counts = Counter((r["cpu"], dti.LEVELS[r["level"]]) for r in recs)
for (cpu, level), n in sorted(counts.items()):
    print(f"cpu{cpu} {level:8} {n}")
errors = [r for r in recs if r["level"] <= 3]
if errors:
    first = errors[0]
    print(f"first error at {first['ts_ns'] / 1e9:.9f} on cpu{first['cpu']}:",
          first.get("text") or first.get("fields") or first["data"].hex())
for gap in lost:
    print(gap["message"])
