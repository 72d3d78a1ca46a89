"""DTI's boot parameters, given to dti.ko's load: channel= (dti.channel=
on a kernel command line) creates channels at DTI's init, level=
(dti.level=) sets a channel's level when it is registered, a handle's
included, and persist= with the kernel's reserve_mem= gives channel=
persistent channels.  A wrong entry gets a console message naming the
parameter, the entry and what is wrong, and the load goes on.

Built in, the same parameters come from the kernel command line; the
built-in kernel's boot is test_builtin.py's.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from guestlib import PRELUDE_FUNCS
from harness import kernels

CHANNEL_ARGS = "channel=a:64K:5,b:1M:off channel=c.x:y:16K:destroy level=h_early:3,h_demand:5 level=a:6"

GOOD = PRELUDE_FUNCS + rf"""
insmod $DTI_MODDIR/dti.ko
rmmod dti
dmesg | grep "dti: " | sed 's/^\[[^]]*\] //' > /out/dmesg-plain
dmesg -c > /dev/null
insmod $DTI_MODDIR/dti.ko {CHANNEL_ARGS} probe_filtered=1
cat /sys/module/dti/parameters/probe_filtered > /out/param-probe_filtered
insmod $DTI_MODDIR/dti_test.ko
for c in a b c.x:y h_early h_demand; do
    cat "$D/$c/level" > "/out/level-$c"
    ls "$D/$c" > "/out/ls-$c"
done
cat $D/a/info > /out/info-a
cat $D/b/info > /out/info-b
cat $D/h_early/merged > /out/h_early-merged
cat /sys/module/dti/parameters/channel > /out/param-channel
cat /sys/module/dti/parameters/level > /out/param-level
badwrite /sys/module/dti/parameters/channel "x:64K:3" > /out/param-write
ctl printk h_demand 6 2 0 process filtered
ctl printk h_demand 5 2 0 process stored
sleep 0.3
cat $D/h_demand/merged > /out/h_demand-merged
rmmod dti_test
rmmod dti
ls $D > /out/after-unload 2>&1 || true
dmesg | grep "dti: " | sed 's/^\[[^]]*\] //' > /out/dmesg
"""


def out(res, name: str) -> str:
    return res.outdir.joinpath(name).read_text()


def kv(text: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)


def test_channels_and_levels_from_parameters(dti_guest):
    res = dti_guest.run(GOOD, smp=2).check()
    # without parameters: DTI's init line, and nothing refused
    plain = out(res, "dmesg-plain")
    assert "dti: up: 0 handle(s) used before registered, 0 channel(s) from dti.channel=" in plain
    assert "ignored" not in plain, plain
    # level= wins over channel='s level, and reaches handles at their init
    assert {c: out(res, f"level-{c}") for c in ("a", "b", "c.x:y", "h_early", "h_demand")} == \
        {"a": "6\n", "b": "-1\n", "c.x:y": "-2\n", "h_early": "3\n", "h_demand": "5\n"}
    info_a, info_b = kv(out(res, "info-a")), kv(out(res, "info-b"))
    assert int(info_a["subbuf_size"]) * int(info_a["n_subbufs"]) == 64 * 1024, info_a
    assert int(info_b["subbuf_size"]) * int(info_b["n_subbufs"]) == 1 << 20, info_b
    # "off" keeps buffers, "destroy" has none
    assert "trace0" in out(res, "ls-a").split() and "trace0" in out(res, "ls-b").split()
    assert "trace0" not in out(res, "ls-c.x:y").split()
    # the records h_early kept before its init are replayed whatever level it gets
    assert out(res, "h_early-merged").splitlines() == [f"early {i}" for i in range(20)]
    assert out(res, "h_demand-merged").splitlines() == ["stored 0", "stored 1"]
    assert out(res, "param-channel") == "a:64K:5,b:1M:off,c.x:y:16K:destroy\n"
    assert out(res, "param-level") == "h_early:3,h_demand:5,a:6\n"
    assert out(res, "param-write") == "REFUSED\n"
    # a probe switch given at the load is switched by DTI's init
    assert out(res, "param-probe_filtered") == "Y\n"
    dmesg = out(res, "dmesg")
    assert "dti: up: 0 handle(s) used before registered, 3 channel(s) from dti.channel=" in dmesg
    assert "ignored" not in dmesg, dmesg
    # dti.ko's unload removes the channels channel= made, without a warning
    # (the guest's splat check), and its directory with them
    assert "No such file" in out(res, "after-unload"), out(res, "after-unload")


WRONG_CHANNELS = ("bad", "x:12Q:3", "y:1K:2", "z:64K:9", ".dot:64K:3", "w:64K:3:persist",
                  "a:64K:5", "a:64K:5")
WRONG_LEVELS = ("q", "b/x:3", "v:11", "ok:2")
WRONG = PRELUDE_FUNCS + rf"""
insmod $DTI_MODDIR/dti.ko channel={",".join(WRONG_CHANNELS)} level={",".join(WRONG_LEVELS)} channel=
echo loaded > /out/loaded
ls $D > /out/ls
cat $D/a/level > /out/level-a
insmod $DTI_MODDIR/dti_test.ko
echo client > /out/client
dmesg | grep "dti: " | sed 's/^\[[^]]*\] //' > /out/dmesg
"""


def test_wrong_parameters_are_refused_and_the_load_goes_on(dti_guest):
    res = dti_guest.run(WRONG, smp=2).check()
    assert out(res, "loaded") == "loaded\n" and out(res, "client") == "client\n"
    assert out(res, "level-a") == "5\n"
    ls = set(out(res, "ls").split())
    assert "a" in ls and not ls & {"bad", "x", "y", "z", ".dot", "w", "q", "v", "ok"}, ls
    msgs = out(res, "dmesg").splitlines()
    want = [
        'dti.channel=bad: not NAME:SIZE:LEVEL[:persist]: ignored',
        'dti.channel=x:12Q:3: SIZE "12Q" is not 4096 to 67108864 bytes per CPU (K and M suffixes): ignored',
        'dti.channel=y:1K:2: SIZE "1K" is not 4096 to 67108864 bytes per CPU (K and M suffixes): ignored',
        'dti.channel=z:64K:9: "9" is not a level (-2 to 7, off or destroy): ignored',
        'dti.channel=.dot:64K:3: ".dot" is not a channel name',
        'dti.channel=w:64K:3:persist: persist needs a persistent region (dti.persist=) (-19): ignored',
        'dti.channel=a:64K:5: a channel of that name exists (-17): ignored',
        'dti.level=q: not NAME:LEVEL: ignored',
        'dti.level=b/x:3: "b/x" is not a channel name',
        'dti.level=v:11: "11" is not a level (-2 to 7, off or destroy): ignored',
        'dti.channel: needs a value: ignored',
    ]
    for w in want:
        assert any(m.startswith("dti: " + w) for m in msgs), (w, msgs)
    assert not any("dti.level=ok:2" in m for m in msgs), msgs
    assert "dti: up: 0 handle(s) used before registered, 1 channel(s) from dti.channel=" in msgs


def reserve_mem_by_name() -> bool:
    """Whether the dti.ko built for the kernel under test finds reserve_mem=
    regions by name (its feature test, kmod/dti_conf.h)."""
    conf = Path(__file__).resolve().parent.parent / "kmod" / "dti_conf.h"
    return kernels.conf_features(conf).get("DTI_HAVE_RESERVE_MEM_FIND_BY_NAME", False)


PERSIST = PRELUDE_FUNCS + r"""
insmod $DTI_MODDIR/dti.ko persist=dti channel=pc:64K:7:persist,plain:64K:7
cat $D/.persist > /out/persist
cat $D/pc/info > /out/info-pc
"""


def test_persistent_channel_from_parameters(dti_guest, kernel):
    """reserve_mem=4M:4096:dti on the kernel's command line and persist=dti
    (dti.persist=dti built in): channel='s entry ending in :persist takes
    its buffers from that region."""
    if not reserve_mem_by_name():
        pytest.skip(f"{kernel.release} has no reserve_mem_find_by_name() (6.11 and later)")
    res = dti_guest.run(PERSIST, smp=2, append="reserve_mem=4M:4096:dti").check()
    region = out(res, "persist")
    assert re.search(r"^slot \d+ pc ", region, re.M), region
    assert not re.search(r"^slot \d+ plain ", region, re.M), region
    assert kv(out(res, "info-pc"))["buffers"] == "allocated"
