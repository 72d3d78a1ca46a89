"""A debug kernel's modules are built with the gcc its tree was built
with (Kernel.kbuild_vars): what lets Debian 13's SystemTap build for the
RT debug kernel built on Debian 12."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import kernels
from harness.kernel import Kernel, KernelNotFound


def tree(tmp_path: Path, cc_text: str, flavour: str = "debug") -> Kernel:
    build = tmp_path / "build"
    build.mkdir()
    (build / ".config").write_text(f'CONFIG_CC_VERSION_TEXT="{cc_text}"\nCONFIG_SMP=y\n')
    return Kernel(release="6.12.117-dti-rt-debug", vmlinuz=tmp_path / "bzImage",
                  build_dir=build, flavour=flavour)


@pytest.fixture
def gccs(tmp_path, monkeypatch):
    """A PATH of fake compilers: gccs(gcc="14.2.0", **{"gcc-12": "12.4.0"})."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    monkeypatch.setenv("PATH", str(bindir))

    def make(**versions: str) -> None:
        for name, version in versions.items():
            exe = bindir / name.replace("_", "-")
            exe.write_text(f"#!/bin/sh\necho {version}\n")
            exe.chmod(0o755)
    return make


def test_same_major_needs_nothing(tmp_path, gccs):
    gccs(gcc="12.4.0")
    k = tree(tmp_path, "gcc (Debian 12.2.0-14+deb12u1) 12.2.0")
    assert k.built_by_gcc == "12"
    assert k.kbuild_vars == ()
    assert "CC=" not in " ".join(kernels.kbuild_command(k, tmp_path / "m", "modules"))


def test_other_major_builds_with_its_gcc(tmp_path, gccs):
    gccs(gcc="14.2.0", gcc_12="12.4.0")
    k = tree(tmp_path, "gcc (Debian 12.2.0-14+deb12u1) 12.2.0")
    assert k.kbuild_vars == ("CC=gcc-12",)
    assert kernels.kbuild_command(k, tmp_path / "m", "modules")[-2:] == ["CC=gcc-12", "modules"]
    assert "CC=gcc-12" in kernels.make_command(k, tmp_path / "kmod")


def test_missing_gcc_says_which_to_install(tmp_path, gccs):
    gccs(gcc="14.2.0")
    k = tree(tmp_path, "gcc (Debian 12.2.0-14+deb12u1) 12.2.0")
    with pytest.raises(KernelNotFound, match=r"built by gcc 12 .* gcc is 14: install gcc-12"):
        k.kbuild_vars


def test_installed_kernels_name_their_own_compiler(tmp_path, gccs):
    """Debian's headers set CC themselves: nothing is added for them."""
    gccs(gcc="14.2.0")
    assert tree(tmp_path, "gcc-12 (Debian 12.4.0-5) 12.4.0", flavour="debian").kbuild_vars == ()


def test_clang_tree_is_left_alone(tmp_path, gccs):
    gccs(gcc="14.2.0")
    k = tree(tmp_path, "Debian clang version 19.1.7 (3)")
    assert k.built_by_gcc is None and k.kbuild_vars == ()
