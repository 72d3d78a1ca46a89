# SPDX-License-Identifier: GPL-2.0
#
# The feature tests, for a Kbuild file that builds against dti_compat.h:
# set DTI_COMPAT to this directory (as seen from $(src)) and dti-conf-objs
# to the objects that include it, then include this file.  It writes
# $(obj)/dti_conf.h from compat/conf/*.c, compiled with the kernel's own
# compiler and flags (as SystemTap's runtime tests its kernel), again
# whenever the command changes, so also for another kernel.

DTI_CONF_TESTS := $(sort $(wildcard $(DTI_COMPAT)/conf/*.c))

# What Kbuild gives a module's C file, less the dependency file; errors
# for the mistakes a changed interface shows up as, which are only
# warnings by default.
dti-conf-cc = $(CC) $(NOSTDINC_FLAGS) $(LINUXINCLUDE) \
	-include $(srctree)/include/linux/compiler_types.h \
	$(KBUILD_CPPFLAGS) $(KBUILD_CFLAGS) $(KBUILD_CFLAGS_MODULE) -DMODULE \
	-DKBUILD_BASENAME='"dti_conf"' -DKBUILD_MODNAME='"dti_conf"' \
	-Werror=implicit-function-declaration -Werror=incompatible-pointer-types \
	-Werror=int-conversion -Werror=return-type

quiet_cmd_dti_conf = CONF    $@
      cmd_dti_conf = $(CONFIG_SHELL) $(DTI_COMPAT)/conftest.sh $@ '$(call escsq,$(dti-conf-cc))' \
		$(DTI_CONF_TESTS)

$(obj)/dti_conf.h: $(DTI_CONF_TESTS) $(DTI_COMPAT)/conftest.sh FORCE
	$(call if_changed,dti_conf)

targets += dti_conf.h
ccflags-y += -I$(DTI_COMPAT) -I$(obj)
$(addprefix $(obj)/,$(dti-conf-objs)): $(obj)/dti_conf.h
clean-files += dti_conf.h .dti_conf
