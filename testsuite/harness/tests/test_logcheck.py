"""Unit tests of harness.logcheck on saved console logs (host only, fast).

data/console-*.log are real consoles of this harness's guests (Debian 6.1
kernel under QEMU TCG): a clean boot that loads and unloads an unsigned
out-of-tree module, a WARN() from such a module, and a sysrq crash.
data/synthetic/*.log are hand-made splats in the kernel's own formats
(kmemleak.log: the report the guest's /init logs on the debug kernel).
"""

import textwrap
from pathlib import Path

import pytest

from harness.logcheck import find_splats, panic_text, splat_context, strip_prefix

DATA = Path(__file__).parent / "data"
SYN = DATA / "synthetic"


def read(name: str) -> str:
    return (DATA / name).read_text()


def test_clean_boot_with_out_of_tree_module_has_no_splats():
    log = read("console-clean-module.log")
    assert "module verification failed: signature and/or required key missing" in log
    assert "loading out-of-tree module taints kernel" in log
    assert find_splats(log) == []
    assert panic_text(log) is None


def test_benign_noise_is_not_flagged():
    assert find_splats((SYN / "benign-noise.log").read_text()) == []


def test_real_warn_is_found():
    log = read("console-warn.log")
    splats = find_splats(log)
    assert len(splats) == 1
    assert splats[0].startswith("WARNING: CPU: 0 PID: ")
    assert "dti_splat_init" in splats[0]
    ctx = splat_context(log, splats[0])
    assert "Call Trace:" in ctx
    assert ctx.splitlines()[1].endswith("dti_splat: deliberate warning for the harness self-test")


def test_real_panic_is_found():
    log = read("console-panic.log")
    assert find_splats(log) == ["Kernel panic - not syncing: sysrq triggered crash"]
    assert find_splats(log, allow=[r"sysrq triggered crash"]) == []
    p = panic_text(log)
    assert p and "sysrq triggered crash" in p and "Call Trace:" in p


EXPECTED = {
    "lockdep-circular.log": r"^WARNING: possible circular locking dependency detected$",
    "lockdep-inconsistent.log": r"^WARNING: inconsistent lock state$",
    "warn.log": r"^WARNING: CPU: 1 PID: 99 at kmod/dti_ring.c:77",
    "bug-null.log": r"^BUG: kernel NULL pointer dereference",
    "kernel-bug-at.log": r"^kernel BUG at kmod/dti_core.c:99!",
    "gpf.log": r"^general protection fault",
    "sleep-atomic.log": r"sleeping function called from invalid context",
    "sched-atomic.log": r"^BUG: scheduling while atomic",
    "hung-task.log": r"^INFO: task dti-worker:150 blocked",
    "rcu-stall.log": r"rcu_sched self-detected stall",
    "rcu-stall-preempt.log": r"rcu_preempt detected stalls",
    "ubsan.log": r"^UBSAN: shift-out-of-bounds",
    "kasan.log": r"^BUG: KASAN: slab-out-of-bounds",
    "list-corruption.log": r"^list_add corruption",
    "refcount.log": r"^refcount_t: underflow",
    "soft-lockup.log": r"BUG: soft lockup",
    "kmemleak.log": r"^kmemleak: unreferenced object 0x",
    "odebug.log": r"^ODEBUG: free active",
    "lockdep-off.log": r"^lockdep: turned off during the test",
    "slub-redzone.log": r"^BUG kmalloc-8 \(.*\): Right Redzone overwritten",
}


def test_every_synthetic_splat_has_an_expectation():
    files = {p.name for p in SYN.glob("*.log")} - {"benign-noise.log"}
    assert files == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_synthetic_splat_found(name):
    import re
    text = (SYN / name).read_text()
    splats = find_splats(text)
    assert any(re.search(EXPECTED[name], s) for s in splats), splats
    # and inside a real clean boot log, only the snippet's lines are reported
    clean = read("console-clean-module.log")
    lines = clean.splitlines(keepends=True)
    mixed = "".join(lines[:300]) + text + "".join(lines[300:])
    assert find_splats(mixed) == splats


def test_bug_null_reports_bug_oops_and_panic():
    splats = find_splats((SYN / "bug-null.log").read_text())
    assert splats == [
        "BUG: kernel NULL pointer dereference, address: 0000000000000008",
        "Oops: 0000 [#1] PREEMPT SMP NOPTI",
        "Kernel panic - not syncing: Fatal exception",
    ]
    p = panic_text((SYN / "bug-null.log").read_text())
    assert p.splitlines()[0].endswith("BUG: kernel NULL pointer dereference, address: 0000000000000008")


def test_allow_list_filters_by_regex():
    text = (SYN / "refcount.log").read_text()
    assert len(find_splats(text)) == 2
    assert find_splats(text, allow=[r"refcount"]) == []
    assert find_splats(text, allow=[r"^refcount_t:"]) == [
        "WARNING: CPU: 0 PID: 150 at lib/refcount.c:28 refcount_warn_saturate+0xba/0x110"]


def test_strip_prefix():
    assert strip_prefix("[    2.782849] WARNING: CPU: 0") == "WARNING: CPU: 0"
    assert strip_prefix("[ 1234.000001] [    T1] BUG: x") == "BUG: x"
    assert strip_prefix("no prefix\r\n") == "no prefix"


def test_crlf_and_no_timestamps():
    assert find_splats("WARNING: CPU: 0 PID: 1 at a.c:1 f\r\nok\r\n") == [
        "WARNING: CPU: 0 PID: 1 at a.c:1 f"]


def test_kmemleak_report_flags_the_count_and_each_object():
    splats = find_splats((SYN / "kmemleak.log").read_text())
    assert splats == [
        "kmemleak: 1 new suspected memory leaks (see /sys/kernel/debug/kmemleak)",
        "kmemleak: unreferenced object 0xffff88800a3e1c00 (size 256):",
    ]


def test_kmemleak_and_odebug_boot_notices_are_not_flagged():
    assert find_splats(
        "[    0.000000] ODEBUG: 12 of 12 active objects replaced\n"
        "[    1.230000] kmemleak: Kernel memory leak detector initialized (mem pool available: 15680)\n"
        "[    1.230001] kmemleak: Automatic memory scanning thread started\n") == []


def test_allow_by_context():
    """A splat allowed by who caused it: the lines after its own."""
    log = textwrap.dedent("""\
        [   47.375059] BUG: using smp_processor_id() in preemptible [00000000] code: stapio/234
        [   47.375060] caller is _stp_runtime_context_trylock+0x13/0xf0 [stap_x]
        [   48.375059] BUG: using smp_processor_id() in preemptible [00000000] code: cat/480
        [   48.375060] caller is dti_snap_current+0x84/0x7b0 [dti]
        """)
    allow = [r"smp_processor_id\(\) in preemptible .*\ncaller is _stp_"]
    assert find_splats(log, allow=allow) == [
        "BUG: using smp_processor_id() in preemptible [00000000] code: cat/480"]


def test_systemtap_runtime_splats_allowed():
    """SystemTap 4.8's runtime splats on the debug kernel, as seen; the same
    splats caused by DTI's code are still reported."""
    log = textwrap.dedent("""\
        [   47.375059] BUG: sleeping function called from invalid context at kernel/kallsyms.c:304
        [   47.377379] in_atomic(): 1, irqs_disabled(): 0, non_block: 0, pid: 127, name: stapio
        [   47.379909] preempt_count: 1, expected: 0
        [   47.381822] RCU nest depth: 0, expected: 0
        [   47.382041] INFO: lockdep is turned off.
        [   47.383742] Preemption disabled at:
        [   47.383768] [<ffffffffc04b6bd5>] _stp_ctl_write_cmd.cold+0x2a3/0x4f6 [inject_stress_7aaa35e9]
        [   99.201104] BUG: using smp_processor_id() in preemptible [00000000] code: stapio/234
        [   99.201105] caller is _stp_runtime_context_trylock+0x13/0xf0 [dti_watch_stress_1de2de5e]
        [  100.000000] BUG: sleeping function called from invalid context at kernel/kallsyms.c:304
        [  100.000001] in_atomic(): 1, irqs_disabled(): 0, non_block: 0, pid: 128, name: cat
        [  100.000002] Preemption disabled at:
        [  100.000003] [<ffffffffc04b6bd5>] dti_snap_current+0x84/0x7b0 [dti]
        [  101.000000] BUG: using smp_processor_id() in preemptible [00000000] code: cat/480
        [  101.000001] caller is dti_snap_current+0x84/0x7b0 [dti]
        """)
    assert find_splats(log) == [
        "BUG: sleeping function called from invalid context at kernel/kallsyms.c:304",
        "BUG: using smp_processor_id() in preemptible [00000000] code: cat/480"]
