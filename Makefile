# DTI - Driver Tracing Interface.  The top level only delegates.
#
#   make          build dti.ko and the test modules for the guest kernel,
#                 libdti and the dti command (runtime/)
#   make deps     install the Debian packages everything here needs
#   make demo     boot a guest, load DTI, write records, show merged-ts
#   make check    lint the modules (W=1, sparse), runtime unit tests and
#                 fuzz smoke, then the test suite
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

demo: modules
	cd testsuite && $(PYTHON) demo.py

check: lint
	$(MAKE) --no-print-directory -C runtime check
	cd testsuite && $(PYTEST) -q $(PYTEST_ARGS)

clean:
	@for d in $(MODULE_DIRS); do $(MAKE) -C $$d KVER=$(KVER) clean; done
	$(MAKE) -C runtime clean
	rm -rf testsuite/.build

.PHONY: all modules runtime deps lint demo check clean
