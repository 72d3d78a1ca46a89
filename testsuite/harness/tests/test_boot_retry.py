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
        return "ok"

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
