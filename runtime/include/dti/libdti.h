/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * libdti - read DTI (Driver Tracing Interface) channels from userspace.
 *
 * A reader opens the per-CPU streams of one channel (from debugfs, from a
 * directory holding trace0..N, from a list of files, from memory, or from
 * a kernel memory dump: see "memory dumps" below) and
 * returns their records merged by timestamp: a streaming k-way merge that
 * holds one buffer per CPU, never the whole trace.  Sub-buffer header
 * records are consumed by the library; relay padding is skipped both in
 * what read() returns and in raw copies of the ring (mmap, memory dumps).
 *
 * Conventions: functions returning int return 0 (or a count) on success
 * and -1 on failure with errno set; functions returning a pointer return
 * NULL on failure with errno set.  After any failure dti_errmsg() returns
 * a message saying what went wrong and where (file and offset).  The
 * library never prints and never exits; it reports losses, damage and
 * suspicious input only to a notice handler the caller installs, and
 * counts them (dti_damage_count(), dti_warning_count()).
 *
 * Damaged input does not stop a reader: every header field is checked
 * against the format, and what fails is reported (DTI_NOTICE_DAMAGE:
 * file, offset, what is wrong, what was skipped) and skipped.  A record
 * whose fields are wrong is skipped alone; otherwise a stream goes on at
 * the next valid sub-buffer header, a ring copy at its next sub-buffer,
 * and a stream with no header after the damage ends there, while the
 * other CPUs' streams go on.  Nothing after damage is returned unless a
 * valid sub-buffer header frames it.  DTI_OPEN_STRICT makes the first
 * damage fail dti_next() instead.  The same bytes read the same from
 * memory, files, directories and pipes, with one exception: a copy of a
 * whole ring (not what read() returns) through a pipe is read in the
 * order of its slots, as a pipe cannot be read twice.
 *
 * The record format is defined in <dti/dti_record.h>, a copy of dti.ko's
 * <linux/dti_record.h> (kmod/include/uapi/linux in the source).
 *
 * The ABI: structs the library fills in and hands out by pointer
 * (dti_notice, dti_dump_channel, dti_dump_summary, dti_line) only grow at
 * their end; those the caller allocates for the library to fill
 * (dti_rec, dti_field, dti_line) carry reserved room; the one the caller
 * fills in (dti_dump_mem) says its size; filters are opaque.
 */
#ifndef _DTI_LIBDTI_H
#define _DTI_LIBDTI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "dti_record.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dti_reader;		/* opaque: merged per-CPU streams, or readers (a merge) */
struct dti_ksyms;		/* opaque: a loaded /proc/kallsyms */
struct dti_lines;		/* opaque: source lines (see "source lines") */

/**
 * struct dti_rec - one decoded trace record (valid until the next dti_next())
 * @cpu:	CPU that logged it (for a replayed record, not the CPU whose
 *		buffer holds it, by which @seq counts)
 * @level:	level it was logged at (0..7)
 * @flags:	DTI_REC_* bits from <dti/dti_record.h>.  A DTI_REC_FORMAT
 *		record is the format of an event type, which the reader
 *		learns: dti_next() returns none unless the reader was opened
 *		with DTI_OPEN_FORMATS; it has no sequence number, no level
 *		of its own, and dti_print() prints it only as DTI_FMT_RAW.
 *		A DTI_REC_TYPED record prints through its type's format,
 *		and its fields are read with dti_event_field()
 * @seq:	per-CPU sequence number
 * @ts_ns:	CLOCK_MONOTONIC nanoseconds
 * @caller:	kernel return address of the logging call, 0 if unknown
 * @payload:	@len payload bytes (text without NUL, or a binary struct)
 * @len:	payload length
 * @raw:	the record as stored (header, payload, alignment), @raw_len bytes,
 *		in the writer's byte order, of record version @raw_version
 * @raw_len:	bytes the record occupies in the buffer
 * @source:	name of the file (or memory buffer) the record came from
 * @offset:	offset of the record in @source
 * @swapped:	1 if written in the other byte order (the header was
 *		converted; a binary payload is as the writer stored it)
 * @buf_cpu:	CPU whose buffer holds it, by which @seq counts (@cpu but
 *		for a replayed record)
 * @raw_version: 1: @raw is a whole record; 2: a compact one, which does
 *		not stand alone (its time, number and caller are told from
 *		the records before it).  dti_print(DTI_FMT_RAW) writes either
 *		as a whole record
 * @reserved:	room for fields to come; not written by this version
 */
struct dti_rec {
	unsigned int cpu;
	int level;
	unsigned int flags;
	uint64_t seq;
	uint64_t ts_ns;
	uint64_t caller;
	const void *payload;
	size_t len;
	const void *raw;
	size_t raw_len;
	const char *source;
	uint64_t offset;
	int swapped;
	uint32_t buf_cpu;
	uint32_t raw_version;
	uint64_t reserved[5];
};

/* dti_open_*() flags */
#define DTI_OPEN_FOLLOW	0x1	/* live source: dti_next() returns 0 when no data yet */
#define DTI_OPEN_RESET	0x2	/* dti_open_channel(): write reset_consumed first */
#define DTI_OPEN_STRICT	0x4	/* dti_next() fails (EBADMSG, EPROTO) at the first damage */
#define DTI_OPEN_FORMATS 0x8	/* dti_next() returns DTI_REC_FORMAT records too */

/* struct dti_notice.type */
enum dti_notice_type {
	DTI_NOTICE_GAP,		/* sequence numbers missing: records lost */
	DTI_NOTICE_BACKWARDS,	/* sequence number not larger than the previous */
	DTI_NOTICE_SKIPPED,	/* bytes skipped (a record being written while read) */
	DTI_NOTICE_DAMAGE,	/* damaged data skipped, the stream resynchronised
				 * at a sub-buffer or dropped; @count: bytes skipped */
	DTI_NOTICE_WARNING,	/* suspicious input, read as it is: a duplicate
				 * CPU (not merged twice), files of different
				 * channels, a file with no DTI data, a reused
				 * snapshot directory, a level out of range */
	DTI_NOTICE_REFUSED,	/* source lines (dti_lines_*): the files of a
				 * module's name are all other builds than the
				 * module the records come from: not used */
};

/**
 * struct dti_notice - something a reader noticed in the data
 * @type:	what happened
 * @cpu:	CPU stream concerned
 * @from_seq:	GAP: first missing sequence number; BACKWARDS: previous seq
 * @to_seq:	GAP: sequence number of the record after the gap
 * @count:	GAP: records lost; SKIPPED, DAMAGE: bytes skipped
 * @source:	file name
 * @offset:	offset in @source
 * @message:	the whole notice as one line of text, without newline, e.g.
 *		"412 records lost on cpu1 between seq 1000 and 1412" or
 *		"trace0: corrupt data at offset 176: bad magic (not DTI data);
 *		816 bytes skipped to the sub-buffer header at offset 992";
 *		valid during the call only
 */
struct dti_notice {
	enum dti_notice_type type;
	unsigned int cpu;
	uint64_t from_seq;
	uint64_t to_seq;
	uint64_t count;
	const char *source;
	uint64_t offset;
	const char *message;
};

typedef void (*dti_notice_fn)(const struct dti_notice *notice, void *arg);

/**
 * dti_formatter_fn - print a binary record the application understands
 * Return: 1 if it printed @rec to @out, 0 to let the library print the
 * payload as hex, negative to fail dti_print() with that errno.
 */
typedef int (*dti_formatter_fn)(FILE *out, const struct dti_rec *rec, void *arg);

/* dti_print() formats */
enum dti_format {
	DTI_FMT_TEXT,	/* exactly what the kernel's "merged" file shows */
	DTI_FMT_TS,	/* the same with the "merged-ts" prefix */
	DTI_FMT_HEX,	/* "merged-ts" prefix and every payload as hex */
	DTI_FMT_JSON,	/* one JSON object per line */
	DTI_FMT_RAW,	/* the record bytes as stored */
	DTI_FMT_EXPORT,	/* systemd's Journal Export Format: see below */
};

/*
 * DTI_FMT_EXPORT writes each record as an entry of the Journal Export
 * Format (systemd-journal-remote reads it into a journal file), fields
 * "NAME=VALUE" a line, a value with a newline as "NAME", a newline, its
 * length (64 bits, little-endian), the bytes and a newline; an empty
 * line ends the entry.  Fields: __MONOTONIC_TIMESTAMP (the record's
 * time, microseconds since boot), __REALTIME_TIMESTAMP (the boot's wall
 * clock time plus that, where the boot's is known: a live channel's, of
 * this boot, read at dti_open_channel(); else the time since boot
 * alone, as of 1970), _BOOT_ID (a live channel's; else one made up
 * for the process, the same for all its records), PRIORITY (the
 * level), SYSLOG_IDENTIFIER (the channel, "dti" when no name is known),
 * MESSAGE (a text record's text less one final newline, a typed event
 * as DTI_FMT_TEXT prints it, a binary payload in hex as DTI_FMT_TEXT
 * prints it), and what DTI_FMT_JSON gives, one field each: DTI_CHANNEL,
 * DTI_TS_NS, DTI_CPU, DTI_SEQ (not for a pending record), DTI_FLAGS,
 * DTI_CALLER (0x<hex>), DTI_SYMBOL (%pS), CODE_FUNC (the function, also
 * from %pS), with source lines DTI_MODULE, DTI_CALLER_OFFSET,
 * DTI_CALLER_SIZE, CODE_FILE, CODE_LINE, DTI_CALLER_COLUMN and
 * DTI_INLINED ("f inlined at FILE:LINE:COLUMN, ..."), DTI_DATA (a binary
 * payload in hex without spaces), and for a typed event DTI_EVENT,
 * DTI_EVENT_ID and DTI_FIELD_<NAME> per field (NAME upper case, every
 * byte but a letter or digit as '_'; numbers in decimal, pointers as
 * 0x and 16 hex digits, strings as they are, byte arrays in hex).
 * A formatter (dti_set_formatter()) is not used.
 */

/*
 * Last error of this thread as text ("trace1: truncated record at offset
 * 96 ..."); never fails, returns "no error" if nothing failed yet.
 */
const char *dti_errmsg(void);

/*
 * Where debugfs is mounted.  By default the first debugfs mount in
 * /proc/mounts, else "/sys/kernel/debug"; NULL restores that default.
 * Returns 0, or -1 (ENAMETOOLONG).
 */
int dti_set_debugfs(const char *path);

/* ---- readers ---- */

/*
 * Open channel @name under <debugfs>/dti/.  Returns NULL with errno ENODEV
 * (debugfs not mounted or DTI not loaded), ENOENT (no such channel), ENXIO
 * (channel has no buffers: level "destroy"), EACCES, or another errno.
 */
struct dti_reader *dti_open_channel(const char *name, unsigned int flags);
/*
 * Open what the previous boot left of persistent channel @name, as dti.ko
 * checked it at load: <debugfs>/dti/.previous/<name>/trace0..N.  Returns
 * NULL with errno ENOENT if there is none, or as dti_open_channel().
 * DTI_OPEN_RESET and DTI_OPEN_FOLLOW do not apply.
 */
struct dti_reader *dti_open_previous(const char *name, unsigned int flags);
/*
 * Open the files trace0..N in @dir.  NULL on error (ENOENT if there are
 * none).  A snapshot's info and stats in @dir are checked against the
 * trace files at the first dti_next(): a traceN of a CPU stats does not
 * list is not merged, and a record newer than stats or of another channel
 * than info gets a warning (the directory held an earlier snapshot).
 */
struct dti_reader *dti_open_dir(const char *dir, unsigned int flags);
/*
 * Open @n files, one per CPU (any order; "/dev/stdin" and FIFOs are read
 * as they come).  Files of a snapshot directory (one holding trace0..N or
 * pending) are read as dti_open_dir() reads them: its info and stats are
 * no records but are checked against them as the directory's are (the
 * first of each given; another is not read, with a warning), pending
 * holds a pending store's records, and its module table, modules, is
 * left to dti_modules_load(); its release and boot_id are not read.  So
 * all the files of a directory give what the directory gives.  NULL on error (errno from open(); ENOENT if only
 * info, stats and modules are given).
 */
struct dti_reader *dti_open_files(const char *const *paths, unsigned int n,
				  unsigned int flags);
/*
 * Read @n memory buffers, one per CPU (not copied: they must outlive the
 * reader), as dti_open_files() reads files; @flags: 0, DTI_OPEN_STRICT,
 * DTI_OPEN_FORMATS.  NULL on error (ENOMEM, EINVAL: other flags).
 */
struct dti_reader *dti_open_mem(const void *const *bufs, const size_t *lens,
				unsigned int n, unsigned int flags);
/* Close a reader; NULL is ignored. */
void dti_close(struct dti_reader *r);

/*
 * Next record in timestamp order (ties: lower CPU first; a CPU's records
 * keep their order).  Returns 1 and fills @rec, 0 at the end (with
 * DTI_OPEN_FOLLOW: no more data for now, call again later), or -1 on
 * ENOMEM, on a write error of what dti_print() collected (EIO and the
 * like), at the end with EINVAL if the filter names a field nothing
 * read has (dti_filter_expr()), and with DTI_OPEN_STRICT on truncated or
 * corrupt data (EBADMSG, EPROTO for an unknown version) or read errors;
 * dti_errmsg() names the file and offset.  Without DTI_OPEN_STRICT
 * damage and read errors are notices (DTI_NOTICE_DAMAGE) and reading
 * goes on.
 */
int dti_next(struct dti_reader *r, struct dti_rec *rec);

/*
 * Call @fn for every notice: gap, backwards step, skip, damage, warning.
 * Notices found when opening come at the first dti_next().  Returns 0.
 */
int dti_set_notice_handler(struct dti_reader *r, dti_notice_fn fn, void *arg);
/* Number of DTI_NOTICE_DAMAGE notices so far (handler or not).  Never fails. */
unsigned long dti_damage_count(const struct dti_reader *r);
/* Number of DTI_NOTICE_WARNING notices so far.  Never fails. */
unsigned long dti_warning_count(const struct dti_reader *r);
/* Use @fn for binary records in dti_print().  Returns 0. */
int dti_set_formatter(struct dti_reader *r, dti_formatter_fn fn, void *arg);
/*
 * The channel's name as DTI_FMT_JSON gives it in "channel" on every
 * record (copied; NULL: as the data name it: the sub-buffer headers'
 * name, a snapshot's info, a dump descriptor's).  For inputs that do not
 * name it (a console log's records) or name it ambiguously (a persistent
 * region's rings of an earlier boot, "NAME@bootN").  Returns 0, or -1
 * (ENOMEM).
 */
int dti_set_channel_name(struct dti_reader *r, const char *name);
/*
 * The name of the channel of the record dti_next() returned last (before
 * the first, of the first stream that names one), as DTI_FMT_JSON gives
 * it in "channel": dti_set_channel_name()'s, else the data's.  Valid
 * until the next dti_next() or dti_set_channel_name().  Returns the
 * name, or NULL if the data do not name it (ENOENT).
 */
const char *dti_channel_name(const struct dti_reader *r);
/*
 * dti_symbol_fn - write the symbol at @addr into @buf, as %pS does
 * ("func+0x1c/0x80 [mod]", or "func+0x1c"), NUL-terminated within @size
 * Return: 0, or -1 if no symbol covers @addr (the caller prints as an
 * address).
 */
typedef int (*dti_symbol_fn)(uint64_t addr, char *buf, size_t size, void *arg);
/*
 * Resolve callers in dti_print() through @fn (NULL: not), before the
 * symbols of dti_set_ksyms(): for a program with a symbol table of its
 * own (crash's).  Callers are resolved once each and kept.  Returns 0.
 */
int dti_set_symbolizer(struct dti_reader *r, dti_symbol_fn fn, void *arg);
/* Resolve callers with @syms in dti_print() (NULL: print them as hex).  Returns 0. */
int dti_set_ksyms(struct dti_reader *r, struct dti_ksyms *syms);
/*
 * Print callers with their source lines in dti_print() (NULL: not).
 * @lines (see "source lines" below) must outlive the reader's printing.
 * DTI_FMT_TS and DTI_FMT_HEX then print a caller that resolves as
 * "func+0x1c/0x80 [mod] FILE:LINE", followed, where functions were
 * inlined at it, by " (f inlined at FILE:LINE, g inlined at FILE:LINE)",
 * innermost first, each with the call it was inlined for; [mod] is left
 * out for vmlinux, and "func+0x1c/0x80" is the address where no symbol
 * covers it.  DTI_FMT_JSON keeps "caller" as the part before the file
 * and adds "function", "offset", "size", "module" and, with DWARF,
 * "file", "line", "column" and "inlined" (an array of objects with
 * "function", "file", "line" and "column").  A caller that does not
 * resolve prints as without (through the symbols of dti_set_ksyms() if
 * set).  Callers are resolved as dti_lines_resolve_at() does, with the
 * record's time; each once, on its first record, and kept.  Returns 0.
 */
int dti_set_lines(struct dti_reader *r, struct dti_lines *lines);
/* Number of per-CPU streams.  Never fails. */
unsigned int dti_nr_streams(const struct dti_reader *r);

/*
 * Print @rec to @out in @format, followed by a newline (none for RAW).
 * The text is collected in @r and written to @out in large blocks: when
 * the reader's buffer is full, when @out changes, before a formatter call
 * or a notice, when dti_next() returns 0 or -1, and at dti_close() (with
 * @r NULL, at once).  Returns 0, or -1: EINVAL for an unknown format, EIO
 * if writing failed (now or a block before), or the error of the
 * formatter.
 */
int dti_print(struct dti_reader *r, FILE *out, const struct dti_rec *rec,
	      enum dti_format format);
/*
 * Read records with dti_next() and print them with dti_print() in
 * @format, as that loop would, byte for byte and with the notices at the
 * same places, but faster: where the merge takes one stream's records
 * one after another, they are formatted without a call per record.  The
 * reader's filter (dti_set_filter()) holds; in DTI_FMT_RAW the format
 * records are written too, whatever the filter, so that the output
 * prints its typed events.  Reads at most @max records (0: no limit;
 * records the filter leaves out count).  Returns 1 after @max records
 * (call again), 0 at the end as dti_next() (with DTI_OPEN_FOLLOW: no
 * more data for now), or -1 on the errors of dti_next() and dti_print();
 * dti_errmsg() says which.
 */
int dti_print_records(struct dti_reader *r, FILE *out, enum dti_format format,
		      unsigned long max);
/* Parse "text", "ts", "hex", "json", "raw" or "export".  Returns the format or -1 (EINVAL). */
int dti_format_parse(const char *name);

/* ---- several channels: merges ---- */

/*
 * A merge is a reader of other readers' records merged by time into one
 * timeline: `dti read A B`, `dti decode DIR1 DIR2`.  It is a struct
 * dti_reader: dti_next(), dti_print(), dti_print_records(),
 * dti_set_filter() and the event functions take it, and dti_close()
 * closes it with its readers (its "children").  Each child is one
 * channel's reader and keeps what is its channel's: event types,
 * callers, sequence checks and notices (their source names the file).
 *
 * dti_next() returns the record with the smallest time of all the
 * children's next records (ties: the child added first, then the
 * child's own order: CPU, sequence).  It reads each child's next record
 * ahead, so a child's notices may come before records of the others
 * that are older.  The record returned is the child's: it is valid until
 * the next dti_next() on the merge, dti_merge_last() says whose it is,
 * and dti_print(), dti_event_info() and dti_event_field() on the merge
 * take it through that child.  A child opened with DTI_OPEN_FOLLOW is
 * asked again at every dti_next() while it has nothing; dti_next() then
 * returns 0 when no child has a record for now (and a live child's record
 * logged before one returned, but read after it, comes after it, as a
 * CPU's does in one channel's reader).
 *
 * What is set on the merge (notice handler, formatter, symbolizer,
 * kernel symbols, source lines, filter) is set on every child, also
 * those added later.  A filter's CPUs, levels, expressions and times
 * since boot hold per child; its times from the first or the last
 * record are from the first and the last of all children's records.
 * dti_print() writes each child's records through the merge's buffer,
 * in the merge's order; with more than one child, DTI_FMT_TEXT, _TS and
 * _HEX lines begin with a channel column (the child's name, padded to
 * the longest name, and a space), DTI_FMT_JSON has "channel" as ever,
 * and DTI_FMT_RAW is refused (EINVAL): records of several channels make
 * no channel's stream.  dti_nr_streams(), dti_damage_count() and
 * dti_warning_count() add up the children's.  dti_set_channel_name()
 * fails (EINVAL) on a merge.
 */

/* A merge with no reader yet.  NULL on error (ENOMEM). */
struct dti_reader *dti_merge_new(void);
/*
 * Add reader @r (opened by dti_open_*(), not read from yet) to merge @m,
 * which owns it from then on: dti_close(@m) closes it.  @name is its
 * channel as the merge names it in the channel column and
 * dti_merge_name() (NULL: as DTI_FMT_JSON names it: dti_set_channel_name(),
 * else the data, known from the first dti_next() on).  Returns @r's
 * index in @m (0, 1, ...: the order of ties), or -1: EINVAL (@m is no
 * merge or was read from, @r is a merge or in one), ENOMEM; @r is then
 * still the caller's.
 */
int dti_merge_add(struct dti_reader *m, struct dti_reader *r, const char *name);
/*
 * Index of the child whose record dti_next() on @m returned last.
 * Returns it, or -1: EINVAL (@m is no merge), ENOENT (none returned yet,
 * or dti_next() returned 0 since).
 */
int dti_merge_last(const struct dti_reader *m);
/*
 * Child @i of merge @m (still @m's: not to be closed), for what is its
 * own (dti_damage_count() ...).  NULL on error: EINVAL (no merge),
 * ENOENT (no child @i).
 */
struct dti_reader *dti_merge_reader(struct dti_reader *m, unsigned int i);
/*
 * The channel name of child @i (as given to dti_merge_add(), else as
 * the data name it), valid while @m is open.  NULL on error: EINVAL (no
 * merge), ENOENT (no child @i, or a name from the data not known yet).
 */
const char *dti_merge_name(const struct dti_reader *m, unsigned int i);

/* ---- filters ---- */

/*
 * Which records a reader returns: a filter built with the functions
 * below and set on readers with dti_set_filter() holds for dti_next() and
 * dti_print_records().  Each condition set must hold; a new filter lets
 * every record through.  Format records (DTI_REC_FORMAT) are no records
 * here: dti_next() leaves them out whatever the filter.
 */
struct dti_filter;		/* opaque */

/* A filter that lets every record through.  NULL on error (ENOMEM). */
struct dti_filter *dti_filter_new(void);
/* Free a filter (no reader may use it any more); NULL is ignored. */
void dti_filter_free(struct dti_filter *f);
/*
 * Only records of the levels @from to @to (DTI_LEVEL_EMERG 0 ..
 * DTI_LEVEL_DEBUG 7, either order): journalctl's "-p err" is
 * dti_filter_levels(f, DTI_LEVEL_EMERG, DTI_LEVEL_ERR).  Returns 0, or -1
 * (EINVAL: a level out of range).
 */
int dti_filter_levels(struct dti_filter *f, int from, int to);
/*
 * dti_filter_levels() as journalctl -p reads @text: "LEVEL" keeps LEVEL
 * and the more severe ones, "LEVEL..LEVEL" the levels from one to the
 * other (either order); a level is 0..7 or its name in any case
 * (dti_level_parse()).  Returns 0, or -1 (EINVAL: dti_errmsg() says what
 * a priority is).
 */
int dti_filter_priority(struct dti_filter *f, const char *text);
/*
 * Only records logged by the CPUs of @list ("0", "0,2", "1-3,8"; as
 * perf -C and the kernel's cpu lists), added to those of any call
 * before.  Returns 0, or -1: EINVAL (dti_errmsg() says where the list
 * is wrong), ENOMEM.
 */
int dti_filter_cpus(struct dti_filter *f, const char *list);

/* What a time of dti_filter_since() and dti_filter_until() counts from */
enum dti_time_base {
	DTI_TIME_BOOT,	/* the record's clock: CLOCK_MONOTONIC nanoseconds */
	DTI_TIME_FIRST,	/* the input's first record (the first dti_next() sees) */
	DTI_TIME_LAST,	/* its last record (a live channel's: now), negative */
};
/*
 * Only records logged at or after (since), at or before (until) @ns from
 * @base.  A time from the last record is found when the filter is set,
 * by reading the input once more (files, snapshots, dumps, memory; a
 * pipe cannot be: dti_set_filter() fails with ESPIPE); for a live
 * channel it is the time of dti_set_filter() on this machine's
 * CLOCK_MONOTONIC, the clock of its records.  Returns 0, or -1 (EINVAL:
 * an unknown base, a negative time since boot, a since after the until
 * of the same base: the bound is then not set).
 */
int dti_filter_since(struct dti_filter *f, enum dti_time_base base, int64_t ns);
/* The same for until: records logged at or before the time.  0, or -1 (EINVAL). */
int dti_filter_until(struct dti_filter *f, enum dti_time_base base, int64_t ns);
/*
 * Parse a time as `dti --since` takes it: "12.5" (seconds since boot,
 * DTI_TIME_BOOT), "+2s" (after the first record), "-500ms" (before the
 * last), with a unit of ns, us, ms, s (the default), min or h.  Returns
 * 0 and sets *@base and *@ns (negative for DTI_TIME_LAST), or -1
 * (EINVAL, ERANGE).
 */
int dti_time_parse(const char *text, enum dti_time_base *base, int64_t *ns);

/* dti_filter_grep() flags; neither: exact only if @regex has a capital letter */
#define DTI_GREP_CASE	0x1	/* case matters */
#define DTI_GREP_ICASE	0x2	/* case does not matter */
/*
 * Only records whose message matches the POSIX extended regular
 * expression @regex: a text record's text, a typed event as DTI_FMT_TEXT
 * prints it; a binary record has no message and never matches.  Replaces
 * the expression of a call before.  Returns 0, or -1: EINVAL (flags, or
 * no regular expression: dti_errmsg() gives regcomp()'s reason), ENOMEM.
 */
int dti_filter_grep(struct dti_filter *f, const char *regex, unsigned int flags);
/*
 * Only records for which @expr holds: comparisons of a field with a
 * value (== != < <= > >=, and ~ for a glob on strings), joined by && and
 * || (&& first), negated by !, grouped by parentheses, e.g.
 * "status!=0 && (len>4096 || name~\"eth*\")".  A field is one of the
 * record's event type (numbers compare as their type's sign says,
 * strings as strcmp()), or, where the type has none of that name, one
 * of every record: event (its type's name), level (a number or a level
 * name), cpu or seq.  A comparison with a field the record does not have
 * is false (so a record that is no typed event passes only on those
 * four), and so is one of a string field with a number.  A field that
 * is none of those four nor a field of any event type the reader read
 * fails dti_next() and dti_print_records() where the records end
 * (EINVAL; dti_errmsg() names it and the event types' fields): event
 * types are learnt from the records, so it cannot be told earlier.
 * Not with DTI_OPEN_FOLLOW.  Replaces the expression of a call before.
 * Returns 0, or -1: EINVAL (dti_errmsg() says what was expected, and at
 * which column), ENOMEM.
 */
int dti_filter_expr(struct dti_filter *f, const char *expr);
/*
 * Filter what @r returns through @f (NULL: nothing), from the next
 * dti_next() on; @f must outlive its use, and may be set on several
 * readers.  The notices of lost or skipped records (DTI_NOTICE_GAP,
 * _BACKWARDS, _SKIPPED) of CPUs @f leaves out are not told.  Returns 0, or -1 as finding a time from the last record may
 * fail (ESPIPE, the errors of open()), ENOMEM.
 */
int dti_set_filter(struct dti_reader *r, const struct dti_filter *f);

/* ---- typed events' fields ---- */

/* struct dti_field.type */
enum dti_field_type {
	DTI_FIELD_INT,		/* signed: @i (%d, %hhd, %lld ...) */
	DTI_FIELD_UINT,		/* unsigned: @u (%u, %x ...) */
	DTI_FIELD_PTR,		/* an address: @u (%px) */
	DTI_FIELD_STR,		/* text (%s): @len bytes at @data, no NUL */
	DTI_FIELD_BYTES,	/* bytes (%*ph): @len of them at @data */
};

/**
 * struct dti_field - one field of a typed event (valid as the record is)
 * @name:	its name in the event type's format
 * @type:	what it holds
 * @size:	bytes of a number as stored (1, 2, 4, 8); 0 for STR, BYTES
 * @i:		INT: the value; UINT, PTR: the same bits
 * @u:		UINT, PTR: the value; INT: the same bits
 * @data:	STR, BYTES: the bytes, in the record; NULL otherwise
 * @len:	STR, BYTES: their number
 * @reserved:	zero; room for fields to come
 */
struct dti_field {
	const char *name;
	enum dti_field_type type;
	unsigned int size;
	int64_t i;
	uint64_t u;
	const void *data;
	size_t len;
	uint64_t reserved[4];
};

/*
 * The parts of blob @rec (a DTI_REC_TYPED record of id DTI_EVENT_ID_BLOB,
 * from dti_blob() in the kernel): its media type into *@media_type and
 * *@type_len (not NUL-terminated), its bytes into *@data and *@len,
 * pointing into @rec's payload.  Returns 0, or -1: ENOENT (not a blob),
 * EBADMSG (its media type runs past its payload: it prints as hex).
 */
int dti_blob_info(const struct dti_rec *rec, const char **media_type, size_t *type_len,
		  const void **data, size_t *len);
/*
 * The event type of typed record @rec (DTI_REC_TYPED) just returned by
 * dti_next() on @r: its name into *@name (valid while @r is open) and
 * its number of fields into *@nfields (either may be NULL).  Returns the
 * type's id, or -1: ENOENT (not a typed event, or its type's format was
 * not read before it: it prints as hex).
 */
int dti_event_info(struct dti_reader *r, const struct dti_rec *rec,
		   const char **name, unsigned int *nfields);
/*
 * Field @i (0 ..) of typed record @rec into @out.  Returns 0, or -1:
 * ENOENT (as dti_event_info(), or no field @i), EBADMSG (the record's
 * values do not fill its type's layout: it prints as hex).
 */
int dti_event_field(struct dti_reader *r, const struct dti_rec *rec, unsigned int i,
		    struct dti_field *out);
/*
 * dti_event_field() by name.  Returns 0, or -1 as dti_event_field():
 * ENOENT also if its type has no field @name.
 */
int dti_event_field_by_name(struct dti_reader *r, const struct dti_rec *rec,
			    const char *name, struct dti_field *out);

/* ---- memory dumps ---- */

/*
 * Channels found in a memory dump (a vmcore, a QEMU guest dump) through
 * their dump descriptors (<linux/dti_record.h>), with no debuginfo.  The
 * caller reads the dump (dti(1) with libkdumpfile, the crash utility with
 * readmem) and gives libdti its memory: every run of physical memory to
 * dti_dump_scan(), in any order, then dti_dump_load(), after which each
 * channel is described by dti_dump_channel() and read by dti_dump_open()
 * as a directory of its per-CPU files would be, or saved as one by
 * dti_dump_save().  Nothing read from the dump is trusted: a descriptor
 * that fails its checks (magic, version, CRC, name, geometry) makes its
 * channel one with an error, the others are read all the same.
 *
 * A ring's sub-buffers are read only if their headers carry the
 * descriptor's generation and their slot's number: the others are pages
 * of freed buffers, of an earlier boot, or never written, and are read
 * as unused.  A pending store's records (logged while the channel had no
 * buffers, DTI_REC_PENDING) are merged by time with the rest, after any
 * record of the same CPU and time, as records of their logging CPU with
 * no sequence number ("#-" in DTI_FMT_TS, null in JSON, seq 0 in struct
 * dti_rec) and without sequence checks.  A pending store whose channel
 * has no descriptor (an early handle not yet initialised) is a channel
 * of its own with no rings.
 */
struct dti_dump;		/* opaque: what was found in one dump */

/**
 * struct dti_dump_mem - how libdti reads a dump's memory
 * @size:	sizeof(struct dti_dump_mem), as the caller was built with
 * @read_phys:	read @len bytes at physical address @addr into @buf;
 *		0, or -1 with errno: ENODATA or EFAULT if the dump does not
 *		hold them (excluded pages, beyond its end), another errno
 *		for a read error
 * @read_virt:	the same at a kernel virtual address, translated through
 *		the dumped kernel's page tables; NULL if the caller cannot:
 *		pending stores, whose buffers are known by virtual address
 *		only, are then reported unreadable
 * @errmsg:	text of the last failure of either (NULL: strerror(errno))
 * @arg:	passed to all three
 * @phys_end:	end of the dump's physical memory (highest address + 1), to
 *		refuse page frame numbers beyond it; 0 if unknown
 * @long_size:	bytes of the dumped kernel's unsigned long (4, 8; 0 for 8)
 */
struct dti_dump_mem {
	size_t size;
	int (*read_phys)(void *arg, uint64_t addr, void *buf, size_t len);
	int (*read_virt)(void *arg, uint64_t addr, void *buf, size_t len);
	const char *(*errmsg)(void *arg);
	void *arg;
	uint64_t phys_end;
	unsigned int long_size;
};

/* struct dti_dump_channel.level when it could not be read */
#define DTI_DUMP_NO_LEVEL	(-128)

/**
 * struct dti_dump_channel - a channel found in a dump
 * @name:	its name
 * @desc_addr:	physical address of the channel descriptor read; 0 if it
 *		has none (a pending store alone)
 * @pending_addr: physical address of its pending store's descriptor; 0
 *		if it has none
 * @flags:	DTI_DUMP_F_* of the descriptor
 * @level:	its level when the dump was taken (DTI_LEVEL_*), or
 *		DTI_DUMP_NO_LEVEL
 * @generation:	generation of its buffers
 * @subbuf_size: bytes per sub-buffer (0 without buffers)
 * @n_subbufs:	sub-buffers per CPU
 * @nr_cpu_ids:	CPUs the machine could have
 * @page_size:	bytes per page of the dumped machine
 * @nr_bufs:	CPUs whose rings can be read
 * @records:	records their sub-buffers of this generation count
 * @stale_slots: sub-buffer slots of other generations (freed buffers,
 *		an earlier boot) or never written: read as unused
 * @missing_pages: ring pages the dump does not hold (excluded zero pages
 *		among them): read as zero bytes
 * @pending_records: records in the pending store
 * @swapped:	1 if written in the other byte order
 * @region_addr: physical address of the persistent region (dti.ko's
 *		persist=) that holds its rings; 0 if none was found
 * @boot:	for a channel read from a persistent region, the load of
 *		dti.ko (the region's count of boots) that wrote its rings
 * @error:	NULL if the channel can be read; else why not, and where
 *		(the physical address), as one line: it is skipped
 * @damage:	NULL, or what of a channel that can be read cannot be (a
 *		CPU's ring, the pending store) and why, one line each
 * @notes:	NULL, or what else was found, one line each: descriptors of
 *		the same name not used, and why
 *
 * A persistent region holds two sets of rings per channel: those of the
 * last boot that wrote it, and those of the boot before.  Rings that a
 * channel descriptor of the dump also describes (same name and
 * generation) are that channel's; every other set is a channel of its
 * own, named "NAME@bootN" after the boot that wrote it, with neither
 * descriptor nor level.
 *
 * The strings are valid until dti_dump_free(); lines end in '\n'.
 */
struct dti_dump_channel {
	const char *name;
	uint64_t desc_addr;
	uint64_t pending_addr;
	unsigned int flags;
	int level;
	uint32_t generation;
	uint32_t subbuf_size, n_subbufs;
	uint32_t nr_cpu_ids, page_size;
	unsigned int nr_bufs;
	uint64_t records;
	unsigned long stale_slots;
	unsigned long missing_pages;
	uint64_t pending_records;
	int swapped;
	const char *error;
	const char *damage;
	const char *notes;
	uint64_t region_addr;
	uint32_t boot;
};

/**
 * struct dti_dump_summary - what dti_dump_scan() and dti_dump_load() found
 * @scanned:	bytes given to dti_dump_scan()
 * @markers:	"__DTI_" (the start of "__DTI__" and of "__DTI_PERSIST__")
 *		found at 8-byte boundaries
 * @stray:	markers that are no descriptor: no valid magic behind them
 *		(copies of the string in memory: page cache, module data),
 *		or the image of a static descriptor that no kernel filled in
 *		(a module file in the page cache)
 * @descriptors: markers with a descriptor behind them, used or not
 * @channels:	channels found (with an error or not)
 * @regions:	persistent regions found, whose header checks out
 * @damaged_slots: channel slots of those regions that fail their checks:
 *		their channels' records are not read
 * @region_lines: NULL, or one line per region found: where, how large,
 *		how many boots took it, slots used
 * @region_damage: NULL, or a line for each region whose header fails its
 *		checks and for each damaged slot, saying where and why
 * @modules_addr: physical address of the module table used
 *		(dti_dump_modules()), 0 if none checks out
 * @index_addr:	physical address of the dump index the descriptors were
 *		located by (dti_dump_locate()); 0: they were scanned for
 * @indexed:	descriptors that index lists
 *
 * The strings are valid until dti_dump_free(); lines end in '\n'.
 */
struct dti_dump_summary {
	uint64_t scanned;
	unsigned long markers, stray, descriptors, channels;
	unsigned long regions, damaged_slots;
	const char *region_lines, *region_damage;
	uint64_t modules_addr;
	uint64_t index_addr;
	unsigned long indexed;
};

/*
 * A new, empty dump that reads memory through @mem (copied).  NULL on
 * error (EINVAL: no read_phys, @mem->size unset; ENOMEM).
 */
struct dti_dump *dti_dump_new(const struct dti_dump_mem *mem);
/*
 * Look for descriptors in @len bytes at @data, the dump's physical memory
 * from address @addr: any run, in any order, each run once.  What is
 * found is read again through read_phys() by dti_dump_load(), so that a
 * descriptor may straddle the end of a run.  Returns 0, or -1 (ENOMEM).
 */
int dti_dump_scan(struct dti_dump *d, uint64_t addr, const void *data, size_t len);
/*
 * Instead of dti_dump_scan(): take the descriptors the dump index at
 * physical @addr lists, the index a kernel with DTI built in names in
 * VMCOREINFO (the value of its DTI_VMCOREINFO_KEY line), as those a scan
 * would have found.  Call it first, on a new dump.  Returns the number
 * of descriptors listed, or -1 with nothing taken, the dump as new:
 * EINVAL (not called first; or the index cannot be used: not in the
 * dump, no index there, damaged or caught in a change, overflowed, or
 * listing something that is no descriptor; dti_errmsg() names the
 * address and says why), ENOMEM.  Then scan.
 */
int dti_dump_locate(struct dti_dump *d, uint64_t addr);
/*
 * Read and check the descriptors found, their CPU tables, page lists and
 * sub-buffer headers, and the pending stores; pair them by name.  Call
 * once, after the last dti_dump_scan().  Returns the number of channels
 * (with an error or not), or -1 (ENOMEM, EINVAL if called twice).
 */
int dti_dump_load(struct dti_dump *d);
/*
 * Returns channel @i (0..dti_dump_load()'s count - 1, sorted by name), or
 * NULL (ENOENT).
 */
const struct dti_dump_channel *dti_dump_channel(const struct dti_dump *d,
						unsigned int i);
/* What was found so far.  Never fails. */
const struct dti_dump_summary *dti_dump_summary(const struct dti_dump *d);

/* dti_dump_print_list() flags */
#define DTI_LIST_QUIET	0x1	/* leave out the notes and the summary line */

/*
 * Print what `dti dump --list` and crash's `dti` show to @out: a header,
 * one line per channel (all, or only @channel if not NULL) followed by
 * its error, damage and note lines, the persistent regions found
 * (struct dti_dump_summary.region_lines), and a summary of the scan.
 * Returns the number of listed channels with an error or damage, plus 1
 * if all channels are listed and a region has damage, or -1 (EIO) if
 * writing failed.
 */
int dti_dump_print_list(const struct dti_dump *d, FILE *out,
			const char *channel, unsigned int flags);
/*
 * A reader of channel @i's records: its rings' sub-buffers of its
 * generation, one stream per CPU named "NAME/traceN", and its pending
 * store's records, "NAME/pending", merged by time; its channel's name
 * is the dump channel's (dti_set_channel_name()).  @flags: 0 or
 * DTI_OPEN_STRICT.  The rings are copied out of the dump first: the
 * reader holds the channel's rings in memory until dti_close().  NULL on
 * error: EINVAL (a channel with an error: dti_errmsg() says it, or other
 * flags), ENOENT (no channel @i), ENOMEM.
 */
struct dti_reader *dti_dump_open(struct dti_dump *d, unsigned int i,
				 unsigned int flags);
/*
 * Write channel @i as a snapshot directory that dti_open_dir() and `dti
 * decode` read as dti_dump_open() reads it: @dir (created; if it exists
 * it must be empty) gets traceN, a copy of CPU N's ring with its stale
 * sub-buffers zeroed, pending (the pending store's records, sorted by
 * time) if there are any, info (the descriptor, as text), and modules
 * (its records' module table, dti_dump_channel_modules(), as
 * dti_modules_load() reads it) if there is one.  Returns
 * 0, or -1: EINVAL as dti_dump_open(), ENOTEMPTY, or the error of
 * mkdir(), open() or write(); dti_errmsg() names the file.
 */
int dti_dump_save(struct dti_dump *d, unsigned int i, const char *dir);
/**
 * struct dti_excerpt_spec - the dumped machine, for dti_dump_excerpt()
 * @size:	sizeof(struct dti_excerpt_spec), as the caller was built with
 * @page_size:	bytes per page of the dumped machine (a power of two)
 * @machine:	its ELF machine (EM_X86_64, EM_AARCH64 ...): the excerpt's
 *		e_machine; 64-bit architectures only
 * @big_endian:	non-zero if it is big-endian: the excerpt is so too
 * @vmcoreinfo:	the dump's VMCOREINFO text, kept in the excerpt as the
 *		kernel's note (its release, for --lines), less its
 *		DTI_VMCOREINFO_KEY line: the excerpt does not hold all the
 *		dump index lists, and is read by its markers; NULL: none
 * @virt_to_phys: the physical address of kernel virtual address @vaddr
 *		into *@paddr, 0, or -1 if it has none; called with struct
 *		dti_dump_mem.arg for what read_virt() read (pending stores),
 *		so that the excerpt has them at both addresses; NULL: an
 *		excerpt of a channel whose pending store was read fails
 */
struct dti_excerpt_spec {
	size_t size;
	unsigned int page_size;
	uint16_t machine;
	int big_endian;
	const char *vmcoreinfo;
	int (*virt_to_phys)(void *arg, uint64_t vaddr, uint64_t *paddr);
};

/*
 * Write an excerpt of the dump @d was loaded from to @path: a 64-bit ELF
 * dump holding only what channel @channel (every channel if < 0; those
 * with an error have nothing to be read and are left out) is read from,
 * which a dump reader given it finds and reads as it does @d's: the
 * descriptors, CPU tables, page lists, levels, rings, pending stores,
 * persistent regions' headers and slot tables (a channel of a region
 * brings the region's slot table: its other channels are listed, their
 * rings left out) and the module table.  The channels are found again
 * from their descriptors alone and read through @d's struct dti_dump_mem;
 * each page read goes into the excerpt at its physical address (and
 * virtual one, for what read_virt() read) with what was read of it, the
 * rest of the page zero, then the VMCOREINFO note of @spec.  This is
 * `dti dump --excerpt` and crash's `dti -x`.  Call after
 * dti_dump_load().  Returns the number of channels in the excerpt, the
 * pages it holds in *@pages (if not NULL), or -1: EINVAL (a bad @spec,
 * a 32-bit dump, @d not loaded), ENOENT (no channel @channel), EIO (a
 * page read before cannot be read again, a virtual address with no
 * physical one), ENOMEM, or the error of open() or write(); dti_errmsg()
 * names @path.  A regular file written in part is removed.
 */
int dti_dump_excerpt(const struct dti_dump *d, int channel, const char *path,
		     const struct dti_excerpt_spec *spec, size_t *pages);
/*
 * dti.ko's module table in the dump (struct dti_dump_modules behind the
 * marker "__DTI__.modules", which is no channel): its entries in host
 * order, the free ones left out, into *@mods, valid until
 * dti_dump_free(); for dti_lines_add_modules().  A table is used only if
 * it checks out (magic, version, type, size, CRC of the whole table,
 * every entry's state, name and build-id length); of several, the first
 * found (others that differ are noted in dti_dump_print_list()).  Call
 * after dti_dump_load().  Returns the number of entries, or -1: ENOENT
 * (none in the dump: a dti.ko without one), EBADMSG (the tables found
 * all fail their checks: dti_errmsg() says where and why).
 */
int dti_dump_modules(const struct dti_dump *d, const struct dti_module **mods);
/*
 * The module table of channel @i's records, as dti_dump_modules() gives
 * it: the dump's for the dumped boot's channels; for the rings an earlier
 * boot left in a persistent region (NAME@bootN), the table of that boot
 * the region keeps (struct dti_persist_modules, checked as the dump's).
 * Returns the number of entries, or -1: ENOENT (no channel @i, no table),
 * EBADMSG (the table fails its checks; dti_errmsg() says where and why).
 */
int dti_dump_channel_modules(const struct dti_dump *d, unsigned int i,
			     const struct dti_module **mods);
/* Free a dump and its channels' descriptions; NULL is ignored. */
void dti_dump_free(struct dti_dump *d);

/* ---- kernel symbols ---- */

/*
 * Load @path (NULL: /proc/kallsyms).  NULL on error: EACCES if addresses
 * are hidden, EINVAL if @path holds no symbol line, or the errno of fopen().
 */
struct dti_ksyms *dti_ksyms_load(const char *path);
/*
 * Write @addr as the kernel's %pS does ("func+0x1c/0x80 [mod]") into @buf.
 * Returns 0, or -1 with ENOENT (no symbol: "0x<addr>" is written) or
 * ENOSPC (truncated).
 */
int dti_ksyms_format(const struct dti_ksyms *syms, uint64_t addr, char *buf,
		     size_t size);
/* Free symbols loaded by dti_ksyms_load(); NULL is ignored. */
void dti_ksyms_free(struct dti_ksyms *syms);

/* ---- source lines (elfutils) ---- */

/*
 * A record's caller as function and source line, with the functions
 * inlined there, from the DWARF of the traced kernel's modules through
 * elfutils' libdwfl (as eu-addr2line -f -i, perf and SystemTap read it).
 * The caller says which modules were loaded where (dti_lines_add_module():
 * name, build-id, address of .text) and where files may be
 * (dti_lines_add_search()); each module's file is found by its build-id,
 * and a file of the module's name with another build-id is refused: its
 * lines would be another build's.  Only addresses in a module's core code
 * are resolved: its executable sections but the .init ones, laid out as
 * the kernel lays them out (.text first, then .text.unlikely and the
 * others, in the file's order, each at the next multiple of its
 * alignment).  One struct dti_lines serves one thread at a time.
 */
struct dti_lines;		/* opaque: modules, their debuginfo, a cache */

/* Functions inlined at one address that struct dti_line keeps, innermost first */
#define DTI_LINES_INLINE_MAX	8

/**
 * struct dti_line_inline - a function inlined at the address
 * @function:	its name
 * @file:	the source file of the call it was inlined for, in the
 *		next outer function (inlined[i + 1], or the line's @function)
 * @line:	line of that call (0 if unknown)
 * @column:	its column (0 if unknown)
 */
struct dti_line_inline {
	const char *function;
	const char *file;
	unsigned int line, column;
};

/**
 * struct dti_line - where an address is in the source
 * @module:	the module's name as given to dti_lines_add_module()
 * @function:	the function (a symbol, not an inlined one) holding the
 *		address, NULL if no symbol covers it
 * @offset:	the address less the function's start
 * @size:	the function's size (0 if unknown)
 * @file:	the source file of the code at the address, which may be in
 *		an inlined function (@inlined[0]); NULL without DWARF
 * @line:	its line (0 without DWARF)
 * @column:	its column (0 if unknown)
 * @n_inlined:	entries of @inlined: functions inlined at the address,
 *		innermost first, at most DTI_LINES_INLINE_MAX (the outermost
 *		ones are left out of a deeper chain)
 * @inlined:	each with the call it was inlined for
 * @reserved:	zero; room for fields to come
 *
 * "@file:@line in @inlined[0].function, inlined at @inlined[0].file:
 * @inlined[0].line in @inlined[1].function ... in @function" is the
 * chain eu-addr2line -i prints.  The strings are valid until
 * dti_lines_free().
 */
struct dti_line {
	const char *module;
	const char *function;
	uint64_t offset, size;
	const char *file;
	unsigned int line, column;
	unsigned int n_inlined;
	struct dti_line_inline inlined[DTI_LINES_INLINE_MAX];
	uint64_t reserved[4];
};

/* dti_lines_resolve() flags */
#define DTI_LINES_EXACT	0x1	/* @addr is an instruction's, not a return address */

/*
 * A new resolver with no module, for this machine's kernel release.
 * NULL on error: ENOMEM, or ENOTSUP if libelf does not know this ELF
 * version.
 */
struct dti_lines *dti_lines_new(void);
/* Free a resolver, its modules and its cache; NULL is ignored. */
void dti_lines_free(struct dti_lines *l);
/*
 * The release of the traced kernel (uname -r there), for the default
 * places: /usr/lib/debug/lib/modules/@release, /lib/modules/@release and
 * vmlinux's.  NULL: this machine's (the default).  Call before the first
 * dti_lines_add_module().  Returns 0, or -1 (EINVAL: too long or after a
 * module was added).
 */
int dti_lines_set_kernel(struct dti_lines *l, const char *release);
/*
 * Call @fn for what dti_lines_add_module() tells once per module, as a
 * DTI_NOTICE_WARNING whose source is the module's name: no file found
 * for it, a file without DWARF used (functions only), a file of another
 * build passed over for one of the right build.  Returns 0.
 */
int dti_lines_set_notice_handler(struct dti_lines *l, dti_notice_fn fn, void *arg);
/*
 * Where to look for modules' files, before the defaults, in the order
 * given: @path is a module's file (NAME.ko, as `stap -d`), used for the
 * module of that name, or a directory (as `--debuginfo DIR`), searched
 * for DIR/.build-id/xx/yyyy.debug and, through its whole tree, for
 * NAME.ko (.ko.xz, .ko.gz, .ko.zst, .ko.debug) and DIR/vmlinux.  The
 * defaults come after: /usr/lib/debug/.build-id, the trees
 * /usr/lib/debug/lib/modules/KVER and /lib/modules/KVER, and for vmlinux
 * /usr/lib/debug/boot/vmlinux-KVER and /lib/modules/KVER/build/vmlinux.
 * Modules added before are not looked for again.  Returns 0, or -1: the
 * errno of stat() (ENOENT ...), EINVAL (neither a regular file nor a
 * directory), ENOMEM.
 */
int dti_lines_add_search(struct dti_lines *l, const char *path);
/*
 * Module @name as loaded in the traced kernel ("vmlinux" for the kernel
 * itself): its GNU build-id, @id_len bytes at @build_id (0: not known,
 * the first file of its name is used unchecked), and its core code, loaded
 * at @text_start (where its .text starts) for @text_size bytes (0: the
 * size the file's executable sections take).
 * Its file is looked for now (dti_lines_add_search()).  Returns 0 when a
 * file with DWARF was found; 1 when none was, or one without DWARF (then
 * only the function is resolved): the notice handler is told once; or
 * -1: ESTALE if the files of its name all have another build-id
 * (dti_errmsg() names the first and gives both build-ids, in hex),
 * EEXIST (a module of that name was added), EINVAL (@text_start 0, a
 * range that overlaps another module's, a build-id longer than 64
 * bytes), ENOMEM.
 */
int dti_lines_add_module(struct dti_lines *l, const char *name,
			 const unsigned char *build_id, size_t id_len,
			 uint64_t text_start, uint64_t text_size);
/*
 * Where @addr is in the source, into @out.  @addr is a record's caller,
 * a return address: the call before it is looked up, as the kernel's
 * %pB does (@out->offset is still @addr's); with DTI_LINES_EXACT in
 * @flags, @addr itself.  Results are cached by address.  Returns 0 (a
 * function or a line was found: fields not found are NULL or 0), or -1:
 * ENOENT (no module added holds @addr, no file was found for its module,
 * or neither symbol nor line covers it), EINVAL (unknown @flags),
 * ENOMEM; dti_errmsg() says which, with the module and its file.
 */
int dti_lines_resolve(struct dti_lines *l, uint64_t addr, unsigned int flags,
		      struct dti_line *out);
/*
 * dti_lines_resolve() of a record's caller @addr (a return address),
 * logged at @ts_ns: where a module table says several modules were
 * loaded at @addr over time (dti_lines_add_modules()), the one loaded
 * at @ts_ns is used, and none if none was (a record of a module the
 * table no longer holds: never another module's lines).  Returns 0, or
 * -1 as dti_lines_resolve() (ENOENT with the time in dti_errmsg()).
 */
int dti_lines_resolve_at(struct dti_lines *l, uint64_t addr, uint64_t ts_ns,
			 struct dti_line *out);

/*
 * dti.ko's module table: where each module that can log was loaded, so
 * that callers resolve with nothing but the data (struct dti_module of
 * <linux/dti_record.h>: name, address and size of its core code, state,
 * load and unload times, build-id).  It comes as text from the debugfs
 * file <debugfs>/dti/.modules (and .previous/NAME/modules for the previous
 * boot), a snapshot's "modules" and the "module" lines of the panic
 * console, one entry a line:
 *
 *	NAME 0xTEXT 0xTEXT_SIZE BUILD_ID STATE LOADED_NS UNLOADED_NS
 *
 * BUILD_ID in hex or "-" (none), STATE "live" or "gone", the times in
 * decimal; and from a memory dump as struct dti_dump_modules
 * (dti_dump_modules()).
 */

/*
 * Parse @len bytes of the text at @text (a NUL ends it too) into a
 * malloc()ed array of entries, *@mods, that the caller frees with free()
 * (NULL if there are none).  Empty lines are skipped; every field of the
 * others is checked.  @source names the text in messages (NULL: "module
 * table").  Returns the number of entries, or -1: EINVAL at the first
 * line that does not parse (dti_errmsg(): "SOURCE:LINE: what is wrong:
 * the line"; nothing is returned of the others), ENOMEM.
 */
int dti_modules_parse(const char *text, size_t len, const char *source,
		      struct dti_module **mods);
/*
 * dti_modules_parse() of the file @path.  Returns the number of entries,
 * or -1: the errno of open() or read() (ENOENT: no such file), or those
 * of dti_modules_parse().
 */
int dti_modules_load(const char *path, struct dti_module **mods);

/*
 * The @n entries of a module table as the text dti_modules_parse() reads
 * (the debugfs file's, a snapshot's "modules"): one line each, in the
 * order given; entries neither live nor gone are left out.  Returns a
 * malloc()ed NUL-terminated string the caller frees, its length in *@len
 * (if not NULL), or NULL (ENOMEM).
 */
char *dti_modules_text(const struct dti_module *mods, size_t n, size_t *len);

/* dti_modules_read() flags */
#define DTI_MODULES_PREVIOUS	0x1	/* the previous boot's table */

/*
 * dti_modules_load() of the traced machine's table, <debugfs>/dti/.modules,
 * or with DTI_MODULES_PREVIOUS in @flags the table of the boot that wrote
 * the records persistent channel @name has of the previous boot
 * (dti_open_previous()), which dti.ko keeps in its persistent region and
 * shows as <debugfs>/dti/.previous/@name/modules; @name is not used
 * otherwise (NULL will do).  Returns the number of entries, or -1:
 * ENODEV (debugfs not mounted, DTI not loaded), ENOENT (no such file: a
 * dti.ko without a module table, no previous boot's records of @name, or
 * no sound table of the boot that wrote them), EINVAL (unknown @flags, a
 * bad @name), or those of dti_modules_load().
 */
int dti_modules_read(const char *name, unsigned int flags, struct dti_module **mods);
/*
 * Add the @n entries of a module table to @l: the live ones, then the
 * gone ones, the last unloaded first.  An entry whose name or range
 * clashes with one added before (a module unloaded and loaded again, a
 * gone module whose range a later one took) is kept apart:
 * dti_lines_resolve() does not use it, dti_lines_resolve_at() (and
 * dti_print() through dti_set_lines()) does for the records logged
 * while it was loaded, from its loaded_ns to its unloaded_ns.  Entries
 * with no name, a zero address or size, unloaded before they were
 * loaded, and DTI_MODULE_FREE ones are left out.  No file is looked for now:
 * each module's is looked for (as dti_lines_add_module() does) when an
 * address in it is first resolved, and what dti_lines_add_module()
 * would tell is told then, once per module, to the notice handler: no
 * file found, no DWARF, a file of another build passed over; a module
 * the table has no build-id for is told, and its file used unchecked;
 * and a module whose files are all other builds is told as
 * DTI_NOTICE_REFUSED (the message names the first file and gives both
 * build-ids) and its addresses resolve to nothing.  It may be called
 * again with a later table of the same machine (dti read --follow): the
 * loads added before (same name, address and load time) are not added
 * again, only their unload is taken, and the readers printing through
 * @l resolve their callers again.  Returns the number of entries added,
 * or -1 (ENOMEM, EINVAL: more than INT_MAX entries).
 */
int dti_lines_add_modules(struct dti_lines *l, const struct dti_module *mods,
			  size_t n);

/* ---- channel control (debugfs) ---- */

/*
 * Names of all channels, sorted, in a NULL-terminated array the caller frees
 * with dti_names_free().  NULL on error (ENODEV: debugfs or DTI missing).
 */
char **dti_list_channels(void);
/*
 * Names of the persistent channels whose records of the previous boot
 * dti.ko shows (<debugfs>/dti/.previous/NAME, dti_open_previous()),
 * sorted, in a NULL-terminated array the caller frees with
 * dti_names_free(); empty if there are none (no region, nothing kept, all
 * cleared).  NULL on error (ENODEV: debugfs or DTI missing, ENOMEM).
 */
char **dti_list_previous(void);
/*
 * Path of @file in the directory of persistent channel @name's previous
 * boot (@file NULL: the directory), <debugfs>/dti/.previous/@name, into
 * @buf.  Returns 0, or -1 with the errors of dti_open_previous() if it
 * does not exist, ENAMETOOLONG.
 */
int dti_previous_path(const char *name, const char *file, char *buf, size_t size);
/* Free the array dti_list_channels() or dti_list_previous() returned; NULL is ignored. */
void dti_names_free(char **names);
/* Level of @name (-2..7).  Returns 0 and sets *@level, or -1 (ENOENT ...). */
int dti_get_level(const char *name, int *level);
/* Set the level: -2 (destroy), -1 (off) or 0..7.  Returns 0 or -1 (EINVAL ...). */
int dti_set_level(const char *name, int level);
/*
 * Parse "0".."7", "emerg".."debug", "off", "destroy", "-1", "-2"; names in
 * any case, and syslog's "panic", "error" and "warn".  Returns 0 or -1.
 */
int dti_level_parse(const char *text, int *level);
/* Name of a level ("err", "off", ...) or "?" */
const char *dti_level_name(int level);
/* Make every record the trace files still hold readable again.  0 or -1. */
int dti_reset_consumed(const char *name);
/*
 * Read control file @file ("stats", "info", "level") of channel @name into
 * a malloc()ed NUL-terminated string the caller frees.  NULL on error.
 */
char *dti_read_ctl(const char *name, const char *file);
/*
 * Path of @file in channel @name's directory (@file NULL: the directory)
 * into @buf.  Returns 0, or -1 with the errors of dti_open_channel() if it
 * does not exist.
 */
int dti_channel_path(const char *name, const char *file, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* _DTI_LIBDTI_H */
