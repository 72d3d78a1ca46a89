# DTI - Driver Tracing Interface.  The top level only delegates.
#
#   make          build dti.ko and the test modules for the guest kernel,
#                 libdti and the dti command (runtime/)
#   make deps     install the Debian packages everything here needs
#                 (demo and check run it first; it is quick when all is there)
#   make demo     boot a guest, load DTI, write records, show merged-ts
#   make check    lint the modules (W=1, sparse) and the runtime (gcc and
#                 clang, -Werror), runtime unit tests and
#                 fuzz smoke, then the test suite (the Debian packages'
#                 test among it)
#   make check KERNEL=NAME  the same on kernel NAME of the matrix: 6.1,
#                 6.1-rt, 6.12, 6.12-rt, 5.10, newest, newest-rt
#                 (testsuite/harness/kernels.py), installed first
#   make kernels  install the matrix's kernels (KERNEL=NAME: one), cached
#                 in ~/.cache/dti/kernels/ (5.10 and newest in chroots)
#   make check-build  dti.ko and every client module built W=1, sparse
#                 and kernel-doc clean for each kernel of the matrix, with
#                 the feature tests' outcome per kernel (CI runs it)
#   make check-core KERNEL=NAME  the core set on NAME (CI runs it on
#                 every kernel but the default)
#   make check-kernels  the whole suite on every kernel but the default
#   make check-crash  the crash utility's `dti` command (runtime/crash/):
#                 installs crash and the kernel's vmlinux (linux-image-KVER-dbg,
#                 large), builds dti.so, crashes two guests and compares
#                 its output with `dti dump` (testsuite/test_crash_ext.py)
#   make deb      the Debian packages (debian/): dti-dkms, dti, libdti0,
#                 libdti-dev, dti-systemtap, built with dpkg-buildpackage
#                 from a clean copy of the tree; the .debs land in build/deb/
#   make check-deb  the packages' test alone (testsuite/test_packages.py):
#                 builds them, runs lintian, installs them with apt in a
#                 fresh chroot of the guest kernel's release (debootstrap,
#                 cached in testsuite/.build/deb/) with its headers,
#                 checks DKMS, dti, libdti and stap there, then test_kmod.py
#                 in the guest with DKMS's dti.ko
#   make check-debian13, demo-debian13  make check (PYTEST_ARGS as
#                 given) and make demo in a fresh Debian 13 made with
#                 debootstrap (testsuite/harness/home.py, cached in
#                 ~/.cache/dti/home/trixie/): its own 6.12 kernel, gcc,
#                 SystemTap, QEMU and libraries; root, about 700 MB of
#                 packages the first time.  CI runs the core set and the
#                 SystemTap tests there (check-debian13-core).
#                 make stress-debian13: the stress run there.  KERNEL=
#                 rt-debug (or debug): the host's debug kernel booted
#                 from Debian 13, its SystemTap 5.1 building for it with
#                 the kernel's own gcc-N (installed there)
#   make install  libdti (shared, static, pkg-config file, headers), the
#                 dti command and the man pages (runtime/), dti.ko into
#                 /lib/modules/KVER/extra (+ depmod), the SystemTap tapset
#                 where stap finds it with its reference pages
#                 (probe::dti.record(3stap), function::dti_log(3stap) ...),
#                 dti-stap and the scripts
#                 (DESTDIR, PREFIX, LIBDIR, STAP_TAPSET_DIR respected)
#   make debug-kernel  Debian's source of the default kernel's line
#                 (linux-source-6.1 on Debian 12) built with
#                 KASAN, lockdep, kmemleak, debug objects and UBSAN
#                 (testsuite/harness/debugkernel.py), cached outside the tree
#                 in ~/.cache/dti/debug-kernel/; long (see docs/tests.md).
#                 KERNEL=rt-debug: Debian's source of a line with PREEMPT_RT
#                 in mainline (linux-source-6.12 on Debian 12 and 13)
#                 with PREEMPT_RT and the same checkers, plus lockdep's
#                 raw_spinlock nesting check, cached beside it
#                 (DTI_KERNEL=rt-debug boots it)
#   make builtin-kernel  Debian's linux-source-6.12 with make patches'
#                 series applied and DTI built in (CONFIG_DTI=y, its KUnit
#                 suite, virtio_blk and the 8250 core recording into DTI),
#                 cached in ~/.cache/dti/builtin-kernel/ and rebuilt in
#                 place after a change to kmod/ (harness/builtinkernel.py)
#   make check-builtin  that kernel, then the tests that boot it:
#                 boot-time records, dti.level=/dti.channel=, KUnit at
#                 boot, dumps located by VMCOREINFO, the kselftest
#   make check KERNEL=debug  the same checks, the guests booting that kernel
#                 (builds it first if the cache lacks it; CI does not run it)
#   make stress   the stress run (testsuite/test_stress.py) for DURATION
#                 seconds (default 600; make check runs it for 120):
#                 writers in every context, readers, level flips, hotplug,
#                 module loads, stap; every record checked, the accounting
#                 exact; figures in testsuite/.build/stress-report.txt.
#                 KERNEL=debug runs it on the debug kernel
#   make bench    boot the guest 5 times and measure DTI's cost per call
#                 beside raw relay, ftrace and printk (bench/run.py: table
#                 on stdout, JSON and PNG in bench/results/)
#   make patches KERNEL=6.12|newest  the series that puts DTI into that
#                 kernel's tree (kernel/trace/dti/), written with git
#                 format-patch --cover-letter from kmod/ against Debian's
#                 linux-source-X (newest: the trixie chroot's newest),
#                 extracted in ~/.cache/dti/patches/; the series lands in
#                 testsuite/.build/patches/X/ (kmod/upstream/mkpatches.py)
#   make patches-check KERNEL=6.12|newest  the same, then checks it: git am
#                 to the pristine source, the kernel's checkpatch.pl
#                 --strict (no error, no warning), kernel/trace/dti/ built
#                 alone with W=1 and sparse after each patch (=m, and =y at
#                 the end), kernel-doc -Wall; CI runs it for both
#   make clean

PYTHON  ?= /usr/bin/python3
PYTEST  ?= $(PYTHON) -m pytest

# KERNEL=NAME: the guest tests boot kernel NAME of the matrix
# (testsuite/harness/kernels.py), or the debug kernel (debug, rt-debug).
KERNEL ?=
# arm64-*: the arm64 builds of 6.1, 6.12 and newest, cross-built and
# booted under qemu-system-aarch64 (docs/tests.md)
ARM64_KERNELS  := arm64-6.1 arm64-6.12 arm64-newest
MATRIX_KERNELS := 6.1 6.1-rt 6.12 6.12-rt 5.10 newest newest-rt $(ARM64_KERNELS)
DEBUG_KERNELS  := debug rt-debug
matrix_kernel = $(filter $(MATRIX_KERNELS),$(KERNEL))

# The release `make modules` and `make lint` build for: KERNEL's if it is
# one of the host's kernels, else the kernel the tests boot by default
# (Debian's default kernel, linux-image-amd64's).
KVER    ?= $(shell cd testsuite && DTI_KERNEL= DTI_KVER= $(PYTHON) -m harness.kernels release \
	     $(filter 6.1 6.1-rt 6.12 6.12-rt,$(KERNEL)) 2>/dev/null || \
	     ls -1 /lib/modules 2>/dev/null | sort -V | tail -n1)
export KVER

MODULE_DIRS := kmod testsuite/modules examples

all: modules runtime

modules:
	@for d in $(MODULE_DIRS); do $(MAKE) -C $$d KVER=$(KVER) || exit; done

runtime:
	$(MAKE) -C runtime

deps:
	.ci/install-deps

# A kernel of the matrix is linted in a copy of the module directories
# (its own chroot's compiler for 5.10 and newest); see check-build.
lint:
ifneq ($(matrix_kernel),)
	cd testsuite && $(PYTHON) -m harness.kernels build $(matrix_kernel)
else
	@for d in $(MODULE_DIRS); do $(MAKE) -C $$d KVER=$(KVER) lint || exit; done
endif
	$(MAKE) --no-print-directory -C runtime lint

demo: deps
	$(MAKE) modules
	cd testsuite && $(PYTHON) demo.py

# KERNEL=NAME (a kernel of the matrix, debug, rt-debug, or a debug
# kernel's cache dir): the guest tests boot that kernel, through env
# DTI_KERNEL (testsuite/harness/kernel.py).
ifneq ($(KERNEL),)
export DTI_KERNEL := $(KERNEL)
endif
kernel_prereq = $(if $(filter $(DEBUG_KERNELS),$(KERNEL)),debug-kernel,$(if $(matrix_kernel),kernels))

check: deps $(kernel_prereq)
	$(MAKE) lint
	$(MAKE) --no-print-directory -C runtime check
	cd testsuite && $(PYTEST) -q $(PYTEST_ARGS)

# The in-tree series (kmod/upstream/); KERNEL: 6.12 (default) or newest.
PATCHES_KERNEL = $(or $(filter 6.12 newest,$(KERNEL)),6.12)

patches:
	$(PYTHON) kmod/upstream/mkpatches.py $(PATCHES_KERNEL)

patches-check:
	.ci/install-deps unifdef python3-ply $(if $(filter 6.12,$(PATCHES_KERNEL)),linux-source-6.12)
	$(if $(filter newest,$(PATCHES_KERNEL)),cd testsuite && $(PYTHON) -m harness.kernels install newest)
	$(PYTHON) kmod/upstream/mkpatches.py $(PATCHES_KERNEL) --check

# The kernels of the matrix, installed and cached (KERNEL=NAME: one):
# the host's from Debian 12's archive, 5.10 and the newest kernel Debian
# ships in chroots of their own releases (testsuite/harness/kernels.py).
kernels: deps
	cd testsuite && $(PYTHON) -m harness.kernels install $(or $(matrix_kernel),$(MATRIX_KERNELS))

# dti.ko, the examples, the test modules and the benchmark module built
# W=1, sparse and kernel-doc clean for every kernel of the matrix, and
# every feature test seen both ways.
check-build: kernels
	cd testsuite && $(PYTHON) -m harness.kernels build --expect-both \
		$(or $(matrix_kernel),$(MATRIX_KERNELS))

# The core set (conftest.CORE_FILES) on KERNEL, default the default one.
check-core: deps $(kernel_prereq)
	cd testsuite && $(PYTEST) -q -m core $(PYTEST_ARGS)

# The whole suite on every kernel of the matrix but the default (make
# check runs that): hours on two cores.  Not yet the arm64 ones, whose
# guests run the core set so far (make check-core KERNEL=arm64-6.1).
check-kernels: kernels
	@for k in $(filter-out 6.1 $(ARM64_KERNELS),$(MATRIX_KERNELS)); do \
		echo "=== make check KERNEL=$$k"; \
		$(MAKE) --no-print-directory check KERNEL=$$k || exit; done

# Tests that need the guest kernel's DWARF (a kernel.function() probe):
# installs Debian's linux-image-KVER-dbg (about 860 MB, several GB
# unpacked), so CI does not run it.
check-kdebug: deps
	.ci/install-deps linux-image-$(KVER)-dbg
	cd testsuite && $(PYTEST) -q -k kernel_function test_scripts_load.py

# The crash extension: crash needs the kernel's debuginfo to open a dump,
# so this installs linux-image-KVER-dbg as check-kdebug does (about 860 MB),
# and zlib1g-dev (crash's defs.h includes zlib.h).  CI runs it after make
# check: crash loads dti.so (dlopen(RTLD_NOW): every symbol must resolve)
# and runs its commands on a real guest's dumps.  make check skips
# test_crash_ext.py when crash or the vmlinux is missing, and
# DTI_CHECK_CRASH=1 turns that skip into a failure here.
check-crash: deps
	.ci/install-deps crash zlib1g-dev linux-image-$(KVER)-dbg
	$(MAKE) runtime
	$(MAKE) -C runtime/crash
	cd testsuite && DTI_CHECK_CRASH=1 DTI_KVER=$(KVER) $(PYTEST) -q test_crash_ext.py

# The debug kernel: installs linux-source-X.Y of the default kernel's line
# (harness/debugkernel.py names it), builds once per source version and
# config fragment (testsuite/harness/debug-kernel.config).
# KERNEL=rt-debug: the PREEMPT_RT one, from a line with PREEMPT_RT in
# mainline, with debug-kernel.config and rt-debug-kernel.config (a cache
# entry of its own).
debug-kernel: DEBUG_FLAVOUR = $(if $(filter rt-debug,$(KERNEL)),rt-debug,debug)
debug-kernel:
	.ci/install-deps
	.ci/install-deps $$(cd testsuite && $(PYTHON) -m harness.debugkernel source-package --flavour $(DEBUG_FLAVOUR))
	cd testsuite && $(PYTHON) -m harness.debugkernel build --flavour $(DEBUG_FLAVOUR)

# The kernel with DTI built in (testsuite/harness/builtinkernel.py):
# make patches' series for 6.12 applied to Debian's linux-source-6.12,
# Debian's 6.12 config without its modules + testsuite/harness/
# builtin-kernel.config, built in ~/.cache/dti/builtin-kernel/ (about
# 45 min the first time; after a
# change to kmod/, the series is applied again and make rebuilds what
# changed, a few minutes).  check-builtin: it, then the tests that boot
# it (DTI_KERNEL=builtin); make check runs them only where it is built
# from this checkout's kmod/, and skips them loudly elsewhere.
BUILTIN_TESTS = test_builtin.py test_builtin_dump.py
builtin-kernel: deps
	cd testsuite && $(PYTHON) -m harness.kernels install 6.12
	.ci/install-deps unifdef libssl-dev $$(cd testsuite && $(PYTHON) -m harness.builtinkernel source-package)
	$(PYTHON) kmod/upstream/mkpatches.py 6.12
	cd testsuite && $(PYTHON) -m harness.builtinkernel build --series .build/patches/6.12

check-builtin: builtin-kernel
	cd testsuite && DTI_KERNEL=builtin $(PYTEST) -q $(BUILTIN_TESTS) $(PYTEST_ARGS)

DURATION ?= 600
stress: deps $(kernel_prereq)
	$(MAKE) lint
	cd testsuite && DTI_STRESS_DURATION=$(DURATION) $(PYTEST) -q -s test_stress.py

bench: deps
	$(MAKE) -C bench PYTHON=$(PYTHON)

clean:
	@for d in $(MODULE_DIRS); do $(MAKE) -C $$d KVER=$(KVER) clean; done
	$(MAKE) -C runtime clean
	rm -rf testsuite/.build $(DEB_DIR)

PREFIX          ?= /usr/local
STAP_TAPSET_DIR ?= /usr/share/systemtap/tapset

# dti.ko goes where modprobe and SystemTap look for it: probes name it
# module("dti"), and `stap -r KVER` finds its debuginfo under
# /lib/modules/KVER.  The host kernel need not be KVER.  The Debian
# packages (debian/rules) take install-runtime and install-stap; DKMS
# builds their dti.ko.
install: install-kmod install-runtime install-stap

install-kmod: modules
	install -D -m 644 kmod/dti.ko $(DESTDIR)/lib/modules/$(KVER)/extra/dti.ko
	if [ -z "$(DESTDIR)" ]; then depmod $(KVER); fi

install-runtime:
	$(MAKE) -C runtime install DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)

# The tapset's reference pages, made from its comments as SystemTap makes
# its own: probe::dti.*(3stap) and function::dti_*(3stap).
MAN3STAP_DIR = build/man3stap
man-stap:
	rm -rf $(MAN3STAP_DIR)
	$(PYTHON) tapset/man3stap.py $(MAN3STAP_DIR) tapset/dti.stp tapset/dti_control.stp

install-stap: man-stap
	install -d $(DESTDIR)$(STAP_TAPSET_DIR) $(DESTDIR)$(PREFIX)/share/dti \
		$(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man3
	install -m 644 tapset/*.stp tapset/*.stpm $(DESTDIR)$(STAP_TAPSET_DIR)/
	install -D -m 755 scripts/dti-stap $(DESTDIR)$(PREFIX)/bin/dti-stap
	install -m 644 scripts/dti-stap.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 $(MAN3STAP_DIR)/*.3stap $(DESTDIR)$(PREFIX)/share/man/man3/
	install -m 755 scripts/*.stp $(DESTDIR)$(PREFIX)/share/dti/

# The packages are built from a copy of the tree holding what git tracks
# and the new files it does not ignore (no build outputs), as
# dpkg-buildpackage -b wants a clean source; without git, from everything
# but build/.  DEB_DIR may be set (test_packages.py builds into
# testsuite/.build/deb/out).
DEB_DIR  ?= build/deb
DEB_SRC   = $(abspath $(DEB_DIR))/src/dti

deb: deps
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_SRC)
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
		git ls-files -z --cached --others --exclude-standard; \
	else \
		find . -path ./build -prune -o -path ./.git -prune -o \
			\( -type f -o -type l \) -print0; \
	fi | tar --null -T - --ignore-failed-read -cf - | tar -xf - -C $(DEB_SRC)
	cd $(DEB_SRC) && dpkg-buildpackage -us -uc -b
	mv $(DEB_SRC)/../*.deb $(DEB_SRC)/../*.changes $(DEB_SRC)/../*.buildinfo $(DEB_DIR)/
	rm -rf $(abspath $(DEB_DIR))/src
	@echo "deb: packages in $(DEB_DIR)/:"; ls -1 $(DEB_DIR)/*.deb

# Root (chroot, mounts); downloads about 150 MB of packages the first time.
check-deb: deps
	cd testsuite && DTI_CHECK_DEB=1 $(PYTEST) -q test_packages.py

# Debian 13 as the home (testsuite/harness/home.py)
HOME_SUITE := trixie
DEBIAN13_CORE := -m 'core or tapset'
# KERNEL=debug|rt-debug|DIR: the host's debug kernel, booted from there.
home = cd testsuite && $(PYTHON) -m harness.home $(if $(KERNEL),--kernel $(KERNEL)) $(HOME_SUITE)
home_prereq = deps $(if $(filter $(DEBUG_KERNELS),$(KERNEL)),debug-kernel)
check-debian13: $(home_prereq)
	$(home) make check PYTEST_ARGS="$(PYTEST_ARGS)"
check-debian13-core: $(home_prereq)
	$(home) make check PYTEST_ARGS="$(or $(PYTEST_ARGS),$(DEBIAN13_CORE))"
stress-debian13: $(home_prereq)
	$(home) make stress DURATION=$(DURATION)
demo-debian13: deps
	$(home) make demo

.PHONY: all modules runtime deps lint demo check patches patches-check check-kdebug check-crash stress bench clean \
	debug-kernel builtin-kernel check-builtin kernels check-build check-core check-kernels \
	install install-kmod install-runtime install-stap man-stap deb check-deb \
	check-debian13 check-debian13-core stress-debian13 demo-debian13
