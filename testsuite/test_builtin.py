"""DTI built into the kernel (CONFIG_DTI=y), from boot: the built-in kernel
of harness/builtinkernel.py (`make builtin-kernel`; DTI_KERNEL=builtin).

What is checked, on that kernel only (skipped, with the command that
builds it, where it is not built from this checkout's kmod/):

  * virtio_blk, built in with CONFIG_VIRTIO_BLK_DTI, records each disk's
    probe before the first user-space process; after boot `dti read
    virtio_blk` gives them in order, with times before /init ran, and
    every logging call is accounted for: the records read are the
    channel's written - overwritten - discarded, and nothing is counted
    lost, dropped or pending_lost.
  * The records of a disk's reads (its interrupts) follow.
  * The 8250 core, built in with CONFIG_SERIAL_8250_DTI, records the
    console's setup from console_init(), in start_kernel(), before DTI's
    own init: an early handle's static buffer, replayed into the channel
    "serial8250" with the record's original time, before DTI's "dti: up"
    line in dmesg, and accounted for as above.
  * dti.level= and dti.channel= on the command line take effect; a wrong
    one gets a console message and the boot goes on.
  * The KUnit suite of the record codec passes at boot.
  * The kselftest of the debugfs interface (kmod/selftests/, the series'
    tools/testing/selftests/dti/) passes on virtio_blk's channel, with no
    module loaded.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dtirec import LOSS_COUNTERS, json_record, parse_stats
from harness import builtinkernel
from harness.kernel import KernelNotFound
from harness.vm import Guest
from test_selftest import RUN, SELFTESTS, GUEST_DIR, ktap, n_tests

D = "/sys/kernel/debug/dti"
DISK_BYTES = 1 << 20
DISKS = ("vda", "vdb")

# dmesg's "[    1.234567] Run /init as init process": the first user-space process.
RUN_INIT = re.compile(r"^\[\s*(\d+\.\d+)\] Run /init as init process", re.M)


@pytest.fixture(scope="module")
def builtin_kernel():
    try:
        return builtinkernel.find()
    except KernelNotFound as e:
        pytest.skip(f"SKIPPED LOUDLY: {e}")


@pytest.fixture
def bguest(request, builtin_kernel, build_dir, dti_tool) -> Guest:
    g = Guest(request.node.nodeid, kernel=builtin_kernel, build_dir=build_dir,
              timeout=request.config.getoption("--dti-timeout"))
    g.extra_files[str(dti_tool)] = "/bin/dti"
    yield g
    splats = g.splats(with_context=True)
    assert not splats, "\n".join(splats)


def disks(tmp_path: Path) -> list[str]:
    """QEMU arguments for one raw virtio-blk disk per DISKS entry."""
    args = []
    for i, name in enumerate(DISKS):
        img = tmp_path / f"{name}.img"
        img.write_bytes(bytes(DISK_BYTES))
        args += ["-drive", f"file={img},if=none,id=d{i},format=raw",
                 "-device", f"virtio-blk-pci,drive=d{i}"]
    return args


def out(res, name: str) -> str:
    return res.outdir.joinpath(name).read_text()


def test_virtio_blk_boot_records_read_after_boot(bguest, tmp_path):
    res = bguest.run(f"""
        dmesg > /out/dmesg
        cat {D}/virtio_blk/stats > /out/stats-boot
        cat {D}/virtio_blk/info > /out/info
        dti read --format json virtio_blk > /out/boot.json
        # the disks' reads: their interrupts are recorded as they come
        dd if=/dev/vda of=/dev/null bs=64k count=16 iflag=direct 2>/dev/null
        dd if=/dev/vdb of=/dev/null bs=64k count=16 iflag=direct 2>/dev/null
        echo -1 > {D}/virtio_blk/level
        cat {D}/virtio_blk/stats > /out/stats-after
        dti read --no-reset --format json virtio_blk > /out/after.json
    """, smp=2, qemu_args=disks(tmp_path)).check()
    dmesg = out(res, "dmesg")
    m = RUN_INIT.search(dmesg)
    assert m, "no 'Run /init' line in dmesg"
    t_init_ns = int(float(m[1]) * 1e9)

    boot = [json_record(ln) for ln in out(res, "boot.json").splitlines() if ln.strip()]
    probes = [r for r in boot if " probe " in r.get("text", "")]
    assert [r["text"].split(":")[0] for r in probes] == list(DISKS)
    for r in probes:
        assert re.search(r"probe virtio\d+: 2048 sectors, \d+ queues of \d+", r["text"])
        assert r["ts_ns"] < t_init_ns, (r, m[0])
        assert r["level"] == 6
    assert [r["ts_ns"] for r in boot] == sorted(r["ts_ns"] for r in boot)

    # every logging call accounted for: read = written - overwritten - discarded
    st = parse_stats(out(res, "stats-boot"))["total"]
    assert len(boot) == st["written"] - st["overwritten"] - st["discarded"]
    assert {k: st[k] for k in LOSS_COUNTERS} == dict.fromkeys(LOSS_COUNTERS, 0)
    assert re.search(r"^pending_lost: 0$", out(res, "info"), re.M), out(res, "info")

    after = [json_record(ln) for ln in out(res, "after.json").splitlines() if ln.strip()]
    irqs = [r for r in after if re.fullmatch(r"vd[ab]: vq \d+: \d+ done\n?", r.get("text", ""))]
    assert {r["text"][:3] for r in irqs} == set(DISKS)
    assert all(r["level"] == 7 for r in irqs)
    st2 = parse_stats(out(res, "stats-after"))["total"]
    assert len(boot) + len(after) == st2["written"] - st2["overwritten"] - st2["discarded"]


# dmesg's line of DTI's own init (dti_init(), at postcore_initcall).
DTI_UP = re.compile(r"^\[\s*(\d+\.\d+)\] dti: up\b.*$", re.M)


def test_serial8250_console_setup_from_start_kernel(bguest):
    res = bguest.run(f"""
        dmesg > /out/dmesg
        cat {D}/serial8250/stats > /out/stats
        cat {D}/serial8250/info > /out/info
        dti read --format json serial8250 > /out/recs.json
    """, smp=2).check()
    dmesg = out(res, "dmesg")
    up = DTI_UP.search(dmesg)
    assert up, "no 'dti: up' line in dmesg"
    t_up_ns = int(float(up[1]) * 1e9)
    recs = [json_record(ln) for ln in out(res, "recs.json").splitlines() if ln.strip()]
    assert recs, "no serial8250 records"
    first = recs[0]
    assert re.fullmatch(r"console ttyS0 at 0x3f8 \(.*\): 0\n?", first["text"]), first
    assert first["ts_ns"] < t_up_ns, (first, up[0])
    assert first["cpu"] == 0
    ports = [r for r in recs if re.match(r"ttyS\d+: type \d+ at 0x", r.get("text", ""))]
    assert ports and all(r["ts_ns"] > t_up_ns for r in ports)
    assert [r["ts_ns"] for r in recs] == sorted(r["ts_ns"] for r in recs)
    st = parse_stats(out(res, "stats"))["total"]
    assert len(recs) == st["written"] - st["overwritten"] - st["discarded"]
    assert {k: st[k] for k in LOSS_COUNTERS} == dict.fromkeys(LOSS_COUNTERS, 0)
    assert re.search(r"^pending_lost: 0$", out(res, "info"), re.M), out(res, "info")


def test_command_line_sets_levels_and_channels(bguest, tmp_path):
    res = bguest.run(f"""
        dmesg > /out/dmesg
        cat {D}/virtio_blk/level > /out/vb-level
        cat {D}/boot/level > /out/boot-level
        cat {D}/virtio_blk/stats > /out/vb-stats
    """, smp=2, qemu_args=disks(tmp_path),
        append="dti.level=virtio_blk:5 dti.channel=boot:64K:4 dti.channel=bad").check()
    assert out(res, "vb-level") == "5\n"
    assert out(res, "boot-level") == "4\n"
    # level 5 from the start: the probes (info, 6) and interrupts (debug,
    # 7) were filtered, none stored (so no buffers were ever allocated)
    st = parse_stats(out(res, "vb-stats"))["total"]
    assert st["written"] == 0 and st["filtered"] >= len(DISKS), st
    dmesg = out(res, "dmesg")
    assert re.search(r"dti: .*dti\.channel=bad", dmesg), dmesg[-3000:]


def test_kunit_suite_passes_at_boot(bguest):
    res = bguest.run("dmesg > /out/dmesg", smp=1).check()
    console = res.console
    suites = re.findall(r"^\s*(?:\[[^]]*\]\s*)?\s*(ok|not ok) \d+ (dti\S*)$", console, re.M)
    assert suites, "no dti KUnit suite reported on the console"
    assert all(s == "ok" for s, _ in suites), suites
    assert not re.search(r"not ok \d+ ", console), \
        [ln for ln in console.splitlines() if "not ok" in ln]


def test_kselftest_passes_built_in(bguest, tmp_path):
    res = bguest.run(f"""
        lsmod > /out/lsmod
        export DTI_CHANNEL=virtio_blk
    """ + RUN, extra_files={str(SELFTESTS): GUEST_DIR}, smp=2,
        qemu_args=disks(tmp_path)).check()
    assert "dti" not in out(res, "lsmod")
    results, rc = ktap(res.stdout)
    assert "# channel virtio_blk" in res.stdout, res.stdout
    assert len(results) == n_tests(), res.stdout
    assert all(r.startswith("ok ") and "# SKIP" not in r for r in results), res.stdout
    assert rc == 0, res.stdout
