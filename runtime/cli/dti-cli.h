/* SPDX-License-Identifier: GPL-2.0 */
/* The dti command: shared declarations of the subcommand files. */
#ifndef _DTI_CLI_H
#define _DTI_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include "dti/libdti.h"

/*
 * Exit codes (dti(1), EXIT STATUS), as git where git has one: 0 success,
 * 1 the operation failed, 2 damaged data was skipped and the rest read,
 * 129 bad usage.
 */
#define DTI_EXIT_OK	0
#define DTI_EXIT_FAIL	1
#define DTI_EXIT_DAMAGE	2
#define DTI_EXIT_USAGE	129

struct dti_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;	/* synopsis and options, printed by --help */
	const char *summary;
};

extern const struct dti_cmd dti_cmds[];

/* "dti: <msg>" on stderr; returns DTI_EXIT_FAIL. */
int dti_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void dti_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Usage of @cmd: after @msg, its synopsis on stderr and DTI_EXIT_USAGE
 * (@error), or all of it on stdout and DTI_EXIT_OK.
 */
int dti_usage(const char *cmd, bool error, const char *msg);
/* Parse a decimal number; false if @s is not one. */
bool dti_parse_uint(const char *s, unsigned long *v);
/*
 * getopt_long() over @argv for command @cmd, errors printed by getopt
 * itself (they name the option) followed by the usage.  Returns the option,
 * -1 at the end, or DTI_OPT_EXIT with *@ret set: an exit code (--help,
 * bad usage).
 */
#define DTI_OPT_EXIT	(-2)
int dti_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *longopts, int *ret);

int cmd_list(int argc, char **argv);
int cmd_level(int argc, char **argv);
int cmd_reset(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_read(int argc, char **argv);
int cmd_decode(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);

extern const char usage_list[], usage_level[], usage_reset[], usage_stats[];
extern const char usage_read[], usage_decode[], usage_snapshot[];

#endif /* _DTI_CLI_H */
