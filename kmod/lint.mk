# SPDX-License-Identifier: GPL-2.0
#
# make lint, for kmod/ and the directories of its clients: the modules
# built with W=1 and sparse (C=2 checks every file), then kernel-doc.
# Any warning fails it, and so does a C file sparse did not check: Kbuild
# only notes that sparse is "not available or not up to date" (a sparse
# too old for the kernel's headers, or headers without
# scripts/checker-valid.sh) and builds on without it.
#
#   SPARSE=no        lint without sparse, saying so
#   KERNELDOC=PATH   the kernel-doc script (default: the kernel's own);
#                    KERNELDOC=none: none, saying so
#
# The including Makefile sets LINT_SOURCES (the C files sparse must
# check), LINT_DOC (the files for kernel-doc) and LINT_KBUILD_ARGS.

SPARSE ?= yes
KERNELDOC ?= $(firstword $(wildcard $(KDIR)/scripts/kernel-doc $(KDIR)/scripts/kernel-doc.py))
LINT_CHECK := $(if $(filter no,$(SPARSE)),,C=2)
LINT_KERNELDOC = $(if $(filter %.py,$(KERNELDOC)),python3,perl) $(KERNELDOC)

lint: lint-build lint-doc

lint-build:
	{ $(MAKE) -C $(KDIR) M=$(CURDIR) $(LINT_KBUILD_ARGS) W=1 $(LINT_CHECK) modules; \
	  echo $$? > .lint.rc; } 2>&1 | tee .lint.log
	@! grep -Ei "warning|error" .lint.log || { echo "lint: warnings above" >&2; exit 1; }
	@[ "$$(cat .lint.rc)" = 0 ] || { echo "lint: the build failed" >&2; exit 1; }
	@rm -f .lint.rc
	@if [ "$(SPARSE)" = no ]; then \
		echo "lint: sparse not run (SPARSE=no)"; \
	else \
		for f in $(LINT_SOURCES); do \
			grep -Eq "^  CHECK +(.*/)?$$f\$$" .lint.log || { \
				echo "lint: sparse did not check $$f: Kbuild ran without it (see its note above; SPARSE=no lints without sparse)" >&2; \
				exit 1; }; \
		done; \
	fi
	@rm -f .lint.log

lint-doc: lint-build
ifeq ($(KERNELDOC),none)
	@echo "lint: kernel-doc not run (KERNELDOC=none)"
else ifeq ($(KERNELDOC),)
	@echo "lint: $(KDIR)/scripts has no kernel-doc: give KERNELDOC=PATH (any kernel's), or KERNELDOC=none" >&2; exit 1
else
	$(if $(LINT_DOC),$(LINT_KERNELDOC) -none -Werror $(LINT_DOC))
endif

.PHONY: lint lint-build lint-doc
