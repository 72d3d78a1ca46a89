// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of libdti's source lines (dti_lines_*, lib/lines.c) on the
 * objects the Makefile builds from tests/lines_sample.c into BUILD/lines/
 * (ET_REL, as a .ko): lines_sample.ko (DWARF, a build-id),
 * other/lines_sample.ko (another build-id), stripped/lines_sample.ko
 * (no DWARF).  Every call's return address, in .text and in the cold
 * code the kernel lays out after it, is resolved and compared with what
 * eu-addr2line -f -i says of the call, and with the lines the source
 * marks; a file of another build is refused; a module without
 * DWARF or without a file is told once.  Then, if ../testsuite/modules/
 * dti_test.ko is there (run from runtime/), the same comparison on a real
 * module.
 * Last, 1,000,000 records are decoded with and without resolving their
 * callers, and printed as `dti decode -F ts` prints them with and without
 * their source lines: the times are printed, and printing with lines
 * must take at most twice as long (not asserted under sanitizers).
 *
 * usage: test_lines BUILD_DIR; prints "N passed, N failed" last.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <linux/dti_record.h>
#include "dti/libdti.h"
#include "unit.h"

#define SAMPLE_SRC	"tests/lines_sample.c"
#define SAMPLE_NAME	"lines_sample"
/* where the tests say the sample's .text was loaded: any kernel address */
#define SAMPLE_TEXT	0xffffffffc0a00000ull
#define REAL_TEXT	0xffffffffc0b00000ull
#define MAX_CALLS	4096
#define BUILD_ID_MAX	64
/* the sub-buffers of the records made here: 1 MiB, as a large channel's */
#define RECS_SUBBUF	(1u << 20)

static const char *build;
static char sample[512], other[512], stripped[512], real_ko[512];

/* ---- what the tools say ---- */

/* Run @cmd; its first line of output into @buf.  0, or -1. */
static int run_line(const char *cmd, char *buf, size_t size)
{
	FILE *p = popen(cmd, "r");
	int ok;

	if (!p)
		return -1;
	ok = fgets(buf, size, p) != NULL;
	pclose(p);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* The build-id of @path (readelf -n) as bytes into @id: its length, or 0 */
static size_t build_id_of(const char *path, unsigned char *id)
{
	char cmd[1024], hex[2 * BUILD_ID_MAX + 2];
	size_t n;

	snprintf(cmd, sizeof(cmd),
		 "readelf -n '%s' 2>/dev/null | sed -n 's/.*Build ID: *//p'", path);
	if (run_line(cmd, hex, sizeof(hex)))
		return 0;
	for (n = 0; n < BUILD_ID_MAX && sscanf(hex + 2 * n, "%2hhx", &id[n]) == 1; n++)
		;
	return n;
}

/* Offset of function @sym in .text (nm), or -1 */
static long sym_offset(const char *path, const char *sym)
{
	char cmd[1024], line[256];

	snprintf(cmd, sizeof(cmd), "nm '%s' | awk '$3 == \"%s\" { print $1 }'", path, sym);
	if (run_line(cmd, line, sizeof(line)))
		return -1;
	return strtol(line, NULL, 16);
}

/*
 * The executable sections of @path but the .init ones, where the kernel
 * lays them out (layout_sections(): in section-header order, each at the
 * next multiple of its alignment), from readelf -SW: names into @names,
 * offsets from the module's text into @koff, sizes into @sizes.  Returns
 * how many.
 */
static size_t exec_sections(const char *path, char names[][64], uint64_t *koff,
			    uint64_t *sizes, size_t max)
{
	char cmd[1024], line[512], name[64], flags[16];
	unsigned long long size, align;
	uint64_t off = 0;
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "readelf -SW '%s' | awk '/^ *\\[ *[0-9]+\\]/ { sub(/^ *\\[ *[0-9]+\\] */, \"\");"
		 " if ($7 ~ /A/ && $7 ~ /X/) print $1, $5, $7, $10 }'", path);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (n < max && fgets(line, sizeof(line), p)) {
		if (sscanf(line, "%63s %llx %15s %llu", name, &size, flags, &align) != 4 ||
		    !strncmp(name, ".init", 5))
			continue;
		if (align > 1)
			off = (off + align - 1) / align * align;
		snprintf(names[n], 64, "%s", name);
		sizes[n] = size;
		koff[n++] = off;
		off += size;
	}
	pclose(p);
	return n;
}

/* A call of the module: its return address in section @sec and in the module */
struct call {
	char sec[64];
	uint64_t off;		/* in @sec */
	uint64_t koff;		/* from the module's text, as the kernel lays it out */
	uint64_t sec_size;
};

/*
 * Sections whose code never runs where it lies: x86's alternatives are
 * copied over their original sites at load (apply_alternatives()), so a
 * return address is never in them (6.12's dti_test.ko has calls there,
 * 6.1's none).  They still take their place in the layout.
 */
static bool runs_elsewhere(const char *sec)
{
	return !strcmp(sec, ".altinstr_replacement");
}

/*
 * The return addresses of the calls of @path in its executable sections
 * but those that run elsewhere: a call is its relocation
 * (R_X86_64_PLT32, a 4-byte displacement at the end of the instruction)
 * in the section's .rela section.  Returns how many, section by section
 * in the kernel's order.
 */
static size_t call_sites(const char *path, struct call *ret, size_t max)
{
	char cmd[1024], line[512], names[32][64];
	unsigned long long off;
	uint64_t koff[32], sizes[32];
	size_t n = 0, ns = exec_sections(path, names, koff, sizes, 32), k;
	FILE *p;

	for (k = 0; k < ns; k++) {
		if (runs_elsewhere(names[k]))
			continue;
		snprintf(cmd, sizeof(cmd),
			 "readelf -rW '%s' | awk '/^Relocation section/ { on = ($3 == \"'\\''.rela%s'\\''\") }"
			 " on && /R_X86_64_PLT32/ { print $1 }'", path, names[k]);
		p = popen(cmd, "r");
		if (!p)
			return n;
		while (n < max && fgets(line, sizeof(line), p))
			if (sscanf(line, "%llx", &off) == 1) {
				snprintf(ret[n].sec, sizeof(ret[n].sec), "%s", names[k]);
				ret[n].off = off + 4;
				ret[n].koff = koff[k] + off + 4;
				ret[n].sec_size = sizes[k];
				n++;
			}
		pclose(p);
	}
	return n;
}

/*
 * eu-addr2line -f -i's answer for offset @off of section @sec of @path,
 * all its lines joined by '|', into @buf
 */
static void addr2line(const char *path, const char *sec, uint64_t off, char *buf,
		      size_t size)
{
	char cmd[1024], line[1024];
	size_t len = 0;
	FILE *p;

	buf[0] = '\0';
	snprintf(cmd, sizeof(cmd), "eu-addr2line -e '%s' -j %s -f -i 0x%llx",
		 path, sec, (unsigned long long)off);
	p = popen(cmd, "r");
	if (!p)
		return;
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = '\0';
		len += snprintf(buf + len, size - len, "%s%s", len ? "|" : "", line);
		if (len >= size)
			break;
	}
	pclose(p);
}

static void loc(char *buf, size_t size, const char *file, unsigned int line,
		unsigned int col)
{
	if (col)
		snprintf(buf, size, "%s:%u:%u", file ? file : "??", line, col);
	else
		snprintf(buf, size, "%s:%u", file ? file : "??", line);
}

/*
 * @l as eu-addr2line -f -i prints it, the same joined lines: "INNER
 * inlined at CALL in OUTERMOST", the line, then each outer function
 * with the call of the one it holds.
 */
static void as_addr2line(const struct dti_line *l, const char *want, char *buf,
			 size_t size)
{
	const char *names[DTI_LINES_INLINE_MAX + 1];
	char locs[DTI_LINES_INLINE_MAX + 1][600], outer[256];
	const char *p;
	unsigned int k, n = l->n_inlined;
	size_t len = 0;

	loc(locs[0], sizeof(locs[0]), l->file, l->line, l->column);
	for (k = 0; k < n; k++) {
		names[k] = l->inlined[k].function;
		loc(locs[k + 1], sizeof(locs[k + 1]), l->inlined[k].file,
		    l->inlined[k].line, l->inlined[k].column);
	}
	/*
	 * The outermost function as its DWARF names it where eu-addr2line
	 * prints it alone: "f" for the symbol of a part of it, "f.cold"; or
	 * any name if the first line named the symbol (an alias of the
	 * function: cleanup_module for the function module_exit() names).
	 * The functions of the sample's calls are checked by name apart.
	 */
	snprintf(outer, sizeof(outer), "%s", l->function ? l->function : "??");
	outer[strcspn(outer, ".")] = '\0';
	for (k = 0, p = want; p && k < 2 * n; k++)
		p = strchr(p, '|') ? strchr(p, '|') + 1 : NULL;
	if (p)
		snprintf(outer, sizeof(outer), "%.*s", (int)strcspn(p, "|"), p);
	names[n] = outer;
	buf[0] = '\0';
	/* the first line names the outermost function's symbol, the others each one */
	if (n)
		len = snprintf(buf, size, "%s inlined at %s in %s|%s", names[0], locs[1],
			       l->function ? l->function : "??", locs[0]);
	else
		len = snprintf(buf, size, "%s|%s", names[0], locs[0]);
	for (k = 1; k <= n && len < size; k++)
		len += snprintf(buf + len, size - len, "|%s|%s", names[k], locs[k]);
}

/* The line of tests/lines_sample.c that holds "LINE:@mark", or 0 */
static unsigned int marked_line(const char *mark)
{
	char line[512], want[64];
	unsigned int n = 0;
	FILE *f = fopen(SAMPLE_SRC, "r");

	if (!f)
		return 0;
	snprintf(want, sizeof(want), "LINE:%s ", mark);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, want)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	return 0;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t a = s ? strlen(s) : 0, b = strlen(tail);

	return a >= b && !strcmp(s + a - b, tail);
}

/* ---- notices ---- */

static unsigned int n_notices;
static char last_notice[1024];

static void on_notice(const struct dti_notice *n, void *arg)
{
	(void)arg;
	n_notices++;
	snprintf(last_notice, sizeof(last_notice), "%s", n->message);
}

/* A resolver with @path searched and module @name at @text */
static struct dti_lines *lines_with(const char *path, const char *name,
				    uint64_t text, int *ret)
{
	unsigned char id[BUILD_ID_MAX];
	struct dti_lines *l = dti_lines_new();
	size_t n = build_id_of(path, id);

	n_notices = 0;
	last_notice[0] = '\0';
	if (!l)
		return NULL;
	dti_lines_set_notice_handler(l, on_notice, NULL);
	if (dti_lines_add_search(l, path)) {
		dti_lines_free(l);
		return NULL;
	}
	*ret = dti_lines_add_module(l, name, id, n, text, 0);
	return l;
}

/*
 * Whether eu-addr2line's output @want ("f inlined at LOC in g|SRC|g|LOC2
 * ...") contradicts itself: its first line gives the call that the
 * innermost function was inlined for, and its frames give it again as
 * the next function's line; eu-addr2line finds the two at different
 * addresses (the frames at the start of the address's line-table row),
 * and where that row began in another inlined call they differ.
 */
static bool addr2line_disagrees(const char *want)
{
	const char *at = strstr(want, " inlined at "), *in, *p;
	size_t len;
	int k;

	if (!at || (p = strchr(want, '|')) == NULL || at > p)
		return false;
	at += strlen(" inlined at ");
	in = strstr(at, " in ");
	if (!in || in > p)
		return false;
	len = in - at;
	/* the frames: SRC|g|LOC2: skip two more fields */
	for (k = 0; k < 2 && p; k++)
		p = strchr(p + 1, '|');
	if (!p)
		return false;
	p++;
	return strncmp(p, at, len) || (p[len] && p[len] != '|');
}

/* ---- tests ---- */

/*
 * Every call of @path (loaded at @text) resolves, as a return address,
 * to what eu-addr2line says of the call instruction before it, and
 * exactly to the line it gives the address; returns the number compared.
 */
static unsigned int compare_with_addr2line(struct dti_lines *l, const char *path,
					   uint64_t text)
{
	static struct call calls[MAX_CALLS];
	char want[4096], got[4096];
	struct dti_line out;
	size_t n = call_sites(path, calls, MAX_CALLS), i;
	unsigned int bad = 0, skipped = 0;

	CHECK(n > 0);
	for (i = 0; i < n; i++) {
		addr2line(path, calls[i].sec, calls[i].off - 1, want, sizeof(want));
		if (dti_lines_resolve(l, text + calls[i].koff, 0, &out)) {
			printf("  %s+0x%llx: %s\n", calls[i].sec,
			       (unsigned long long)calls[i].off, dti_errmsg());
			bad++;
			continue;
		}
		as_addr2line(&out, want, got, sizeof(got));
		if (strcmp(got, want) && addr2line_disagrees(want)) {
			skipped++;
			continue;
		}
		if (strcmp(got, want) && bad++ < 5)
			printf("  %s+0x%llx:\n    got:  %s\n    want: %s\n", calls[i].sec,
			       (unsigned long long)calls[i].off, got, want);
		/*
		 * The return address itself: its line only, as eu-addr2line
		 * looks the inlined functions up at the start of the address's
		 * line-table row, not at the address (in a few places of
		 * dti_test.ko the row starts in another inlined call)
		 */
		if (calls[i].off == calls[i].sec_size)
			continue;	/* a call that ends its section (noreturn) */
		addr2line(path, calls[i].sec, calls[i].off, want, sizeof(want));
		CHECK(!dti_lines_resolve(l, text + calls[i].koff, DTI_LINES_EXACT, &out));
		loc(got, sizeof(got), out.file, out.line, out.column);
		if (!strstr(want, got) && bad++ < 5)
			printf("  exact %s+0x%llx:\n    got:  %s\n    want: %s\n", calls[i].sec,
			       (unsigned long long)calls[i].off, got, want);
	}
	CHECK(bad == 0);
	if (skipped)
		printf("  %u calls where eu-addr2line's first line and its frames name different calls, "
		       "not compared\n", skipped);
	CHECK(skipped * 20 <= n);
	return n;
}

/* Resolve call @c of the sample as a return address: function, line, no inlining */
static void check_call(struct dti_lines *l, const struct call *c, const char *function,
		       uint64_t offset, const char *mark)
{
	struct dti_line out;

	CHECK(!dti_lines_resolve(l, SAMPLE_TEXT + c->koff, 0, &out));
	CHECK_STR(out.function, function);
	CHECK_STR(out.module, SAMPLE_NAME);
	CHECK(out.offset == offset && out.size > 0);
	CHECK(ends_with(out.file, SAMPLE_SRC) && out.line == marked_line(mark));
	CHECK(out.n_inlined == 0);
}

static void test_sample_lines(void)
{
	struct call calls[MAX_CALLS];
	struct dti_line out;
	struct dti_lines *l;
	long outer, split, cold, split_cold;
	int ret = -1;
	size_t n;

	l = lines_with(sample, SAMPLE_NAME, SAMPLE_TEXT, &ret);
	CHECK(l && ret == 0);
	if (!l || ret) {
		printf("  %s\n", dti_errmsg());
		dti_lines_free(l);
		return;
	}
	CHECK(n_notices == 0);
	compare_with_addr2line(l, sample, SAMPLE_TEXT);

	/*
	 * The calls in the kernel's order: in .text lines_first's, the
	 * helper's, lines_outer's, lines_split's; in .text.unlikely
	 * lines_cold's, then lines_split.cold's two
	 */
	n = call_sites(sample, calls, MAX_CALLS);
	outer = sym_offset(sample, "lines_outer");
	split = sym_offset(sample, "lines_split");
	cold = sym_offset(sample, "lines_cold");
	split_cold = sym_offset(sample, "lines_split.cold");
	CHECK(n == 7 && outer > 0 && split > 0 && cold >= 0 && split_cold > 0);
	if (n != 7 || outer <= 0 || split <= 0 || cold < 0 || split_cold <= 0)
		goto out;
	CHECK_STR(calls[3].sec, ".text");
	CHECK_STR(calls[4].sec, ".text.unlikely");
	/* .text.unlikely is not at .text's offset in the file: the kernel's layout */
	CHECK(calls[4].koff > calls[3].koff && calls[4].koff != calls[4].off);
	check_call(l, &calls[0], "lines_first", calls[0].off, "first_call");

	CHECK(!dti_lines_resolve(l, SAMPLE_TEXT + calls[1].koff, 0, &out));
	CHECK_STR(out.function, "lines_outer");
	CHECK(out.offset == calls[1].off - outer);
	CHECK(ends_with(out.file, SAMPLE_SRC) && out.line == marked_line("helper_call"));
	CHECK(out.n_inlined == 1);
	CHECK_STR(out.inlined[0].function, "lines_helper");
	CHECK(ends_with(out.inlined[0].file, SAMPLE_SRC));
	CHECK(out.inlined[0].line == marked_line("inlined_at"));

	CHECK(!dti_lines_resolve(l, SAMPLE_TEXT + calls[2].koff, 0, &out));
	CHECK_STR(out.function, "lines_outer");
	CHECK(out.line == marked_line("outer_call") && out.n_inlined == 0);
	check_call(l, &calls[3], "lines_split", calls[3].off - split, "split_call");

	/* cold code: a cold function and a function's .cold part */
	check_call(l, &calls[4], "lines_cold", calls[4].off - cold, "cold_fn_call");
	check_call(l, &calls[5], "lines_split.cold", calls[5].off - split_cold, "split_report");
	check_call(l, &calls[6], "lines_split.cold", calls[6].off - split_cold,
		   "split_cold_call");

	/* outside the module: no answer, and the message says where */
	errno = 0;
	CHECK(dti_lines_resolve(l, SAMPLE_TEXT - 16, 0, &out) == -1 && errno == ENOENT);
	CHECK(strstr(dti_errmsg(), "in no module") != NULL);
	/* cached: the same twice */
	CHECK(dti_lines_resolve(l, SAMPLE_TEXT - 16, 0, &out) == -1 && errno == ENOENT);
	CHECK(dti_lines_resolve(l, SAMPLE_TEXT, 0x100, &out) == -1 && errno == EINVAL);
out:
	dti_lines_free(l);
}

/* A file of the module's name with another build-id is refused, saying which. */
static void test_build_id_mismatch(void)
{
	unsigned char id[BUILD_ID_MAX], id_other[BUILD_ID_MAX];
	size_t n = build_id_of(sample, id), n_other = build_id_of(other, id_other);
	char hex[2 * BUILD_ID_MAX + 1] = "", hex_other[2 * BUILD_ID_MAX + 1] = "";
	struct dti_lines *l;
	struct dti_line out;
	size_t i;

	CHECK(n == 20 && n_other == 20 && memcmp(id, id_other, n));
	for (i = 0; i < n && i < BUILD_ID_MAX; i++) {
		sprintf(hex + 2 * i, "%02x", id[i]);
		sprintf(hex_other + 2 * i, "%02x", id_other[i]);
	}
	l = dti_lines_new();
	CHECK(l && !dti_lines_add_search(l, other));
	if (!l)
		return;
	errno = 0;
	CHECK(dti_lines_add_module(l, SAMPLE_NAME, id, n, SAMPLE_TEXT, 0) == -1);
	CHECK(errno == ESTALE);
	CHECK(strstr(dti_errmsg(), other) != NULL);
	CHECK(strstr(dti_errmsg(), hex) != NULL);
	CHECK(strstr(dti_errmsg(), hex_other) != NULL);
	printf("  refused: %s\n", dti_errmsg());
	/* nothing was added: its addresses are in no module */
	CHECK(dti_lines_resolve(l, SAMPLE_TEXT + 4, 0, &out) == -1 && errno == ENOENT);

	/* the right file given after the wrong one is used, the wrong one told */
	n_notices = 0;
	dti_lines_set_notice_handler(l, on_notice, NULL);
	CHECK(!dti_lines_add_search(l, sample));
	CHECK(dti_lines_add_module(l, SAMPLE_NAME, id, n, SAMPLE_TEXT, 0) == 0);
	CHECK(n_notices == 1 && strstr(last_notice, hex_other));
	CHECK(!dti_lines_resolve(l, SAMPLE_TEXT + 4, 0, &out) && out.line > 0);
	errno = 0;
	CHECK(dti_lines_add_module(l, SAMPLE_NAME, id, n, SAMPLE_TEXT, 0) == -1 &&
	      errno == EEXIST);
	dti_lines_free(l);
}

/* No DWARF: told once, functions still found; no file: told once, ENOENT */
static void test_no_debuginfo(void)
{
	struct dti_lines *l;
	struct dti_line out;
	int ret = -1;
	long outer = sym_offset(sample, "lines_outer");

	l = lines_with(stripped, SAMPLE_NAME, SAMPLE_TEXT, &ret);
	CHECK(l && ret == 1 && n_notices == 1);
	CHECK(strstr(last_notice, "no DWARF") && strstr(last_notice, stripped));
	if (l) {
		CHECK(!dti_lines_resolve(l, SAMPLE_TEXT + outer + 4, 0, &out));
		CHECK_STR(out.function, "lines_outer");
		CHECK(out.offset == 4 && !out.file && !out.line && !out.n_inlined);
	}
	/* a second module, with no file anywhere */
	n_notices = 0;
	CHECK(l && dti_lines_add_module(l, "no_such_module_xyz", NULL, 0,
					SAMPLE_TEXT + (1 << 20), 4096) == 1);
	CHECK(n_notices == 1 && strstr(last_notice, "no_such_module_xyz"));
	errno = 0;
	CHECK(l && dti_lines_resolve(l, SAMPLE_TEXT + (1 << 20) + 8, 0, &out) == -1 &&
	      errno == ENOENT && strstr(dti_errmsg(), "no file was found"));
	CHECK(n_notices == 1);
	/* overlapping ranges are refused */
	errno = 0;
	CHECK(l && dti_lines_add_module(l, "overlap", NULL, 0, SAMPLE_TEXT + 8, 16) == -1 &&
	      errno == EINVAL && strstr(dti_errmsg(), "overlaps module " SAMPLE_NAME));
	dti_lines_free(l);

	l = dti_lines_new();
	errno = 0;
	CHECK(l && dti_lines_add_search(l, "/nonexistent/x.ko") == -1 && errno == ENOENT &&
	      strstr(dti_errmsg(), "/nonexistent/x.ko"));
	dti_lines_free(l);
}

/* A real kernel module's DWARF (testsuite/modules), if it was built */
static void test_real_module(void)
{
	struct dti_lines *l;
	unsigned int n;
	int ret = -1;
	FILE *f = fopen(real_ko, "r");

	if (!f) {
		printf("  skipped: no %s (make -C testsuite/modules)\n", real_ko);
		return;
	}
	fclose(f);
	l = lines_with(real_ko, "dti_test", REAL_TEXT, &ret);
	CHECK(l && ret == 0);
	if (!l || ret) {
		printf("  %s\n", dti_errmsg());
		dti_lines_free(l);
		return;
	}
	n = compare_with_addr2line(l, real_ko, REAL_TEXT);
	printf("  %s: %u calls resolved as eu-addr2line -f -i does\n", real_ko, n);
	dti_lines_free(l);
}

/* The file @path as a string to free(), or NULL */
static char *slurp(const char *path)
{
	char *text = NULL;
	size_t size = 0;
	FILE *in = fopen(path, "r"), *out = open_memstream(&text, &size);
	int c;

	if (in && out)
		while ((c = fgetc(in)) != EOF)
			fputc(c, out);
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	if (!in) {
		free(text);
		return NULL;
	}
	return text;
}

/* ---- records whose callers are given ---- */

static void put(unsigned char **p, const void *d, size_t n)
{
	memcpy(*p, d, n);
	*p += n;
}

/*
 * @n text records of one CPU in memory, their callers taken in turn
 * from @callers, in closed sub-buffers of RECS_SUBBUF bytes
 */
static unsigned char *records_buffer(unsigned int n, const uint64_t *callers,
				   size_t n_callers, size_t *len)
{
	const size_t rec = DTI_RECORD_SIZE(8);
	const uint32_t per = (RECS_SUBBUF - DTI_SUBBUF_HEADER_SIZE_V1) / rec;
	size_t nsub = (n + per - 1) / per;
	unsigned char *buf = calloc(nsub, RECS_SUBBUF), *p;
	unsigned int i = 0, k;

	if (!buf)
		return NULL;
	for (k = 0; k < nsub; k++) {
		uint32_t in_sub = n - i < per ? n - i : per;
		struct dti_subbuf_info si = {
			.subbuf_size = RECS_SUBBUF, .n_subbufs = nsub,
			.padding = RECS_SUBBUF - DTI_SUBBUF_HEADER_SIZE_V1 - in_sub * rec,
			.records = in_sub, .state = DTI_SUBBUF_CLOSED,
		};
		struct dti_record h = {
			.magic = DTI_RECORD_MAGIC, .version = DTI_RECORD_VERSION_1,
			.flags = DTI_REC_SUBBUF, .hdr_len = sizeof(h), .len = DTI_SUBBUF_INFO_V1_SIZE,
			.seq = k, .ts_ns = 1,
		};

		p = buf + (size_t)k * RECS_SUBBUF;
		strcpy(si.name, "recs");
		put(&p, &h, sizeof(h));
		put(&p, &si, DTI_SUBBUF_INFO_V1_SIZE);
		p = buf + (size_t)k * RECS_SUBBUF + DTI_SUBBUF_HEADER_SIZE_V1;
		for (; in_sub--; i++) {
			struct dti_record r = {
				.magic = DTI_RECORD_MAGIC, .version = DTI_RECORD_VERSION_1,
				.flags = DTI_REC_TEXT, .level = 3, .hdr_len = sizeof(r),
				.len = 8, .seq = i, .ts_ns = 10 + i,
				.caller = callers[i % n_callers],
			};

			put(&p, &r, sizeof(r));
			put(&p, "record!!", 8);
		}
	}
	*len = nsub * (size_t)RECS_SUBBUF;
	return buf;
}

/* ---- module tables ---- */

static void test_modules_parse(void)
{
	static const struct {
		const char *line, *why;
	} bad[] = {
		{ "x 0x10 0x20 - live 1", "too few fields" },
		{ "x 0x10 0x20 - live 1 0 more", "too many fields" },
		{ "x 10 0x20 - live 1 0", "text address" },
		{ "x 0x0 0x20 - live 1 0", "text address" },
		{ "x 0x1z 0x20 - live 1 0", "text address" },
		{ "x 0x10 0x100000000 - live 1 0", "text size" },
		{ "x 0xffffffffffffff00 0x1000 - live 1 0", "past the end" },
		{ "x 0x10 0x20 abc live 1 0", "build-id" },
		{ "x 0x10 0x20 0011223344556677889900112233445566778899aa live 1 0", "build-id" },
		{ "x 0x10 0x20 - dead 1 0", "state" },
		{ "x 0x10 0x20 - live -1 0", "time" },
		{ "x 0x10 0x20 - live 1 99999999999999999999", "time" },
		{ "a_module_name_longer_than_any_module_name_of_the_kernel_is 0x10 0x20 - live 1 0",
		  "module name longer" },
	};
	const char *good = "first 0xffffffffc0a3e000 0x5a20 3f6c2e0011 live 2345678901 0\n"
			   "\n  \n"
			   "second 0xffffffffc0b00000 0x1000 - gone 5 18446744073709551615\n";
	struct dti_module *m = NULL;
	char text[512], want[64];
	size_t i;

	CHECK(dti_modules_parse(good, strlen(good), "t", &m) == 2);
	if (m) {
		CHECK_STR(m[0].name, "first");
		CHECK(m[0].text == 0xffffffffc0a3e000ull && m[0].text_size == 0x5a20 &&
		      m[0].build_id_len == 5 && m[0].build_id[0] == 0x3f &&
		      m[0].build_id[4] == 0x11 && m[0].state == DTI_MODULE_LIVE &&
		      m[0].loaded_ns == 2345678901ull && !m[0].unloaded_ns);
		CHECK_STR(m[1].name, "second");
		CHECK(m[1].state == DTI_MODULE_GONE && !m[1].build_id_len &&
		      m[1].unloaded_ns == UINT64_MAX);
	}
	free(m);
	CHECK(dti_modules_parse("", 0, NULL, &m) == 0 && !m);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "ok 0x10 0x20 - live 1 0\n%s\n", bad[i].line);
		errno = 0;
		m = (struct dti_module *)1;
		CHECK(dti_modules_parse(text, strlen(text), "tbl", &m) == -1 && errno == EINVAL &&
		      !m);
		CHECK(!strncmp(dti_errmsg(), "tbl:2: ", 7) && strstr(dti_errmsg(), bad[i].why));
		if (!strstr(dti_errmsg(), bad[i].why))
			printf("  %s -> %s\n", bad[i].line, dti_errmsg());
	}
	/* a NUL in the table */
	snprintf(want, sizeof(want), "x 0x10 0x20 - live 1 0");
	want[1] = '\0';
	CHECK(dti_modules_parse(want, 22, "nul", &m) == -1 && errno == EINVAL &&
	      strstr(dti_errmsg(), "nul:1: a NUL byte"));
	errno = 0;
	CHECK(dti_modules_load("/nonexistent/modules", &m) == -1 && errno == ENOENT &&
	      strstr(dti_errmsg(), "/nonexistent/modules"));
}

static unsigned int n_refused;

static void on_lines_notice(const struct dti_notice *n, void *arg)
{
	(void)arg;
	if (n->type == DTI_NOTICE_REFUSED)
		n_refused++;
	on_notice(n, arg);
}

/* The build-id of the sample (@path) as a module table entry */
static void sample_entry(struct dti_module *e, const char *path, const char *name,
			 uint64_t text, uint32_t size, int state, bool with_id)
{
	unsigned char id[BUILD_ID_MAX];
	size_t n = with_id ? build_id_of(path, id) : 0;

	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->text = text;
	e->text_size = size;
	e->state = state;
	e->unloaded_ns = state == DTI_MODULE_GONE ? 100 : 0;
	if (n <= DTI_BUILD_ID_SIZE) {
		memcpy(e->build_id, id, n);
		e->build_id_len = n;
	}
}

/*
 * dti_lines_add_modules(): live entries, gone ones that clash with
 * nothing; clashing loads kept for their records' times; files looked
 * for at the first caller, told then, once
 */
static void test_add_modules(void)
{
	struct dti_module t[5];
	struct call calls[MAX_CALLS];
	struct dti_lines *l = dti_lines_new();
	struct dti_line out;
	size_t n = call_sites(sample, calls, MAX_CALLS);
	uint64_t first = SAMPLE_TEXT + calls[0].koff;

	CHECK(l && n == 7);
	if (!l || n != 7) {
		dti_lines_free(l);
		return;
	}
	n_notices = n_refused = 0;
	dti_lines_set_notice_handler(l, on_lines_notice, NULL);
	CHECK(!dti_lines_add_search(l, sample));
	/* an earlier load of the sample, from 10 to 100 ns, listed first */
	sample_entry(&t[0], sample, SAMPLE_NAME, SAMPLE_TEXT + 0x100000, 0x1000,
		     DTI_MODULE_GONE, true);
	t[0].loaded_ns = 10;
	t[0].unloaded_ns = 100;
	/* its load now, from 200 ns */
	sample_entry(&t[1], sample, SAMPLE_NAME, SAMPLE_TEXT, 0x1000, DTI_MODULE_LIVE, true);
	t[1].loaded_ns = 200;
	/* gone from where the sample is now, from 110 to 150 ns */
	sample_entry(&t[2], sample, "clash", SAMPLE_TEXT + 0x800, 0x1000, DTI_MODULE_GONE, true);
	t[2].loaded_ns = 110;
	t[2].unloaded_ns = 150;
	/* gone, clashing with nothing: added, no file */
	sample_entry(&t[3], sample, "gone_mod", SAMPLE_TEXT + 0x200000, 0x1000,
		     DTI_MODULE_GONE, false);
	/* free: left out */
	sample_entry(&t[4], sample, "free_mod", SAMPLE_TEXT + 0x300000, 0x1000,
		     DTI_MODULE_FREE, false);
	CHECK(dti_lines_add_modules(l, t, 5) == 4);
	CHECK(n_notices == 0);		/* nothing looked for yet */
	CHECK(!dti_lines_resolve(l, SAMPLE_TEXT + calls[4].koff, 0, &out) &&
	      out.line == marked_line("cold_fn_call"));
	CHECK(n_notices == 0);
	/* without a time, the loads kept apart are not used */
	errno = 0;
	CHECK(dti_lines_resolve(l, SAMPLE_TEXT + 0x100000 + calls[0].koff, 0, &out) == -1 &&
	      errno == ENOENT && strstr(dti_errmsg(), "in no module"));
	/* with one, each record's load */
	CHECK(!dti_lines_resolve_at(l, SAMPLE_TEXT + 0x100000 + calls[0].koff, 50, &out) &&
	      out.line == marked_line("first_call"));
	CHECK(dti_lines_resolve_at(l, SAMPLE_TEXT + 0x100000 + calls[0].koff, 150, &out) == -1 &&
	      strstr(dti_errmsg(), "logged at 150 ns, when no module the table holds was loaded there"));
	CHECK(!dti_lines_resolve_at(l, first, 250, &out) && out.line == marked_line("first_call"));
	CHECK(!dti_lines_resolve_at(l, first, UINT64_MAX, &out));
	/* between the clashing module's unload and the sample's load: nobody's */
	errno = 0;
	CHECK(dti_lines_resolve_at(l, first, 180, &out) == -1 && errno == ENOENT &&
	      strstr(dti_errmsg(), "(lines_sample was from 200 ns)"));
	/* the clashing module's time: its own (no file), never the sample's */
	CHECK(n_notices == 0);
	CHECK(dti_lines_resolve_at(l, SAMPLE_TEXT + 0x810, 120, &out) == -1 &&
	      strstr(dti_errmsg(), "in module clash, for which no file was found"));
	CHECK(n_notices == 1 && strstr(last_notice, "no file found for module clash"));
	CHECK(dti_lines_resolve(l, SAMPLE_TEXT + 0x200010, 0, &out) == -1 &&
	      errno == ENOENT && strstr(dti_errmsg(), "no file was found"));
	CHECK(n_notices == 2 && strstr(last_notice, "no file found for module gone_mod"));
	CHECK(dti_lines_resolve(l, SAMPLE_TEXT + 0x200020, 0, &out) == -1);
	CHECK(n_notices == 2 && n_refused == 0);
	CHECK(dti_lines_resolve(l, SAMPLE_TEXT + 0x300010, 0, &out) == -1 &&
	      strstr(dti_errmsg(), "in no module"));
	dti_lines_free(l);

	/* no build-id in the table: used unchecked, told */
	l = dti_lines_new();
	n_notices = 0;
	dti_lines_set_notice_handler(l, on_lines_notice, NULL);
	CHECK(l && !dti_lines_add_search(l, sample));
	sample_entry(&t[0], sample, SAMPLE_NAME, SAMPLE_TEXT, 0x1000, DTI_MODULE_LIVE, false);
	CHECK(l && dti_lines_add_modules(l, t, 1) == 1);
	CHECK(l && !dti_lines_resolve(l, SAMPLE_TEXT + calls[0].koff, 0, &out) &&
	      out.line == marked_line("first_call"));
	CHECK(n_notices == 1 && strstr(last_notice, "no build-id") &&
	      strstr(last_notice, "used unchecked"));
	dti_lines_free(l);
}

/* A table's module whose files are all other builds: refused, told once */
static void test_table_mismatch(void)
{
	unsigned char id[BUILD_ID_MAX], id_other[BUILD_ID_MAX];
	char hex[2 * BUILD_ID_MAX + 1], hex_other[2 * BUILD_ID_MAX + 1];
	struct dti_lines *l = dti_lines_new();
	struct dti_module t;
	struct dti_line out;
	size_t n = build_id_of(sample, id), i;

	build_id_of(other, id_other);
	for (i = 0; i < n; i++) {
		sprintf(hex + 2 * i, "%02x", id[i]);
		sprintf(hex_other + 2 * i, "%02x", id_other[i]);
	}
	n_notices = n_refused = 0;
	CHECK(l && !dti_lines_add_search(l, other));
	if (!l)
		return;
	dti_lines_set_notice_handler(l, on_lines_notice, NULL);
	sample_entry(&t, sample, SAMPLE_NAME, SAMPLE_TEXT, 0x1000, DTI_MODULE_LIVE, true);
	CHECK(dti_lines_add_modules(l, &t, 1) == 1);
	errno = 0;
	CHECK(dti_lines_resolve(l, SAMPLE_TEXT + 8, 0, &out) == -1 && errno == ENOENT &&
	      strstr(dti_errmsg(), "no file of its build was found"));
	CHECK(n_refused == 1 && n_notices == 1);
	CHECK(strstr(last_notice, other) && strstr(last_notice, hex) &&
	      strstr(last_notice, hex_other));
	CHECK(dti_lines_resolve(l, SAMPLE_TEXT + 16, 0, &out) == -1);
	CHECK(n_refused == 1 && n_notices == 1);
	dti_lines_free(l);
}

/* Everything dti_print() wrote to a memory stream, as a string to free() */
static char *print_all(const unsigned char *buf, size_t len, struct dti_lines *l,
		       enum dti_format fmt)
{
	const void *bufs[] = { buf };
	struct dti_reader *r = dti_open_mem(bufs, &len, 1, 0);
	char *text = NULL;
	size_t size;
	FILE *f = open_memstream(&text, &size);

	if (!r || !f) {
		dti_close(r);
		if (f)
			fclose(f);
		free(text);
		return NULL;
	}
	dti_set_lines(r, l);
	dti_print_records(r, f, fmt, 0);
	dti_close(r);
	fclose(f);
	return text;
}

/* The sample's calls and one address of no module, as records' callers */
static unsigned char *sample_records(const struct call *calls, size_t n_calls,
				     size_t *len)
{
	uint64_t callers[MAX_CALLS + 1];
	size_t i;

	for (i = 0; i < n_calls; i++)
		callers[i] = SAMPLE_TEXT + calls[i].koff;
	callers[n_calls] = SAMPLE_TEXT - 0x1000;
	return records_buffer(n_calls + 1, callers, n_calls + 1, len);
}

/* dti_set_lines(): callers printed with file:line and the inlined chain */
static void test_print_lines(void)
{
	struct call calls[MAX_CALLS];
	struct dti_lines *l;
	struct dti_line ln;
	unsigned char *buf;
	char want[2048], *text;
	size_t n = call_sites(sample, calls, MAX_CALLS), len;
	int ret = -1;

	l = lines_with(sample, SAMPLE_NAME, SAMPLE_TEXT, &ret);
	buf = n == 7 ? sample_records(calls, n, &len) : NULL;
	CHECK(l && ret == 0 && buf);
	if (!l || ret || !buf) {
		dti_lines_free(l);
		free(buf);
		return;
	}
	CHECK(!dti_lines_resolve(l, SAMPLE_TEXT + calls[1].koff, 0, &ln) && ln.n_inlined == 1);
	text = print_all(buf, len, l, DTI_FMT_TS);
	snprintf(want, sizeof(want),
		 "[    0.000000011] cpu0 L3 #1 lines_outer+0x%llx/0x%llx [lines_sample] %s:%u "
		 "(lines_helper inlined at %s:%u): record!!\n",
		 (unsigned long long)ln.offset, (unsigned long long)ln.size, ln.file, ln.line,
		 ln.inlined[0].file, ln.inlined[0].line);
	CHECK(text && strstr(text, want));
	CHECK(!dti_lines_resolve(l, SAMPLE_TEXT + calls[5].koff, 0, &ln));
	snprintf(want, sizeof(want), " #5 lines_split.cold+0x%llx/0x%llx [lines_sample] %s:%u: ",
		 (unsigned long long)ln.offset, (unsigned long long)ln.size, ln.file,
		 marked_line("split_report"));
	CHECK(text && strstr(text, want));
	/* no module there: as without lines */
	CHECK(text && strstr(text, " #7 0xffffffffc09ff000: record!!\n"));
	if (text && !strstr(text, want))
		printf("%s", text);
	free(text);

	text = print_all(buf, len, l, DTI_FMT_JSON);
	CHECK(!dti_lines_resolve(l, SAMPLE_TEXT + calls[1].koff, 0, &ln));
	snprintf(want, sizeof(want),
		 "\"seq\":\"1\",\"flags\":1,\"caller\":\"0x%llx\","
		 "\"symbol\":\"lines_outer+0x%llx/0x%llx [lines_sample]\","
		 "\"function\":\"lines_outer\",\"offset\":%llu,\"size\":%llu,"
		 "\"module\":\"lines_sample\",\"file\":\"%s\",\"line\":%u,\"column\":%u,"
		 "\"inlined\":[{\"function\":\"lines_helper\",\"file\":\"%s\",\"line\":%u,"
		 "\"column\":%u}],\"text\":\"record!!\"}\n",
		 (unsigned long long)(SAMPLE_TEXT + calls[1].koff),
		 (unsigned long long)ln.offset, (unsigned long long)ln.size,
		 (unsigned long long)ln.offset, (unsigned long long)ln.size, ln.file, ln.line,
		 ln.column, ln.inlined[0].file, ln.inlined[0].line, ln.inlined[0].column);
	CHECK(text && strstr(text, want));
	CHECK(text && strstr(text, "\"seq\":\"7\",\"flags\":1,\"caller\":\"0xffffffffc09ff000\",\"text\""));
	free(text);
	/* text format: no caller at all */
	text = print_all(buf, len, l, DTI_FMT_TEXT);
	CHECK(text && !strncmp(text, "record!!\nrecord!!\n", 18));
	free(text);
	free(buf);
	dti_lines_free(l);
}

/*
 * The same callers logged by two modules loaded at one address one
 * after the other: each record printed with its own module's lines (the
 * first had no file: as an address), never the other's
 */
static void test_print_by_time(void)
{
	struct call calls[MAX_CALLS];
	struct dti_module t[2];
	struct dti_lines *l = dti_lines_new();
	unsigned char *buf;
	char *text, want[256];
	size_t n = call_sites(sample, calls, MAX_CALLS), len, i;
	uint64_t callers[8];

	CHECK(l && n == 7 && !dti_lines_add_search(l, sample));
	if (!l || n != 7) {
		dti_lines_free(l);
		return;
	}
	/* records 0..3 at 10..13 ns, 4..7 at 14..17 ns, calls 0, 4, 0, 4, ... */
	for (i = 0; i < 8; i++)
		callers[i] = SAMPLE_TEXT + calls[i % 2 ? 4 : 0].koff;
	buf = records_buffer(8, callers, 8, &len);
	sample_entry(&t[0], sample, "before", SAMPLE_TEXT, 0x1000, DTI_MODULE_GONE, false);
	t[0].loaded_ns = 1;
	t[0].unloaded_ns = 13;
	sample_entry(&t[1], sample, SAMPLE_NAME, SAMPLE_TEXT, 0x1000, DTI_MODULE_LIVE, true);
	t[1].loaded_ns = 14;
	CHECK(buf && dti_lines_add_modules(l, t, 2) == 2);
	text = buf ? print_all(buf, len, l, DTI_FMT_TS) : NULL;
	for (i = 0; text && i < 8; i++) {
		if (i < 4)
			snprintf(want, sizeof(want), "] cpu0 L3 #%zu 0x%llx: record!!\n", i,
				 (unsigned long long)callers[i]);
		else
			snprintf(want, sizeof(want), "] cpu0 L3 #%zu %s+0x", i,
				 i % 2 ? "lines_cold" : "lines_first");
		CHECK(strstr(text, want));
	}
	free(text);
	free(buf);
	dti_lines_free(l);
}

/*
 * A table read again (dti read -f --lines): loads added before are not
 * added twice, their unloads are taken, new loads added; a reader's
 * callers printed before are made again
 */
static void test_table_again(void)
{
	struct call calls[MAX_CALLS];
	struct dti_module t[2];
	struct dti_lines *l = dti_lines_new();
	struct dti_line out;
	unsigned char *buf;
	size_t n = call_sites(sample, calls, MAX_CALLS), len;
	const uint64_t moved = SAMPLE_TEXT + 0x100000;
	uint64_t callers[1];
	const void *bufs[1];
	struct dti_reader *r;
	char *text = NULL;
	FILE *f;

	CHECK(l && n == 7 && !dti_lines_add_search(l, sample));
	if (!l || n != 7) {
		dti_lines_free(l);
		return;
	}
	sample_entry(&t[0], sample, SAMPLE_NAME, SAMPLE_TEXT, 0x1000, DTI_MODULE_LIVE, true);
	t[0].loaded_ns = 5;
	CHECK(dti_lines_add_modules(l, t, 1) == 1);
	CHECK(dti_lines_add_modules(l, t, 1) == 0);	/* the same load */
	/* a reader printing a record of the moved load before the table knows it */
	callers[0] = moved + calls[0].koff;
	buf = records_buffer(1, callers, 1, &len);
	bufs[0] = buf;
	r = buf ? dti_open_mem(bufs, &len, 1, 0) : NULL;
	f = open_memstream(&text, &n);
	CHECK(r && f);
	if (!r || !f)
		goto out;
	dti_set_lines(r, l);
	{
		struct dti_rec rec;

		CHECK(dti_next(r, &rec) == 1);
		rec.ts_ns = 20;
		CHECK(!dti_print(r, f, &rec, DTI_FMT_TS));
		/* unloaded at 10, loaded again elsewhere at 15 */
		t[0].state = DTI_MODULE_GONE;
		t[0].unloaded_ns = 10;
		sample_entry(&t[1], sample, SAMPLE_NAME, moved, 0x1000, DTI_MODULE_LIVE, true);
		t[1].loaded_ns = 15;
		CHECK(dti_lines_add_modules(l, t, 2) == 1);
		CHECK(!dti_print(r, f, &rec, DTI_FMT_TS));
	}
	dti_close(r);	/* writes what it holds */
	r = NULL;
	fclose(f);
	f = NULL;
	CHECK(text && strstr(text, "#0 0xffffffffc0b00008: record!!\n") &&
	      strstr(text, "#0 lines_first+0x"));
	CHECK(!dti_lines_resolve_at(l, SAMPLE_TEXT + calls[0].koff, 7, &out) &&
	      out.line == marked_line("first_call"));
	CHECK(dti_lines_resolve_at(l, SAMPLE_TEXT + calls[0].koff, 12, &out) == -1 &&
	      errno == ENOENT);
	CHECK(!dti_lines_resolve_at(l, moved + calls[0].koff, 16, &out) &&
	      out.line == marked_line("first_call"));
out:
	dti_close(r);
	if (f)
		fclose(f);
	free(text);
	free(buf);
	dti_lines_free(l);
}

/* ---- the dti command ---- */

/* Run @cmd (sh) with stdout and stderr into files; its exit status */
static int run_cmd(const char *cmd, char **out, char **err)
{
	char line[4096], o[600], e[600];
	int rc;

	snprintf(o, sizeof(o), "%s/out", tmpdir);
	snprintf(e, sizeof(e), "%s/err", tmpdir);
	snprintf(line, sizeof(line), "%s > '%s' 2> '%s'", cmd, o, e);
	rc = system(line);
	*out = slurp(o);
	*err = slurp(e);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/*
 * dti decode --lines of a snapshot directory whose modules file places
 * the sample, with -d the sample, its directory, another build
 */
static void test_cli_decode_lines(void)
{
	struct call calls[MAX_CALLS];
	char dir[512], path[600], cmd[2048], want[1024], *out, *err;
	unsigned char *buf, id[BUILD_ID_MAX], id_other[BUILD_ID_MAX];
	size_t n = call_sites(sample, calls, MAX_CALLS), len, k, i;
	FILE *f;
	int rc;

	buf = n == 7 ? sample_records(calls, n, &len) : NULL;
	k = build_id_of(sample, id);
	build_id_of(other, id_other);
	CHECK(buf && k == 20);
	if (!buf || k != 20) {
		free(buf);
		return;
	}
	snprintf(dir, sizeof(dir), "%s/snap", tmpdir);
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/trace0", dir);
	f = fopen(path, "w");
	CHECK(f && fwrite(buf, 1, len, f) == len);
	if (f)
		fclose(f);
	free(buf);
	snprintf(path, sizeof(path), "%s/modules", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "dti 0xffffffffc0000000 0x8000 - live 1 0\n" SAMPLE_NAME " 0x%llx 0x1000 ",
		SAMPLE_TEXT);
	for (i = 0; i < k; i++)
		fprintf(f, "%02x", id[i]);
	fprintf(f, " live 2 0\n");
	fclose(f);

	/* the sample given: file:line of every call, the inlined chain */
	snprintf(cmd, sizeof(cmd), "%s/dti decode -F ts -d %s %s", build, sample, dir);
	rc = run_cmd(cmd, &out, &err);
	CHECK(rc == 0 && err && !err[0]);
	snprintf(want, sizeof(want), "lines_sample.c:%u: record!!\n", marked_line("first_call"));
	CHECK(out && strstr(out, want));
	snprintf(want, sizeof(want), "lines_sample.c:%u (lines_helper inlined at ",
		 marked_line("helper_call"));
	CHECK(out && strstr(out, want));
	snprintf(want, sizeof(want), "lines_sample.c:%u: record!!\n",
		 marked_line("split_cold_call"));
	CHECK(out && strstr(out, " lines_split.cold+0x") && strstr(out, want));
	CHECK(out && strstr(out, " #7 0xffffffffc09ff000: record!!\n"));
	if (rc || !out || !strstr(out, want))
		printf("  %s\n%s%s", cmd, out ? out : "", err ? err : "");
	free(out);
	free(err);

	/* the files of the directory given one by one, the sample's directory searched */
	snprintf(cmd, sizeof(cmd), "%s/dti decode -F json --debuginfo %s/lines %s/*", build,
		 build, dir);
	rc = run_cmd(cmd, &out, &err);
	snprintf(want, sizeof(want), "\"function\":\"lines_first\",\"offset\":%llu,",
		 (unsigned long long)calls[0].off);
	CHECK(rc == 0 && err && !err[0] && out && strstr(out, want));
	free(out);
	free(err);

	/* another build: refused, both build-ids said, callers as addresses, status 1 */
	snprintf(cmd, sizeof(cmd), "%s/dti decode -F ts -d %s %s", build, other, dir);
	rc = run_cmd(cmd, &out, &err);
	snprintf(want, sizeof(want), "dti: %s: build-id ", other);
	for (i = 0; i < k; i++)
		sprintf(want + strlen(want), "%02x", id_other[i]);
	strcat(want, " is not that of module lines_sample as loaded (");
	for (i = 0; i < k; i++)
		sprintf(want + strlen(want), "%02x", id[i]);
	strcat(want, "): another build, not used\n");
	CHECK(rc == 1 && err && !strcmp(err, want));
	if (err && strcmp(err, want))
		printf("  got:  %s  want: %s", err, want);
	CHECK(out && strstr(out, "#0 0xffffffffc0a0") && !strstr(out, "lines_sample.c"));
	free(out);
	free(err);

	/* a per-CPU file alone: no table, said once, callers as addresses */
	snprintf(cmd, sizeof(cmd), "%s/dti decode -F ts --lines %s/trace0", build, dir);
	rc = run_cmd(cmd, &out, &err);
	CHECK(rc == 0 && err && !strcmp(err, "dti: warning: callers not resolved to source lines: "
			"no module table among the files (a snapshot's DIR/modules, or --modules FILE)\n"));
	CHECK(out && strstr(out, "#0 0xffffffffc0a0"));
	free(out);
	free(err);
	/* ... unless --modules names the table */
	snprintf(cmd, sizeof(cmd), "%s/dti decode -F ts -d %s --modules %s/modules %s/trace0",
		 build, sample, dir, dir);
	rc = run_cmd(cmd, &out, &err);
	CHECK(rc == 0 && err && !err[0] && out && strstr(out, "(lines_helper inlined at "));
	free(out);
	free(err);
	/* a table given that does not parse: an error naming its line, nothing printed */
	snprintf(cmd, sizeof(cmd), "printf 'x 0x10\\n' > %s/bad; %s/dti decode --lines --modules %s/bad %s",
		 tmpdir, build, tmpdir, dir);
	rc = run_cmd(cmd, &out, &err);
	CHECK(rc == 1 && err && strstr(err, "dti: --modules: ") &&
	      strstr(err, "/bad:1: too few fields") && out && !out[0]);
	free(out);
	free(err);
	/* --kernel-release is for --lines */
	snprintf(cmd, sizeof(cmd), "%s/dti decode --kernel-release 6.1.0 %s", build, dir);
	rc = run_cmd(cmd, &out, &err);
	CHECK(rc == 129 && err && strstr(err, "--kernel-release is for --lines"));
	free(out);
	free(err);
}

static const struct unit_test tests[] = {
	{ "lines: calls and inlined calls as eu-addr2line -f -i", test_sample_lines },
	{ "lines: a file of another build-id is refused", test_build_id_mismatch },
	{ "lines: no DWARF, no file: told once", test_no_debuginfo },
	{ "lines: a real module (testsuite/modules/dti_test.ko)", test_real_module },
	{ "module tables: the text format, bad lines", test_modules_parse },
	{ "module tables: live and gone entries, files looked for late", test_add_modules },
	{ "module tables: a module of another build refused", test_table_mismatch },
	{ "callers printed with source lines: ts, json, text", test_print_lines },
	{ "callers printed by the module loaded when they logged", test_print_by_time },
	{ "a module table read again", test_table_again },
	{ "dti decode --lines -d of a snapshot directory", test_cli_decode_lines },
};

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s BUILD_DIR\n", argv[0]);
		return 2;
	}
	build = argv[1];
	snprintf(sample, sizeof(sample), "%s/lines/" SAMPLE_NAME ".ko", build);
	snprintf(other, sizeof(other), "%s/lines/other/" SAMPLE_NAME ".ko", build);
	snprintf(stripped, sizeof(stripped), "%s/lines/stripped/" SAMPLE_NAME ".ko", build);
	snprintf(real_ko, sizeof(real_ko), "../testsuite/modules/dti_test.ko");
	if (unit_setup("lines"))
		return 2;
	unit_run(tests, sizeof(tests) / sizeof(tests[0]));
	return unit_finish();
}
