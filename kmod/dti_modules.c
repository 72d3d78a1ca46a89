// SPDX-License-Identifier: GPL-2.0
/*
 * The module table: where every module that can log to DTI was loaded,
 * so that a reader maps a record's caller to a function and source line
 * of the module's own file, with nothing but the data (see struct
 * dti_dump_modules in <uapi/linux/dti_record.h> for what a reader sees).
 *
 * A record's caller is a return address in the module that logged.  Only
 * modules loaded after dti.ko can call it (they need its symbols, or log
 * through dti_ctl_*() from a SystemTap module), so the table holds
 * dti.ko and every module a module notifier sees come in, whether it
 * logs or not: deciding that on the write path would cost every record a
 * lookup, and the table is small.  An entry is written at
 * MODULE_STATE_COMING, before the module's init function runs and logs,
 * and marked gone at MODULE_STATE_GOING; gone entries are reused, oldest
 * first, only when no free one is left, so records of a module that was
 * unloaded still resolve while the table has room.
 *
 * The table is one kmalloc() block, physically contiguous for a dump
 * reader, sealed with a CRC after each change.  Changes are made under
 * dti_modules_lock, a mutex taken alone: the notifier runs in process
 * context with no lock of the module loader held (it takes module_mutex
 * itself only around, not during, the notifier chain), and the debugfs
 * file reads under it.  The panic path reads the table with no lock and
 * prints it only if its CRC holds.
 *
 * A module's build-id: the kernel keeps it only with
 * CONFIG_STACKTRACE_BUILD_ID, which Debian's does not set; otherwise it
 * is read from the module's .note.gnu.build-id, which the loader keeps
 * in the module's read-only data (an allocated note section).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/elf.h>
#include <linux/io.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

#include "dti_internal.h"

/* The note that holds a GNU build-id: owner "GNU", type NT_GNU_BUILD_ID */
#define DTI_NOTE_GNU		"GNU"
#define DTI_NOTE_ALIGN		4
#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID		3
#endif

static const char *const dti_module_states[] = {
	[DTI_MODULE_FREE] = "free",
	[DTI_MODULE_LIVE] = "live",
	[DTI_MODULE_GONE] = "gone",
};

static struct dti_dump_modules *dti_mods;
/* This boot's table in the persistent region, kept equal to dti_mods */
static struct dti_persist_modules *dti_mods_region;
static DEFINE_MUTEX(dti_modules_lock);

/* Copy the entries into the persistent region's table, if any, and seal it. */
static void dti_modules_mirror(void)
{
	struct dti_persist_modules *t = dti_mods_region;

	lockdep_assert_held(&dti_modules_lock);
	if (!t)
		return;
	memcpy(t->mod, dti_mods->mod, sizeof(t->mod));
	t->crc = DTI_CRC32_SEALED(t);
}

/* Recompute the table's CRC after a change; dti_modules_lock held. */
static void dti_modules_seal(void)
{
	lockdep_assert_held(&dti_modules_lock);
	dti_mods->crc = DTI_CRC32_SEALED(dti_mods);
	dti_modules_mirror();
}

/* Whether the @len bytes at @a and @b are equal; see dti_note_build_id(). */
static __no_sanitize_address bool dti_bytes_equal(const u8 *a, const u8 *b, size_t len)
{
	while (len--)
		if (*a++ != *b++)
			return false;
	return true;
}

/*
 * Find the GNU build-id note in [@p, @end): a note header whose owner is
 * "GNU" and type NT_GNU_BUILD_ID, with a descriptor that fits.  Returns
 * the id's length (0: none found) and copies it to @id.
 *
 * The search reads all of the module's read-only data, and under KASAN
 * the redzones around the module's globals lie there too (6.12's debug
 * kernel reported the read as global-out-of-bounds): the bytes are
 * mapped and only read, so the search is not instrumented, and compares
 * and copies without memcmp() and memcpy(), which are.
 */
static __no_sanitize_address u32 dti_note_build_id(const u8 *p, const u8 *end, u8 *id)
{
	const size_t name_len = sizeof(DTI_NOTE_GNU);
	const struct elf64_note *n;
	u32 i;

	for (; p + sizeof(*n) + name_len <= end; p += DTI_NOTE_ALIGN) {
		n = (const struct elf64_note *)p;
		if (n->n_type != NT_GNU_BUILD_ID || n->n_namesz != name_len ||
		    !n->n_descsz || n->n_descsz > DTI_BUILD_ID_SIZE ||
		    !dti_bytes_equal(p + sizeof(*n), (const u8 *)DTI_NOTE_GNU, name_len))
			continue;
		if (p + sizeof(*n) + ALIGN(name_len, DTI_NOTE_ALIGN) + n->n_descsz > end)
			break;
		for (i = 0; i < n->n_descsz; i++)
			id[i] = p[sizeof(*n) + ALIGN(name_len, DTI_NOTE_ALIGN) + i];
		return n->n_descsz;
	}
	return 0;
}

/* @mod's build-id into @e: from the kernel if it keeps it, else its note */
static void dti_module_build_id(struct module *mod, struct dti_module *e)
{
	struct dti_mod_block ro = dti_module_rodata(mod);

#ifdef CONFIG_STACKTRACE_BUILD_ID
	BUILD_BUG_ON(sizeof(mod->build_id) != DTI_BUILD_ID_SIZE);
	if (memchr_inv(mod->build_id, 0, sizeof(mod->build_id))) {
		memcpy(e->build_id, mod->build_id, DTI_BUILD_ID_SIZE);
		e->build_id_len = DTI_BUILD_ID_SIZE;
		return;
	}
#endif
	/* The notes are read-only data */
	e->build_id_len = dti_note_build_id(ro.base, ro.base + ro.size, e->build_id);
}

/*
 * The entry for a module coming in: a free one, else the one gone the
 * longest.  NULL if every entry is live.  dti_modules_lock held.
 */
static struct dti_module *dti_module_slot(void)
{
	struct dti_module *e, *oldest = NULL;

	lockdep_assert_held(&dti_modules_lock);
	for (e = dti_mods->mod; e < dti_mods->mod + DTI_MODULES_MAX; e++) {
		if (e->state == DTI_MODULE_FREE)
			return e;
		if (e->state == DTI_MODULE_GONE &&
		    (!oldest || e->unloaded_ns < oldest->unloaded_ns))
			oldest = e;
	}
	return oldest;
}

/* The live entry of @mod, or NULL.  dti_modules_lock held. */
static struct dti_module *dti_module_find(struct module *mod)
{
	unsigned long text = (unsigned long)dti_module_text(mod).base;
	struct dti_module *e;

	lockdep_assert_held(&dti_modules_lock);
	for (e = dti_mods->mod; e < dti_mods->mod + DTI_MODULES_MAX; e++)
		if (e->state == DTI_MODULE_LIVE && e->text == text &&
		    !strncmp(e->name, mod->name, sizeof(e->name)))
			return e;
	return NULL;
}

static void dti_module_add(struct module *mod)
{
	struct dti_module *e;

	mutex_lock(&dti_modules_lock);
	e = dti_module_slot();
	if (!e) {
		pr_warn_ratelimited("module %s: the module table's %d entries are live: its records' callers will not resolve to lines\n",
				    mod->name, DTI_MODULES_MAX);
		goto out;
	}
	memset(e, 0, sizeof(*e));
	strscpy(e->name, mod->name, sizeof(e->name));
	e->text = (unsigned long)dti_module_text(mod).base;
	e->text_size = dti_module_text(mod).size;
	e->loaded_ns = ktime_get_mono_fast_ns();
	dti_module_build_id(mod, e);
	e->state = DTI_MODULE_LIVE;
	dti_modules_seal();
out:
	mutex_unlock(&dti_modules_lock);
}

static void dti_module_gone(struct module *mod)
{
	struct dti_module *e;

	mutex_lock(&dti_modules_lock);
	e = dti_module_find(mod);
	if (e) {
		e->state = DTI_MODULE_GONE;
		e->unloaded_ns = ktime_get_mono_fast_ns();
		dti_modules_seal();
	}
	mutex_unlock(&dti_modules_lock);
}

static int dti_module_notify(struct notifier_block *nb, unsigned long state, void *data)
{
	struct module *mod = data;

	if (state == MODULE_STATE_COMING)
		dti_module_add(mod);
	else if (state == MODULE_STATE_GOING)
		dti_module_gone(mod);
	return NOTIFY_DONE;
}

static struct notifier_block dti_module_nb = {
	.notifier_call = dti_module_notify,
};

/*
 * Whether entry @e is shown: not free, and of a state this kernel knows
 * (a previous boot's table is untrusted)
 */
static bool dti_module_shown(const struct dti_module *e)
{
	return e->state != DTI_MODULE_FREE && e->state < ARRAY_SIZE(dti_module_states);
}

/* One entry as a line of DTI_MODULES_FILE, into @buf; its length. */
static int dti_module_format(const struct dti_module *e, char *buf, size_t size)
{
	char id[2 * DTI_BUILD_ID_SIZE + 1] = "-";
	u32 id_len = min_t(u32, e->build_id_len, DTI_BUILD_ID_SIZE);

	if (id_len)
		bin2hex(id, e->build_id, id_len)[0] = '\0';
	return scnprintf(buf, size, "%.*s 0x%llx 0x%x %s %s %llu %llu",
			 (int)sizeof(e->name), e->name, e->text, e->text_size, id,
			 dti_module_states[e->state], e->loaded_ns, e->unloaded_ns);
}

/* Room for a formatted entry: name, two hex numbers, the id, two u64s */
#define DTI_MODULE_LINE_MAX	(DTI_MODULE_NAME_MAX + 2 * DTI_BUILD_ID_SIZE + 80)

/**
 * dti_modules_seq_show - print module table entries as DTI_MODULES_FILE
 * @m: the file
 * @mods: DTI_MODULES_MAX entries, which no one changes meanwhile
 *
 * Entries that are free or of a state this kernel does not know are left
 * out (dti_module_shown()).
 *
 * Context: process context.
 */
void dti_modules_seq_show(struct seq_file *m, const struct dti_module *mods)
{
	char line[DTI_MODULE_LINE_MAX];
	const struct dti_module *e;

	for (e = mods; e < mods + DTI_MODULES_MAX; e++) {
		if (!dti_module_shown(e))
			continue;
		dti_module_format(e, line, sizeof(line));
		seq_printf(m, "%s\n", line);
	}
}

static int dti_modules_show(struct seq_file *m, void *v)
{
	mutex_lock(&dti_modules_lock);
	dti_modules_seq_show(m, dti_mods->mod);
	mutex_unlock(&dti_modules_lock);
	return 0;
}

static int dti_modules_open(struct inode *inode, struct file *file)
{
	return single_open(file, dti_modules_show, inode->i_private);
}

/* DTI_MODULES_FILE, which dti_fs_init() creates */
const struct file_operations dti_modules_fops = {
	.owner		= THIS_MODULE,
	.open		= dti_modules_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/**
 * dti_modules_panic_print - print the module table on the console
 * @prefix: what each line starts with
 *
 * One line per entry, "@prefix module " and the entry as the
 * DTI_MODULES_FILE file shows it, so that `dti console-log --lines` can
 * resolve the callers of the records printed after it.  A table caught
 * in the middle of a change (its CRC fails) is not printed.
 *
 * Context: panic or oops; takes no lock, allocates nothing.
 */
void dti_modules_panic_print(const char *prefix)
{
	char line[DTI_MODULE_LINE_MAX];
	const struct dti_module *e;

	if (!dti_mods)
		return;
	if (DTI_CRC32_SEALED(dti_mods) != READ_ONCE(dti_mods->crc)) {
		pr_emerg("%smodules: the table was changing: not printed\n", prefix);
		return;
	}
	for (e = dti_mods->mod; e < dti_mods->mod + DTI_MODULES_MAX; e++) {
		if (!dti_module_shown(e))
			continue;
		dti_module_format(e, line, sizeof(line));
		pr_emerg("%smodule %s\n", prefix, line);
	}
}

/**
 * dti_modules_persist - keep a copy of the table in the persistent region
 * @t: this boot's table in the region, or NULL to stop
 * @boot: the region's count of boots, this one included
 *
 * From now on every change is copied there too, so that the next boot
 * reads the previous boot's records with the modules that wrote them.
 *
 * Context: process context (dti_persist_init() and dti_persist_exit());
 * takes dti_modules_lock.
 */
void dti_modules_persist(struct dti_persist_modules *t, u32 boot)
{
	mutex_lock(&dti_modules_lock);
	dti_mods_region = t;
	if (t) {
		t->boot = boot;
		t->n_entries = DTI_MODULES_MAX;
		t->entry_size = sizeof(t->mod[0]);
		dti_modules_mirror();
	}
	mutex_unlock(&dti_modules_lock);
}

/**
 * dti_modules_init - start the module table
 *
 * Enters dti.ko itself and registers the module notifier; comes before
 * the panic notifiers and the debugfs files, which read the table.
 *
 * Context: process context, at module load.
 * Return: 0, or -ENOMEM.
 */
int __init dti_modules_init(void)
{
	dti_mods = kzalloc_obj(*dti_mods, GFP_KERNEL);
	if (!dti_mods)
		return -ENOMEM;
	snprintf(dti_mods->marker, sizeof(dti_mods->marker), "%s%s",
		 DTI_MARKER_PREFIX, DTI_MODULES_FILE);
	dti_mods->magic = DTI_DUMP_MAGIC;
	dti_mods->version = DTI_DUMP_VERSION;
	dti_mods->type = DTI_DUMP_MODULES;
	dti_mods->size = sizeof(*dti_mods);
	dti_mods->entry_size = sizeof(dti_mods->mod[0]);
	dti_mods->n_entries = DTI_MODULES_MAX;
	/*
	 * Built in, DTI is in vmlinux, whose callers kallsyms resolves: the
	 * table starts empty, sealed so that a dump reader takes it.
	 */
	if (!DTI_BUILTIN) {
		dti_module_add(THIS_MODULE);
	} else {
		mutex_lock(&dti_modules_lock);
		dti_modules_seal();
		mutex_unlock(&dti_modules_lock);
	}
	dti_dump_index_add(virt_to_phys(dti_mods));
	register_module_notifier(&dti_module_nb);
	return 0;
}

/**
 * dti_modules_exit - stop the module table and free it
 *
 * Its marker is wiped first: a dump taken later must not find it.
 *
 * Context: process context, at module unload, after dti_fs_exit() and
 * dti_panic_exit(): no reader is left.
 */
void dti_modules_exit(void)
{
	unregister_module_notifier(&dti_module_nb);
	dti_dump_index_del(virt_to_phys(dti_mods));
	memzero_explicit(dti_mods, sizeof(*dti_mods));
	kfree(dti_mods);
	dti_mods = NULL;
}
