"""vm.run() and dump.qemu_dump() boot a guest again when it hung or
panicked before /init (the emulator's fault, not the test's), and only
then."""

from __future__ import annotations

import pytest

from harness import dump, vm

HUNG = "[    1.62] rcu: INFO: rcu_sched detected stalls on CPUs/tasks:\n"
OOPS = ("[    1.16] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI\n"
        "[    1.16] RIP: 0010:sched_clock_tick+0x5/0xb0\n"
        "[    1.17] Kernel panic - not syncing: Fatal exception in interrupt\n")
STARTED = (f"[    2.30] {vm.INIT_STARTED}\n[  300.00] rcu: INFO: rcu_sched detected stalls\n"
           "[  300.01] Kernel panic - not syncing: Fatal exception\n")


class Ok(str):
    """What the fake returns: "ok", with a console that has no splat."""
    console = f"[    2.30] {vm.INIT_STARTED}\n"


def fake(monkeypatch, module, name, consoles, tmp_path, lost=vm.VMTimeout):
    """Replace module.name by one that is lost (`lost`) with each console
    in turn, then returns "ok"; the calls are counted in the returned list."""
    calls = []

    def once(script, **kwargs):
        calls.append(kwargs)
        if len(calls) <= len(consoles):
            d = tmp_path / f"run-{len(calls)}"
            d.mkdir()
            raise lost("VM lost", consoles[len(calls) - 1], "", d)
        return Ok("ok")

    monkeypatch.setattr(module, name, once)
    return calls


@pytest.mark.parametrize("module,name,call", [(vm, "_run_once", vm.run),
                                              (dump, "_qemu_dump_once", dump.qemu_dump)])
@pytest.mark.parametrize("lost,console,how", [(vm.VMTimeout, HUNG, "hung"),
                                              (vm.VMPanic, OOPS, "panicked")])
def test_lost_before_init_is_booted_again(monkeypatch, tmp_path, capsys, module, name, call,
                                          lost, console, how):
    calls = fake(monkeypatch, module, name, [console], tmp_path, lost)
    assert call("true", smp=4) == "ok"
    assert len(calls) == 2 and calls[1]["smp"] == 4
    assert (tmp_path / "run-1-lost-console.log").read_text() == console
    assert f"{how} before /init" in capsys.readouterr().err


@pytest.mark.parametrize("module,name,call", [(vm, "_run_once", vm.run),
                                              (dump, "_qemu_dump_once", dump.qemu_dump)])
@pytest.mark.parametrize("lost", [vm.VMTimeout, vm.VMPanic])
def test_a_loss_after_init_is_the_test_s(monkeypatch, tmp_path, module, name, call, lost):
    calls = fake(monkeypatch, module, name, [STARTED], tmp_path, lost)
    with pytest.raises(lost):
        call("true")
    assert len(calls) == 1


def test_retries_are_bounded(monkeypatch, tmp_path):
    calls = fake(monkeypatch, vm, "_run_once", [HUNG] * (vm.BOOT_RETRIES + 1), tmp_path)
    with pytest.raises(vm.VMTimeout):
        vm.run("true")
    assert len(calls) == vm.BOOT_RETRIES + 1


def test_hung_boot_is_no_boot_of_the_guest(monkeypatch, tmp_path):
    class G:
        boots: list = []

    g = G()
    g.boots = ["earlier"]

    tries = []

    def once(script, guest=None, **kwargs):
        guest.boots.append("this one")
        tries.append(1)
        if len(tries) == 1:
            d = tmp_path / "qdump"
            d.mkdir(exist_ok=True)
            raise vm.VMTimeout("lost", HUNG, "", d)
        return "ok"

    monkeypatch.setattr(dump, "_qemu_dump_once", once)
    assert dump.qemu_dump("true", guest=g) == "ok"
    assert g.boots == ["earlier", "this one"]


def test_a_splat_before_init_is_booted_again(monkeypatch, tmp_path, capsys):
    """A guest that ran to the end but whose kernel reported a splat
    before /init (an RCU stall while it patched itself) boots again; a
    splat after /init is the test's to judge."""
    stall = ("[   41.35] rcu: INFO: rcu_preempt self-detected stall on CPU\n"
             f"[   47.45] {vm.INIT_STARTED}\n")
    late = f"[    2.30] {vm.INIT_STARTED}\n[    9.00] rcu: INFO: rcu_preempt self-detected stall on CPU\n"
    calls = []

    def once(script, **kwargs):
        calls.append(kwargs)
        d = tmp_path / f"run-{len(calls)}"
        d.mkdir()
        console = [stall, late][min(len(calls) - 1, 1)]
        return vm.Result(rc=0, stdout="", console=console, outdir=None, run_dir=d,
                         duration=1.0, smp=2, mem=256, cmdline=[])

    monkeypatch.setattr(vm, "_run_once", once)
    res = vm.run("true")
    assert len(calls) == 2 and res.console == late
    assert (tmp_path / "run-1-lost-console.log").read_text() == stall
    assert "self-detected stall" in capsys.readouterr().err


def test_a_second_boot_is_judged_on_its_own():
    """With reboot=True the console holds two boots: a splat before the
    second boot's /init is before /init, and a second boot lost before
    its /init was lost before /init, whatever the first boot did."""
    first = f"[    0.00] Linux version 6.12.1 (gcc)\n[    2.30] {vm.INIT_STARTED}\n"
    oops = "[    2.09] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI\n"
    second = f"[    0.00] Linux version 6.12.1 (gcc)\n{oops}[    2.40] {vm.INIT_STARTED}\n"
    assert vm.splats_before_init(first + second)
    assert not vm.splats_before_init(first + oops)
    lost = vm.VMPanic("lost", first + "[    0.00] Linux version 6.12.1 (gcc)\n" + oops, "", None)
    assert vm.lost_before_init(lost)
    assert not vm.lost_before_init(vm.VMPanic("lost", first + oops, "", None))


def test_a_boot_that_panicked_and_rebooted_counts():
    """A middle boot that panicked before /init and was rebooted by
    panic= (the test went on in the boot after) is a splat before /init;
    a last boot that never started /init is not judged here."""
    first = f"[    0.00] Linux version 7.3.4 (gcc)\n[    2.80] {vm.INIT_STARTED}\n"
    oops = ("[    1.40] Oops: int3: 0000 [#1] SMP NOPTI\n"
            "[    1.44] Kernel panic - not syncing: Fatal exception in interrupt\n")
    crashed = "[    0.00] Linux version 7.3.4 (gcc)\n" + oops
    third = f"[    0.00] Linux version 7.3.4 (gcc)\n[    2.27] {vm.INIT_STARTED}\n"
    assert vm.splats_before_init(first + crashed + third)
    assert not vm.splats_before_init(first + crashed)
    assert not vm.splats_before_init(first + third)
