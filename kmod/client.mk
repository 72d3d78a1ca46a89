# SPDX-License-Identifier: GPL-2.0
# Rules shared by the directories of modules that link against dti.ko
# (examples/, testsuite/modules/, bench/kmod/).  Set DTI_KMOD to this
# directory, as seen from the including one, before including it;
# KERNEL_DOC may name files for `make lint` to check with kernel-doc.
KVER ?= $(shell ls -1 /lib/modules 2>/dev/null | sort -V | \
	  while read v; do [ -d /lib/modules/$$v/build ] && echo $$v; done | tail -n1)
KDIR ?= /lib/modules/$(KVER)/build
DTI_SYMVERS := $(abspath $(DTI_KMOD))/Module.symvers
KBUILD_ARGS := KBUILD_EXTRA_SYMBOLS=$(DTI_SYMVERS)

all: symvers-sync
	$(MAKE) -C $(KDIR) M=$(CURDIR) $(KBUILD_ARGS) modules

$(DTI_SYMVERS):
	$(MAKE) -C $(DTI_KMOD) KVER=$(KVER)

# The symbol versions of dti.ko's exports change with its internal
# structures, not only with <linux/dti.h>, and Kbuild does not run modpost
# again for a change of KBUILD_EXTRA_SYMBOLS alone.  Dropping this
# directory's Module.symvers (modpost's output) when dti.ko's is newer
# makes modpost write the new versions into *.mod.c and relink.
symvers-sync: $(DTI_SYMVERS)
	@if [ -e Module.symvers ] && [ Module.symvers -ot $(DTI_SYMVERS) ]; then \
		rm -f Module.symvers; fi

# W=1, sparse and kernel-doc; any warning fails (lint.mk).
# LINT_NOT_KERNEL: patterns of C files that are no module's (examples/bpf/).
LINT_SOURCES = $(filter-out %.mod.c $(LINT_NOT_KERNEL),$(wildcard *.c */*.c))
LINT_DOC = $(KERNEL_DOC)
LINT_KBUILD_ARGS = $(KBUILD_ARGS)
lint-build: symvers-sync
include $(DTI_KMOD)/lint.mk

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean

.PHONY: all clean symvers-sync
