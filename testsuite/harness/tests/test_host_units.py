"""Host-only unit tests: serial output parsing, cpio writer, kernel lookup."""

import base64
import io
import shutil
import subprocess
import tarfile

import pytest

from harness import initramfs, kernel, vm
from harness.initramfs import EXIT_MARKER, OUT_BEGIN_MARKER, OUT_END_MARKER


def make_tar(files: dict) -> bytes:
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w:gz") as tf:
        for name, data in files.items():
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            tf.addfile(ti, io.BytesIO(data))
    return bio.getvalue()


def test_parse_plain_exit():
    assert vm.parse_output(f"hello\nworld\n\n{EXIT_MARKER} 0\n") == (0, "hello\nworld\n", None)


def test_parse_no_trailing_newline_and_empty():
    assert vm.parse_output(f"abc\n{EXIT_MARKER} 3\n") == (3, "abc", None)
    assert vm.parse_output(f"\n{EXIT_MARKER} 0\n") == (0, "", None)


def test_parse_crlf():
    assert vm.parse_output(f"a\r\n\r\n{EXIT_MARKER} 1\r\n") == (1, "a\n", None)


def test_parse_missing_or_truncated_marker():
    assert vm.parse_output("partial output")[0] is None
    assert vm.parse_output(f"x\n{EXIT_MARKER} ")[0] is None
    assert vm.parse_output("")[0] is None


def test_parse_last_marker_wins():
    text = f"\n{EXIT_MARKER} 7\nmore\n\n{EXIT_MARKER} 0\n"
    rc, out, _ = vm.parse_output(text)
    assert rc == 0 and out == f"\n{EXIT_MARKER} 7\nmore\n"


def test_parse_out_archive(tmp_path):
    tar = make_tar({"./a.txt": b"A\n", "./sub/b.bin": bytes(range(256))})
    b64 = base64.encodebytes(tar).decode()
    text = (f"out\n\n{OUT_BEGIN_MARKER}\n{b64}\n{OUT_END_MARKER}\n"
            f"\n{EXIT_MARKER} 0\n")
    rc, out, got = vm.parse_output(text)
    assert (rc, out, got) == (0, "out\n", tar)
    vm._safe_extract(got, tmp_path / "o")
    assert (tmp_path / "o/a.txt").read_bytes() == b"A\n"
    assert (tmp_path / "o/sub/b.bin").read_bytes() == bytes(range(256))


def test_safe_extract_skips_escaping_paths(tmp_path):
    tar = make_tar({"../evil": b"x", "./ok": b"y"})
    try:
        vm._safe_extract(tar, tmp_path / "o")
    except tarfile.TarError:
        pass        # the stdlib "data" filter refuses outright: fine too
    assert not (tmp_path / "evil").exists()


def test_cpio_names_and_alignment():
    data = initramfs.script_archive("echo hi", sh_opts="-u")
    assert len(data) % 512 == 0
    assert initramfs.archive_names(data) == ["test.sh", "test.env"]
    both = data + initramfs.script_archive("true")
    assert initramfs.archive_names(both) == ["test.sh", "test.env"] * 2


@pytest.mark.skipif(not shutil.which("cpio"), reason="cpio not installed")
def test_cpio_readable_by_gnu_cpio(tmp_path):
    bio = io.BytesIO()
    w = initramfs.CpioWriter(bio)
    w.file("/a/b/c.txt", b"hello\n", 0o644)
    w.symlink("/bin/sh", "/bin/busybox")
    w.chardev("/dev/console", 5, 1)
    w.close()
    r = subprocess.run(["cpio", "-itv", "--quiet"], input=bio.getvalue(),
                       capture_output=True, check=True)
    listing = r.stdout.decode()
    for name in ("a/b/c.txt", "bin/sh -> /bin/busybox", "dev/console", "a/b"):
        assert name in listing
    subprocess.run(["cpio", "-id", "--quiet", "a/b/c.txt"], input=bio.getvalue(),
                   cwd=tmp_path, check=True)
    assert (tmp_path / "a/b/c.txt").read_text() == "hello\n"


def test_base_archive_cached_and_rebuilt(tmp_path):
    ko = tmp_path / "fake.ko"
    ko.write_bytes(b"\0" * 10)
    a = initramfs.build_base(tmp_path / "b", [ko])
    names = initramfs.archive_names(a.read_bytes())
    assert "init" in names and "bin/busybox" in names and "bin/sh" in names
    assert "lib/modules/dti/fake.ko" in names
    assert initramfs.build_base(tmp_path / "b", [ko]) == a
    ko.write_bytes(b"\0" * 11)
    assert initramfs.build_base(tmp_path / "b", [ko]) != a


def test_extra_files_bring_shared_libs(tmp_path):
    sh = shutil.which("ls") or "/bin/ls"
    a = initramfs.build_base(tmp_path, [], {sh: "/usr/bin/myls"})
    names = initramfs.archive_names(a.read_bytes())
    assert "usr/bin/myls" in names
    for lib in initramfs.shared_libs(sh):
        assert lib.lstrip("/") in names
    assert any("ld-linux" in n for n in names)


def test_collect_modules_dir_and_duplicates(tmp_path):
    (tmp_path / "x/y").mkdir(parents=True)
    (tmp_path / "x/a.ko").write_text("")
    (tmp_path / "x/y/b.ko").write_text("")
    got = initramfs.collect_modules([tmp_path / "x"])
    assert sorted(p.name for p in got) == ["a.ko", "b.ko"]
    (tmp_path / "z").mkdir()
    (tmp_path / "z/a.ko").write_text("")
    with pytest.raises(ValueError):
        initramfs.collect_modules([tmp_path / "x", tmp_path / "z/a.ko"])
    with pytest.raises(FileNotFoundError):
        initramfs.collect_modules([tmp_path / "missing.ko"])


def test_version_key_orders_kernels():
    rels = ["6.1.0-9-amd64", "6.1.0-56-amd64", "6.10.0-1-amd64", "5.10.0-30-amd64"]
    assert sorted(rels, key=kernel.version_key, reverse=True) == [
        "6.10.0-1-amd64", "6.1.0-56-amd64", "6.1.0-9-amd64", "5.10.0-30-amd64"]


def test_installed_kernels_needs_vmlinuz_and_build(tmp_path):
    boot, mods = tmp_path / "boot", tmp_path / "modules"
    for rel, has_build in (("6.1.0-9-amd64", True), ("6.1.0-56-amd64", True),
                           ("6.2.0-1-amd64", False)):
        (boot).mkdir(exist_ok=True)
        (boot / f"vmlinuz-{rel}").write_text("")
        (mods / rel).mkdir(parents=True)
        if has_build:
            (mods / rel / "build").mkdir()
            (mods / rel / "build/Makefile").write_text("")
    ks = kernel.installed_kernels(boot, mods)
    assert [k.release for k in ks] == ["6.1.0-56-amd64", "6.1.0-9-amd64"]


def test_tcg_guests_keep_their_clocksource(tmp_path):
    """Under TCG the guest's TSC is marked unstable at boot (no clocksource
    switch, hence no text patching, at run time); not with KVM, and not
    where the caller chose the TSC's treatment itself (the benchmark's
    tsc=reliable)."""
    try:
        k = kernel.find_kernel()
    except Exception as e:              # no guest kernel on this host
        pytest.skip(f"no guest kernel: {e}")

    def cmdline(**kw):
        cmd = vm.qemu_command(k, tmp_path / "initrd", tmp_path, smp=2, mem=512, **kw)
        return cmd[cmd.index("-append") + 1].split()

    assert "tsc=unstable" in cmdline(kvm=False)
    assert "tsc=unstable" not in cmdline(kvm=True)
    tcg_bench = cmdline(kvm=False, append="tsc=reliable")
    assert "tsc=reliable" in tcg_bench and "tsc=unstable" not in tcg_bench
