// SPDX-License-Identifier: LGPL-2.1
/*
 * libdti: dti.ko's module table as text, the way the debugfs file
 * DTI_MODULES_FILE, a snapshot's copy of it ("modules") and the panic
 * console's "module" lines show it: one entry a line,
 *
 *	NAME 0xTEXT 0xTEXT_SIZE BUILD_ID STATE LOADED_NS UNLOADED_NS
 *
 * BUILD_ID in hex or "-", STATE "live" or "gone", the times in decimal.
 * Every field is checked; the first line that does not hold together
 * fails the whole table with its number and what is wrong, as a table
 * read half would map callers to the wrong modules.  Empty lines are
 * skipped.  dti_lines_add_modules() (lines.c) uses what is parsed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdti-local.h"

/* Fields of a line */
#define DTI_MOD_FIELDS		7
/* Most entries a table is read with: dti.ko keeps DTI_MODULES_MAX */
#define DTI_MOD_ENTRIES_MAX	4096u

static int dti_hexdigit(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* "0x" and 1..16 hex digits into *@v; false if @s is not that */
static bool dti_mod_hex(const char *s, uint64_t *v)
{
	size_t i;
	int d;

	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || !s[2] || strlen(s + 2) > 16)
		return false;
	for (*v = 0, i = 2; s[i]; i++) {
		d = dti_hexdigit((unsigned char)s[i]);
		if (d < 0)
			return false;
		*v = *v << 4 | d;
	}
	return true;
}

/* 1..20 decimal digits, no more than UINT64_MAX, into *@v */
static bool dti_mod_dec(const char *s, uint64_t *v)
{
	size_t i;

	if (!s[0] || strlen(s) > 20)
		return false;
	for (*v = 0, i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9' || *v > (UINT64_MAX - (s[i] - '0')) / 10)
			return false;
		*v = *v * 10 + (s[i] - '0');
	}
	return true;
}

/* A build-id in hex, or "-", into @e; false if @s is neither */
static bool dti_mod_build_id(const char *s, struct dti_module *e)
{
	size_t n = strlen(s), i;

	e->build_id_len = 0;
	if (!strcmp(s, "-"))
		return true;
	if (!n || n % 2 || n > 2 * DTI_BUILD_ID_SIZE)
		return false;
	for (i = 0; i < n; i += 2) {
		int hi = dti_hexdigit((unsigned char)s[i]);
		int lo = dti_hexdigit((unsigned char)s[i + 1]);

		if (hi < 0 || lo < 0)
			return false;
		e->build_id[i / 2] = hi << 4 | lo;
	}
	e->build_id_len = n / 2;
	return true;
}

/*
 * Line @line (NUL-terminated, no newline) into @e.  NULL, or what is
 * wrong with it.
 */
static const char *dti_mod_line(char *line, struct dti_module *e)
{
	char *field[DTI_MOD_FIELDS + 1], *save = NULL, *tok;
	uint64_t v, t;
	int n = 0;

	for (tok = strtok_r(line, " \t\r", &save); tok && n <= DTI_MOD_FIELDS;
	     tok = strtok_r(NULL, " \t\r", &save))
		field[n++] = tok;
	if (n != DTI_MOD_FIELDS)
		return n < DTI_MOD_FIELDS ? "too few fields (NAME 0xTEXT 0xTEXT_SIZE BUILD_ID STATE LOADED_NS UNLOADED_NS)" :
					    "too many fields (NAME 0xTEXT 0xTEXT_SIZE BUILD_ID STATE LOADED_NS UNLOADED_NS)";
	memset(e, 0, sizeof(*e));
	if (strlen(field[0]) > DTI_MODULE_NAME_MAX)
		return "module name longer than a module's can be";
	strcpy(e->name, field[0]);
	if (!dti_mod_hex(field[1], &v) || !v)
		return "the text address is not a non-zero hexadecimal 0x... number";
	e->text = v;
	if (!dti_mod_hex(field[2], &v) || v > UINT32_MAX)
		return "the text size is not a hexadecimal 0x... number of 32 bits";
	e->text_size = v;
	if (e->text + e->text_size < e->text)
		return "the text runs past the end of the address space";
	if (!dti_mod_build_id(field[3], e))
		return "the build-id is neither '-' nor hexadecimal bytes (at most 20)";
	if (!strcmp(field[4], "live"))
		e->state = DTI_MODULE_LIVE;
	else if (!strcmp(field[4], "gone"))
		e->state = DTI_MODULE_GONE;
	else
		return "the state is neither 'live' nor 'gone'";
	if (!dti_mod_dec(field[5], &v) || !dti_mod_dec(field[6], &t))
		return "a time is not a decimal number of 64 bits";
	e->loaded_ns = v;
	e->unloaded_ns = t;
	return NULL;
}

int dti_modules_parse(const char *text, size_t len, const char *source,
		      struct dti_module **mods)
{
	struct dti_module *v = NULL, *nv;
	const char *p = text, *end = text + len, *nl, *why;
	unsigned long lineno = 0;
	size_t n = 0, cap = 0, k;
	char *line;

	*mods = NULL;
	if (!source)
		source = "module table";
	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', end - p);
		if (!nl)
			nl = end;
		lineno++;
		k = nl - p;
		if (memchr(p, '\0', k)) {
			free(v);
			return dti_fail(EINVAL, "%s:%lu: a NUL byte in the line: not a module table",
					source, lineno);
		}
		if (!k || strspn(p, " \t\r") >= k)
			continue;
		if (n == DTI_MOD_ENTRIES_MAX) {
			free(v);
			return dti_fail(EINVAL, "%s:%lu: more than %u entries: not a module table",
					source, lineno, DTI_MOD_ENTRIES_MAX);
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				return dti_fail(ENOMEM, "out of memory");
			}
			v = nv;
		}
		line = strndup(p, k);
		if (!line) {
			free(v);
			return dti_fail(ENOMEM, "out of memory");
		}
		why = dti_mod_line(line, &v[n]);
		free(line);
		if (why) {
			free(v);
			return dti_fail(EINVAL, "%s:%lu: %s: \"%.*s\"", source, lineno, why,
					(int)(k > 120 ? 120 : k), p);
		}
		n++;
	}
	*mods = v;
	return (int)n;
}

int dti_modules_load(const char *path, struct dti_module **mods)
{
	char *text = dti_read_file(path);
	int n;

	*mods = NULL;
	if (!text)
		return -1;
	n = dti_modules_parse(text, strlen(text), path, mods);
	free(text);
	return n;
}

char *dti_modules_text(const struct dti_module *mods, size_t n, size_t *len)
{
	char *text = NULL, hex[2 * DTI_BUILD_ID_SIZE + 1];
	size_t i, k, size;
	FILE *f = open_memstream(&text, len ? len : &size);

	if (!f)
		return dti_fail_null(ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		const struct dti_module *e = &mods[i];

		if (e->state != DTI_MODULE_LIVE && e->state != DTI_MODULE_GONE)
			continue;
		strcpy(hex, "-");
		for (k = 0; k < e->build_id_len && k < DTI_BUILD_ID_SIZE; k++)
			sprintf(hex + 2 * k, "%02x", e->build_id[k]);
		fprintf(f, "%.*s 0x%llx 0x%x %s %s %llu %llu\n", (int)sizeof(e->name), e->name,
			(unsigned long long)e->text, e->text_size, hex,
			e->state == DTI_MODULE_LIVE ? "live" : "gone",
			(unsigned long long)e->loaded_ns, (unsigned long long)e->unloaded_ns);
	}
	if (fclose(f) || !text) {
		free(text);
		return dti_fail_null(ENOMEM, "out of memory");
	}
	return text;
}
