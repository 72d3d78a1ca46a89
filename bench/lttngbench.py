"""LTTng beside DTI in `make bench` (issue 44): what the guest needs.

LTTng records the benchmark's 64-byte tracepoint dti_bench_payload64 (the
one ftrace's trace_event64 case records) in case lttng_event64.  For that
the guest loads:

* lttng-modules' tracer, built here out of tree for the guest kernel from
  the lttng-modules-dkms source of this Debian release, without DKMS (the
  host runs no modules): only the modules a kernel channel needs
  (MODULES), none of LTTng's probes of the kernel's own tracepoints, which
  the benchmark does not use (2.13.9's timer probe does not even build
  against Debian 12's 6.1.0-56).  The build is kept in the cache,
  ${XDG_CACHE_HOME:-~/.cache}/dti/lttng/build-VERSION-KVER;
* bench/lttng/dti_bench_lttng.ko, the LTTng probe of the tracepoint;
* bench/lttng/lttng_flight, a program that makes an LTTng session with one
  overwrite-mode channel through lttng-modules' ioctls and runs a command
  inside it.  lttng-tools would do the same through lttng-sessiond, which
  needs its libraries (liburcu, libxml2, lttng-ust's ...), a consumer
  daemon, modprobe and a module tree in the initramfs; a flight recorder
  needs none of them, and the program is 250 lines.

Where the lttng-modules source comes from, first found: $DTI_LTTNG_SRC;
/usr/src/lttng-modules-* (lttng-modules-dkms installed); the cache's
lttng-modules-* (bench/lttng/fetch-source: the package downloaded and
unpacked, no DKMS).  Without one, or if it does not build for the guest
kernel, the benchmark runs without the LTTng rows and says why.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent

from harness import kernels                           # noqa: E402
from harness.kernel import cache_dir                  # noqa: E402

# lttng-modules' modules a kernel session with an overwrite channel needs,
# in load order (each after those it links against), relative to src/.
MODULES = ["lttng-wrapper.ko", "lttng-clock.ko", "lib/lttng-lib-ring-buffer.ko",
           "probes/lttng-kprobes.ko", "probes/lttng-kretprobes.ko",
           "probes/lttng-uprobes.ko", "lttng-statedump.ko", "lttng-tracer.ko",
           "lttng-ring-buffer-client-overwrite.ko"]
PROBE = "dti_bench_lttng.ko"
EVENT = "dti_bench_payload64"
HELPER = "lttng_flight"
FETCH = HERE / "lttng" / "fetch-source"


class Unavailable(RuntimeError):
    """LTTng cannot be measured here; the message says why."""


def cache() -> Path:
    return cache_dir("DTI_LTTNG_CACHE", "lttng")


def _version(src: Path) -> str:
    m = re.search(r"lttng-modules-(\d[\w.+~-]*)$", src.name)
    return m.group(1) if m else "unknown"


def find_source() -> Path:
    """The lttng-modules source tree to build (see the module's doc)."""
    env = os.environ.get("DTI_LTTNG_SRC")
    if env:
        if not (Path(env) / "src" / "Kbuild").is_file():
            raise Unavailable(f"DTI_LTTNG_SRC={env} is not an lttng-modules source "
                              "tree (no src/Kbuild)")
        return Path(env)
    for base in (Path("/usr/src"), cache()):
        found = sorted(base.glob("lttng-modules-*/src/Kbuild"))
        if found:
            return found[-1].parent.parent
    raise Unavailable("no lttng-modules source: run bench/lttng/fetch-source (downloads "
                      "Debian's lttng-modules-dkms and unpacks it in "
                      f"{cache()}), or install lttng-modules-dkms, or set DTI_LTTNG_SRC")


def _make(kernel, cmd: list[str], mounts: list[Path], what: str) -> None:
    with kernels.build_context(kernel, *mounts):
        r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        tail = "\n".join((r.stdout + r.stderr).splitlines()[-15:])
        raise Unavailable(f"{what} failed for {kernel.release}:\n{tail}")


def build_tracer(kernel, src: Path) -> Path:
    """lttng-modules' MODULES for `kernel`, built once in the cache from a
    copy of `src`; returns the build tree."""
    tree = cache() / f"build-{_version(src)}-{kernel.release}"
    if all((tree / "src" / m).is_file() for m in MODULES):
        return tree
    tmp = tree.with_name(tree.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(src, tmp, symlinks=True)
    cmd = kernels.kbuild_command(kernel, tmp / "src", f"-j{os.cpu_count() or 1}",
                                 "CONFIG_LTTNG=m", *MODULES)
    _make(kernel, cmd, [tmp], f"building lttng-modules {_version(src)}")
    shutil.rmtree(tree, ignore_errors=True)
    tmp.rename(tree)
    return tree


def build(kernel, src_root: Path, work: Path) -> dict:
    """Everything the guest needs for the LTTng case: {"modules": the .ko
    files in load order, "helper": lttng_flight, "version", "source"}.
    `src_root` holds the copy of bench/ the run builds from.  Raises
    Unavailable."""
    src = find_source()
    tree = build_tracer(kernel, src)
    probe_dir = src_root / "bench" / "lttng"
    cmd = kernels.make_command(kernel, probe_dir, f"LTTNG_SRC={tree}")
    _make(kernel, cmd, [src_root, tree], "building the LTTng probe dti_bench_lttng.ko")
    helper = work / HELPER
    r = subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(helper),
                        str(probe_dir / f"{HELPER}.c")], capture_output=True, text=True)
    if r.returncode != 0:
        raise Unavailable(f"building {HELPER} failed:\n{r.stderr[-2000:]}")
    return {"modules": [tree / "src" / m for m in MODULES] + [probe_dir / PROBE],
            "helper": helper, "version": _version(src), "source": str(src),
            "build": str(tree)}


def guest_setup(lt: dict) -> str:
    """Guest shell loading the modules, and `lt CASE CPU BATCHES CALLS`:
    a dti_bench run inside an LTTng session recording EVENT, its result as
    a BENCH line and the session's buffers as LTTNG lines, with the
    buffers LTTng reported as having lost records when the session ended
    (lost=, from the kernel log)."""
    names = " ".join(Path(m).name for m in lt["modules"])
    return f"""
for m in {names}; do insmod $DTI_MODDIR/$m; done
ltlost() {{ dmesg | grep -c 'LTTng: ring buffer .*records were lost' || true; }}
lt() {{
    l0=$(ltlost)
    if ! {HELPER} {EVENT} sh -c "echo run $1 $2 $3 $4 > $C" > /tmp/lttng.out 2>&1; then
        echo "BENCH error=lttng_flight cmd=$1_$2 $(tr '\\n' ' ' < /tmp/lttng.out) $(cat $C)"
        return 0
    fi
    l1=$(ltlost)
    echo "BENCH $(cat $C)"
    sed "s/^/LTTNG case=$1 run_cpu=$2 lost=$((l1 - l0)) /" /tmp/lttng.out
}}
"""


# The least room a record of EVENT takes in an LTTng buffer: the compact
# event header (5-bit event id, 27-bit timestamp) and the 64-byte array;
# x86 has efficient unaligned access, so LTTng packs records unaligned.
RECORD_MIN = 4 + 64


def stored(lines: list[dict], case: str, cpu: int, records: int) -> tuple[int, dict]:
    """Records of `case`'s run on `cpu` that LTTng verifiably stored, with
    the figures it is judged by.  LTTng keeps no count of records
    written (only with a debug build option), so: no buffer reported
    records lost, and the run's CPU's buffer moved by at least `records`
    records of RECORD_MIN bytes.  Packet headers and sub-buffer padding
    make up under 0.2 % of a 128 KiB sub-buffer, so a shortfall of more
    than that many records shows.  Returns `records` when both hold, else
    the records the bytes account for."""
    mine = [d for d in lines if d["case"] == case and d["run_cpu"] == cpu]
    if not mine:
        raise RuntimeError(f"{case} on cpu{cpu}: no LTTNG line (lttng_flight failed?)")
    run = next(d for d in mine if d["cpu"] == cpu)
    fig = {"lttng_bytes": run["bytes"], "lttng_lost_reports": run["lost"],
           "lttng_bytes_per_record": run["bytes"] / records if records else 0.0}
    if run["lost"] == 0 and run["bytes"] >= records * RECORD_MIN:
        return records, fig
    return min(records, run["bytes"] // RECORD_MIN), fig
