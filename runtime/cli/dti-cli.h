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
/* "dti: <msg>" on stderr, what was asked for (-v): no warning */
void dti_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Usage of @cmd: after @msg, its synopsis on stderr and DTI_EXIT_USAGE
 * (@error), or all of it on stdout and DTI_EXIT_OK.
 */
int dti_usage(const char *cmd, bool error, const char *msg);
/* Parse a decimal number; false if @s is not one. */
bool dti_parse_uint(const char *s, unsigned long *v);
/*
 * Parse a record's level, 0..7 or a name as 'dti level' takes it (not
 * off or destroy), into @level; false if @text is none.
 */
bool dti_parse_rec_level(const char *text, int *level);
/*
 * getopt_long() over @argv for command @cmd, errors printed by getopt
 * itself (they name the option) followed by the usage.  Returns the option,
 * -1 at the end, or DTI_OPT_EXIT with *@ret set: an exit code (--help,
 * bad usage).
 */
#define DTI_OPT_EXIT	(-2)
int dti_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *longopts, int *ret);

/* Help of the options read, decode and dump share (read.c), in two parts */
#define DTI_HELP_FORMAT \
	"  -F, --format FMT      text (as the kernel's merged file; the default\n" \
	"                        but on a terminal), ts (as merged-ts: time, CPU,\n" \
	"                        level; the default on a terminal), hex, json, raw,\n" \
	"                        export (systemd's Journal Export Format, for\n" \
	"                        systemd-journal-remote -o FILE.journal -);\n" \
	"                        ctf: a CTF 1.8 trace into directory -o DIR;\n" \
	"                        perfetto: a Perfetto trace\n" \
	"  -o, --output FILE     write the records to FILE, not standard output\n" \
	"  -c, --cpu LIST        only records of these CPUs (0,2-3; repeatable)\n" \
	"  -p, --priority L      only records of level L and more severe, or of the\n" \
	"                        levels L1..L2 (as journalctl -p: 0..7 or emerg,\n" \
	"                        alert, crit, err, warning, notice, info, debug)\n" \
	"  -S, --since T         only records logged at T or later: SECONDS since\n" \
	"                        boot (12.5), +TIME after the first record, -TIME\n" \
	"                        before the last (a live channel's: now); TIME a\n" \
	"                        number with an optional unit: ns us ms s min h\n" \
	"  -U, --until T         only records logged at T or earlier (as --since)\n" \
	"  -g, --grep REGEX      only records whose message matches REGEX (POSIX\n" \
	"                        extended; case ignored unless it has a capital)\n" \
	"      --case-sensitive  with --grep: case matters\n" \
	"      --report          a report, not the records: counts and rates per\n" \
	"                        level, CPU, kind and caller, the intervals of lost\n" \
	"                        records, the channel's accounting (as dti report)\n" \
	"      --filter EXPR     only typed events for which EXPR holds: FIELD OP\n" \
	"                        VALUE (== != < <= > >= ~glob), && || ! ( ); also\n" \
	"                        event, level, cpu, seq (e.g. 'status!=0 && len>4096')\n"
#define DTI_HELP_TAIL \
	"      --kallsyms FILE   resolve callers through FILE (from the traced machine)\n" \
	"      --lines           callers as function, source file:line and inlined\n" \
	"                        functions, from the modules' DWARF (by build-id)\n" \
	"  -d, --debuginfo PATH  a module's file (NAME.ko) or a directory to look in\n" \
	"                        first (repeatable; implies --lines)\n" \
	"      --kernel-release R  the traced kernel's release, for the default places\n" \
	"                        (/usr/lib/debug/lib/modules/R, /lib/modules/R)\n" \
	"      --modules FILE    the module table to resolve with (a copy of\n" \
	"                        <debugfs>/dti/.modules; implies --lines)\n" \
	"      --strict          stop at the first damaged record (exit status 1)\n" \
	"      --journal         send the records to the system journal (as -F\n" \
	"                        export has them; journald sets the time)\n" \
	"  -q, --quiet           report neither lost records nor damage on stderr\n" \
	"\nExit status: 0, 1 failure, 2 damaged data skipped, 129 usage.\n"

/* What makedumpfile's flattened format begins with (dump reads it, decode refuses it) */
#define MDF_SIGNATURE		"makedumpfile"

/* The output stream's file descriptor and the errno of its first failed write */
struct dti_out {
	int fd;
	int err;
	const char *name;
};

/*
 * --journal (journal.c): a stream that sends what libdti writes to it in
 * DTI_FMT_EXPORT to the system journal, entry by entry; @out gets its
 * error (fd -1).  NULL if this dti has no libsystemd, or on error
 * (printed).  dti_journal_support: "libsystemd", or "none".
 */
FILE *dti_journal_open(struct dti_out *out);
extern const char dti_journal_support[];

/*
 * Files of a snapshot directory besides the records, info and stats: the
 * module table, and the release of the kernel whose modules logged (for
 * 'decode --lines', which looks in /lib/modules/RELEASE and the like).
 */
#define DTI_SNAP_MODULES	"modules"
#define DTI_SNAP_RELEASE	"release"
/*
 * And the ID of the boot it was taken in, a copy of DTI_BOOT_ID: only
 * records of this boot have their callers in /proc/kallsyms (--symbols)
 */
#define DTI_SNAP_BOOT_ID	"boot_id"
#define DTI_BOOT_ID		"/proc/sys/kernel/random/boot_id"

/*
 * Write @release and a newline to DIR/release (@dir).  DTI_EXIT_OK, or
 * DTI_EXIT_FAIL (message printed).
 */
int dti_snap_write_release(const char *dir, const char *release);
/* Copy file @src to @dst (created 0644).  Bytes copied, or -1 (message printed). */
long long dti_copy_file(const char *src, const char *dst);

/* The options of read, decode and dump (read.c parses them) */
struct dti_read_opts {
	bool follow, quiet, no_reset, symbols, strict, previous;
	bool live;			/* read: this boot's channels, not --previous */
	struct dti_ksyms *lazy_syms;	/* live callers of no module: /proc/kallsyms */
	bool lazy_failed;		/* it could not be read */
	bool list;			/* dump --list */
	bool verbose;			/* dump -v: how the channels were found */
	bool journal;			/* --journal: o->f is dti_journal_open()'s */
	int format;
	struct dti_filter *filter;	/* -c, -p, -S, -U, -g, --filter; NULL: none */
	const char *chan_name;		/* the channel read next, for JSON */
	bool report;			/* --report, dti report: a report, no records */
	char **report_stats;		/* snapshots' stats files for it (merged: several) */
	unsigned int n_report_stats;
	char *const *report_live;	/* live channels' names for their stats */
	unsigned int n_report_live;
	bool filtered;			/* one of those was given */
	bool ctf;			/* -F ctf, dti export: a CTF trace into output */
	bool ctf_per_channel;		/* ... each channel's into output/NAME */
	bool merged;			/* several channels in one timeline (a merge) */
	bool perfetto;			/* -F perfetto: a Perfetto trace to output */
	struct dti_perfetto *pf;	/* ... of the channels read so far */
	const char *kallsyms, *output;
	const char *channel, *out_dir;	/* dump --channel (the first named), --out */
	char **channels;		/* every channel --channel names (A,B; repeated) */
	unsigned int n_channels;
	const char *excerpt;		/* dump --excerpt */
	const char *excerpt_shown;	/* its name as told (save-kdump: the final one) */
	bool no_channels;		/* dump: the dump had no DTI channels */
	struct dti_ksyms *syms;
	/* --lines: source lines through the module table */
	bool lines;
	const char **debuginfo;		/* -d, --debuginfo, in order */
	unsigned int n_debuginfo;
	const char *release;		/* --kernel-release */
	const char *modules;		/* --modules */
	struct dti_lines *lines_l;	/* the resolver, with the places given */
	bool lines_done;		/* dti_read_lines_table() was called */
	bool lines_on;			/* with a table: callers resolved */
	struct dti_lines *lines_other;	/* dti_read_lines_other(), or NULL */
	bool lines_other_off;		/* the next print without lines */
	bool modules_given;		/* --modules */
	unsigned long refused;		/* modules of another build refused */
	unsigned long damage_hidden;	/* damage notices past the first shown */
	unsigned int damage_shown;	/* of the reader being read */
	FILE *f;		/* the output */
	struct dti_out out;
};

/*
 * Parse the options and operands of read, decode or dump (@cmd), load
 * the symbols and open the output.  Returns -1 to go on, or an exit code.
 */
void dti_read_notice(const struct dti_notice *n, void *arg);
int dti_report_run(struct dti_reader *r, struct dti_read_opts *o);
/*
 * -F ctf: write what @r returns as a CTF trace (export.c), notices on
 * stderr.  DTI_EXIT_OK or DTI_EXIT_FAIL (message printed).
 */
int dti_export_run(struct dti_reader *r, struct dti_read_opts *o);
/*
 * The CPU whose buffer holds @rec, by which its seq counts (its logging
 * CPU, rec->cpu, but for a replayed record): its CTF stream, its
 * Perfetto track.  Never fails.
 */
unsigned int dti_export_stream(const struct dti_rec *rec);
/*
 * -F perfetto: write what @r returns into the Perfetto trace of the run,
 * o->pf (opened by the first channel, closed by dti_read_finish()), notices
 * on stderr.  DTI_EXIT_OK or DTI_EXIT_FAIL (message printed).
 */
int dti_export_perfetto(struct dti_reader *r, struct dti_read_opts *o);
/*
 * The options of @cmd (@format: -F was given) checked for -F ctf,
 * -F perfetto and dti export (export.c).  Returns -1 to go on, or an
 * exit code.
 */
int dti_read_parse_export(const char *cmd, bool format, struct dti_read_opts *o);
/* decode, report and export (@cmd): their operands read as decode reads them */
int dti_decode_cmd(const char *cmd, int argc, char **argv);
char *dti_read_text_file(const char *path);
int dti_read_parse(const char *cmd, int argc, char **argv, int min_args,
		   int max_args, struct dti_read_opts *o);
/*
 * Print what @r returns to o->f with the notices on stderr, and close
 * it.  DTI_EXIT_OK, DTI_EXIT_DAMAGE, or DTI_EXIT_FAIL (message printed).
 */
int dti_read_print(struct dti_reader *r, struct dti_read_opts *o);
/* Close the output, free what parsing loaded; @ret or the output's error. */
int dti_read_finish(struct dti_read_opts *o, int ret);
/*
 * With --lines, resolve callers through the @n entries of a module table
 * (@mods; @n -1: none could be read, @why (NULL: dti_errmsg()) says why,
 * which is told once as a warning, and callers print as without
 * --lines); --modules FILE replaces it.  Only the first call counts (a
 * table per run).  DTI_EXIT_OK, or DTI_EXIT_FAIL (message printed).
 */
int dti_read_lines_table(struct dti_read_opts *o, const struct dti_module *mods, int n,
			 const char *why);
/*
 * For the next dti_read_print() alone (a channel whose records another
 * boot wrote, in a dump), resolve callers through the @n entries of
 * @mods (@n -1: there is no such table, dti_errmsg() says why: told,
 * callers as without --lines) with a resolver of its own, configured as
 * the first; @mods NULL and @n 0 drop it.  Not with --modules, which
 * wins.  DTI_EXIT_OK, or DTI_EXIT_FAIL (message printed).
 */
int dti_read_lines_other(struct dti_read_opts *o, const struct dti_module *mods, int n);
/* Readers @r reads: a merge's children (o->merged), else 1 */
unsigned int dti_read_nr_readers(struct dti_reader *r, const struct dti_read_opts *o);
/*
 * Several channels: a merge into *@m for dti_read_print() (@cmd's -F raw
 * refused).  Returns -1 to go on, or an exit code (message printed).
 */
int dti_read_merge_new(const char *cmd, struct dti_read_opts *o, struct dti_reader **m);
/*
 * Add reader @r (NULL: its opening failed: dti_errmsg() says why) of
 * channel @name (NULL: as its data name it) to merge @m.  DTI_EXIT_OK,
 * or DTI_EXIT_FAIL (message printed; @r closed, @m not).
 */
int dti_read_merge_add(struct dti_reader *m, struct dti_reader *r, const char *name);
/* Whether dump --channel selects channel @name (all are without it) */
bool dti_read_selects(const struct dti_read_opts *o, const char *name);
/* dti_read_lines_table() of the table in file @path (--modules wins over it) */
int dti_read_lines_file(struct dti_read_opts *o, const char *path);
/* The worse of two exit codes: DTI_EXIT_FAIL, then DTI_EXIT_DAMAGE. */
int dti_exit_worst(int a, int b);
/*
 * Before the records of channel @name, when several may be printed (no
 * --channel): "==> NAME <==" (after an empty line unless it is the first,
 * @shown of them so far), in JSON {"channel":"NAME"}.
 */
void dti_print_channel_head(struct dti_read_opts *o, const char *name, int shown);

int cmd_list(int argc, char **argv);
int cmd_level(int argc, char **argv);
int cmd_reset(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_read(int argc, char **argv);
int cmd_decode(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_save_kdump(int argc, char **argv);
int cmd_console_log(int argc, char **argv);
int cmd_write(int argc, char **argv);
int cmd_save_previous(int argc, char **argv);

extern const char usage_list[], usage_level[], usage_reset[], usage_stats[];
extern const char usage_read[], usage_decode[], usage_snapshot[], usage_dump[];
extern const char usage_save_kdump[];
extern const char usage_report[], usage_export[];
extern const char usage_console_log[], usage_write[], usage_save_previous[];

/*
 * A Perfetto trace (perfetto.c) of records, written to a stream as they
 * come: a track per channel and one per CPU below it, a record an instant
 * event with its level, seq, caller and fields as arguments, lost records
 * slices between the CPU's records around them.
 */
struct dti_perfetto;

/* A trace written to @out.  NULL if out of memory (printed). */
struct dti_perfetto *dti_perfetto_open(FILE *out);
/*
 * Resolve the callers of the records given next through @syms and @lines
 * (either may be NULL: not resolved so).  Never fails.
 */
void dti_perfetto_callers(struct dti_perfetto *pf, struct dti_ksyms *syms,
			  struct dti_lines *lines);
/*
 * Record @rec, just returned by dti_next() on @r, of channel @channel
 * (NULL: not named).  0, or -1: out of memory (printed) or a write error
 * (ferror() of the stream; its close says why).
 */
int dti_perfetto_record(struct dti_perfetto *pf, struct dti_reader *r,
			const struct dti_rec *rec, const char *channel);
/*
 * Notice @n of a reader of channel @channel: records lost (a
 * DTI_NOTICE_GAP; other notices are no records), marked between its
 * CPU's records around the loss.  0, or -1 as dti_perfetto_record().
 */
int dti_perfetto_loss(struct dti_perfetto *pf, const char *channel,
		      const struct dti_notice *n);
/*
 * Write what waits (losses no record followed) and free @pf.  0, or -1
 * as dti_perfetto_record().
 */
int dti_perfetto_close(struct dti_perfetto *pf);

#endif /* _DTI_CLI_H */
