// SPDX-License-Identifier: LGPL-2.1
/*
 * libdti: kernel symbols from /proc/kallsyms, printed like the kernel's
 * %pS: "name+0xoff/0xsize [module]".  A symbol's size is the distance to
 * the next symbol's address, as kallsyms computes it.
 *
 * Why not libtraceevent's tep_parse_kallsyms() and tep_find_function_info()
 * (Debian's libtraceevent-dev 1.7.1, looked at for this):
 *  - %pS needs the module, and tep gives no way to read it back;
 *  - tep's size runs to the next symbol of any module, so the last
 *    function of a module or of the kernel gets the gap to the next
 *    module's text (0xf00, 0x3f000e80 on a 5-line file), and the very last
 *    symbol is not found at all; here the next symbol must be in the same
 *    module, as in the kernel;
 *  - tep_parse_kallsyms() wants the whole file in one string and copies
 *    it (/proc/kallsyms is ~10 MB), stops at the first line it does not
 *    parse, reports through tep_warning() on stderr (libdti never prints)
 *    and does not keep aliases in file order (qsort);
 *  - the static dti that the guest tests run would pull in 240 KB and
 *    dlopen() for plugins, which static glibc links only with a warning.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdti-local.h"

struct dti_ksym {
	uint64_t addr;
	size_t idx;		/* position in the file: aliases keep their order */
	char *name;
	char *mod;		/* NULL for the kernel itself */
};

struct dti_ksyms {
	struct dti_ksym *sym;
	size_t n;
};

static int dti_cmp_ksym(const void *a, const void *b)
{
	const struct dti_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

void dti_ksyms_free(struct dti_ksyms *ks)
{
	size_t i;

	if (!ks)
		return;
	for (i = 0; i < ks->n; i++) {
		free(ks->sym[i].name);
		free(ks->sym[i].mod);
	}
	free(ks->sym);
	free(ks);
}

/*
 * Lines that are no symbol ("ADDR TYPE NAME [MODULE]") are skipped, of any
 * length.  A file without one symbol line is no kallsyms file (EINVAL); a
 * file whose addresses are all 0 was read without the right to see them
 * (EACCES).
 */
struct dti_ksyms *dti_ksyms_load(const char *path)
{
	char name[512], mod[256], type, *line = NULL;
	unsigned long long addr;
	struct dti_ksyms *ks;
	struct dti_ksym *ns;
	size_t cap = 0, line_cap = 0;
	bool nonzero = false;
	FILE *f;
	int n;

	path = path ? path : "/proc/kallsyms";
	f = fopen(path, "re");
	if (!f)
		return dti_fail_null(errno, "%s: %s", path, strerror(errno));
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		goto nomem;
	while (getline(&line, &line_cap, f) >= 0) {
		mod[0] = '\0';
		n = sscanf(line, "%llx %c %511s [%255[^]]]", &addr, &type, name, mod);
		if (n < 3)
			continue;
		if (type == 'a' || type == 'A' || type == 'U')
			continue;
		if (addr)
			nonzero = true;
		if (ks->n == cap) {
			cap = cap ? cap * 2 : 4096;
			ns = realloc(ks->sym, cap * sizeof(*ns));
			if (!ns)
				goto nomem;
			ks->sym = ns;
		}
		ks->sym[ks->n].addr = addr;
		ks->sym[ks->n].idx = ks->n;
		ks->sym[ks->n].name = strdup(name);
		ks->sym[ks->n].mod = n == 4 ? strdup(mod) : NULL;
		if (!ks->sym[ks->n].name)
			goto nomem;
		ks->n++;
	}
	free(line);
	fclose(f);
	if (!ks->n) {
		dti_ksyms_free(ks);
		return dti_fail_null(EINVAL, "%s: no symbols in it (not a copy of /proc/kallsyms?)",
				     path);
	}
	if (!nonzero) {
		dti_ksyms_free(ks);
		return dti_fail_null(EACCES, "%s: symbol addresses are hidden (kptr_restrict); run as root",
				     path);
	}
	qsort(ks->sym, ks->n, sizeof(*ks->sym), dti_cmp_ksym);
	return ks;
nomem:
	free(line);
	fclose(f);
	dti_ksyms_free(ks);
	return dti_fail_null(ENOMEM, "out of memory");
}

/* The largest BPF program image a caller is found in, for the last one listed */
#define DTI_KSYMS_BPF_MAX	(1u << 20)

int dti_ksyms_format(const struct dti_ksyms *ks, uint64_t addr, char *buf,
		     size_t size)
{
	const struct dti_ksym *s, *next = NULL;
	size_t lo = 0, hi = ks ? ks->n : 0, mid, i;
	int n;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (ks->sym[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || !addr) {
		snprintf(buf, size, "0x%llx", (unsigned long long)addr);
		return dti_fail(ENOENT, "no symbol for 0x%llx", (unsigned long long)addr);
	}
	s = &ks->sym[lo - 1];
	/* Prefer the first symbol at this address (aliases follow it). */
	while (s > ks->sym && s[-1].addr == s->addr)
		s--;
	for (i = lo; i < ks->n; i++) {
		if (ks->sym[i].addr > s->addr &&
		    (!s->mod) == (!ks->sym[i].mod) &&
		    (!s->mod || !strcmp(s->mod, ks->sym[i].mod))) {
			next = &ks->sym[i];
			break;
		}
	}
	/*
	 * A BPF program's JIT image (kallsyms' [bpf] entries, with no size):
	 * as the kernel's %pS prints it, without its module, and without a
	 * size, which kallsyms does not give; at most DTI_KSYMS_BPF_MAX in.
	 */
	if (s->mod && !strcmp(s->mod, "bpf") &&
	    addr - s->addr < (next ? next->addr - s->addr : DTI_KSYMS_BPF_MAX)) {
		n = snprintf(buf, size, "%s+0x%llx", s->name,
			     (unsigned long long)(addr - s->addr));
		if (n < 0 || (size_t)n >= size)
			return dti_fail(ENOSPC, "symbol name does not fit in %zu bytes", size);
		return 0;
	}
	if (!next) {
		snprintf(buf, size, "0x%llx", (unsigned long long)addr);
		return dti_fail(ENOENT, "no symbol for 0x%llx", (unsigned long long)addr);
	}
	n = snprintf(buf, size, "%s+0x%llx/0x%llx%s%s%s", s->name,
		     (unsigned long long)(addr - s->addr),
		     (unsigned long long)(next->addr - s->addr),
		     s->mod ? " [" : "", s->mod ? s->mod : "", s->mod ? "]" : "");
	if (n < 0 || (size_t)n >= size)
		return dti_fail(ENOSPC, "symbol name does not fit in %zu bytes", size);
	return 0;
}
