#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""mkpatches.py KERNEL [--out DIR] [--check]

Writes a `git format-patch --cover-letter` series that puts DTI into the
source of kernel KERNEL (Debian's linux-source-X):

  6.12    /usr/src/linux-source-6.12.tar.xz (the host's)
  newest  the newest linux-source-X of the trixie chroot
          (~/.cache/dti/kernels/chroot-trixie, installed there with apt)

The series is made from kmod/ every time.  The source is extracted once
into ~/.cache/dti/patches/KERNEL/ (DTI_PATCHES_CACHE) and made a git
repository tagged `base`; each run resets it to `base`, decides every
feature test of kmod/compat/ for that kernel by running it against the
kernel's own prepared tree (x86_64_defconfig, built in build/ beside the
source with O=), removes the dead branches with unifdef, and commits the
series patch by patch.

--check: then also apply the series to `base` again with git am, run the
kernel's checkpatch.pl --strict on every patch (no error, no warning),
build kernel/trace/dti/ with W=1 and sparse after each patch (CONFIG_DTI=m;
at the end =y too) and run the kernel's kernel-doc on the in-tree files.
Any warning fails.  The newest kernel builds in its chroot (its gcc and
sparse).
"""

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent          # kmod/upstream
KMOD = HERE.parent
REPO = KMOD.parent
CHROOT = Path(os.environ.get("DTI_KERNELS_CACHE",
                             Path.home() / ".cache/dti/kernels")) / "chroot-trixie"
CACHE = Path(os.environ.get("DTI_PATCHES_CACHE", Path.home() / ".cache/dti/patches"))
DIR = "kernel/trace/dti"
# What the tree needs to build (kernels.py's chroot has the compiler and sparse).
CHROOT_PKGS = ("flex", "bison", "libelf-dev", "libssl-dev", "xz-utils", "bc", "make",
               "sparse", "perl", "libc6-dev", "python3")
CHROOT_ENV = ["/usr/bin/env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root",
              "LC_ALL=C", "DEBIAN_FRONTEND=noninteractive"]
# The macros dti_compat.h tests with #ifdef, each in the context of the
# headers it includes.
COMPAT_MACROS = ("__cond_lock", "__noipa", "IRQ_WORK_INIT", "in_hardirq", "IS_ERR_PCPU",
                 "PTR_ERR_PCPU")
COMPAT_INCLUDES = ("linux/err.h", "linux/hrtimer.h", "linux/irq_work.h", "linux/kthread.h",
                   "linux/module.h", "linux/relay.h", "linux/timer.h")


class Fail(Exception):
    pass


T0 = time.monotonic()


def log(msg):
    print(f"mkpatches: [{time.monotonic() - T0:4.0f}s] {msg}", flush=True)


def run(cmd, cwd=None, check=True, env=None, quiet=False):
    r = subprocess.run(cmd, cwd=cwd, env=env, text=True, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    if check and r.returncode != 0:
        tail = "\n".join(r.stdout.splitlines()[-40:])
        raise Fail(f"{' '.join(map(str, cmd))} failed ({r.returncode}):\n{tail}")
    return r


def git(src, *args, **kw):
    return run(["git", "-C", str(src), *args], **kw).stdout


# --------------------------------------------------------------------------
# the kernel's source
# --------------------------------------------------------------------------

class Kernel:
    def __init__(self, name):
        self.name = name
        self.mounts = []
        self.chroot = CHROOT if name == "newest" else None
        self.cache = CACHE / name
        self.tarball = self.find_tarball()
        self.src = self.cache / self.tarball.name.removesuffix(".tar.xz")
        self.build = self.cache / "build"

    def find_tarball(self):
        if self.name == "6.12":
            t = Path("/usr/src/linux-source-6.12.tar.xz")
            if not t.is_file():
                raise Fail(f"{t} is missing: apt-get install linux-source-6.12 "
                           "(bookworm-backports)")
            return t
        if self.name != "newest":
            raise Fail(f"KERNEL={self.name}: 6.12 or newest")
        if not (CHROOT / "usr/bin/apt-get").exists():
            raise Fail(f"{CHROOT} is missing: make kernels KERNEL=newest makes it")
        found = sorted((CHROOT / "usr/src").glob("linux-source-*.tar.xz"),
                       key=lambda p: [int(x) for x in re.findall(r"\d+", p.name)])
        if not found or self.need_packages():
            self.install()
            found = sorted((CHROOT / "usr/src").glob("linux-source-*.tar.xz"),
                           key=lambda p: [int(x) for x in re.findall(r"\d+", p.name)])
        if not found:
            raise Fail(f"no linux-source-X tarball in {CHROOT}/usr/src")
        return found[-1]

    def need_packages(self):
        r = run(["chroot", str(CHROOT), *CHROOT_ENV, "dpkg-query", "-W", "-f",
                 "${db:Status-Abbrev}\\n", *CHROOT_PKGS], check=False)
        return r.returncode != 0 or any(not l.startswith("ii") for l in r.stdout.splitlines())

    def install(self):
        """The newest linux-source-X the chroot's suites have, and what its
        tree needs to build."""
        with self.mounted():
            self.in_chroot("apt-get update -q >/dev/null")
            out = self.in_chroot("apt-cache search --names-only '^linux-source-[0-9.]+$'")
            names = sorted((l.split()[0] for l in out.splitlines()),
                           key=lambda n: [int(x) for x in re.findall(r"\d+", n)])
            if not names:
                raise Fail("no linux-source-X package in the trixie chroot's suites")
            log(f"installing {names[-1]} in {CHROOT}")
            self.in_chroot("apt-get install -y -q --no-install-recommends "
                           + " ".join((names[-1], *CHROOT_PKGS)))

    # The chroot sees /proc, /dev and the cache at their own paths.
    def mounted(self):
        k = self

        class M:
            def __enter__(self):
                for d in (Path("/proc"), Path("/dev"), CACHE):
                    dst = CHROOT / str(d).lstrip("/")
                    dst.mkdir(parents=True, exist_ok=True)
                    run(["mount", "--bind", str(d), str(dst)])
                    k.mounts.append(dst)

            def __exit__(self, *a):
                while k.mounts:
                    subprocess.run(["umount", "-l", str(k.mounts.pop())])
        return M()

    def in_chroot(self, script, check=True):
        return run(["chroot", str(CHROOT), *CHROOT_ENV, "sh", "-ec", script],
                   check=check).stdout

    def sh(self, script, check=True):
        """A shell command in the source tree, in the chroot for newest."""
        script = f"cd '{self.src}' && {script}"
        if self.chroot:
            return run(["chroot", str(CHROOT), *CHROOT_ENV, "sh", "-ec", script], check=check)
        return run(["sh", "-ec", script], check=check)

    def make(self, *args, check=True):
        jobs = os.cpu_count() or 1
        if self.chroot:         # its compiler, which its headers name: gcc-N
            cc = max((p.name for p in (CHROOT / "usr/bin").glob("gcc-[0-9]*")
                      if re.fullmatch(r"gcc-\d+", p.name)), key=lambda n: int(n[4:]))
            args = (f"CC={cc}", f"HOSTCC={cc}", f"CHECK={self.sparse()}", *args)
        return self.sh(f"LOCALVERSION= nice make -s -j{jobs} O='{self.build}' "
                       + " ".join(f"'{a}'" for a in args), check=check)

    def sparse(self):
        """The chroot's newest sparse: trixie's 0.6.4 fails 7.x's
        scripts/checker-valid.sh (__typeof_unqual__), so the newest its
        suites offer is unpacked once under /opt (as testsuite/harness/
        kernels.py does for the lint of the newest kernel's headers)."""
        def key(p):
            return [int(x) for x in re.findall(r"\d+", p.parts[-4])]
        found = sorted(CHROOT.glob("opt/dti-sparse-*/usr/bin/sparse"), key=key)
        if not found:
            pol = self.in_chroot("apt-cache policy sparse")
            vers = re.findall(r"^ +(?:\*\*\* )?(\d\S*) -?\d+$", pol, re.M)
            best = vers[0]          # apt lists the versions newest first
            d = f"/opt/dti-sparse-{best}"
            self.in_chroot(f"t=$(mktemp -d) && cd $t && apt-get download -q 'sparse={best}' "
                           f"&& dpkg-deb -x sparse_*.deb '{d}.tmp' && mv '{d}.tmp' '{d}' "
                           "&& rm -rf $t")
            found = sorted(CHROOT.glob("opt/dti-sparse-*/usr/bin/sparse"), key=key)
        return "/" + str(found[-1].relative_to(CHROOT))

    def extract(self):
        stamp = self.cache / ".extracted"
        want = f"{self.tarball} {self.tarball.stat().st_size} {self.tarball.stat().st_mtime}\n"
        if stamp.is_file() and stamp.read_text() == want and (self.src / ".git").is_dir():
            return
        log(f"extracting {self.tarball} into {self.cache}")
        shutil.rmtree(self.cache, ignore_errors=True)
        self.cache.mkdir(parents=True)
        run(["tar", "xJf", str(self.tarball), "-C", str(self.cache)])
        if not self.src.is_dir():
            raise Fail(f"{self.tarball} did not give {self.src}")
        # Debian's tarball ignores everything at its top (.gitignore: /*).
        git(self.src, "init", "-q")
        git(self.src, "add", "-f", ".")
        git(self.src, "-c", "user.name=base", "-c", "user.email=base@localhost",
            "commit", "-q", "--no-verify", "-m", f"base: {self.tarball.name}")
        git(self.src, "tag", "base")
        stamp.write_text(want)

    def reset(self):
        git(self.src, "checkout", "-q", "-f", "-B", "dti", "base")
        git(self.src, "clean", "-q", "-fdx")

    def configure(self, dti="m", prepare=False):
        """x86_64_defconfig with DTI (and KUnit, for its test) in build/;
        `prepare`: the tree prepared for an external module too (building
        a directory of the tree prepares what it needs itself)."""
        if not (self.build / ".config").is_file():
            log(f"configuring {self.build} (x86_64_defconfig)")
            self.build.mkdir(parents=True, exist_ok=True)
            self.make("x86_64_defconfig")
        self.sh(f"scripts/config --file '{self.build}/.config' -d LOCALVERSION_AUTO "
                f"-e DEBUG_FS -e RELAY -e KUNIT --set-val DTI {dti} -e DTI_KUNIT_TEST")
        self.make("olddefconfig")
        if prepare:
            self.make("modules_prepare")


# --------------------------------------------------------------------------
# the feature tests, decided for this kernel
# --------------------------------------------------------------------------

def feature_tests(k):
    """{macro: True/False} for every DTI_HAVE_* of kmod/compat/conf/ and every
    macro dti_compat.h tests with #ifdef, by compiling the tests against
    the prepared tree (an external module whose one object needs
    dti_conf.h, conf.mk making it)."""
    work = k.cache / "conftest"
    h = hashlib.sha256((k.cache / ".extracted").read_bytes())
    for f in [KMOD / "compat/conftest.sh", KMOD / "compat/conf.mk",
              *sorted((KMOD / "compat/conf").glob("*.c"))]:
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    h.update(repr((COMPAT_MACROS, COMPAT_INCLUDES)).encode())
    key = h.hexdigest()
    if (work / "key").is_file() and (work / "key").read_text() == key:
        log(f"feature tests: the outcome of the same tests on the same tree ({work})")
        return parse_conf(work / "dti_conf.h")
    with (k.mounted() if k.chroot else _null()):
        k.configure("m", prepare=True)
        res = run_feature_tests(k, work)
    (work / "key").write_text(key)
    return res


def run_feature_tests(k, work):
    shutil.rmtree(work, ignore_errors=True)
    (work / "compat/conf").mkdir(parents=True)
    shutil.copy(KMOD / "compat/conftest.sh", work / "compat")
    shutil.copy(KMOD / "compat/conf.mk", work / "compat")
    for t in (KMOD / "compat/conf").glob("*.c"):
        shutil.copy(t, work / "compat/conf")
    for m in COMPAT_MACROS:
        incs = "".join(f"#include <{h}>\n" for h in COMPAT_INCLUDES)
        (work / f"compat/conf/macro_{m.lower()}.c").write_text(
            f"// SPDX-License-Identifier: GPL-2.0\n/* the macro {m} */\n{incs}"
            f"#ifndef {m}\n#error {m} undefined\n#endif\n")
    (work / "Kbuild").write_text(
        "obj-m := dti_conf_probe.o\nDTI_COMPAT := $(src)/compat\n"
        "dti-conf-objs := dti_conf_probe.o\ninclude $(DTI_COMPAT)/conf.mk\n")
    (work / "dti_conf_probe.c").write_text(
        '// SPDX-License-Identifier: GPL-2.0\n#include <linux/module.h>\n'
        '#include "dti_conf.h"\nMODULE_LICENSE("GPL");\n')
    r = k.make(f"M={work}", "modules", check=False)
    conf = work / "dti_conf.h"
    if not conf.is_file():
        raise Fail(f"the feature tests did not run:\n{r.stdout}")
    return parse_conf(conf)


def parse_conf(conf):
    have = {}
    for line in conf.read_text().splitlines():
        if m := re.match(r"#define (DTI_HAVE_\w+) 1$", line):
            have[m.group(1)] = True
        elif m := re.match(r"/\* #undef (DTI_HAVE_\w+) \*/$", line):
            have[m.group(1)] = False
    res = {}
    for name, val in have.items():
        if name.startswith("DTI_HAVE_MACRO_"):
            macro = next(m for m in COMPAT_MACROS
                         if "DTI_HAVE_MACRO_" + m.upper() == name)
            res[macro] = val
        else:
            res[name] = val
    missing = [m for m in COMPAT_MACROS if m not in res]
    if missing:
        raise Fail(f"no outcome for {missing}")
    return res


def unifdef(text, decided, what):
    args = ["unifdef", "-B", "-UDTI_NO_TRACEPOINT"]
    args += [f"-D{m}" if v else f"-U{m}" for m, v in sorted(decided.items())]
    r = subprocess.run(args, input=text, text=True, capture_output=True)
    if r.returncode not in (0, 1) or r.stderr:
        raise Fail(f"unifdef {what}: {r.stderr}")
    return r.stdout


def blocks(text):
    """The header's top-level pieces, split at blank lines outside
    comments and braces (each with the comment before it)."""
    out, cur, depth = [], [], 0
    for line in text.splitlines(keepends=True):
        if not line.strip() and depth == 0 and cur and not cur[-1].rstrip().endswith("\\"):
            out.append("".join(cur))
            cur = []
            continue
        cur.append(line)
        depth += line.count("{") - line.count("}")
    if cur:
        out.append("".join(cur))
    return out


def defined_names(block):
    code = re.sub(r"/\*.*?\*/", "", block, flags=re.S)
    names = re.findall(r"^#define\s+(\w+)", code, re.M)
    names += re.findall(r"^static inline[^(]*?\b(\w+)\(", code, re.M | re.S)
    names += re.findall(r"^struct\s+(\w+)\s*\{", code, re.M)
    return names


def macro_args(text, i):
    """The arguments of the call whose "(" is at text[i], and the index
    after its ")"."""
    depth, args, cur = 0, [], ""
    for j in range(i, len(text)):
        c = text[j]
        if c == "(":
            depth += 1
            if depth == 1:
                continue
        elif c == ")":
            depth -= 1
            if depth == 0:
                args.append(cur.strip())
                return args, j + 1
        elif c == "," and depth == 1:
            args.append(cur.strip())
            cur = ""
            continue
        cur += c
    raise Fail("unbalanced macro call")


def align(code):
    """Continuation lines of a declaration aligned with its "(", as the
    kernel's style has them."""
    lines = code.split("\n")
    for n in range(1, len(lines)):
        prev = lines[n - 1]
        if prev.rstrip().endswith(",") and "(" in prev and prev.count("(") > prev.count(")"):
            col = len(prev[:prev.index("(") + 1].expandtabs(8))
            lines[n] = "\t" * (col // 8) + " " * (col % 8) + lines[n].lstrip()
    return "\n".join(lines)


def expand(text, name, params, body):
    """Every use of the function-like macro `name` in `text` expanded (a
    use that is a line of its own becomes the lines of the body)."""
    out, pos = "", 0
    for m in re.finditer(rf"\b{name}\(", text):
        if m.start() < pos:
            continue
        args, end = macro_args(text, m.end() - 1)
        code = body
        for p_, a in zip(params, args):
            code = re.sub(rf"\b{p_}\b", lambda _m: a, code)
        line_start = text.rfind("\n", 0, m.start()) + 1
        whole_line = text[line_start:m.start()] == "" and text[end:end + 1] == "\n"
        code = align(code.rstrip("\n")) if whole_line else code.strip()
        out += text[pos:m.start()] + code
        pos = end
    return out + text[pos:]


def reduce_compat(text, users):
    """dti_compat.h for one kernel: its decided branches gone (unifdef did
    that), then whatever no in-tree file uses, then the object-like macros
    that name one token and the function-like ones that only rename,
    substituted into their users.  Returns the header (None: nothing
    left) and the users, changed."""
    body = text.split("#define _DTI_COMPAT_H\n", 1)[1].rsplit("#endif /* _DTI_COMPAT_H */", 1)[0]
    body = body.replace('#include "dti_conf.h"\n', "")
    used = "\n".join(users.values())
    keep = []
    for b in blocks(body):
        names = defined_names(b)
        if names and not any(re.search(rf"\b{n}\b", used) for n in names):
            continue
        m = re.fullmatch(r"(?:/\*.*?\*/\n)?#define\s+(\w+)\s+(\w*)\n", b.strip("\n") + "\n", re.S)
        if m:           # DTI_RELAY_CALLBACKS_CONST const
            users = {f: re.sub(rf"\b{m.group(1)}\b ?", m.group(2) + " " if m.group(2) else "", t)
                     for f, t in users.items()}
            continue
        m = re.fullmatch(r"(?:/\*.*?\*/\n)?#define\s+(\w+)\(([\w, ]+)\)[ \t]+(.*)",
                         b.strip("\n"), re.S)
        if m:           # dti_cond_lock(lock, c) (c), DTI_RELAY_SUBBUF_START(name, fn) ...
            body = re.sub(r"[ \t]*\\\n", "\n", m.group(3)).strip() + "\n"
            params = [x.strip() for x in m.group(2).split(",")]
            users = {f: expand(t, m.group(1), params, body) for f, t in users.items()}
            continue
        keep.append(b)
    # The includes in one block, kept only while something else is.
    code = [b for b in keep if not re.fullmatch(r"(#include <[\w/.]+>\n?)+", b.strip() + "\n")]
    includes = "".join(b.strip("\n") + "\n" for b in keep if b not in code)
    if not code:
        return None, users, includes
    keep = [includes] + code
    head = ("/* SPDX-License-Identifier: GPL-2.0 */\n/*\n"
            " * What DTI's out-of-tree compatibility layer (dti.ko's compat/) leaves\n"
            " * in this tree: the helpers that name what relay and struct module\n"
            " * give DTI, in one place.\n */\n")
    return head + "#ifndef _DTI_COMPAT_H\n#define _DTI_COMPAT_H\n\n" + \
        "\n".join(b.strip("\n") + "\n" for b in keep) + "\n#endif /* _DTI_COMPAT_H */\n", \
        users, ""


# --------------------------------------------------------------------------
# the in-tree files
# --------------------------------------------------------------------------

def kbuild_objects():
    text = (KMOD / "Kbuild").read_text().replace("\\\n", " ")
    m = re.search(r"^dti-y\s*:=(.*)$", text, re.M)
    return m.group(1).split()


def dti_sources(decided):
    """{in-tree path: text} of DTI itself: its .c files, private headers,
    public headers, the reduced compat header."""
    objs = kbuild_objects()
    files = {}
    for o in objs:
        files[f"{DIR}/{o[:-2]}.c"] = (KMOD / (o[:-2] + ".c")).read_text()
    for h in ("dti_internal.h", "dti_trace.h"):
        files[f"{DIR}/{h}"] = (KMOD / h).read_text()
    for h in sorted((KMOD / "include/linux").glob("*.h")):
        files[f"include/linux/{h.name}"] = h.read_text()
    for h in sorted((KMOD / "include/uapi/linux").glob("*.h")):
        files[f"include/uapi/linux/{h.name}"] = h.read_text()
    files = {f: unifdef(t, decided, f) for f, t in files.items()}
    compat = unifdef((KMOD / "compat/dti_compat.h").read_text(), decided, "dti_compat.h")
    header, files, includes = reduce_compat(compat, files)
    inc = f'#include "dti_compat.h"\n'
    if header:
        files[f"{DIR}/dti_compat.h"] = header
    else:
        internal = files[f"{DIR}/dti_internal.h"]
        files[f"{DIR}/dti_internal.h"] = internal.replace(inc, includes)
    files[f"{DIR}/Makefile"] = makefile(objs)
    return files, objs


def makefile(objs, kunit=False):
    lines = ["# SPDX-License-Identifier: GPL-2.0", "",
             "obj-$(CONFIG_DTI) += dti.o", ""]
    cont = " \\\n\t "
    lines.append("dti-y := " + cont.join(" ".join(objs[i:i + 5]) for i in range(0, len(objs), 5)))
    if kunit:
        lines.append("dti-$(CONFIG_DTI_KUNIT_TEST) += dti_kunit.o")
    lines += ["", "# dti_trace.h is included by path \".\" (TRACE_INCLUDE_PATH).",
              "CFLAGS_dti_trace.o := -I$(src)"]
    return "\n".join(lines) + "\n"


def insert_after_line(text, pattern, new, what):
    m = re.search(pattern, text, re.M)
    if not m:
        raise Fail(f"{what}: no line matching {pattern!r}")
    end = text.index("\n", m.start()) + 1
    return text[:end] + new + text[end:]


def trace_kconfig(text):
    # After the FTRACE block, not inside it: DTI does not need ftrace.
    if not re.search(r"^endif # FTRACE\n", text, re.M):
        raise Fail("kernel/trace/Kconfig: no `endif # FTRACE`")
    return insert_after_line(text, r"^endif # FTRACE$", '\nsource "kernel/trace/dti/Kconfig"\n',
                             "kernel/trace/Kconfig")


def maintainers(text, entry):
    """The entry at its place in the alphabetic list of sections."""
    title = entry.splitlines()[0]
    lines = text.splitlines(keepends=True)
    start = next(i for i, l in enumerate(lines) if l.startswith("Maintainers List"))
    for i in range(start, len(lines) - 1):
        l = lines[i]
        if (re.match(r"[0-9A-Z]", l) and re.match(r"[A-Z]:\t", lines[i + 1])
                and l.strip().upper() > title.upper() and i > start + 10):
            return "".join(lines[:i]) + entry + "\n" + "".join(lines[i:])
    raise Fail("MAINTAINERS: no place for the entry")


def add_maintainers_files(text, files):
    """F: lines added to DTI's entry, in order."""
    lines = text.splitlines(keepends=True)
    i = lines.index(MAINT_TITLE + "\n")
    j = i + 1
    while j < len(lines) and lines[j].strip():
        j += 1
    entry = lines[i:j]
    fs = sorted(set([l for l in entry if l.startswith("F:\t")] + [f"F:\t{f}\n" for f in files]))
    others = [l for l in entry if not l.startswith("F:\t")]
    # The kernel's order of an entry's fields.
    order = "MRLSWQBCPTFXNK"
    new = sorted(others[1:] + fs, key=lambda l: order.index(l[0]))
    return "".join(lines[:i] + [others[0]] + new + lines[j:])


MAINT_TITLE = (HERE / "MAINTAINERS").read_text().splitlines()[0]


def kernel_parameters(text, params):
    """DTI's entries before the first entry that sorts after them."""
    lines = text.splitlines(keepends=True)
    prev = ""
    for i, l in enumerate(lines):
        m = re.match(r"\t([a-z][\w.\-]*)", l)
        if not m:
            continue
        key = m.group(1).lower()
        # The list is sorted only locally: among the "d" entries.
        if prev.startswith("d") and key.startswith(("d", "e")) and prev < "dti." < key:
            return "".join(lines[:i]) + params + "\n" + "".join(lines[i:])
        prev = key
    raise Fail("kernel-parameters.txt: no place for dti.*")


def doc_index(text):
    # Beside the other "core" tracing documents' last entry of the first
    # list of "Tracing mechanisms" (ring-buffer-design, or the list's end).
    lines = text.splitlines(keepends=True)
    for key in ("   ring-buffer-design\n", "   ftrace\n"):
        if key in lines:
            i = lines.index(key)
            return "".join(lines[:i + 1] + ["   dti\n"] + lines[i + 1:])
    raise Fail("Documentation/trace/index.rst: no place for dti")


# --------------------------------------------------------------------------
# the series
# --------------------------------------------------------------------------

def messages():
    """kmod/upstream/messages.txt: `== key ==` then the commit message."""
    out, key = {}, None
    for line in (HERE / "messages.txt").read_text().splitlines(keepends=True):
        if m := re.match(r"== (\S+) ==$", line):
            key = m.group(1)
            out[key] = ""
        elif key:
            out[key] += line
    return {k: v.strip() + "\n" for k, v in out.items()}


def identity():
    name = git(REPO, "config", "user.name", check=False).strip() or "DTI maintainers"
    mail = git(REPO, "config", "user.email", check=False).strip() or "dti@localhost"
    return name, mail


def write(src, files):
    for path, text in files.items():
        p = src / path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        if path.endswith(".sh"):
            p.chmod(0o755)


def commit(k, key, msgs, paths):
    name, mail = identity()
    date = git(REPO, "log", "-1", "--format=%cI", "--", "kmod").strip()
    env = dict(os.environ, GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=mail,
               GIT_COMMITTER_NAME=name, GIT_COMMITTER_EMAIL=mail,
               GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    run(["git", "-C", str(k.src), "add", "-f", "--", *paths], env=env)
    msg = msgs[key] + f"\nSigned-off-by: {name} <{mail}>\n"
    subprocess.run(["git", "-C", str(k.src), "commit", "-q", "--no-verify", "-F", "-"],
                   input=msg, text=True, env=env, check=True)


def make_series(k, decided):
    msgs = messages()
    src = k.src
    files, objs = dti_sources(decided)
    # 1: DTI itself, its Kconfig and Makefile, its maintainers.
    files[f"{DIR}/Kconfig"] = (HERE / "Kconfig").read_text()
    # The KUnit test of the record codec, linked into dti itself, comes
    # with it: a patch of its own adds a file without touching MAINTAINERS
    # (kernel/trace/dti/ covers it), which checkpatch warns of.
    if (KMOD / "dti_kunit.c").is_file():
        files[f"{DIR}/dti_kunit.c"] = unifdef((KMOD / "dti_kunit.c").read_text(), decided,
                                              "dti_kunit.c")
        files[f"{DIR}/Makefile"] = makefile(objs, kunit=True)
        files[f"{DIR}/Kconfig"] += "\n" + (HERE / "Kconfig.kunit").read_text()
    write(src, files)
    (src / "kernel/trace/Kconfig").write_text(trace_kconfig((src / "kernel/trace/Kconfig").read_text()))
    tm = (src / "kernel/trace/Makefile").read_text()
    (src / "kernel/trace/Makefile").write_text(
        insert_after_line(tm, r"^obj-\$\(CONFIG_RV\) \+= rv/$", "obj-$(CONFIG_DTI) += dti/\n",
                          "kernel/trace/Makefile"))
    km = (src / "kernel/Makefile").read_text()
    (src / "kernel/Makefile").write_text(
        insert_after_line(km, r"^obj-\$\(CONFIG_RETHOOK\) \+= trace/$",
                          "obj-$(CONFIG_DTI) += trace/\n", "kernel/Makefile"))
    mt = maintainers((src / "MAINTAINERS").read_text(), (HERE / "MAINTAINERS").read_text())
    (src / "MAINTAINERS").write_text(mt)
    commit(k, "core", msgs, [*files, "kernel/trace/Kconfig", "kernel/trace/Makefile",
                             "kernel/Makefile", "MAINTAINERS"])
    # 2: the documentation.
    doc = {"Documentation/trace/dti.rst": (HERE / "dti.rst").read_text()}
    write(src, doc)
    idx = src / "Documentation/trace/index.rst"
    idx.write_text(doc_index(idx.read_text()))
    kp = src / "Documentation/admin-guide/kernel-parameters.txt"
    kp.write_text(kernel_parameters(kp.read_text(), (HERE / "kernel-parameters.txt").read_text()))
    m = src / "MAINTAINERS"
    m.write_text(add_maintainers_files(m.read_text(), ["Documentation/trace/dti.rst"]))
    commit(k, "docs", msgs, [*doc, "Documentation/trace/index.rst",
                             "Documentation/admin-guide/kernel-parameters.txt", "MAINTAINERS"])
    # 4: the kselftest.
    sel = KMOD / "selftests"
    if sel.is_dir():
        t = {}
        for f in sorted(p for p in sel.rglob("*") if p.is_file()):
            t[f"tools/testing/selftests/dti/{f.relative_to(sel)}"] = f.read_text()
        write(src, t)
        for f in sel.rglob("*"):
            if f.is_file() and os.access(f, os.X_OK):
                (src / "tools/testing/selftests/dti" / f.relative_to(sel)).chmod(0o755)
        sm = src / "tools/testing/selftests/Makefile"
        text = sm.read_text()
        targets = re.findall(r"^TARGETS \+= (\S+)$", text, re.M)
        after = max(t_ for t_ in targets if t_ < "dti")
        sm.write_text(insert_after_line(text, rf"^TARGETS \+= {re.escape(after)}$",
                                        "TARGETS += dti\n", "selftests/Makefile"))
        m.write_text(add_maintainers_files(m.read_text(), ["tools/testing/selftests/dti/"]))
        commit(k, "kselftest", msgs, [*t, "tools/testing/selftests/Makefile", "MAINTAINERS"])
    # 5: the drivers that use it, the integrator's patches, in order.
    for p in driver_patches(k):
        r = run(["git", "-C", str(src), "am", "-3", "-q", str(p)], check=False)
        if r.returncode:
            git(src, "am", "--abort", check=False)
            raise Fail(f"{p.name} does not apply:\n{r.stdout}")


def driver_patches(k):
    """The drivers' patches for k's kernel line: drivers/X.Y/, X.Y the
    source's line, else the newest line before it.  A driver changes
    between kernels, so each line has its own (fuzz put a Kconfig hunk
    of 6.12's in the wrong entry of 7.3's)."""
    m = re.match(r"linux-source-(\d+)\.(\d+)", k.tarball.name)
    if not m:
        raise Fail(f"{k.tarball.name}: no kernel line in its name")
    want = (int(m[1]), int(m[2]))
    lines = sorted((tuple(map(int, d.name.split("."))), d)
                   for d in (HERE / "drivers").iterdir()
                   if d.is_dir() and re.fullmatch(r"\d+\.\d+", d.name))
    fit = [d for v, d in lines if v <= want]
    if not fit:
        raise Fail(f"no drivers' patches for {want[0]}.{want[1]} in {HERE / 'drivers'}")
    return sorted(fit[-1].glob("*.patch"))


BENCH_RESULTS = REPO / "bench" / "results" / "latest.md"
# The benchmark's rows the cover letter quotes: (row, what it compares)
BENCH_ROWS = (
    ("dti_event64 / trace_event64",
     "dti_event() of a 64-byte record, against a TRACE_EVENT of the same payload into a trace instance"),
    ("dti_printk / trace_array_printk",
     "dti_printk(), against trace_array_printk() of the same format"),
)


def bench_holds(holds):
    """The goals table's "holds" column as the letter says it."""
    words = {"yes": "in every boot", "no": "in no boot"}
    if holds in words:
        return words[holds]
    if re.fullmatch(r"in \d+ of \d+ boots", holds):
        return holds
    raise Fail(f"{BENCH_RESULTS}: a goals row's holds column {holds!r} is not yes, no or in N of M boots")


def bench_figures(path=BENCH_RESULTS):
    """The cover letter's paragraph of figures, from the benchmark's last
    recorded run (make bench writes bench/results/latest.md): each row's
    ratio over the boots, its instructions ratio, and the run's date,
    guest kernel and boots, so that every figure is of that one run."""
    try:
        md = path.read_text()
    except OSError as e:
        raise Fail(f"{path}: {e.strerror}: run make bench for the cover letter's figures")
    date = re.search(r"^## DTI benchmark, (.+)$", md, re.M)
    guest = re.search(r"guest (\S+) under", md)
    boots = re.search(r"(\d+) boot\(s\)", md)
    if not (date and guest and boots):
        raise Fail(f"{path}: no date, guest kernel or number of boots in its heading")
    lines = []
    for row, what in BENCH_ROWS:
        m = re.search(rf"^\| {re.escape(row)} [^|]*\| ([\d.]+) / \*\*([\d.]+)\*\* / ([\d.]+) \|"
                      rf" ([^|]+) \| ([^|]+) \|$", md, re.M)
        if not m:
            raise Fail(f"{path}: no row {row!r} in its goals table")
        lo, med, hi, holds, insns = (g.strip() for g in m.groups())
        lines.append(f"{what}: {med} x (min {lo}, max {hi} over the boots;"
                     f" below 1 x {bench_holds(holds)}; {insns} x in guest instructions).")
    lines.append(f"The run of {date.group(1)}, guest {guest.group(1)}, {boots.group(1)} boots"
                 " (bench/results/latest.md in the DTI tree).")
    return textwrap.indent(textwrap.fill(" ".join(lines), 69, fix_sentence_endings=True), "   ")


def cover_letter(out, n, decided, compat_left):
    cover = next(out.glob("0000-*.patch"))
    text = cover.read_text()
    tmpl = (HERE / "cover-letter.txt").read_text().replace("@BENCH@", bench_figures())
    subject, blurb = tmpl.split("\n", 1)
    blurb = blurb.strip("\n")
    text = text.replace("*** SUBJECT HERE ***", subject.strip())
    text = text.replace("*** BLURB HERE ***", blurb)
    cover.write_text(text)


# --------------------------------------------------------------------------
# the checks
# --------------------------------------------------------------------------

WARN_RE = re.compile(r"warning:|error:|: (warning|error)\b", re.I)


def build_dir(k, what):
    """kernel/trace/dti/ built alone, W=1 and sparse; any warning fails."""
    r = k.make("W=1", "C=1", f"{DIR}/", check=False)
    # Kbuild only notes a sparse it will not run (checker-valid.sh).
    bad = [l for l in r.stdout.splitlines()
           if WARN_RE.search(l) or "not available or not up to date" in l]
    if r.returncode or bad:
        raise Fail(f"{what}: the in-tree build of {DIR}/:\n{r.stdout[-6000:]}")


def checkpatch(k, patches):
    results = {}
    for p in patches:
        r = run(["perl", str(k.src / "scripts/checkpatch.pl"), "--strict", "--showfile", str(p)], cwd=k.src, check=False)
        m = re.search(r"total: (\d+) errors, (\d+) warnings, (?:(\d+) checks, )?", r.stdout)
        if not m:
            raise Fail(f"checkpatch {p.name}: no totals:\n{r.stdout[-3000:]}")
        e, w, c = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
        checks = re.findall(r"^(\S+:\d+: CHECK: .*)$", r.stdout, re.M)
        results[p.name] = (e, w, c, r.stdout)
        log(f"checkpatch --strict {p.name}: {e} errors, {w} warnings, {c} checks")
        for l in checks:
            log(f"    {l}")
    bad = {n: v for n, v in results.items() if v[0] or v[1]}
    if bad:
        raise Fail("checkpatch: errors or warnings:\n" +
                   "\n".join(v[3] for v in bad.values()))
    checks_accepted(results)
    return results


CHECKS_ACCEPTED = HERE / "checkpatch-checks.txt"


def checks_accepted(results, path=CHECKS_ACCEPTED):
    """Every CHECK is one that checkpatch-checks.txt gives a reason for,
    and every line there still matches a CHECK of the series."""
    accepted = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = [f.strip() for f in line.split(" | ")]
        if len(parts) != 3 or not all(parts):
            raise Fail(f"{path.name}:{n}: not FILE | MESSAGE | WHY: {line!r}")
        accepted[(parts[0], parts[1])] = n
    seen, unknown = set(), []
    for name, (_, _, _, out) in results.items():
        for m in re.finditer(r"^(\S+?):\d+: CHECK: (.*)$", out, re.M):
            key = (m[1], m[2].strip())
            if key in accepted:
                seen.add(key)
            else:
                unknown.append(f"{name}: {m[0]}")
    if unknown:
        raise Fail(f"checkpatch: CHECKs with no reason in {path.name}:\n" + "\n".join(unknown))
    stale = [f"{path.name}:{n}: {f} | {msg}" for (f, msg), n in accepted.items() if (f, msg) not in seen]
    if stale:
        raise Fail("checkpatch: listed CHECKs the series no longer has:\n" + "\n".join(stale))


def kerneldoc(k, files):
    kd = next((k.src / "scripts" / n for n in ("kernel-doc.py", "kernel-doc")
               if (k.src / "scripts" / n).is_file()))
    interp = "python3" if kd.name.endswith(".py") else "perl"
    srcs = [f for f in files if f.endswith((".c", ".h"))]
    r = run([interp, str(kd), "-none", "-Wall", *srcs], cwd=k.src, check=False)
    if r.returncode or r.stdout.strip():
        raise Fail(f"kernel-doc -none -Wall:\n{r.stdout[-4000:]}")
    # What the documentation's kernel-doc directives give Sphinx.
    rst = (HERE / "dti.rst").read_text()
    for f in re.findall(r"^\.\. kernel-doc:: (\S+)", rst, re.M):
        r = run([interp, str(kd), "-rst", "-Wall", f], cwd=k.src, check=False)
        errs = [l for l in r.stdout.splitlines() if re.search(r"(?i)\b(warning|error)\b", l)
                and "Sphinx version" not in l and not l.startswith((".. ", "   "))]
        if r.returncode or errs:
            raise Fail(f"kernel-doc -rst -Wall {f}:\n" + "\n".join(errs))


def check(k, out, commits):
    patches = sorted(p for p in out.glob("[0-9][0-9][0-9][0-9]-*.patch")
                     if not p.name.startswith("0000-"))
    # The series applies to the pristine source and gives the same tree.
    tip = git(k.src, "rev-parse", "dti^{tree}").strip()
    git(k.src, "checkout", "-q", "-f", "-B", "dti-am", "base")
    r = run(["git", "-C", str(k.src), "am", "-q", *map(str, patches)], check=False)
    if r.returncode:
        git(k.src, "am", "--abort", check=False)
        raise Fail(f"git am of the series:\n{r.stdout}")
    if git(k.src, "rev-parse", "HEAD^{tree}").strip() != tip:
        raise Fail("git am of the series gives another tree than the one it was made from")
    log(f"the series applies with git am to {k.tarball.name}")
    git(k.src, "checkout", "-q", "-f", "dti")
    cp = checkpatch(k, patches)
    # Each patch builds: kernel/trace/dti/ after each one.
    with (k.mounted() if k.chroot else _null()):
        for i, c in enumerate(commits, 1):
            git(k.src, "checkout", "-q", "-f", c)
            k.configure("m")
            build_dir(k, f"patch {i}")
            log(f"patch {i}: {DIR}/ builds (=m, W=1, sparse)")
        k.configure("y")
        build_dir(k, "CONFIG_DTI=y")
        log(f"{DIR}/ builds built in (=y, W=1, sparse)")
    git(k.src, "checkout", "-q", "-f", "dti")
    files = git(k.src, "diff", "--name-only", "base", "dti", "--",
                DIR, "include").split()
    kerneldoc(k, files)
    log("kernel-doc -none -Wall: clean")
    return cp


class _null:
    def __enter__(self):
        pass

    def __exit__(self, *a):
        pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kernel", help="6.12 or newest")
    ap.add_argument("--out", type=Path, help="default testsuite/.build/patches/KERNEL")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    t0 = time.monotonic()
    try:
        k = Kernel(a.kernel)
        out = (a.out or REPO / "testsuite/.build/patches" / a.kernel).resolve()
        k.extract()
        k.reset()
        decided = feature_tests(k)
        log("feature tests: " + ", ".join(f"{m}={'y' if v else 'n'}"
                                           for m, v in sorted(decided.items())))
        make_series(k, decided)
        commits = git(k.src, "rev-list", "--reverse", "base..dti").split()
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        git(k.src, "format-patch", "-q", "--cover-letter", "-o", str(out), "base..dti")
        left = (k.src / DIR / "dti_compat.h")
        cover_letter(out, len(commits), decided, left.is_file())
        if left.is_file():
            log(f"{DIR}/dti_compat.h remains:\n{left.read_text()}")
        else:
            log(f"{DIR}/dti_compat.h: nothing remains")
        log(f"{len(commits)} patches and a cover letter against {k.tarball.name} in {out}")
        if a.check:
            check(k, out, commits)
            log(f"patches-check {a.kernel}: clean")
    except Fail as e:
        print(f"mkpatches: {e}", file=sys.stderr)
        return 1
    finally:
        log(f"{time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
