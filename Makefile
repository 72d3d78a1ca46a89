# DTI - Driver Tracing Interface.  The top level only delegates.
#
#   make          build dti.ko and the test modules for the guest kernel,
#                 libdti and the dti command (runtime/)
#   make deps     install the Debian packages everything here needs
#                 (demo and check run it first; it is quick when all is there)
#   make demo     boot a guest, load DTI, write records, show merged-ts
#   make check    lint the modules (W=1, sparse), runtime unit tests and
#                 fuzz smoke, then the test suite
#   make check-crash  the crash utility's `dti` command (runtime/crash/):
#                 installs crash and the kernel's vmlinux (linux-image-KVER-dbg,
#                 large), builds dti.so, crashes two guests and compares
#                 its output with `dti dump` (testsuite/test_crash_ext.py)
#   make install  libdti (shared, static, pkg-config file, headers), the
#                 dti command and the man pages (runtime/), dti.ko into
#                 /lib/modules/KVER/extra (+ depmod), the SystemTap tapset
#                 where stap finds it, dti-stap and the scripts
#                 (DESTDIR, PREFIX, LIBDIR, STAP_TAPSET_DIR respected)
#   make bench    boot the guest 5 times and measure DTI's cost per call
#                 beside raw relay, ftrace and printk (bench/run.py: table
#                 on stdout, JSON and PNG in bench/results/)
#   make clean

PYTHON  ?= /usr/bin/python3
PYTEST  ?= $(PYTHON) -m pytest
KVER    ?= $(shell ls -1 /lib/modules 2>/dev/null | sort -V | \
	     while read v; do [ -d /lib/modules/$$v/build ] && echo $$v; done | tail -n1)
export KVER

MODULE_DIRS := kmod testsuite/modules examples

all: modules runtime

modules:
	@for d in $(MODULE_DIRS); do $(MAKE) -C $$d KVER=$(KVER) || exit; done

runtime:
	$(MAKE) -C runtime

deps:
	.ci/install-deps

lint:
	@for d in $(MODULE_DIRS); do $(MAKE) -C $$d KVER=$(KVER) lint || exit; done

demo: deps
	$(MAKE) modules
	cd testsuite && $(PYTHON) demo.py

check: deps
	$(MAKE) lint
	$(MAKE) --no-print-directory -C runtime check
	cd testsuite && $(PYTEST) -q $(PYTEST_ARGS)

# Tests that need the guest kernel's DWARF (a kernel.function() probe):
# installs Debian's linux-image-KVER-dbg (about 860 MB, several GB
# unpacked), so CI does not run it.
check-kdebug: deps
	.ci/install-deps linux-image-$(KVER)-dbg
	cd testsuite && $(PYTEST) -q -k kernel_function test_scripts_load.py

# The crash extension: crash needs the kernel's debuginfo to open a dump,
# so this installs linux-image-KVER-dbg as check-kdebug does, and zlib1g-dev
# (crash's defs.h includes zlib.h).  CI does not run it; make check skips
# test_crash_ext.py when crash or the vmlinux is missing, and
# DTI_CHECK_CRASH=1 turns that skip into a failure here.
check-crash: deps
	.ci/install-deps crash zlib1g-dev linux-image-$(KVER)-dbg
	$(MAKE) runtime
	$(MAKE) -C runtime/crash
	cd testsuite && DTI_CHECK_CRASH=1 DTI_KVER=$(KVER) $(PYTEST) -q test_crash_ext.py

bench: deps
	$(MAKE) -C bench PYTHON=$(PYTHON)

clean:
	@for d in $(MODULE_DIRS); do $(MAKE) -C $$d KVER=$(KVER) clean; done
	$(MAKE) -C runtime clean
	rm -rf testsuite/.build

PREFIX          ?= /usr/local
STAP_TAPSET_DIR ?= /usr/share/systemtap/tapset

# dti.ko goes where modprobe and SystemTap look for it: probes name it
# module("dti"), and `stap -r KVER` finds its debuginfo under
# /lib/modules/KVER.  The host kernel need not be KVER.
install: modules runtime
	$(MAKE) -C runtime install DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)
	install -D -m 644 kmod/dti.ko $(DESTDIR)/lib/modules/$(KVER)/extra/dti.ko
	if [ -z "$(DESTDIR)" ]; then depmod $(KVER); fi
	install -d $(DESTDIR)$(STAP_TAPSET_DIR) $(DESTDIR)$(PREFIX)/share/dti
	install -m 644 tapset/*.stp $(DESTDIR)$(STAP_TAPSET_DIR)/
	install -D -m 755 scripts/dti-stap $(DESTDIR)$(PREFIX)/bin/dti-stap
	install -m 755 scripts/*.stp $(DESTDIR)$(PREFIX)/share/dti/

.PHONY: all modules runtime deps lint demo check check-kdebug check-crash bench clean install
