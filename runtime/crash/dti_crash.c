// SPDX-License-Identifier: GPL-2.0
/*
 * dti.so - the `dti` command for the crash utility: DTI channels in the
 * dump crash has open, without DTI's debuginfo.
 *
 * This is an adapter and nothing more.  Finding the channels and decoding
 * their records is libdti's (linked in statically), exactly as `dti dump`
 * does it, so that the two can never disagree: crash supplies the memory
 * (readmem() of physical and kernel virtual addresses, and its memory
 * nodes for what to scan) and crash's output file takes what dti_print()
 * writes.  The dump is scanned once per session, at the first `dti`.
 *
 * Build and install: make -C runtime/crash [install]; see README.md there.
 */
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <dti/libdti.h>
#include "defs.h"		/* crash's, -I/usr/include/crash */

/*
 * defs.h renames error() to __error() by a macro, which would rename
 * struct dti_dump_channel's error field too: crash's error() is called
 * by its real name here.
 */
#undef error

/* Bytes of physical memory handed to dti_dump_scan() at a time, at most. */
#define DTI_SCAN_RUN	(1UL << 20)
/* Records printed between two looks at Ctrl-C. */
#define DTI_PRINT_BATCH	4096

static void cmd_dti(void);
static void dti_cleanup(void);
static char *help_dti[];

static struct command_table_entry dti_commands[] = {
	{ "dti", cmd_dti, help_dti, 0 },
	/* called by crash after every command, however it ended */
	{ "dti_cleanup", dti_cleanup, NULL, CLEANUP },
	{ NULL },
};

/* What the one scan of this session's dump found. */
static struct dti_dump *dti_found;
static int dti_nr_channels;

/* readmem() failure text for libdti's messages (struct dti_dump_mem.errmsg) */
static char dti_read_err[128];

/* ---- messages ---- */

/*
 * "dti: ..." lines never go into fp: that may be a file the records go to,
 * in raw format too.  They go where crash's own error messages go to the
 * terminal (its pipe into the scroller, or error_fp), after what the
 * records before them wrote, so that they stay in place.
 */
static FILE *dti_msg_fp(void)
{
	return pc->stdpipe ? pc->stdpipe : pc->error_fp;
}

static void __attribute__((format(printf, 1, 2)))
dti_msg(const char *fmt, ...)
{
	FILE *out = dti_msg_fp();
	va_list ap;

	fflush(fp);
	fprintf(out, "%s: ", pc->curcmd);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fflush(out);
}

/* Each line of @text (lines ending in '\n', as libdti gives them) */
static void dti_msg_lines(const char *name, const char *text)
{
	const char *nl;

	for (; text && *text; text = nl + 1) {
		nl = strchr(text, '\n');
		if (!nl) {
			dti_msg("channel %s: %s\n", name, text);
			return;
		}
		dti_msg("channel %s: %.*s\n", name, (int)(nl - text), text);
	}
}

static void dti_notice(const struct dti_notice *n, void *arg)
{
	(void)arg;
	dti_msg("%s\n", n->message);
}

/* ---- Ctrl-C and closed pipes ---- */

/*
 * crash answers SIGINT and SIGPIPE with a longjmp() out of the running
 * command, which would leave libdti in the middle of a scan or a print.
 * While `dti` runs, Ctrl-C only sets a flag looked at between runs of
 * memory and batches of records, and a write to a closed pipe (the user
 * quit the scroller) fails with EPIPE, which ends the print.
 */
static volatile sig_atomic_t dti_interrupted;
static struct sigaction dti_old_int, dti_old_pipe;
static int dti_signals_held;

static void dti_on_sigint(int sig)
{
	(void)sig;
	dti_interrupted = 1;
}

static void dti_hold_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = dti_on_sigint;
	sigaction(SIGINT, &sa, &dti_old_int);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, &dti_old_pipe);
	dti_interrupted = 0;
	dti_signals_held = 1;
}

static void dti_release_signals(void)
{
	if (!dti_signals_held)
		return;
	sigaction(SIGINT, &dti_old_int, NULL);
	sigaction(SIGPIPE, &dti_old_pipe, NULL);
	dti_signals_held = 0;
}

/*
 * crash leaves a command by longjmp() on a FATAL error, and then calls
 * this (as after every command).  Its handlers come back; a dump being
 * scanned or a reader being printed at the time is left allocated: the
 * jump may have come from the middle of libdti, whose state is then not
 * to be trusted, and a leak is the safer loss.  The scan is done again at
 * the next `dti`, as dti_found is only set once it completed.
 */
static void dti_cleanup(void)
{
	dti_release_signals();
}

/* ---- the dump's memory, through crash ---- */

/*
 * readmem() only says whether it could read; QUIET keeps its message
 * away, as a page missing from the dump is no error here: makedumpfile
 * -d 31 excludes zero and free pages, and libdti reads a ring page it
 * cannot have as zeros.
 */
static int dti_readmem(int memtype, uint64_t addr, void *buf, size_t len)
{
	if (!len)
		return 0;
	if (len > LONG_MAX) {
		errno = EINVAL;
		snprintf(dti_read_err, sizeof(dti_read_err),
			 "read of %zu bytes at 0x%llx: too large", len,
			 (unsigned long long)addr);
		return -1;
	}
	if (readmem(addr, memtype, buf, len, "dti", RETURN_ON_ERROR | QUIET))
		return 0;
	/* an excluded page, a hole, an unmapped address: all "not held" */
	errno = memtype == PHYSADDR ? ENODATA : EFAULT;
	snprintf(dti_read_err, sizeof(dti_read_err),
		 "crash cannot read %zu bytes at %s address 0x%llx",
		 len, memtype == PHYSADDR ? "physical" : "kernel virtual",
		 (unsigned long long)addr);
	return -1;
}

static int dti_read_phys(void *arg, uint64_t addr, void *buf, size_t len)
{
	(void)arg;
	return dti_readmem(PHYSADDR, addr, buf, len);
}

static int dti_read_virt(void *arg, uint64_t addr, void *buf, size_t len)
{
	(void)arg;
	return dti_readmem(KVADDR, addr, buf, len);
}

static const char *dti_read_errmsg(void *arg)
{
	(void)arg;
	return dti_read_err;
}

/* One past the highest physical address of crash's memory nodes. */
static uint64_t dti_phys_end(void)
{
	uint64_t end = 0, e;
	int n;

	for (n = 0; n < vt->numnodes; n++) {
		e = vt->node_table[n].start_paddr +
		    (uint64_t)vt->node_table[n].size * PAGESIZE();
		if (e > end)
			end = e;
	}
	return end;
}

static char *dti_vmcoreinfo(void);

/* ---- scanning ---- */

/* Seconds between two progress lines of a long scan */
#define DTI_PROGRESS_EVERY	10

static double dti_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct dti_scan {
	struct dti_dump *d;
	char *buf;		/* DTI_SCAN_RUN bytes */
	uint64_t run_addr;	/* physical address of buf[0] */
	size_t run_len;		/* bytes of the current run in buf */
	uint64_t done, total;	/* bytes looked at, and to look at */
	uint64_t missing;	/* bytes crash could not read */
	double next_progress;	/* dti_now() of the next progress line */
};

static int dti_scan_flush(struct dti_scan *s)
{
	int ret = 0;

	if (s->run_len)
		ret = dti_dump_scan(s->d, s->run_addr, s->buf, s->run_len);
	s->run_len = 0;
	return ret;
}

/* A line now and then, so that a scan of a large machine is seen to go on */
static void dti_scan_progress(struct dti_scan *s)
{
	double now = dti_now();

	if (now < s->next_progress)
		return;
	s->next_progress = now + DTI_PROGRESS_EVERY;
	dti_msg("%llu of %llu MiB scanned\n", (unsigned long long)(s->done >> 20),
		(unsigned long long)(s->total >> 20));
}

/*
 * Scan [@start, @end) page by page: the pages crash can read are handed to
 * libdti in runs of contiguous memory; a page it cannot read (excluded
 * from the dump, a hole in the node) ends a run.  Pages are read one by
 * one because readmem() of many pages fails whole at the first missing one.
 */
static int dti_scan_range(struct dti_scan *s, uint64_t start, uint64_t end)
{
	uint64_t page = PAGESIZE(), addr;

	for (addr = start; addr < end && !dti_interrupted; addr += page) {
		if (s->run_len + page > DTI_SCAN_RUN) {
			if (dti_scan_flush(s) < 0)
				return -1;
			dti_scan_progress(s);
		}
		if (!s->run_len)
			s->run_addr = addr;
		if (readmem(addr, PHYSADDR, s->buf + s->run_len, page, "dti scan",
			    RETURN_ON_ERROR | QUIET)) {
			s->run_len += page;
		} else {
			if (dti_scan_flush(s) < 0)
				return -1;
			s->missing += page;
		}
		s->done += page;
	}
	return dti_scan_flush(s);
}

/*
 * The physical address of the dump index that VMCOREINFO names (a kernel
 * with DTI built in writes the line DTI=0x<address>), or 0.
 */
static uint64_t dti_index_addr(void)
{
	char *info = dti_vmcoreinfo(), *at, *end;
	const size_t klen = strlen(DTI_VMCOREINFO_KEY "=");
	uint64_t addr = 0;

	for (at = info; at && *at; at = strchr(at, '\n') ? strchr(at, '\n') + 1 : NULL) {
		if (strncmp(at, DTI_VMCOREINFO_KEY "=", klen))
			continue;
		addr = strtoull(at + klen, &end, 16);
		if (*end != '\n' && *end)
			addr = 0;
		break;
	}
	free(info);
	return addr;
}

/*
 * Load the descriptors the dump index VMCOREINFO names lists, if there is
 * one and it can be used (else say why).  The dump, or NULL: scan.
 */
static struct dti_dump *dti_index_dump(const struct dti_dump_mem *mem)
{
	uint64_t addr = dti_index_addr();
	struct dti_dump *d;
	int nr;

	if (!addr)
		return NULL;
	d = dti_dump_new(mem);
	if (!d)
		return NULL;
	if (dti_dump_locate(d, addr) < 0) {
		dti_msg("%s: scanning instead\n", dti_errmsg());
		dti_dump_free(d);
		return NULL;
	}
	nr = dti_dump_load(d);
	if (nr < 0 || dti_dump_summary(d)->stray) {
		dti_msg("the dump index at physical 0x%llx (VMCOREINFO's %s) %s: scanning instead\n",
			(unsigned long long)addr, DTI_VMCOREINFO_KEY,
			nr < 0 ? dti_errmsg() : "lists entries that are no descriptor");
		dti_dump_free(d);
		return NULL;
	}
	dti_nr_channels = nr;
	dti_msg("%d channel%s located by VMCOREINFO (%s=0x%llx): %lu descriptors in its dump index\n",
		nr, nr == 1 ? "" : "s", DTI_VMCOREINFO_KEY, (unsigned long long)addr,
		dti_dump_summary(d)->indexed);
	return d;
}

/*
 * Scan every memory node crash knows for DTI's dump descriptors and load
 * what they describe (or, with DTI built into the kernel, load what its
 * dump index lists).  Returns the dump, or NULL (said why).
 */
static struct dti_dump *dti_scan_dump(void)
{
	struct dti_dump_mem mem = {
		.size = sizeof(mem), .read_phys = dti_read_phys,
		.read_virt = dti_read_virt,
		.errmsg = dti_read_errmsg,
		.phys_end = dti_phys_end(),
		.long_size = BITS32() ? 4 : 8,
	};
	double t0 = dti_now();
	struct dti_scan s = { .next_progress = t0 + DTI_PROGRESS_EVERY };
	uint64_t start;
	int n, nr;

	s.d = dti_index_dump(&mem);
	if (s.d)
		return s.d;
	if (!vt->numnodes || !vt->node_table) {
		dti_msg("crash knows no memory nodes in this dump: nothing to scan\n");
		return NULL;
	}
	for (n = 0; n < vt->numnodes; n++)
		s.total += (uint64_t)vt->node_table[n].size * PAGESIZE();

	s.buf = malloc(DTI_SCAN_RUN);
	s.d = dti_dump_new(&mem);
	if (!s.buf || !s.d) {
		dti_msg("cannot scan: %s\n", strerror(ENOMEM));
		goto fail;
	}
	dti_msg("scanning %llu MiB of physical memory for DTI channels...\n",
		(unsigned long long)(s.total >> 20));
	for (n = 0; n < vt->numnodes && !dti_interrupted; n++) {
		start = vt->node_table[n].start_paddr;
		if (dti_scan_range(&s, start, start + (uint64_t)
				   vt->node_table[n].size * PAGESIZE()) < 0) {
			dti_msg("scan failed: %s\n", dti_errmsg());
			goto fail;
		}
	}
	if (dti_interrupted) {
		dti_msg("scan interrupted\n");
		goto fail;
	}
	nr = dti_dump_load(s.d);
	if (nr < 0) {
		dti_msg("cannot load the channels found: %s\n", dti_errmsg());
		goto fail;
	}
	dti_nr_channels = nr;
	dti_msg("%d channel%s found in %.1f s (%llu MiB not in the dump)\n",
		nr, nr == 1 ? "" : "s", dti_now() - t0,
		(unsigned long long)(s.missing >> 20));
	free(s.buf);
	return s.d;

fail:
	dti_dump_free(s.d);
	free(s.buf);
	return NULL;
}

/* The dump of this session, scanned at the first call (or again: @rescan). */
static struct dti_dump *dti_get_dump(int rescan)
{
	if (rescan && dti_found) {
		dti_dump_free(dti_found);
		dti_found = NULL;
	}
	if (!dti_found)
		dti_found = dti_scan_dump();
	return dti_found;
}

/* ---- the command ---- */

/*
 * The listing is `dti dump --list`'s (libdti prints both), so that what
 * one shows can be checked against the other (test_crash_ext.py does).
 */
static void dti_list(struct dti_dump *d)
{
	const struct dti_dump_summary *sum = dti_dump_summary(d);

	if (!dti_nr_channels) {
		dti_msg("no DTI channels in this dump (%llu MiB of memory scanned, %lu \"%s\" markers, none before a descriptor)\n",
			(unsigned long long)(sum->scanned >> 20), sum->markers,
			DTI_MARKER_PREFIX);
		return;
	}
	/* the memory scanned is what crash could read of its memory nodes */
	if (dti_dump_print_list(d, fp, NULL, 0) < 0)
		dti_msg("dti: writing the listing failed\n");
}

/* A channel's problems, as `dti dump` reports them.  -1 if it cannot be read. */
static int dti_problems(const struct dti_dump_channel *ch)
{
	if (ch->error) {
		dti_msg("channel %s skipped: %.*s\n", ch->name,
			(int)strcspn(ch->error, "\n"), ch->error);
		return -1;
	}
	dti_msg_lines(ch->name, ch->damage);
	dti_msg_lines(ch->name, ch->notes);
	return 0;
}

/* Index of channel @name, or -1 (said so). */
static int dti_find(struct dti_dump *d, const char *name)
{
	const struct dti_dump_channel *ch;
	int i;

	for (i = 0; i < dti_nr_channels; i++) {
		ch = dti_dump_channel(d, i);
		if (ch && !strcmp(ch->name, name))
			return i;
	}
	dti_msg("no channel %s in the dump; it has:", name);
	for (i = 0; i < dti_nr_channels; i++)
		fprintf(dti_msg_fp(), " %s", dti_dump_channel(d, i)->name);
	fprintf(dti_msg_fp(), "\n");
	return -1;
}

/*
 * A failed write to a pipe: its reader (the scroller, "| head") quit, as
 * the user wanted, which is no error to report.  libdti says EIO for every
 * failed write, so the output is looked at.
 */
static int dti_reader_gone(void)
{
	struct stat st;

	if (errno == EPIPE)
		return 1;
	return errno == EIO && !fstat(fileno(fp), &st) && S_ISFIFO(st.st_mode);
}

/*
 * A caller through crash's own symbol table, as %pS prints it: the
 * kernel's symbols and those of the modules crash knows (from the dump's
 * module list, or mod -S).  The module holding it is crash's module_symbol()
 * answer: is_module_address() asks whether an address is where a module
 * begins, not whether a module holds it, and so named none.
 */
static int dti_crash_symbol(uint64_t addr, char *buf, size_t size, void *arg)
{
	struct load_module *lm = NULL;
	struct syment *sp;
	ulong offset = 0;

	(void)arg;
	sp = value_search(addr, &offset);
	if (!sp)
		return -1;
	if (module_symbol(addr, NULL, &lm, NULL, 0) && lm && lm->mod_name[0])
		snprintf(buf, size, "%s+0x%lx [%s]", sp->name, offset, lm->mod_name);
	else
		snprintf(buf, size, "%s+0x%lx", sp->name, offset);
	return 0;
}

/* -L and -D: callers with their source lines, and where modules' files are */
struct dti_lines_opts {
	int on;
	const char *search[16];
	int n_search;
};

/*
 * A resolver of channel @i's callers to source lines, as `dti dump
 * --lines` makes one: the module table of its records
 * (dti_dump_channel_modules()), the files looked for by build-id in the
 * places -D gave, those crash loaded for the modules (mod -s, mod -S),
 * then the default places of the dumped kernel's release.  NULL if it
 * cannot be made (said why): the records are printed without lines.
 */
static struct dti_lines *dti_lines_for(struct dti_dump *d, int i,
				       const struct dti_lines_opts *lo)
{
	const struct dti_module *mods;
	struct load_module *lm;
	struct dti_lines *l;
	int k, n;

	n = dti_dump_channel_modules(d, i, &mods);
	if (n < 0) {
		dti_msg("callers not resolved to source lines: %s\n", dti_errmsg());
		return NULL;
	}
	l = dti_lines_new();
	if (!l) {
		dti_msg("callers not resolved to source lines: %s\n", dti_errmsg());
		return NULL;
	}
	dti_lines_set_notice_handler(l, dti_notice, NULL);
	if (dti_lines_set_kernel(l, kt->utsname.release) < 0)
		dti_msg("the kernel's release \"%s\": %s\n", kt->utsname.release, dti_errmsg());
	for (k = 0; k < lo->n_search; k++)
		if (dti_lines_add_search(l, lo->search[k]) < 0)
			dti_msg("-D %s: %s\n", lo->search[k], dti_errmsg());
	/* the module files crash loaded: checked by build-id like any other */
	for (k = 0; k < st->mods_installed; k++) {
		lm = &st->load_modules[k];
		if ((lm->mod_flags & MOD_LOAD_SYMS) && lm->mod_namelist[0])
			dti_lines_add_search(l, lm->mod_namelist);
	}
	if (dti_lines_add_modules(l, mods, n) < 0) {
		dti_msg("callers not resolved to source lines: %s\n", dti_errmsg());
		dti_lines_free(l);
		return NULL;
	}
	return l;
}

/* Print channel @i's records merged by time through @filter (NULL: all).  0 or -1 (said why). */
static int dti_show(struct dti_dump *d, int i, enum dti_format format,
		    const struct dti_filter *filter, const struct dti_lines_opts *lo)
{
	const struct dti_dump_channel *ch = dti_dump_channel(d, i);
	struct dti_lines *lines = NULL;
	struct dti_reader *r;
	int ret;

	if (dti_problems(ch) < 0)
		return -1;
	r = dti_dump_open(d, i, 0);
	if (!r) {
		dti_msg("%s: %s\n", ch->name, dti_errmsg());
		return -1;
	}
	if (dti_set_filter(r, filter) < 0) {
		dti_msg("%s: %s\n", ch->name, dti_errmsg());
		dti_close(r);
		return -1;
	}
	dti_set_symbolizer(r, dti_crash_symbol, NULL);
	dti_set_notice_handler(r, dti_notice, NULL);
	if (lo->on && (lines = dti_lines_for(d, i, lo)))
		dti_set_lines(r, lines);
	do
		ret = dti_print_records(r, fp, format, DTI_PRINT_BATCH);
	while (ret == 1 && !dti_interrupted);
	if (ret < 0 && !dti_reader_gone())
		dti_msg("%s: %s\n", ch->name, dti_errmsg());
	dti_close(r);
	dti_lines_free(lines);
	fflush(fp);
	if (dti_interrupted)
		dti_msg("interrupted\n");
	return ret < 0 || dti_interrupted ? -1 : 0;
}

/* Save channel @i as DIR/NAME.  0 or -1 (said why). */
static int dti_save(struct dti_dump *d, int i, const char *dir)
{
	const struct dti_dump_channel *ch = dti_dump_channel(d, i);
	char *path;
	int ret;

	if (dti_problems(ch) < 0)
		return -1;
	if (asprintf(&path, "%s/%s", dir, ch->name) < 0) {
		dti_msg("%s: %s\n", ch->name, strerror(ENOMEM));
		return -1;
	}
	ret = dti_dump_save(d, i, path);
	if (ret < 0)
		dti_msg("%s\n", dti_errmsg());	/* it names the file */
	else
		fprintf(fp, "%s: %u per-CPU files, %llu records, %llu pending records in %s\n",
			ch->name, ch->nr_bufs, (unsigned long long)ch->records,
			(unsigned long long)ch->pending_records, path);
	free(path);
	return ret;
}

/* Channel @only (or every channel that can be read) as DIR/NAME. */
static void dti_save_all(struct dti_dump *d, int only, const char *dir)
{
	int i;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		dti_msg("%s: %s\n", dir, strerror(errno));
		return;
	}
	for (i = 0; i < dti_nr_channels && !dti_interrupted; i++)
		if (only < 0 || i == only)
			dti_save(d, i, dir);
	if (dti_interrupted)
		dti_msg("interrupted\n");
}

/* ---- excerpts and the module table ---- */

/* The ELF machine of the architecture crash was built for (defs.h's -D<ARCH>) */
#if defined(X86_64)
#define DTI_ELF_MACHINE	EM_X86_64
#elif defined(ARM64)
#define DTI_ELF_MACHINE	EM_AARCH64
#elif defined(PPC64)
#define DTI_ELF_MACHINE	EM_PPC64
#elif defined(S390X)
#define DTI_ELF_MACHINE	EM_S390
#elif defined(RISCV64)
#define DTI_ELF_MACHINE	EM_RISCV
#else
#define DTI_ELF_MACHINE	0	/* a 32-bit one: dti_dump_excerpt() says no */
#endif

/* The physical address of a kernel virtual address, through crash */
static int dti_crash_vtop(void *arg, uint64_t vaddr, uint64_t *paddr)
{
	physaddr_t p;

	(void)arg;
	if (!kvtop(NULL, vaddr, &p, 0))
		return -1;
	*paddr = p;
	return 0;
}

/* The name of the ELF note that holds VMCOREINFO, as the kernel writes it */
#define DTI_VMCOREINFO_NOTE	"VMCOREINFO"
/* Most bytes of VMCOREINFO text taken: the kernel keeps a page of it */
#define DTI_VMCOREINFO_MAX	(1U << 20)

/*
 * The dumped kernel's VMCOREINFO text, malloc()ed; NULL if crash cannot
 * read it.  It is read from the ELF note the kernel keeps at
 * vmcoreinfo_note, which it completed at the crash (CRASHTIME) and which
 * the dump's own copy comes from (kdump's /proc/vmcore, QEMU's
 * etc/vmcoreinfo); the page of vmcoreinfo_data it was built in is
 * excluded by makedumpfile -d 31.
 */
static char *dti_vmcoreinfo(void)
{
	const size_t name_len = sizeof(DTI_VMCOREINFO_NOTE);
	char name[sizeof(DTI_VMCOREINFO_NOTE)], *text;
	ulong note = 0, at;
	Elf64_Nhdr nh;		/* Elf32_Nhdr is the same: three 32-bit words */

	if (!symbol_exists("vmcoreinfo_note") ||
	    !readmem(symbol_value("vmcoreinfo_note"), KVADDR, &note, sizeof(note),
		     "vmcoreinfo_note", RETURN_ON_ERROR | QUIET) || !note ||
	    !readmem(note, KVADDR, &nh, sizeof(nh), "vmcoreinfo note",
		     RETURN_ON_ERROR | QUIET) ||
	    nh.n_namesz != name_len || !nh.n_descsz || nh.n_descsz > DTI_VMCOREINFO_MAX ||
	    !readmem(note + sizeof(nh), KVADDR, name, name_len, "vmcoreinfo note",
		     RETURN_ON_ERROR | QUIET) || memcmp(name, DTI_VMCOREINFO_NOTE, name_len))
		return NULL;
	at = note + sizeof(nh) + ((name_len + 3) & ~3UL);
	text = calloc(1, nh.n_descsz + 1);
	if (text && !readmem(at, KVADDR, text, nh.n_descsz, "vmcoreinfo",
			     RETURN_ON_ERROR | QUIET)) {
		free(text);
		return NULL;
	}
	return text;
}

/*
 * Write an excerpt of channel @i (every channel: -1) to @path, as `dti
 * dump --excerpt` writes one: a small ELF dump that `dti dump` reads.
 */
static void dti_excerpt(struct dti_dump *d, int i, const char *path)
{
	char *info = dti_vmcoreinfo();
	struct dti_excerpt_spec spec = {
		.size = sizeof(spec), .page_size = PAGESIZE(),
		.machine = DTI_ELF_MACHINE, .vmcoreinfo = info,
		/* crash reads the kernel's structures as the host's: same order */
		.big_endian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__,
		.virt_to_phys = dti_crash_vtop,
	};
	size_t pages = 0;
	int n, k;

	for (k = 0; k < dti_nr_channels; k++)
		if (i < 0 || k == i)
			dti_problems(dti_dump_channel(d, k));
	n = dti_dump_excerpt(d, i, path, &spec, &pages);
	free(info);
	if (n < 0)
		dti_msg("%s\n", dti_errmsg());	/* it names the file */
	else
		fprintf(fp, "%s: %d channel%s in %zu pages (%zu KiB) of %s\n", path, n,
			n == 1 ? "" : "s", pages, pages * PAGESIZE() >> 10, pc->dumpfile);
}

/*
 * The module table of the dump (of channel @i's records, if >= 0: an
 * earlier boot's, for NAME@bootN), as a snapshot's "modules" file has it.
 */
static void dti_print_modules(struct dti_dump *d, int i)
{
	const struct dti_module *mods;
	char *text;
	int n;

	n = i >= 0 ? dti_dump_channel_modules(d, i, &mods) : dti_dump_modules(d, &mods);
	if (n < 0) {
		dti_msg("%s\n", dti_errmsg());
		return;
	}
	text = dti_modules_text(mods, n, NULL);
	if (!text) {
		dti_msg("%s\n", dti_errmsg());
		return;
	}
	fputs(text, fp);
	fflush(fp);
	free(text);
}

/* Filter option -@c @arg into *@f, made on first use: 0, or -1 (said why) */
static int dti_filter_opt(struct dti_filter **f, int c, const char *arg)
{
	enum dti_time_base base;
	int64_t ns;
	int ret;

	if (!*f && !(*f = dti_filter_new())) {
		__error(INFO, "%s\n", dti_errmsg());
		return -1;
	}
	switch (c) {
	case 'p':
		ret = dti_filter_priority(*f, arg);
		break;
	case 'C':
		ret = dti_filter_cpus(*f, arg);
		break;
	case 'S':
	case 'U':
		ret = dti_time_parse(arg, &base, &ns);
		if (!ret)
			ret = c == 'S' ? dti_filter_since(*f, base, ns) : dti_filter_until(*f, base, ns);
		break;
	case 'g':
		ret = dti_filter_grep(*f, arg, 0);
		break;
	default:
		ret = dti_filter_expr(*f, arg);
	}
	if (ret < 0)
		__error(INFO, "-%c: %s\n", c, dti_errmsg());
	return ret;
}

static void cmd_dti(void)
{
	const char *name = NULL, *dir = NULL, *excerpt = NULL;
	enum dti_format format = DTI_FMT_TEXT;	/* as dti dump */
	struct dti_lines_opts lines = { 0 };
	struct dti_filter *filter = NULL;
	struct dti_dump *d;
	int c, f, i = -1, rescan = 0, list = 0, modules = 0;

	while ((c = getopt(argcnt, args, "c:f:d:rlp:C:S:U:g:e:x:mLD:")) != EOF) {
		switch (c) {
		case 'c':
			name = optarg;
			break;
		case 'f':
			f = dti_format_parse(optarg);
			if (f < 0) {
				__error(INFO, "unknown format \"%s\": text, ts, hex, json or raw\n",
					optarg);
				argerrs++;
			} else {
				format = f;
			}
			break;
		case 'd':
			dir = optarg;
			break;
		case 'r':
			rescan = 1;
			break;
		case 'x':
			excerpt = optarg;
			break;
		case 'm':
			modules = 1;
			break;
		case 'D':
			if (lines.n_search == (int)(sizeof(lines.search) / sizeof(lines.search[0]))) {
				__error(INFO, "-D: at most %d places\n", lines.n_search);
				argerrs++;
				break;
			}
			lines.search[lines.n_search++] = optarg;
			lines.on = 1;	/* -D is for -L */
			break;
		case 'L':
			lines.on = 1;
			break;
		case 'l':
			list = 1;
			break;
		case 'p':
		case 'C':
		case 'S':
		case 'U':
		case 'g':
		case 'e':
			if (dti_filter_opt(&filter, c, optarg) < 0)
				argerrs++;
			break;
		default:
			argerrs++;
			break;
		}
	}
	if (!argerrs && list + !!dir + !!excerpt + modules > 1) {
		__error(INFO, "-l, -d, -x and -m exclude each other\n");
		argerrs++;
	}
	if (!argerrs && list && name) {
		__error(INFO, "-l lists the channels: not with -c\n");
		argerrs++;
	}
	if (!argerrs && (filter || lines.on) && (!name || dir || excerpt || modules)) {
		__error(INFO, "-p, -C, -S, -U, -g, -e, -L and -D are for the records -c channel prints\n");
		argerrs++;
	}
	if (argerrs || args[optind]) {
		dti_filter_free(filter);
		cmd_usage(pc->curcmd, SYNOPSIS);	/* does not return */
	}

	dti_hold_signals();
	d = dti_get_dump(rescan);
	if (!d)
		goto out;
	if (name) {
		i = dti_find(d, name);
		if (i < 0)
			goto out;
	}
	if (dir)
		dti_save_all(d, i, dir);
	else if (excerpt)
		dti_excerpt(d, i, excerpt);
	else if (modules)
		dti_print_modules(d, i);
	else if (name)
		dti_show(d, i, format, filter, &lines);
	else
		dti_list(d);
out:
	dti_filter_free(filter);
	dti_release_signals();
}

static char *help_dti[] = {
	"dti",
	"DTI (Driver Tracing Interface) channels in the dump",
	"[-r] [-l] [-c channel [-f text|ts|hex|json|raw] [-p level[..level]] [-C cpus]\n"
	"      [-S time] [-U time] [-g regex] [-e expr] [-L] [-D path]] [-d dir]\n"
	"      [-x file] [-m]",
	"  Finds the channels of dti.ko in the dump through their dump descriptors",
	"  (no debuginfo for DTI is needed) and reads their per-CPU ring buffers",
	"  with libdti, as \"dti dump\" does: both print the same records.  The",
	"  dump's physical memory is scanned once per session, at the first dti",
	"  command; Ctrl-C stops the scan or a print.",
	"",
	"  With no option or -l, lists the channels as \"dti dump --list\" does: name,",
	"  level at the time of the dump, flags, generation of the buffers,",
	"  sub-buffers per CPU x their size, CPUs whose ring can be read (of all),",
	"  records in those rings and records waiting in a handle's pending store;",
	"  below a channel, what is wrong with it or else worth knowing.",
	"",
	"    -c channel  print the records of this channel, every CPU merged by time.",
	"    -f format   how: \"text\" (default: as the kernel's merged file), \"ts\"",
	"                (as merged-ts: time, CPU, level, seq, caller), \"hex\", \"json\"",
	"                (one object per line) or \"raw\" (the records as stored, for",
	"                a file: dti -c channel -f raw > FILE).",
	"    -d dir      save every channel (with -c: that one) as a snapshot directory",
	"                dir/channel, which \"dti decode\" and libdti's dti_open_dir()",
	"                read; dir is created if need be, dir/channel must not exist",
	"                or be empty.",
	"    -r          scan the dump again.",
	"    -p level    only records of this level and more severe, or of the",
	"                levels level..level (as dti dump -p, journalctl -p).",
	"    -C cpus     only records of these CPUs: 0,2-3 (as dti dump -c).",
	"    -S, -U time only records logged since, until time: seconds since boot,",
	"                +time after the first record, -time before the last (-S -5s).",
	"    -g regex    only records whose message matches regex (dti dump -g).",
	"    -e expr     only events whose fields satisfy expr: 'status!=0 && len>4096'",
	"                (dti dump --filter).",
	"    -L          callers with their source file and line, and the functions",
	"                inlined there (dti dump --lines): modules' files are found",
	"                by the build-ids of the dump's module table in the places",
	"                -D gives, those crash loaded (mod -s, mod -S), then",
	"                /usr/lib/debug and /lib/modules of the dumped kernel's release.",
	"    -D path     a module's file (NAME.ko) or a directory searched for them",
	"                (dti dump --debuginfo); implies -L; may be repeated.",
	"    -x file     write an excerpt of the dump: a small ELF dump holding only",
	"                what the channels (with -c: that one) are read from, which",
	"                \"dti dump file\" reads as it reads the dump (dti dump",
	"                --excerpt writes the same file).",
	"    -m          print the dump's module table (with -c: that of the",
	"                channel's records) as a snapshot's \"modules\" file has it:",
	"                NAME 0xTEXT 0xTEXT_SIZE BUILD_ID live|gone LOADED_NS UNLOADED_NS",
	"                (dti dump --out DIR writes it as DIR/NAME/modules).",
	"",
	"  Callers (-f ts, hex, json) are resolved through crash's own symbol table,",
	"  module symbols included, as func+0x1c [module].",
	"\nEXAMPLE",
	"  List the channels, then print one and save it:\n",
	"    crash> extend dti.so",
	"    crash> dti",
	"    dti: scanning 1023 MiB of physical memory for DTI channels...",
	"    dti: 2 channels found in 0.4 s (924 MiB not in the dump)",
	"    channel       level       flags      generation subbufs     cpus   records  pending",
	"    mydrv         7 (debug)   buffers    0x309e8050 4 x 65536   2/2       4180        0",
	"    mydrv_early   ?           -          -          -           -            0       12",
	"      note: no channel descriptor: an early handle not yet initialised; ...",
	"    crash> dti -c mydrv -f json | tail -1",
	"    {\"ts_ns\":5432954600,\"cpu\":0,\"level\":6,\"seq\":4179,...,\"text\":\"...\"}",
	"    crash> dti -c mydrv -d /tmp/dti",
	"    mydrv: 2 per-CPU files, 4180 records, 0 pending records in /tmp/dti/mydrv",
	"    crash> dti -c mydrv -x /tmp/mydrv.elf",
	"    /tmp/mydrv.elf: 1 channel in 21 pages (84 KiB) of vmcore",
	"    $ dti dump /tmp/mydrv.elf     (later, anywhere)",
	NULL
};

static void __attribute__((constructor)) dti_crash_init(void)
{
	register_extension(dti_commands);
}

static void __attribute__((destructor)) dti_crash_fini(void)
{
	dti_release_signals();
	dti_dump_free(dti_found);
	dti_found = NULL;
}
