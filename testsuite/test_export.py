"""dti export in a guest (issue 43): live channels of every kind written
as CTF traces by `dti read -F ctf -o DIR` inside the guest, and a
snapshot exported on the host by `dti export`, each read back on the host
by babeltrace2 (its command and its Python bindings, through
runtime/tests/ctf_oracle.py) and compared with `dti read -F json` of the
same channel: every record in order, every field, and the discarded
events equal to the losses dti tells (a no-overwrite channel that refused
records while full) and to the kernel's own accounting of them.

Channels: mix, text, binary and typed events (ints, mixed) on every CPU,
markers (text, with a level, and raw bytes), in 4 x 4 KiB sub-buffers that
wrap; no, records dropped while full; h_early, records logged before its
handle was initialised, replayed into its buffers.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from dtirec import parse_stats
from guestlib import PRELUDE

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "runtime" / "tests"))
from ctf_oracle import check, read_ctf  # noqa: E402

HOST_DTI = REPO / "runtime" / "build" / "dti"

SCRIPT = PRELUDE + r"""
NCPU=$(grep -c ^processor /proc/cpuinfo)
ctl register_sub mix 4096 4 7 0
ctl register_sub mixtxt 65536 4 7 0
ctl evreg mix ints
ctl evreg mix mixed
c=0
while [ $c -lt $NCPU ]; do
    ctl printk mix 6 1200 $c process text$c
    ctl evlog mix 5 12 $c softirq mixtxt
    ctl event mix 4 8 $c hardirq 24
    c=$((c + 1))
done
echo "marker one" > $D/mix/marker
echo "<2>marker at crit" > $D/mix/marker
printf 'raw\000bytes\377' > $D/mix/marker_raw
cat $D/mix/stats > /out/mix.stats
dti read mix -F json > /out/mix.json 2> /out/mix.err
dti read mix -F ctf -o /out/mix.ctf 2> /out/mix.ctf.err
dti read mix -F json -p warning -c 1 > /out/mixf.json 2> /out/mixf.err
dti read mix -F ctf -o /out/mixf.ctf -p warning -c 1 2> /out/mixf.ctf.err
dti snapshot mix /out/snap > /dev/null
# no-overwrite: records refused when full, a gap once space is free again
ctl register_sub no 1024 4 7 1
ctl printk no 3 600 0 process keep
dti read no > /dev/null
ctl printk no 3 3 0 process after
cat $D/no/stats > /out/no.stats
dti read no -F json > /out/no.json 2> /out/no.err
dti read no -F ctf -o /out/no.ctf 2> /out/no.ctf.err
# an early handle's records, replayed into its buffers at its init
dti read h_early -F json > /out/early.json 2> /out/early.err
dti read h_early -F ctf -o /out/early.ctf 2> /out/early.ctf.err
"""


def test_export_live_channels(dti_guest, dti_tool, tmp_path):
    dti_guest.extra_files[str(dti_tool)] = "/bin/dti"
    out = dti_guest.run(SCRIPT, smp=4).check().outdir

    def exported(name: str, exact: bool = True) -> tuple[dict, list[dict]]:
        # the guest's dti told the same on standard error both times
        err = (out / f"{name}.err").read_text()
        assert (out / f"{name}.ctf.err").read_text() == err
        n = check(out / f"{name}.ctf", (out / f"{name}.json").read_text(), err, exact)
        return n, read_ctf(out / f"{name}.ctf")[0]

    # mix: every kind, every CPU; the ring wrapped, so nothing was lost
    n, recs = exported("mix")
    kinds = {r.get("event") or ("text" if "text" in r else "binary") for r in recs}
    assert kinds == {"text", "binary", "ints", "mixed"}, kinds
    assert {r["cpu"] for r in recs} == {0, 1, 2, 3}
    marks = [(r["text"].split(": ", 1)[-1], r["level"]) for r in recs if "text" in r]
    assert ("marker one", 3) in marks and ("marker at crit", 2) in marks, marks[-5:]
    assert b"raw\0bytes\xff".hex() in [r["data"] for r in recs if "data" in r]
    stats = parse_stats((out / "mix.stats").read_text())["total"]
    assert stats["overwritten"] > 0 and n["records"] < stats["written"], (stats, n)
    assert n["lost"] == 0
    # the reader's filters
    n, recs = exported("mixf", exact=False)
    assert n["records"] > 0 and {r["cpu"] for r in recs} == {1}
    assert all(r["level"] <= 4 for r in recs)
    # the snapshot, exported on the host
    snap = out / "snap"
    want = subprocess.run([str(HOST_DTI), "decode", "-F", "json", snap], capture_output=True,
                          text=True, check=True)
    subprocess.run([str(HOST_DTI), "export", tmp_path / "snap.ctf", snap], check=True)
    assert check(tmp_path / "snap.ctf", want.stdout, want.stderr)["records"] == \
        len(want.stdout.splitlines())
    # no: the records refused while full are one loss, the kernel's count
    n, recs = exported("no")
    dropped = parse_stats((out / "no.stats").read_text())["total"]["dropped"]
    assert dropped > 0 and n == {"records": len(recs), "lost": dropped, "intervals": 1}
    # h_early: replayed records, flagged so, in the stream of the CPU that replayed them
    n, recs = exported("early")
    assert n["records"] == 20 and all(r["flags"] & 0x08 for r in recs)
