"""Host-only unit tests of the kernel matrix's pure parts (kernels.py) and
of how the dump harness finds a kernel's own modules (dump.py)."""

import lzma
import shutil
import subprocess

import pytest

from harness import dump, initramfs, kernels, vm
from harness.kernel import Kernel, default_release

APT_DEPENDS = """linux-image-6.12-amd64
  Depends: linux-image-6.12.117+deb12-amd64
"""


def test_depends_release_is_the_dependency_not_the_metapackage():
    # The metapackage's own name (first line) looks like a release too.
    assert kernels._depends_release(APT_DEPENDS) == "6.12.117+deb12-amd64"
    assert kernels._depends_release("linux-image-amd64\n") is None


def result(name, **features):
    return kernels.BuildResult(name, name, True, [], dict(features))


def test_feature_table_names_tests_that_never_or_always_compiled():
    table, never, always = kernels.feature_table([
        result("a", DTI_HAVE_X=True, DTI_HAVE_Y=False, DTI_HAVE_Z=True),
        result("b", DTI_HAVE_X=False, DTI_HAVE_Y=False, DTI_HAVE_Z=True),
    ])
    assert never == ["DTI_HAVE_Y"]
    assert always == ["DTI_HAVE_Z"]
    assert table.splitlines()[1].split() == ["DTI_HAVE_X", "yes", "no"]


def test_in_root_follows_absolute_symlinks_inside_the_root(tmp_path):
    (tmp_path / "usr/src/linux-headers-9.9").mkdir(parents=True)
    (tmp_path / "lib/modules/9.9").mkdir(parents=True)
    (tmp_path / "lib/modules/9.9/build").symlink_to("/usr/src/linux-headers-9.9")
    assert (kernels._in_root(tmp_path, kernels.Path("/lib/modules/9.9/build"))
            == tmp_path / "usr/src/linux-headers-9.9")


@pytest.fixture
def fake_kernel(tmp_path, monkeypatch):
    """A kernel whose modules dir has a plain, an xz-compressed, a
    built-in module and an old driver's name."""
    release = "9.9.9-test"
    mods = tmp_path / "modules" / release
    (mods / "kernel").mkdir(parents=True)
    (mods / "kernel/plain.ko").write_bytes(b"PLAIN")
    (mods / "kernel/packed.ko.xz").write_bytes(lzma.compress(b"PACKED", format=lzma.FORMAT_XZ))
    (mods / "kernel/old_drv.ko").write_bytes(b"OLD")
    (mods / "modules.dep").write_text(
        "kernel/plain.ko:\n"
        "kernel/packed.ko.xz: kernel/plain.ko kernel/virtio_pci.ko\n"
        "kernel/old_drv.ko:\n")
    (mods / "modules.builtin").write_text("kernel/drivers/virtio/virtio_pci.ko\n")
    monkeypatch.setattr(initramfs, "default_build_dir", lambda: tmp_path / "build")
    return Kernel(release, tmp_path / "vmlinuz", tmp_path / "build-tree",
                  modules_root=tmp_path / "modules")


def test_kernel_modules_decompresses_and_leaves_builtins_out(fake_kernel):
    paths = dump.kernel_modules(fake_kernel, ["packed"])
    assert [p.name for p in paths] == ["plain.ko", "packed.ko"]
    assert paths[1].read_bytes() == b"PACKED"


def test_kernel_modules_takes_the_first_alternative_the_kernel_has(fake_kernel):
    paths = dump.kernel_modules(fake_kernel, [("new-drv", "old_drv")])
    assert [p.name for p in paths] == ["old_drv.ko"]


def test_kernel_modules_says_which_module_is_missing(fake_kernel):
    with pytest.raises(FileNotFoundError, match="nowhere.*modules.builtin"):
        dump.kernel_modules(fake_kernel, ["nowhere"])


def test_default_release_is_installed_or_none():
    rel = default_release()
    if rel is not None:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Depends}", "linux-image-amd64"],
                             capture_output=True, text=True).stdout
        assert f"linux-image-{rel}" in out


# apt-cache depends of Debian 12's arm64 headers and image, as an amd64
# machine with arm64 added answers
ARM64_HEADERS_DEPENDS = """linux-headers-6.1.0-57-arm64:arm64
  Depends: <linux-headers-6.1.0-57-common:arm64>
    linux-headers-6.1.0-57-common
  Depends: linux-kbuild-6.1:arm64
    linux-kbuild-6.1
  Depends: gcc-12:arm64
"""
ARM64_IMAGE_DEPENDS = """linux-image-7.3.4+deb13-arm64:arm64
  Depends: linux-binary-7.3.4+deb13-arm64:arm64
  Depends: linux-modules-7.3.4+deb13-arm64:arm64
  Depends: kmod:arm64
"""


def test_foreign_packages_are_the_image_its_parts_the_headers_and_common():
    answers = {"linux-image-7.3.4+deb13-arm64:arm64": ARM64_IMAGE_DEPENDS,
               "linux-headers-7.3.4+deb13-arm64:arm64":
               ARM64_HEADERS_DEPENDS.replace("6.1.0-57", "7.3.4+deb13")
               .replace("kbuild-6.1", "kbuild-7.3.4+deb13")}
    parts, kbuild = kernels._foreign_packages(answers.__getitem__, "7.3.4+deb13-arm64", "arm64")
    assert parts == ["linux-image-7.3.4+deb13-arm64:arm64",
                     "linux-headers-7.3.4+deb13-arm64:arm64",
                     "linux-binary-7.3.4+deb13-arm64:arm64",
                     "linux-modules-7.3.4+deb13-arm64:arm64",
                     "linux-headers-7.3.4+deb13-common"]
    assert kbuild == "linux-kbuild-7.3.4+deb13"


def test_arm64_kernels_are_builds_of_the_amd64_ones():
    for name, of in (("arm64-6.1", "6.1"), ("arm64-6.12", "6.12"), ("arm64-newest", "newest")):
        spec = kernels.SPECS[name]
        assert spec.of == of and spec.arch == "arm64"
        assert spec.chroot == kernels.SPECS[of].chroot


def test_an_arm64_kernel_cross_builds_and_boots_on_virt(tmp_path):
    k = Kernel("6.1.0-57-arm64", tmp_path / "vmlinuz", tmp_path / "build", arch="arm64")
    assert k.foreign and k.kbuild_vars == ("ARCH=arm64", "CROSS_COMPILE=aarch64-linux-gnu-")
    assert "ARCH=arm64" in kernels.make_command(k, tmp_path / "kmod")
    if not shutil.which("qemu-system-aarch64"):
        pytest.skip("qemu-system-aarch64 not installed (qemu-system-arm)")
    cmd = vm.qemu_command(k, tmp_path / "initrd", tmp_path, smp=2, mem=512)
    assert cmd[0].endswith("qemu-system-aarch64") and "virt" in cmd and "cortex-a57" in cmd
    append = cmd[cmd.index("-append") + 1]
    assert "console=ttyAMA0" in append and "ttyS0" not in append and "tsc=" not in append
    assert "virtconsole,chardev=dtiout" in cmd


def test_the_arm64_init_links_the_output_port_to_the_virtio_console():
    init = initramfs.init_script(initramfs.EARLY_INIT)
    assert "@EARLY@" not in init and "@EARLY@" not in initramfs.INIT_SCRIPT
    early = init.index(initramfs.EARLY_MODULE_LIST)
    assert init.index("mount -t devtmpfs") < early < init.index(f"OUT={initramfs.OUT_DEV}")
    assert f"ln -s hvc0 {initramfs.OUT_DEV}" in init
    assert initramfs.EARLY_MODULE_LIST not in initramfs.INIT_SCRIPT
