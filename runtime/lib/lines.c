// SPDX-License-Identifier: LGPL-2.1
/*
 * libdti: callers as function and source line, through elfutils' libdwfl.
 *
 * The caller runs under each module as loaded in the traced kernel (name,
 * build-id, where its .text was loaded) and a file is looked for that has
 * the same build-id: a .ko or a directory given, then the ecosystem's
 * places (/usr/lib/debug/.build-id/xx/yyyy.debug, /usr/lib/debug/lib/
 * modules/KVER, /lib/modules/KVER).  A file of the module's name with
 * another build-id is another build: its lines would be wrong, so it is
 * refused, never used.
 *
 * Each module gets a Dwfl of its own.  A kernel module is ET_REL: libdwfl
 * lays its sections out one after another from the base it is reported
 * at (dwfl_report_elf()), and applies the relocations of its DWARF to
 * that layout.  The kernel lays out the module's core code its own way
 * (layout_sections() of kernel/module/main.c): every executable section
 * but the .init ones, in section-header order, each at the next multiple
 * of its alignment, from the address the module table gives, so .text
 * comes first and .text.unlikely (functions' .cold parts), .exit.text
 * and the like follow.  That layout is computed from the file
 * (dti_core_layout()), and an address A of the loaded module is mapped
 * to the section holding A - text_start, at its place in the Dwfl.
 * vmlinux (ET_EXEC) is mapped from its linked .text to where it was
 * loaded (KASLR).  One Dwfl per module also means a refused file is
 * simply dropped with its Dwfl, and that two modules never overlap in
 * one.
 *
 * No debuginfod: a reader of traces does not go to the network, and the
 * static dti must not dlopen() its client; the separate debuginfo is
 * looked up by build-id in the directories known (dti_find_debuginfo()).
 *
 * dti.ko's module table (dti_lines_add_modules()) says which modules
 * were loaded where, and when: the live ones, and those gone, with their
 * build-ids.  A module's file is looked for only at its first caller, so
 * that a table of many modules costs nothing for those that did not log.
 * The loads that clash with another's name or range (a module loaded
 * again, another loaded where a gone one was) are kept apart, in @old,
 * and dti_lines_resolve_at() picks among the loads at an address by the
 * record's time: a record is never given another module's lines.
 *
 * Resolving is cached by address (and the module looked in) in an
 * open-addressing hash table: a trace has few distinct callers and many
 * records.
 */
#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>

#include "libdti-local.h"

/* Where the ecosystem keeps debuginfo and modules (as perf and stap look) */
#define DTI_DEBUG_ROOT		"/usr/lib/debug"
#define DTI_MODULES_ROOT	"/lib/modules"
#define DTI_BUILD_ID_DIR	".build-id"
#define DTI_VMLINUX		"vmlinux"
#define DTI_TEXT		".text"
/*
 * Where an ET_REL module's sections are laid out in its Dwfl.  Any
 * address would do, as each module has a Dwfl of its own; not 0, which
 * libdwfl treats as "not laid out" (dwfl_offline_section_address()).
 */
#define DTI_LINES_LAYOUT_BASE	0x10000ull
/* Build-ids are 20 bytes (SHA-1) in practice; longer ones are refused. */
#define DTI_BUILD_ID_MAX	64
/* The cache starts with this many slots and doubles at half full. */
#define DTI_LINES_CACHE_INIT	1024u
/* So does the table of file names joined to their directory. */
#define DTI_LINES_PATHS_INIT	256u

/* Init sections, which the kernel frees after the module's init: not mapped */
#define DTI_INIT_PREFIX		".init"

/*
 * An executable section of a module's core code: @off from the start of
 * its code in the kernel, @size bytes, at @dwfl in the module's Dwfl
 */
struct dti_lines_sec {
	uint64_t off, size, dwfl;
};

/* A module as loaded in the traced kernel, and the file that describes it */
struct dti_lines_mod {
	char *name;
	uint64_t start, end;		/* where its core code was loaded */
	Dwfl *dwfl;			/* NULL: no file was found */
	Dwfl_Module *mod;
	struct dti_lines_sec *secs;	/* its executable sections, by @off */
	size_t n_secs;
	char *path;			/* the file used */
	bool dwarf;			/* it has (or found) DWARF */
	/*
	 * From a module table (dti_lines_add_modules()): its file is looked
	 * for when an address in it is first resolved, with its build-id
	 */
	bool pending;
	unsigned char id[DTI_BUILD_ID_SIZE];
	size_t id_len;
	/*
	 * When it was loaded (a table's times; 0 and UINT64_MAX if not
	 * known), and a number of its own for the cache (from 1)
	 */
	uint64_t from_ns, to_ns;
	unsigned int serial;
};

/* Module files of a directory tree, by module name ('-' read as '_') */
struct dti_lines_file {
	char *name, *path;
};

struct dti_lines_dir {
	char *path;
	bool indexed;
	struct dti_lines_file *files;
	size_t n;
};

/*
 * A resolved address (or the failure), keyed by its address and a tag:
 * whether it is exact (bit 0) and the serial of the module it was looked
 * up in (0: none), which a time may choose among loads at one address
 */
struct dti_lines_entry {
	struct dti_ckey key;		/* first: the cache's */
	int err;			/* 0, or the errno of the failure */
	char *errmsg;
	struct dti_line line;
};

struct dti_lines {
	char **files;			/* .ko files given, in order */
	size_t n_files;
	struct dti_lines_dir *dirs;	/* directories given, then the defaults */
	size_t n_dirs, n_user_dirs;	/* all; those given, first */
	bool defaults_added;
	char kver[sizeof(((struct utsname *)0)->release)];
	struct dti_lines_mod *mods;	/* sorted by start */
	size_t n_mods;
	/*
	 * Loads of a table that clash with those in @mods (a module gone
	 * where a later one was loaded, an earlier load of a module): used
	 * for records logged while they were loaded
	 */
	struct dti_lines_mod *old;
	size_t n_old;
	unsigned int serial;		/* the last given to a module */
	unsigned long gen;		/* counts the changes of modules */
	struct dti_cache cache;		/* of struct dti_lines_entry */
	char **paths;			/* "comp_dir/file" strings, a hash set */
	size_t paths_cap, paths_used;
	dti_notice_fn notice;
	void *notice_arg;
};

/* ---- module names and build-ids ---- */

/* The module name a file holds: its base name to the first '.', '-' as '_' */
static char *dti_mod_name_of(const char *path)
{
	const char *base = strrchr(path, '/');
	char *name, *p;

	name = strdup(base ? base + 1 : path);
	if (!name)
		return NULL;
	p = strchr(name, '.');
	if (p)
		*p = '\0';
	for (p = name; *p; p++)
		if (*p == '-')
			*p = '_';
	return name;
}

/* Module names compare as the kernel's do: '-' and '_' are the same. */
static bool dti_mod_name_eq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		if (*a != *b && !((*a == '-' || *a == '_') && (*b == '-' || *b == '_')))
			return false;
	}
	return *a == *b;
}

static void dti_hex(const unsigned char *id, size_t len, char *buf)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		buf[2 * i] = digits[id[i] >> 4];
		buf[2 * i + 1] = digits[id[i] & 0xf];
	}
	buf[2 * len] = '\0';
}

/* The build-id of an open ELF file: its length (0 if it has none), or -1 */
static ssize_t dti_elf_build_id(int fd, const void **bits, Elf **elfp)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	ssize_t n;

	*elfp = elf;
	if (!elf)
		return -1;
	n = dwelf_elf_gnu_build_id(elf, bits);
	return n < 0 ? 0 : n;
}

/* ---- directories ---- */

static int dti_cmp_file(const void *a, const void *b)
{
	const struct dti_lines_file *x = a, *y = b;

	return strcmp(x->name, y->name);
}

static bool dti_is_module_file(const char *name)
{
	static const char *const ext[] = { ".ko", ".ko.xz", ".ko.gz", ".ko.zst", ".ko.debug" };
	size_t n = strlen(name), i, k;

	for (i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		k = strlen(ext[i]);
		if (n > k && !strcmp(name + n - k, ext[i]))
			return true;
	}
	return false;
}

/*
 * Index the module files under @d once, when a module is first looked
 * for there: a tree such as /lib/modules/KVER holds thousands.  Symbolic
 * links are not followed (/lib/modules/KVER/build leads to the kernel's
 * whole source).  A directory that cannot be read has no files.
 */
static int dti_dir_index(struct dti_lines_dir *d)
{
	char *const roots[] = { d->path, NULL };
	struct dti_lines_file *nf;
	size_t cap = 0;
	FTSENT *e;
	FTS *fts;

	if (d->indexed)
		return 0;
	d->indexed = true;
	fts = fts_open(roots, FTS_PHYSICAL | FTS_NOCHDIR, NULL);
	if (!fts)
		return 0;
	while ((e = fts_read(fts))) {
		if (e->fts_info != FTS_F || !dti_is_module_file(e->fts_name))
			continue;
		if (d->n == cap) {
			cap = cap ? cap * 2 : 64;
			nf = realloc(d->files, cap * sizeof(*nf));
			if (!nf)
				goto nomem;
			d->files = nf;
		}
		d->files[d->n].name = dti_mod_name_of(e->fts_path);
		d->files[d->n].path = strdup(e->fts_path);
		if (!d->files[d->n].name || !d->files[d->n].path) {
			free(d->files[d->n].name);
			free(d->files[d->n].path);
			goto nomem;
		}
		d->n++;
	}
	fts_close(fts);
	/* stable for equal names: fts order, then the first wins */
	if (d->n)
		qsort(d->files, d->n, sizeof(*d->files), dti_cmp_file);
	return 0;
nomem:
	fts_close(fts);
	return dti_fail(ENOMEM, "out of memory");
}

/* Insert directory @path at @pos of l->dirs: those given go before the defaults. */
static int dti_dir_add(struct dti_lines *l, size_t pos, const char *path)
{
	struct dti_lines_dir *nd;
	char *copy = strdup(path);

	nd = copy ? realloc(l->dirs, (l->n_dirs + 1) * sizeof(*nd)) : NULL;
	if (!nd) {
		free(copy);
		return dti_fail(ENOMEM, "out of memory");
	}
	l->dirs = nd;
	memmove(&nd[pos + 1], &nd[pos], (l->n_dirs - pos) * sizeof(*nd));
	memset(&nd[pos], 0, sizeof(*nd));
	nd[pos].path = copy;
	l->n_dirs++;
	return 0;
}

/*
 * The defaults go after the directories given, once the first module
 * is added (dti_lines_set_kernel() may come before): the debuginfo
 * packages' tree (linux-image-KVER-dbg), then the modules installed.
 */
static int dti_add_defaults(struct dti_lines *l)
{
	char path[PATH_MAX];

	if (l->defaults_added)
		return 0;
	l->defaults_added = true;
	snprintf(path, sizeof(path), DTI_DEBUG_ROOT DTI_MODULES_ROOT "/%s", l->kver);
	if (dti_dir_add(l, l->n_dirs, path))
		return -1;
	snprintf(path, sizeof(path), DTI_MODULES_ROOT "/%s", l->kver);
	return dti_dir_add(l, l->n_dirs, path);
}

/* ---- finding the files ---- */

/* The candidates for a module, in the order they are tried */
struct dti_cands {
	char **path;
	size_t n, cap;
};

static int dti_cand_add(struct dti_cands *c, const char *path)
{
	char **np;
	size_t i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->path[i], path))
			return 0;
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 8;
		np = realloc(c->path, c->cap * sizeof(*np));
		if (!np)
			return dti_fail(ENOMEM, "out of memory");
		c->path = np;
	}
	c->path[c->n] = strdup(path);
	if (!c->path[c->n])
		return dti_fail(ENOMEM, "out of memory");
	c->n++;
	return 0;
}

static void dti_cands_free(struct dti_cands *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->path[i]);
	free(c->path);
}

/* Add @path if it is a regular file (following links: .build-id/ holds links). */
static int dti_cand_try(struct dti_cands *c, const char *path)
{
	struct stat st;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	return dti_cand_add(c, path);
}

/* DIR/.build-id/xx/yyyy.debug, as gdb, perf and stap look it up */
static void dti_build_id_path(char *buf, size_t size, const char *dir,
			      const char *hex)
{
	snprintf(buf, size, "%s/" DTI_BUILD_ID_DIR "/%.2s/%s.debug", dir, hex, hex + 2);
}

/*
 * Every file that may describe module @name, in order: the .ko files
 * given, the build-id links under the directories given and under
 * /usr/lib/debug, then the module's files in the directory trees (those
 * given, the debuginfo tree, /lib/modules/KVER); for vmlinux its usual
 * places instead of module files.
 */
static int dti_candidates(struct dti_lines *l, const char *name,
			  const char *hex, bool trees, struct dti_cands *c)
{
	bool vmlinux = !strcmp(name, DTI_VMLINUX);
	struct dti_lines_dir *d;
	struct dti_lines_file key, *f;
	char path[PATH_MAX];
	size_t i;

	if (trees)
		goto trees;
	for (i = 0; i < l->n_files; i++) {
		char *base = dti_mod_name_of(l->files[i]);

		if (!base)
			return dti_fail(ENOMEM, "out of memory");
		if (dti_mod_name_eq(base, name) && dti_cand_add(c, l->files[i])) {
			free(base);
			return -1;
		}
		free(base);
	}
	if (hex[0]) {
		for (i = 0; i < l->n_user_dirs; i++) {
			dti_build_id_path(path, sizeof(path), l->dirs[i].path, hex);
			if (dti_cand_try(c, path))
				return -1;
		}
		dti_build_id_path(path, sizeof(path), DTI_DEBUG_ROOT, hex);
		if (dti_cand_try(c, path))
			return -1;
	}
	if (vmlinux) {
		for (i = 0; i < l->n_user_dirs; i++) {
			snprintf(path, sizeof(path), "%s/" DTI_VMLINUX, l->dirs[i].path);
			if (dti_cand_try(c, path))
				return -1;
			snprintf(path, sizeof(path), "%s/" DTI_VMLINUX "-%s", l->dirs[i].path, l->kver);
			if (dti_cand_try(c, path))
				return -1;
		}
		snprintf(path, sizeof(path), DTI_DEBUG_ROOT "/boot/" DTI_VMLINUX "-%s", l->kver);
		if (dti_cand_try(c, path))
			return -1;
		snprintf(path, sizeof(path), DTI_DEBUG_ROOT DTI_MODULES_ROOT "/%s/" DTI_VMLINUX,
			 l->kver);
		if (dti_cand_try(c, path))
			return -1;
		snprintf(path, sizeof(path), DTI_MODULES_ROOT "/%s/build/" DTI_VMLINUX, l->kver);
		return dti_cand_try(c, path);
	}
	return 0;
trees:
	if (vmlinux)
		return 0;
	key.name = (char *)name;
	for (i = 0; i < l->n_dirs; i++) {
		d = &l->dirs[i];
		if (dti_dir_index(d))
			return -1;
		f = d->n ? bsearch(&key, d->files, d->n, sizeof(*f), dti_cmp_file) : NULL;
		if (!f)
			continue;
		while (f > d->files && !strcmp(f[-1].name, name))
			f--;
		for (; f < d->files + d->n && !strcmp(f->name, name); f++)
			if (dti_cand_add(c, f->path))
				return -1;
	}
	return 0;
}

/* ---- libdwfl ---- */

/*
 * The separate debuginfo of a file without DWARF (a stripped .ko), by
 * its build-id under the directories given and /usr/lib/debug; a file
 * found there is used only if its build-id is the module's.  Returns an
 * open fd (libdwfl closes it) or -1.
 */
static int dti_find_debuginfo(Dwfl_Module *mod, void **userdata,
			      const char *modname, Dwarf_Addr base,
			      const char *file_name, const char *debuglink,
			      GElf_Word crc, char **debuginfo_file_name)
{
	struct dti_lines *l = *userdata;
	char hex[2 * DTI_BUILD_ID_MAX + 1], path[PATH_MAX];
	const unsigned char *bits;
	const void *got;
	GElf_Addr vaddr;
	size_t i;
	int len, fd;

	(void)modname, (void)base, (void)file_name, (void)debuglink, (void)crc;
	len = dwfl_module_build_id(mod, &bits, &vaddr);
	if (!l || len <= 0 || len > DTI_BUILD_ID_MAX)
		return -1;
	dti_hex(bits, len, hex);
	for (i = 0; i <= l->n_user_dirs; i++) {
		Elf *elf;
		ssize_t n;

		dti_build_id_path(path, sizeof(path),
				  i < l->n_user_dirs ? l->dirs[i].path : DTI_DEBUG_ROOT, hex);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = dti_elf_build_id(fd, &got, &elf);
		elf_end(elf);
		if (n == len && !memcmp(got, bits, len)) {
			*debuginfo_file_name = strdup(path);
			return fd;
		}
		close(fd);
	}
	return -1;
}

/* Only files reported by path are used: nothing is looked for by libdwfl. */
static int dti_find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
			Dwarf_Addr base, char **file_name, Elf **elfp)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name, (void)elfp;
	return -1;
}

static const Dwfl_Callbacks dti_dwfl_callbacks = {
	.find_elf = dti_find_elf,
	.find_debuginfo = dti_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static uint64_t dti_align(uint64_t v, uint64_t align)
{
	return align > 1 ? (v + align - 1) / align * align : v;
}

/*
 * Where the kernel put @mod's executable sections, into *@secs (*@n of
 * them, sorted by offset) and the bytes they span, *@size.  An ET_REL
 * module as layout_sections() lays out its core code: in section-header
 * order, every SHF_ALLOC | SHF_EXECINSTR section but the .init ones, each
 * at the next multiple of its sh_addralign.  vmlinux (ET_EXEC) by its
 * .text alone.  0, or -1 if it has no executable section (or ENOMEM).
 */
static int dti_core_layout(Dwfl_Module *mod, struct dti_lines_sec **secs,
			   size_t *n, uint64_t *size)
{
	GElf_Shdr shdr_mem, *shdr;
	GElf_Ehdr ehdr_mem, *ehdr;
	struct dti_lines_sec *v = NULL, *nv;
	Elf_Scn *scn = NULL;
	uint64_t off = 0;
	GElf_Addr bias;
	size_t shstrndx, k = 0;
	const char *name;
	bool rel;
	Elf *elf;

	*secs = NULL;
	*n = *size = 0;
	elf = dwfl_module_getelf(mod, &bias);
	ehdr = elf ? gelf_getehdr(elf, &ehdr_mem) : NULL;
	if (!ehdr || elf_getshdrstrndx(elf, &shstrndx))
		return -1;
	rel = ehdr->e_type == ET_REL;
	while ((scn = elf_nextscn(elf, scn))) {
		shdr = gelf_getshdr(scn, &shdr_mem);
		if (!shdr || (shdr->sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) !=
			     (SHF_ALLOC | SHF_EXECINSTR))
			continue;
		name = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (!name || (rel && !strncmp(name, DTI_INIT_PREFIX, strlen(DTI_INIT_PREFIX))) ||
		    (!rel && strcmp(name, DTI_TEXT)))
			continue;
		off = rel ? dti_align(off, shdr->sh_addralign) : 0;
		if (shdr->sh_size) {
			nv = realloc(v, (k + 1) * sizeof(*v));
			if (!nv) {
				free(v);
				return dti_fail(ENOMEM, "out of memory");
			}
			v = nv;
			v[k++] = (struct dti_lines_sec){
				.off = off, .size = shdr->sh_size,
				.dwfl = shdr->sh_addr + bias,
			};
		}
		off += shdr->sh_size;
		if (!rel)
			break;
	}
	if (!k)
		return -1;
	*secs = v;
	*n = k;
	*size = off;
	return 0;
}

/* What trying one file gave */
enum dti_try {
	DTI_TRY_USED,		/* the module's, with DWARF */
	DTI_TRY_SYMBOLS,	/* the module's, symbols only */
	DTI_TRY_MISMATCH,	/* another build-id: refused */
	DTI_TRY_UNUSABLE,	/* not an ELF file, no .text: skipped */
};

/* A file reported into a Dwfl of its own */
struct dti_found {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct dti_lines_sec *secs;	/* its core code's sections */
	size_t n_secs;
	uint64_t size;			/* the bytes they span */
};

/*
 * Report @path as module @name into a Dwfl of its own and check it
 * against the module as loaded: the same build-id (when the module's is
 * known) and a .text.  @why gets what was wrong with it.
 */
static enum dti_try dti_try_file(struct dti_lines *l, const char *name,
				 const char *path, const unsigned char *id,
				 size_t id_len, struct dti_found *f, char *why,
				 size_t why_size)
{
	char want[2 * DTI_BUILD_ID_MAX + 1], got_hex[2 * DTI_BUILD_ID_MAX + 1];
	const unsigned char *got;
	GElf_Addr vaddr;
	Dwarf_Addr bias;
	void **userdata;
	int n;

	f->secs = NULL;
	f->n_secs = 0;
	f->dwfl = dwfl_begin(&dti_dwfl_callbacks);
	if (!f->dwfl) {
		snprintf(why, why_size, "%s: %s", path, dwfl_errmsg(-1));
		return DTI_TRY_UNUSABLE;
	}
	dwfl_report_begin(f->dwfl);
	f->mod = dwfl_report_elf(f->dwfl, name, path, -1, DTI_LINES_LAYOUT_BASE, false);
	if (!f->mod || dwfl_report_end(f->dwfl, NULL, NULL)) {
		snprintf(why, why_size, "%s: %s", path, dwfl_errmsg(-1));
		goto unusable;
	}
	n = dwfl_module_build_id(f->mod, &got, &vaddr);
	if (id_len && (n <= 0 || (size_t)n != id_len || memcmp(got, id, id_len))) {
		dti_hex(id, id_len, want);
		if (n > 0 && n <= DTI_BUILD_ID_MAX)
			dti_hex(got, n, got_hex);
		else
			strcpy(got_hex, "none");
		snprintf(why, why_size,
			 "%s: build-id %s is not that of module %s as loaded (%s): another build, not used",
			 path, got_hex, name, want);
		dwfl_end(f->dwfl);
		return DTI_TRY_MISMATCH;
	}
	if (dti_core_layout(f->mod, &f->secs, &f->n_secs, &f->size)) {
		snprintf(why, why_size, "%s: no executable section", path);
		goto unusable;
	}
	/* dti_find_debuginfo() finds @l through the module's user data */
	dwfl_module_info(f->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = l;
	return dwfl_module_getdwarf(f->mod, &bias) ? DTI_TRY_USED : DTI_TRY_SYMBOLS;
unusable:
	dwfl_end(f->dwfl);
	return DTI_TRY_UNUSABLE;
}

static void dti_lines_notify_type(struct dti_lines *l, enum dti_notice_type type,
				  const char *source, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define dti_lines_notify(l, source, ...) \
	dti_lines_notify_type(l, DTI_NOTICE_WARNING, source, __VA_ARGS__)

static void dti_lines_notify_type(struct dti_lines *l, enum dti_notice_type type,
				  const char *source, const char *fmt, ...)
{
	struct dti_notice n = { .type = type, .source = source };
	char msg[2 * PATH_MAX];
	va_list ap;

	if (!l->notice)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n.message = msg;
	l->notice(&n, l->notice_arg);
}

/* Make @f, from file @path (taken), @m's. */
static void dti_mod_adopt(struct dti_lines_mod *m, struct dti_found *f,
			  char **path, bool dwarf)
{
	m->dwfl = f->dwfl;
	m->mod = f->mod;
	m->secs = f->secs;
	m->n_secs = f->n_secs;
	f->secs = NULL;
	if (m->end == m->start)
		m->end = m->start + f->size;
	m->path = *path;
	*path = NULL;
	m->dwarf = dwarf;
}

/*
 * Find @m's file: the first candidate with the module's build-id and
 * DWARF, else the first with its build-id and symbols.  Returns 0 (with
 * DWARF), 1 (symbols only, or no file: told to the notice handler), or
 * -1: ESTALE when the files of the module's name are all other builds.
 * A file of another build is told to the notice handler when another
 * file is used instead.
 */
static int dti_mod_find(struct dti_lines *l, struct dti_lines_mod *m,
			const unsigned char *id, size_t id_len)
{
	char hex[2 * DTI_BUILD_ID_MAX + 1] = "", why[2 * PATH_MAX], mismatch[2 * PATH_MAX] = "";
	struct dti_found f, kept = { 0 };
	struct dti_cands c = { 0 };
	char *kept_path = NULL;
	enum dti_try t;
	size_t i;
	int ret = 1, trees;

	if (id_len)
		dti_hex(id, id_len, hex);
	/* the trees are indexed only if the files given and the build-id's are not it */
	for (trees = 0; trees < 2 && ret; trees++) {
		memset(&c, 0, sizeof(c));
		if (dti_candidates(l, m->name, hex, trees, &c)) {
			dti_cands_free(&c);
			if (kept_path) {
				dwfl_end(kept.dwfl);
				free(kept.secs);
				free(kept_path);
			}
			return -1;
		}
		for (i = 0; i < c.n; i++) {
			t = dti_try_file(l, m->name, c.path[i], id, id_len, &f, why, sizeof(why));
			if (t == DTI_TRY_USED) {
				dti_mod_adopt(m, &f, &c.path[i], true);
				ret = 0;
				break;
			}
			if (t == DTI_TRY_SYMBOLS && !kept_path) {
				/* kept while a file with DWARF is looked for */
				kept = f;
				kept_path = c.path[i];
				c.path[i] = NULL;
			} else if (t == DTI_TRY_SYMBOLS) {
				dwfl_end(f.dwfl);
				free(f.secs);
			} else if (t == DTI_TRY_MISMATCH && !mismatch[0]) {
				memcpy(mismatch, why, sizeof(why));
			}
		}
		dti_cands_free(&c);
	}
	if (ret == 0) {
		if (kept_path) {
			dwfl_end(kept.dwfl);
			free(kept.secs);
		}
	} else if (kept_path) {
		dti_mod_adopt(m, &kept, &kept_path, false);
		dti_lines_notify(l, m->name, "%s: no DWARF debuginfo for module %s%s%s: functions only, no source lines",
				 m->path, m->name, id_len ? ", build-id " : "", hex);
	} else if (mismatch[0]) {
		ret = dti_fail(ESTALE, "%s", mismatch);
		mismatch[0] = '\0';
	} else {
		dti_lines_notify(l, m->name, "no file found for module %s%s%s (searched the files and directories given, "
				 DTI_DEBUG_ROOT " and " DTI_MODULES_ROOT "/%s): its callers are not resolved",
				 m->name, id_len ? ", build-id " : "", hex, l->kver);
	}
	if (mismatch[0])
		dti_lines_notify(l, m->name, "%s", mismatch);
	free(kept_path);
	return ret;
}

/* ---- the cache: of these answers, and of a reader's callers (format.c) ---- */

static size_t dti_hash(uint64_t addr, unsigned int tag, size_t cap)
{
	/* Fibonacci hashing: callers differ in their low bits */
	return (size_t)(((addr ^ ((uint64_t)tag << 47)) * 0x9e3779b97f4a7c15ull) >> 32) &
	       (cap - 1);
}

/* Slot @i of @tab, of entries of @size bytes */
static inline struct dti_ckey *dti_cache_at(void *tab, size_t size, size_t i)
{
	return (struct dti_ckey *)((unsigned char *)tab + i * size);
}

/*
 * In @tab (@cap slots of @size bytes), the entry of (@addr, @tag) that
 * holds at @ts, or the free slot it would take: the entries of the key
 * at other times lie on its way
 */
static struct dti_ckey *dti_cache_probe(void *tab, size_t cap, size_t size,
					uint64_t addr, unsigned int tag, uint64_t ts)
{
	size_t i = dti_hash(addr, tag, cap);
	struct dti_ckey *k;

	for (;; i = (i + 1) & (cap - 1)) {
		k = dti_cache_at(tab, size, i);
		if (!k->used ||
		    (k->addr == addr && k->tag == tag && ts - k->lo <= k->hi - k->lo))
			return k;
	}
}

void *dti_cache_slot(const struct dti_cache *c, uint64_t addr, unsigned int tag,
		     uint64_t ts)
{
	return dti_cache_probe(c->tab, c->cap, c->type->size, addr, tag, ts);
}

void *dti_cache_find(const struct dti_cache *c, uint64_t addr, unsigned int tag,
		     uint64_t ts)
{
	struct dti_ckey *k;

	if (!c->cap)
		return NULL;
	k = dti_cache_slot(c, addr, tag, ts);
	return k->used ? k : NULL;
}

/* The table is kept at most half full: a free slot is never far. */
int dti_cache_grow(struct dti_cache *c)
{
	size_t size = c->type->size, cap = c->cap ? 2 * c->cap : c->type->init, i;
	struct dti_ckey *k;
	void *tab;

	if (2 * (c->used + 1) <= c->cap)
		return 0;
	tab = calloc(cap, size);
	if (!tab)
		return dti_fail(ENOMEM, "out of memory");
	for (i = 0; i < c->cap; i++) {
		k = dti_cache_at(c->tab, size, i);
		if (k->used)
			memcpy(dti_cache_probe(tab, cap, size, k->addr, k->tag, k->lo), k, size);
	}
	free(c->tab);
	c->tab = tab;
	c->cap = cap;
	return 0;
}

void dti_cache_add(struct dti_cache *c, void *e, uint64_t addr, unsigned int tag,
		   uint64_t lo, uint64_t hi)
{
	struct dti_ckey *k = e;

	k->addr = addr;
	k->tag = tag;
	k->lo = lo;
	k->hi = hi;
	k->used = true;
	c->used++;
}

void dti_cache_free(struct dti_cache *c)
{
	struct dti_ckey *k;
	size_t i;

	for (i = 0; i < c->cap; i++) {
		k = dti_cache_at(c->tab, c->type->size, i);
		if (k->used)
			c->type->drop(k);
	}
	free(c->tab);
	c->tab = NULL;
	c->cap = c->used = 0;
}

static void dti_lines_entry_drop(void *e)
{
	free(((struct dti_lines_entry *)e)->errmsg);
}

static const struct dti_cache_type dti_lines_cache_type = {
	.size = sizeof(struct dti_lines_entry),
	.init = DTI_LINES_CACHE_INIT,
	.drop = dti_lines_entry_drop,
};

/* ---- file names ---- */

/* FNV-1a of "@dir/@file", or of @dir alone if @file is NULL (a joined name) */
static size_t dti_str_hash(const char *dir, const char *file, size_t cap)
{
	const uint64_t prime = 0x100000001b3ull;
	uint64_t h = 0xcbf29ce484222325ull;
	const char *p;

	for (p = dir; *p; p++)
		h = (h ^ (unsigned char)*p) * prime;
	if (file) {
		h = (h ^ '/') * prime;
		for (p = file; *p; p++)
			h = (h ^ (unsigned char)*p) * prime;
	}
	return h & (cap - 1);
}

static bool dti_path_eq(const char *path, const char *dir, const char *file)
{
	size_t n = strlen(dir);

	if (!file)
		return !strcmp(path, dir);
	return !strncmp(path, dir, n) && path[n] == '/' && !strcmp(path + n + 1, file);
}

/*
 * The slot of "@dir/@file" (@dir alone if @file is NULL) in @tab: the
 * string, or the free slot it would take
 */
static char **dti_path_slot(char **tab, size_t cap, const char *dir, const char *file)
{
	size_t i = dti_str_hash(dir, file, cap);

	while (tab[i] && !dti_path_eq(tab[i], dir, file))
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static void dti_paths_free(struct dti_lines *l)
{
	size_t i;

	for (i = 0; i < l->paths_cap; i++)
		free(l->paths[i]);
	free(l->paths);
}

/*
 * @file as eu-addr2line shows it: joined to the compilation directory
 * @dir when it is relative.  The joined names are kept, once each, until
 * dti_lines_free(): struct dti_line points to them.  *@out is set to
 * the name (NULL if @file is).  Returns 0, or -1 (ENOMEM).
 */
static int dti_full_path(struct dti_lines *l, const char *dir, const char *file,
			 const char **out)
{
	size_t cap = l->paths_cap ? l->paths_cap * 2 : DTI_LINES_PATHS_INIT, i;
	char **slot, **tab, *p;

	*out = file;
	if (!file || file[0] == '/' || !dir || !dir[0])
		return 0;
	if (l->paths_cap) {
		slot = dti_path_slot(l->paths, l->paths_cap, dir, file);
		*out = *slot;
		if (*slot)
			return 0;
	}
	if (2 * (l->paths_used + 1) > l->paths_cap) {
		tab = calloc(cap, sizeof(*tab));
		if (!tab)
			return dti_fail(ENOMEM, "out of memory");
		for (i = 0; i < l->paths_cap; i++) {
			p = l->paths[i];
			if (p)
				*dti_path_slot(tab, cap, p, NULL) = p;
		}
		free(l->paths);
		l->paths = tab;
		l->paths_cap = cap;
	}
	if (asprintf(&p, "%s/%s", dir, file) < 0)
		return dti_fail(ENOMEM, "out of memory");
	*dti_path_slot(l->paths, l->paths_cap, dir, file) = p;
	l->paths_used++;
	*out = p;
	return 0;
}

/* ---- resolving ---- */

/*
 * Of the @n entries of @size bytes at @tab, sorted by the uint64_t at
 * @field of each, how many have it at most @key: the last of those is
 * the one that may hold @key (by binary search).
 */
static size_t dti_count_upto(const void *tab, size_t n, size_t size, size_t field,
			     uint64_t key)
{
	const unsigned char *base = tab;	/* NULL when @n is 0 */
	size_t lo = 0, hi = n, mid;
	uint64_t v;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		memcpy(&v, base + mid * size + field, sizeof(v));
		if (v <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The module holding @pc, or NULL (l->mods is sorted and has no overlaps) */
static struct dti_lines_mod *dti_mod_at(struct dti_lines *l, uint64_t pc)
{
	size_t i = dti_count_upto(l->mods, l->n_mods, sizeof(*l->mods),
				  offsetof(struct dti_lines_mod, start), pc);

	if (!i || pc >= l->mods[i - 1].end)
		return NULL;
	return &l->mods[i - 1];
}

/* The section of @m at offset @off of its core code, or NULL (padding) */
static const struct dti_lines_sec *dti_sec_at(const struct dti_lines_mod *m, uint64_t off)
{
	size_t i = dti_count_upto(m->secs, m->n_secs, sizeof(*m->secs),
				  offsetof(struct dti_lines_sec, off), off);

	if (!i || off - m->secs[i - 1].off >= m->secs[i - 1].size)
		return NULL;
	return &m->secs[i - 1];
}

/* The source file of attribute @name (DW_AT_call_file) of @die, or NULL */
static const char *dti_die_file(Dwarf_Die *die, Dwarf_Files *files, int name)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx;

	if (!files || dwarf_formudata(dwarf_attr(die, name, &attr), &idx))
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static unsigned int dti_die_udata(Dwarf_Die *die, int name)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;

	if (dwarf_formudata(dwarf_attr(die, name, &attr), &v) || v > UINT_MAX)
		return 0;
	return v;
}

/*
 * The functions inlined at @a (an address of @mod's Dwfl).  The innermost
 * scope holding it comes from dwarf_getscopes(); the scopes that hold
 * that DIE, innermost first, from dwarf_getscopes_die() (the first goes
 * on into an inlined function's abstract definition, this one does not),
 * and are walked to the function itself (DW_TAG_subprogram).  Where the
 * chain is deeper than DTI_LINES_INLINE_MAX, its outermost links are
 * left out.  Returns 0, or -1 (ENOMEM).
 */
static int dti_inlines(struct dti_lines *l, Dwfl_Module *mod, Dwarf_Addr a,
		       struct dti_line *out)
{
	Dwarf_Die *cu, *scopes = NULL, inner;
	struct dti_line_inline *in;
	Dwarf_Files *files = NULL;
	Dwarf_Attribute attr;
	const char *comp_dir;
	Dwarf_Addr bias;
	size_t nfiles;
	int n, i, ret = 0;

	cu = dwfl_module_addrdie(mod, a, &bias);
	if (!cu)
		return 0;
	n = dwarf_getscopes(cu, a - bias, &scopes);
	if (n <= 0)
		return 0;
	inner = scopes[0];
	free(scopes);
	scopes = NULL;
	n = dwarf_getscopes_die(&inner, &scopes);
	if (n <= 0)
		return 0;
	if (dwarf_getsrcfiles(cu, &files, &nfiles))
		files = NULL;
	comp_dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
	for (i = 0; i < n && out->n_inlined < DTI_LINES_INLINE_MAX; i++) {
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
			break;
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		in = &out->inlined[out->n_inlined++];
		/* dwarf_diename() follows DW_AT_abstract_origin */
		in->function = dwarf_diename(&scopes[i]);
		ret = dti_full_path(l, comp_dir,
				    dti_die_file(&scopes[i], files, DW_AT_call_file),
				    &in->file);
		if (ret)
			break;
		in->line = dti_die_udata(&scopes[i], DW_AT_call_line);
		in->column = dti_die_udata(&scopes[i], DW_AT_call_column);
	}
	free(scopes);
	return ret;
}

/*
 * Resolve @pc of @m (the address looked up) into @out; @adj is what
 * @addr, the address asked for, is past @pc (1 for a return address).
 */
static int dti_lookup(struct dti_lines *l, struct dti_lines_mod *m, uint64_t pc,
		      uint64_t adj, struct dti_line *out)
{
	const struct dti_lines_sec *sec = dti_sec_at(m, pc - m->start);
	Dwarf_Addr a, sym_addr;
	GElf_Off off;
	GElf_Sym sym;
	Dwfl_Line *ln;
	int line = 0, col = 0;

	if (!sec)
		return dti_fail(ENOENT, "0x%llx: in module %s at offset 0x%llx, but in none of the executable sections of %s",
				(unsigned long long)(pc + adj), m->name,
				(unsigned long long)(pc - m->start), m->path);
	a = pc - m->start - sec->off + sec->dwfl;
	memset(out, 0, sizeof(*out));
	out->module = m->name;
	out->function = dwfl_module_addrinfo(m->mod, a, &off, &sym, NULL, NULL, NULL);
	if (out->function) {
		out->offset = off + adj;
		out->size = sym.st_size;
	}
	ln = m->dwarf ? dwfl_module_getsrc(m->mod, a) : NULL;
	if (ln) {
		if (dti_full_path(l, dwfl_line_comp_dir(ln),
				  dwfl_lineinfo(ln, &sym_addr, &line, &col, NULL, NULL),
				  &out->file))
			return -1;
		out->line = line > 0 ? line : 0;
		out->column = col > 0 ? col : 0;
	}
	if (m->dwarf && dti_inlines(l, m->mod, a, out))
		return -1;
	if (!out->function && !out->file)
		return dti_fail(ENOENT, "0x%llx: in module %s, but %s has no symbol or line for it",
				(unsigned long long)(pc + adj), m->name, m->path);
	return 0;
}

/* Copy @e's line to @out: the inlined chain only as far as it goes. */
static inline void dti_line_copy(struct dti_line *out, const struct dti_line *in)
{
	memcpy(out, in, offsetof(struct dti_line, inlined) +
	       in->n_inlined * sizeof(in->inlined[0]));
}

/* The answer cached in @e: 0 with @out filled, or -1 with the failure it was */
static int dti_cache_answer(const struct dti_lines_entry *e, struct dti_line *out)
{
	if (e->err)
		return dti_fail(e->err, "%s", e->errmsg);
	dti_line_copy(out, &e->line);
	return 0;
}

/*
 * Keep the answer for (@addr, @tag), room made by dti_cache_grow(): @out,
 * or if @ret is not 0 the failure just recorded (its errno and message).
 * Returns @ret with errno as it was, or -1 if memory ran out.
 */
static int dti_cache_keep(struct dti_lines *l, uint64_t addr, unsigned int tag, int ret,
			  const struct dti_line *out)
{
	struct dti_lines_entry *e = dti_cache_slot(&l->cache, addr, tag, 0);

	e->err = ret ? errno : 0;
	e->errmsg = NULL;
	if (ret) {
		e->errmsg = strdup(dti_errmsg());
		if (!e->errmsg)
			return dti_fail(ENOMEM, "out of memory");
		errno = e->err;
	} else {
		e->line = *out;
	}
	/* of all time: the tag tells loads at one address apart */
	dti_cache_add(&l->cache, e, addr, tag, 0, UINT64_MAX);
	return ret;
}

/*
 * The file of @m, a module of a table, when the first address in it is
 * resolved: the notices dti_mod_find() gives, a file of another build
 * refused as DTI_NOTICE_REFUSED, a table without the build-id told.
 * Only ENOMEM fails (-1); otherwise @m has a file or never will.
 */
static int dti_mod_find_late(struct dti_lines *l, struct dti_lines_mod *m)
{
	int ret;

	m->pending = false;
	ret = dti_mod_find(l, m, m->id, m->id_len);
	if (ret < 0 && errno == ENOMEM)
		return -1;
	if (ret < 0) {
		dti_lines_notify_type(l, DTI_NOTICE_REFUSED, m->name, "%s", dti_errmsg());
		/* marks it refused for dti_lines_resolve()'s message */
		m->path = strdup("");
		return 0;
	}
	if (m->dwfl && !m->id_len)
		dti_lines_notify(l, m->name, "module %s: the module table has no build-id for it: %s used unchecked",
				 m->name, m->path);
	return 0;
}

/*
 * @addr (@pc the address looked up, @adj past it) in module @m (NULL:
 * none), through the cache.  0, or -1 as dti_lines_resolve().
 */
static int dti_resolve_in(struct dti_lines *l, struct dti_lines_mod *m, uint64_t addr,
			  uint64_t pc, uint64_t adj, struct dti_line *out)
{
	unsigned int tag = (adj ? 0u : 1u) | (m ? m->serial << 1 : 0);
	struct dti_lines_entry *e;
	int ret;

	e = dti_cache_find(&l->cache, addr, tag, 0);
	if (e)
		return dti_cache_answer(e, out);
	if (dti_cache_grow(&l->cache))
		return -1;
	if (m && m->pending && dti_mod_find_late(l, m))
		return -1;
	if (!m)
		ret = dti_fail(ENOENT, "0x%llx: in no module added",
			       (unsigned long long)addr);
	else if (!m->dwfl)
		ret = dti_fail(ENOENT, "0x%llx: in module %s, for which no file %s",
			       (unsigned long long)addr, m->name,
			       m->path ? "of its build was found" : "was found");
	else
		ret = dti_lookup(l, m, pc, adj, out);
	return dti_cache_keep(l, addr, tag, ret, out);
}

int dti_lines_resolve(struct dti_lines *l, uint64_t addr, unsigned int flags,
		      struct dti_line *out)
{
	uint64_t adj = flags & DTI_LINES_EXACT ? 0 : 1;

	if (flags & ~DTI_LINES_EXACT)
		return dti_fail(EINVAL, "dti_lines_resolve: unknown flags 0x%x", flags);
	return dti_resolve_in(l, addr >= adj ? dti_mod_at(l, addr - adj) : NULL, addr,
			      addr - adj, adj, out);
}

/* Whether @m holds @pc */
static inline bool dti_mod_holds(const struct dti_lines_mod *m, uint64_t pc)
{
	return pc >= m->start && pc < m->end;
}

/*
 * Of the loads that held @pc (@m, and the clashing ones kept apart), the
 * one loaded at @ts: *@lo..*@hi (inclusive) is the time it was loaded,
 * or the gap between loads @ts falls in.  NULL if none (*@near: a load
 * that held @pc at another time, or NULL).
 */
static struct dti_lines_mod *dti_mod_when(struct dti_lines *l, struct dti_lines_mod *m,
					  uint64_t pc, uint64_t ts, uint64_t *lo,
					  uint64_t *hi, struct dti_lines_mod **near)
{
	struct dti_lines_mod *e;
	size_t i;

	*lo = 0;
	*hi = UINT64_MAX;
	*near = NULL;
	for (i = 0; i <= l->n_old; i++) {
		e = i ? &l->old[i - 1] : m;
		if (!e || !dti_mod_holds(e, pc))
			continue;
		if (ts >= e->from_ns && ts <= e->to_ns) {
			*lo = e->from_ns;
			*hi = e->to_ns;
			return e;
		}
		*near = e;
		if (e->to_ns < ts && e->to_ns + 1 > *lo)
			*lo = e->to_ns + 1;
		if (e->from_ns > ts && e->from_ns - 1 < *hi)
			*hi = e->from_ns - 1;
	}
	return NULL;
}

int dti_lines_resolve_when(struct dti_lines *l, uint64_t addr, uint64_t ts_ns,
			   struct dti_line *out, uint64_t *lo, uint64_t *hi)
{
	struct dti_lines_mod *m = addr ? dti_mod_at(l, addr - 1) : NULL, *near;
	struct dti_lines_entry *e;
	unsigned int tag;

	*lo = 0;
	*hi = UINT64_MAX;
	/* the common case: one load there, of all time */
	if (!l->n_old && (!m || (!m->from_ns && m->to_ns == UINT64_MAX)))
		return dti_resolve_in(l, m, addr, addr - 1, 1, out);
	if (!addr)
		return dti_resolve_in(l, NULL, addr, addr - 1, 1, out);
	m = dti_mod_when(l, m, addr - 1, ts_ns, lo, hi, &near);
	if (m || !near)
		return dti_resolve_in(l, m, addr, addr - 1, 1, out);
	/* loaded there at other times only: not resolved, said once */
	tag = (near->serial << 1) | 1u << 31;
	e = dti_cache_find(&l->cache, addr, tag, 0);
	if (e)
		return dti_cache_answer(e, out);
	if (dti_cache_grow(&l->cache))
		return -1;
	dti_fail(ENOENT, "0x%llx: logged at %llu ns, when no module the table holds was loaded there (%s was from %llu ns)",
		 (unsigned long long)addr, (unsigned long long)ts_ns, near->name,
		 (unsigned long long)near->from_ns);
	return dti_cache_keep(l, addr, tag, -1, NULL);
}

int dti_lines_resolve_at(struct dti_lines *l, uint64_t addr, uint64_t ts_ns,
			 struct dti_line *out)
{
	uint64_t lo, hi;

	return dti_lines_resolve_when(l, addr, ts_ns, out, &lo, &hi);
}

/* ---- the resolver ---- */

struct dti_lines *dti_lines_new(void)
{
	struct dti_lines *l;

	/* libelf must be told the ELF version libdw was built for */
	if (elf_version(EV_CURRENT) == EV_NONE)
		return dti_fail_null(ENOTSUP, "libelf: %s", elf_errmsg(-1));
	l = calloc(1, sizeof(*l));
	if (!l)
		return dti_fail_null(ENOMEM, "out of memory");
	l->cache.type = &dti_lines_cache_type;
	if (dti_lines_set_kernel(l, NULL)) {
		free(l);
		return NULL;
	}
	return l;
}

static void dti_mod_drop_dwfl(struct dti_lines_mod *m)
{
	if (m->dwfl)
		dwfl_end(m->dwfl);
	m->dwfl = NULL;
	m->mod = NULL;
	free(m->secs);
	m->secs = NULL;
	m->n_secs = 0;
	free(m->path);
	m->path = NULL;
}

void dti_lines_free(struct dti_lines *l)
{
	size_t i, j;

	if (!l)
		return;
	for (i = 0; i < l->n_mods; i++) {
		dti_mod_drop_dwfl(&l->mods[i]);
		free(l->mods[i].name);
	}
	free(l->mods);
	for (i = 0; i < l->n_old; i++) {
		dti_mod_drop_dwfl(&l->old[i]);
		free(l->old[i].name);
	}
	free(l->old);
	for (i = 0; i < l->n_files; i++)
		free(l->files[i]);
	free(l->files);
	for (i = 0; i < l->n_dirs; i++) {
		for (j = 0; j < l->dirs[i].n; j++) {
			free(l->dirs[i].files[j].name);
			free(l->dirs[i].files[j].path);
		}
		free(l->dirs[i].files);
		free(l->dirs[i].path);
	}
	free(l->dirs);
	dti_cache_free(&l->cache);
	dti_paths_free(l);
	free(l);
}

int dti_lines_set_kernel(struct dti_lines *l, const char *release)
{
	struct utsname u;

	if (l->defaults_added)
		return dti_fail(EINVAL, "dti_lines_set_kernel: modules were added already");
	if (!release) {
		if (uname(&u))
			return dti_fail(errno, "uname: %s", strerror(errno));
		release = u.release;
	}
	if (strlen(release) >= sizeof(l->kver) || !release[0] || strchr(release, '/'))
		return dti_fail(EINVAL, "%s: not a kernel release", release);
	strcpy(l->kver, release);
	return 0;
}

int dti_lines_set_notice_handler(struct dti_lines *l, dti_notice_fn fn, void *arg)
{
	l->notice = fn;
	l->notice_arg = arg;
	return 0;
}

int dti_lines_add_search(struct dti_lines *l, const char *path)
{
	struct stat st;
	char **nf;

	if (stat(path, &st))
		return dti_fail(errno, "%s: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		if (dti_dir_add(l, l->n_user_dirs, path))
			return -1;
		l->n_user_dirs++;
		return 0;
	}
	if (!S_ISREG(st.st_mode))
		return dti_fail(EINVAL, "%s: neither a module's file nor a directory", path);
	nf = realloc(l->files, (l->n_files + 1) * sizeof(*nf));
	if (!nf)
		return dti_fail(ENOMEM, "out of memory");
	l->files = nf;
	nf[l->n_files] = strdup(path);
	if (!nf[l->n_files])
		return dti_fail(ENOMEM, "out of memory");
	l->n_files++;
	return 0;
}

/*
 * Put @m (taken) into l->mods, sorted by start: EINVAL if its range
 * overlaps another module's, ENOMEM.  0, or -1.
 */
static int dti_mod_insert(struct dti_lines *l, struct dti_lines_mod *m)
{
	struct dti_lines_mod *nm, *o;
	size_t pos;

	for (pos = 0; pos < l->n_mods && l->mods[pos].start < m->start; pos++)
		;
	o = pos < l->n_mods ? &l->mods[pos] : NULL;
	if ((o && o->start < m->end) || (pos && l->mods[pos - 1].end > m->start)) {
		o = o && o->start < m->end ? o : &l->mods[pos - 1];
		return dti_fail(EINVAL, "module %s at 0x%llx-0x%llx overlaps module %s at 0x%llx-0x%llx",
				m->name, (unsigned long long)m->start, (unsigned long long)m->end,
				o->name, (unsigned long long)o->start, (unsigned long long)o->end);
	}
	nm = realloc(l->mods, (l->n_mods + 1) * sizeof(*nm));
	if (!nm)
		return dti_fail(ENOMEM, "out of memory");
	l->mods = nm;
	memmove(&nm[pos + 1], &nm[pos], (l->n_mods - pos) * sizeof(*nm));
	nm[pos] = *m;
	l->n_mods++;
	/* addresses of the new range were cached as in no module */
	dti_cache_free(&l->cache);
	l->gen++;
	return 0;
}

int dti_lines_add_module(struct dti_lines *l, const char *name,
			 const unsigned char *build_id, size_t id_len,
			 uint64_t text_start, uint64_t text_size)
{
	struct dti_lines_mod m = { 0 };
	size_t i;
	int ret;

	if (!text_start || text_start + text_size < text_start)
		return dti_fail(EINVAL, "module %s: .text at 0x%llx for 0x%llx bytes: not a range",
				name, (unsigned long long)text_start,
				(unsigned long long)text_size);
	if (id_len > DTI_BUILD_ID_MAX)
		return dti_fail(EINVAL, "module %s: a build-id of %zu bytes (at most %d)",
				name, id_len, DTI_BUILD_ID_MAX);
	for (i = 0; i < l->n_mods; i++)
		if (!strcmp(l->mods[i].name, name))
			return dti_fail(EEXIST, "module %s: added already", name);
	if (dti_add_defaults(l))
		return -1;
	m.name = strdup(name);
	if (!m.name)
		return dti_fail(ENOMEM, "out of memory");
	m.start = text_start;
	m.end = text_start + text_size;
	m.to_ns = UINT64_MAX;
	m.serial = ++l->serial;
	ret = dti_mod_find(l, &m, build_id, id_len);
	if (ret < 0 || dti_mod_insert(l, &m) < 0) {
		dti_mod_drop_dwfl(&m);
		free(m.name);
		return -1;
	}
	return ret;
}

/* Whether module @name was added (names compare as the kernel's do) */
static bool dti_mod_named(const struct dti_lines *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n_mods; i++)
		if (dti_mod_name_eq(l->mods[i].name, name))
			return true;
	return false;
}

/*
 * The load of module @name at @start from @from_ns added before (by an
 * earlier table, a table read again), or NULL
 */
static struct dti_lines_mod *dti_mod_same(struct dti_lines *l, const char *name,
					  uint64_t start, uint64_t from_ns)
{
	struct dti_lines_mod *m;
	size_t i;

	for (i = 0; i < l->n_mods + l->n_old; i++) {
		m = i < l->n_mods ? &l->mods[i] : &l->old[i - l->n_mods];
		if (m->start == start && m->from_ns == from_ns && !strcmp(m->name, name))
			return m;
	}
	return NULL;
}

/* Keep @m (taken) apart, for the records logged while it was loaded.  0, or -1. */
static int dti_mod_keep_old(struct dti_lines *l, struct dti_lines_mod *m)
{
	struct dti_lines_mod *n = realloc(l->old, (l->n_old + 1) * sizeof(*n));

	if (!n)
		return dti_fail(ENOMEM, "out of memory");
	l->old = n;
	l->old[l->n_old++] = *m;
	/* addresses were cached as in no module, at any time */
	dti_cache_free(&l->cache);
	l->gen++;
	return 0;
}

/* The order modules of a table are added in: live ones, then the last gone first */
static int dti_table_cmp(const void *a, const void *b)
{
	const struct dti_module *x = *(const struct dti_module *const *)a;
	const struct dti_module *y = *(const struct dti_module *const *)b;

	if ((x->state == DTI_MODULE_LIVE) != (y->state == DTI_MODULE_LIVE))
		return x->state == DTI_MODULE_LIVE ? -1 : 1;
	if (x->state == DTI_MODULE_LIVE || x->unloaded_ns == y->unloaded_ns)
		return x < y ? -1 : x > y;
	return x->unloaded_ns > y->unloaded_ns ? -1 : 1;
}

int dti_lines_add_modules(struct dti_lines *l, const struct dti_module *mods, size_t n)
{
	const struct dti_module **order, *e;
	struct dti_lines_mod m, *o;
	char name[DTI_MODULE_NAME_MAX + 1];
	size_t i, added = 0;
	int ret;

	if (n > INT_MAX)
		return dti_fail(EINVAL, "dti_lines_add_modules: %zu entries", n);
	if (dti_add_defaults(l))
		return -1;
	order = malloc((n ? n : 1) * sizeof(*order));
	if (!order)
		return dti_fail(ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		order[i] = &mods[i];
	qsort(order, n, sizeof(*order), dti_table_cmp);
	for (i = 0; i < n; i++) {
		e = order[i];
		if (e->state != DTI_MODULE_LIVE && e->state != DTI_MODULE_GONE)
			continue;
		memcpy(name, e->name, DTI_MODULE_NAME_MAX);
		name[DTI_MODULE_NAME_MAX] = '\0';
		if (!name[0] || !e->text || !e->text_size ||
		    e->text + e->text_size < e->text || e->build_id_len > DTI_BUILD_ID_SIZE ||
		    (e->state == DTI_MODULE_GONE && e->unloaded_ns < e->loaded_ns))
			continue;
		/*
		 * A load added before (the table read again): only its unload
		 * is news; the times of its addresses' answers change
		 */
		o = dti_mod_same(l, name, e->text, e->loaded_ns);
		if (o) {
			if (e->state == DTI_MODULE_GONE && o->to_ns != e->unloaded_ns) {
				o->to_ns = e->unloaded_ns;
				l->gen++;
				dti_cache_free(&l->cache);
			}
			continue;
		}
		memset(&m, 0, sizeof(m));
		m.start = e->text;
		m.end = e->text + e->text_size;
		m.pending = true;
		m.id_len = e->build_id_len;
		memcpy(m.id, e->build_id, m.id_len);
		m.from_ns = e->loaded_ns;
		m.to_ns = e->state == DTI_MODULE_GONE ? e->unloaded_ns : UINT64_MAX;
		m.serial = ++l->serial;
		m.name = strdup(name);
		if (!m.name) {
			free(order);
			return dti_fail(ENOMEM, "out of memory");
		}
		/*
		 * A module unloaded and loaded again, a gone one where a later
		 * one was loaded: apart, for the records of its time only
		 */
		if (dti_mod_named(l, name))
			ret = dti_mod_keep_old(l, &m);
		else if (dti_mod_insert(l, &m) < 0)
			ret = errno == ENOMEM ? -1 : dti_mod_keep_old(l, &m);
		else
			ret = 0;
		if (ret < 0) {
			free(m.name);
			free(order);
			return -1;
		}
		added++;
	}
	free(order);
	return (int)added;
}

unsigned long dti_lines_gen(const struct dti_lines *l)
{
	return l->gen;
}
