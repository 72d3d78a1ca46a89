"""Host-only unit tests of harness.debugkernel: the config check, the cache
key and DTI_KERNEL's lookup (no kernel is built here)."""

import json

import pytest

from harness import debugkernel, kernel
from harness.kernel import KernelNotFound


def test_read_config_takes_set_and_unset_lines_only():
    text = ("# comment\nCONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=\"-x\"\n"
            "  CONFIG_D=m  \nnot a line\n")
    assert debugkernel.read_config(text) == {
        "CONFIG_A": "y", "CONFIG_B": "n", "CONFIG_C": '"-x"', "CONFIG_D": "m"}


def test_check_config_reports_every_value_that_did_not_hold():
    fragment = ("CONFIG_KASAN=y\nCONFIG_FW_CFG_SYSFS=m\n# CONFIG_DRM is not set\n"
                "# CONFIG_SOUND is not set\nCONFIG_DEBUG_OBJECTS_ENABLE_DEFAULT=1\n"
                "CONFIG_LOCALVERSION=\"-dti-debug\"\n")
    final = ("CONFIG_FW_CFG_SYSFS=y\nCONFIG_DRM=y\nCONFIG_DEBUG_OBJECTS_ENABLE_DEFAULT=1\n"
             "CONFIG_LOCALVERSION=\"-dti-debug\"\n")
    assert debugkernel.check_config(fragment, final) == [
        "CONFIG_KASAN: wanted y, got absent",
        "CONFIG_FW_CFG_SYSFS: wanted m, got y",
        "CONFIG_DRM: wanted n, got y",
    ]
    assert debugkernel.check_config(fragment, fragment) == []


def test_the_fragment_asks_for_the_checkers_and_the_harness_modules():
    want = debugkernel.read_config(debugkernel.FRAGMENT.read_text())
    for name in ("KASAN", "KASAN_GENERIC", "KASAN_INLINE", "PROVE_LOCKING",
                 "DEBUG_ATOMIC_SLEEP", "DEBUG_KMEMLEAK", "DEBUG_OBJECTS", "UBSAN",
                 "DEBUG_LIST", "SOFTLOCKUP_DETECTOR", "DETECT_HUNG_TASK", "FAILSLAB",
                 "FAULT_INJECTION_DEBUG_FS", "RELAY", "DEBUG_FS", "KPROBES",
                 "DYNAMIC_FTRACE", "TRACER_SNAPSHOT", "BPF_EVENTS", "KALLSYMS_ALL",
                 "MODULE_UNLOAD", "HOTPLUG_CPU", "MAGIC_SYSRQ", "BLK_DEV_INITRD"):
        assert want.get(f"CONFIG_{name}") == "y", name
    assert want["CONFIG_DEBUG_KMEMLEAK_DEFAULT_OFF"] == "n"
    # dump.py insmods these from modules.dep: they must be modules
    for name in ("FW_CFG_SYSFS", "PVPANIC_MMIO", "VIRTIO_PCI", "VIRTIO_BLK"):
        assert want[f"CONFIG_{name}"] == "m", name


def test_cache_key_follows_version_and_fragment(tmp_path, monkeypatch):
    frag = tmp_path / "f.config"
    frag.write_text("CONFIG_KASAN=y\n")
    monkeypatch.setattr(debugkernel, "FRAGMENT", frag)
    k1 = debugkernel.cache_key("6.1.192-2")
    assert debugkernel.cache_key("6.1.192-2") == k1
    assert debugkernel.cache_key("6.1.193-1") != k1
    frag.write_text("CONFIG_KASAN=y\nCONFIG_UBSAN=y\n")
    assert debugkernel.cache_key("6.1.192-2") != k1
    monkeypatch.setenv("DTI_DEBUG_KERNEL_CACHE", str(tmp_path / "c"))
    assert debugkernel.cache_dir("6.1.192-2") == (
        tmp_path / "c" / f"6.1.192-2-{debugkernel.cache_key('6.1.192-2')}")


def test_dti_kernel_names_a_cache_dir(tmp_path, monkeypatch):
    out = tmp_path / "6.1.192-2-abc"
    with pytest.raises(KernelNotFound):
        debugkernel.kernel_in(out)
    out.mkdir()
    (out / "info.json").write_text(json.dumps({"release": "6.1.192-dti-debug"}))
    monkeypatch.setenv("DTI_KERNEL", str(out))
    monkeypatch.delenv("DTI_TIMEOUT_FACTOR", raising=False)
    kernel.find_kernel.cache_clear()
    try:
        k = kernel.find_kernel()
    finally:
        kernel.find_kernel.cache_clear()
    assert k.release == "6.1.192-dti-debug" and k.flavour == "debug"
    assert k.vmlinuz == out / "bzImage"
    assert k.build_dir == out / "build"
    assert k.modules_dir == out / "modules/lib/modules/6.1.192-dti-debug"
    assert k.stap_target == str(out / "build")
    assert k.stap_module_dir == out / "build/extra"
    assert k.scaled(100) == 100 * debugkernel.TIMEOUT_FACTOR
    monkeypatch.setenv("DTI_TIMEOUT_FACTOR", "2")
    assert k.scaled(100) == 200


def test_debian_kernel_keeps_its_paths(monkeypatch):
    monkeypatch.delenv("DTI_TIMEOUT_FACTOR", raising=False)
    k = kernel.Kernel("6.1.0-56-amd64", kernel.BOOT_DIR / "vmlinuz-6.1.0-56-amd64",
                      kernel.MODULES_DIR / "6.1.0-56-amd64/build")
    assert k.modules_dir == kernel.MODULES_DIR / "6.1.0-56-amd64"
    assert k.stap_target == "6.1.0-56-amd64"
    assert k.stap_module_dir == kernel.MODULES_DIR / "6.1.0-56-amd64/extra"
    assert k.scaled(300) == 300
