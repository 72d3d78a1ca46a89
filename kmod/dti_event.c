// SPDX-License-Identifier: GPL-2.0
/*
 * DTI event types: binary records that describe themselves.
 *
 * A driver registers an event type on a channel (dti_event_register()):
 * an id, a name and a printf-like template whose conversions define the
 * packed layout of the values (see <uapi/linux/dti_record.h>).  Logging
 * an event packs the values, with no text formatting in the kernel.
 *
 * The formats travel with the data.  The channel keeps its types in a
 * table, replaced as a whole under dti_event_mutex and read under
 * RCU-sched by writers, which run with interrupts off.  Every sub-buffer
 * started with a table is framed with one DTI_REC_FORMAT record per type
 * (dti_event_frame(), from dti_subbuf_start()), and the CPU notes the
 * table's generation; an event whose CPU framed its sub-buffer with an
 * older table starts a new sub-buffer first (dti_event_stale()).  So
 * every sub-buffer that holds events of a type also holds its format,
 * and readers decode it on its own: the merged views (this file's
 * dti_event_show(), with the formats found in the snapshot), a dump, a
 * previous boot.
 *
 * Lock order: dti_event_mutex is taken in process context by
 * registration, the formats file and the release of a channel that has
 * types, alone, and by a resize (dti_resize()), which takes the
 * channel's ctl_lock inside it; writers take no lock (RCU-sched,
 * interrupts off).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "dti_internal.h"

/* Most types a channel can have */
#define DTI_EVENT_TYPES_MAX	64
/* Bytes of a conversion specification, '%' to the conversion character */
#define DTI_EVENT_SPEC_MAX	24
/* Bytes of a field name, without the NUL */
#define DTI_EVENT_FIELD_MAX	31
/* What may stand between a field's name and its conversion */
#define DTI_EVENT_FIELD_SEP	" =:'\"([{<"

static DEFINE_MUTEX(dti_event_mutex);

/* Whether event id @id is one of dti.ko's own (context records, blobs) */
static bool dti_event_id_own(u16 id)
{
	return id >= DTI_EVENT_ID_DTI;
}

/**
 * struct dti_event_table - the event types of a channel
 * @rcu:	frees the table once no writer can see it
 * @gen:	generation: one more than the table it replaced
 * @n:		entries in @types
 * @bytes:	bytes the DTI_REC_FORMAT records of all types take
 * @types:	the types, in the order they were registered
 */
struct dti_event_table {
	struct rcu_head rcu;
	u32 gen;
	unsigned int n;
	size_t bytes;
	struct dti_event_type *types[];
};

static char dti_int_arg(const char *len, bool is_signed)
{
	unsigned int size = !strcmp(len, "hh") ? 1 : !strcmp(len, "h") ? 2 :
			    !strcmp(len, "ll") ? 8 : !strcmp(len, "l") ? sizeof(long) : 4;

	switch (size) {
	case 1:
		return is_signed ? DTI_ARG_S8 : DTI_ARG_U8;
	case 2:
		return is_signed ? DTI_ARG_S16 : DTI_ARG_U16;
	case 8:
		return is_signed ? DTI_ARG_S64 : DTI_ARG_U64;
	}
	return is_signed ? DTI_ARG_S32 : DTI_ARG_U32;
}

/**
 * dti_event_conv - parse one conversion of a template
 * @p: the template from a '%' on
 * @end: end of the template
 * @arg: set to the DTI_ARG_* kind of the value, 0 for "%%"
 *
 * Return: bytes of the conversion specification, or -EINVAL if it is
 * not one DTI supports.
 */
static int dti_event_conv(const char *p, const char *end, char *arg)
{
	const char *q = p + 1;
	char len[3] = "";
	bool flags = false, width = false;
	unsigned int n, prec = 0;

	*arg = 0;
	if (q < end && *q == '%')
		return 2;
	if (end - q >= 3 && !memcmp(q, "*ph", 3)) {
		*arg = DTI_ARG_HEX;
		q += 3;
		if (q < end && *q && strchr("CDN", *q))
			q++;
		return q - p;
	}
	while (q < end && *q && strchr("-+ #0", *q)) {
		flags = true;
		q++;
	}
	for (n = 0; q < end && isdigit(*q); q++) {
		width = true;
		n = min_t(unsigned int, n * 10 + (*q - '0'), DTI_EVENT_WIDTH_MAX + 1);
	}
	if (q < end && *q == '.') {
		width = true;
		for (q++; q < end && isdigit(*q); q++)
			prec = min_t(unsigned int, prec * 10 + (*q - '0'), DTI_EVENT_WIDTH_MAX + 1);
	}
	if (n > DTI_EVENT_WIDTH_MAX || prec > DTI_EVENT_WIDTH_MAX)
		return -EINVAL;
	if (q < end && (*q == 'h' || *q == 'l')) {
		len[0] = *q++;
		if (q < end && *q == len[0])
			len[1] = *q++;
	}
	if (q >= end || q - p >= DTI_EVENT_SPEC_MAX)
		return -EINVAL;
	switch (*q) {
	case 'd': case 'i':
		*arg = dti_int_arg(len, true);
		break;
	case 'u': case 'x': case 'X':
		*arg = dti_int_arg(len, false);
		break;
	case 's':
		if (len[0])
			return -EINVAL;
		*arg = DTI_ARG_STR;
		break;
	case 'p':
		/* only %px: the kernel hashes what plain %p prints */
		if (flags || width || len[0] || q + 1 >= end || q[1] != 'x')
			return -EINVAL;
		*arg = DTI_ARG_PTR;
		q++;
		break;
	default:
		return -EINVAL;
	}
	return q + 1 - p;
}

/**
 * dti_event_parse - the layout of a template
 * @fmt: the template
 * @len: its bytes
 * @layout: DTI_EVENT_ARGS_MAX bytes, set to one DTI_ARG_* per value
 *
 * Return: the number of values, -EINVAL for a conversion DTI does not
 * support, -E2BIG for more than DTI_EVENT_ARGS_MAX values.
 */
int dti_event_parse(const char *fmt, size_t len, char *layout)
{
	const char *p = fmt, *end = fmt + len;
	int n = 0, k;
	char arg;

	while ((p = memchr(p, '%', end - p))) {
		k = dti_event_conv(p, end, &arg);
		if (k < 0)
			return k;
		p += k;
		if (!arg)
			continue;
		if (n == DTI_EVENT_ARGS_MAX)
			return -E2BIG;
		layout[n++] = arg;
	}
	return n;
}

/*
 * Name value @i after the word before its conversion at @conv, in the
 * text from @fmt (the end of the conversion before) on, separators such
 * as " =:'" skipped; "argI" if there is none or it is taken.
 */
static void dti_event_field(const char *fmt, const char *conv, unsigned int i,
			    const char *names, char *out)
{
	const char *e = conv, *b;
	size_t n;
	char want[DTI_EVENT_FIELD_MAX + 3];	/* ",name," and its NUL */

	while (e > fmt && strchr(DTI_EVENT_FIELD_SEP, e[-1]))
		e--;
	for (b = e; b > fmt && (isalnum(b[-1]) || b[-1] == '_'); b--)
		;
	n = e - b;
	if (n && n <= DTI_EVENT_FIELD_MAX && !isdigit(*b)) {
		memcpy(out, b, n);
		out[n] = '\0';
		/* unique among the names so far */
		snprintf(want, sizeof(want), ",%s,", out);
		if (!strstr(names, want))
			return;
	}
	sprintf(out, "arg%u", i);
}

/* Bytes the format record of @type takes in a sub-buffer */
static size_t dti_event_format_size(const struct dti_event_type *type)
{
	return DTI_CREC_SIZE(sizeof(struct dti_crec), type->format_len);
}

/*
 * Build @t's DTI_REC_FORMAT payload: struct dti_event_format, name,
 * layout, field names, template.  0 or -ENOMEM.
 */
static int dti_event_build(struct dti_event_type *t, size_t name_len,
			   size_t fmt_len)
{
	/* ",name" per value and a leading comma for the uniqueness test */
	char *names = kzalloc(DTI_EVENT_ARGS_MAX * (DTI_EVENT_FIELD_MAX + 2) + 2,
			      GFP_KERNEL);
	char field[DTI_EVENT_FIELD_MAX + 1];
	const char *p = t->fmt, *end = t->fmt + fmt_len, *lit = t->fmt;
	struct dti_event_format *f;
	unsigned int i = 0;
	size_t nl;
	char arg;
	int k;

	if (!names)
		return -ENOMEM;
	names[0] = ',';
	while ((p = memchr(p, '%', end - p))) {
		k = dti_event_conv(p, end, &arg);
		if (arg) {
			dti_event_field(lit, p, i++, names, field);
			strcat(names, field);
			strcat(names, ",");
		}
		p += k;
		lit = p;
	}
	/* the names without the commas at both ends */
	nl = strlen(names) > 1 ? strlen(names) - 2 : 0;
	t->format_len = sizeof(*f) + name_len + t->nargs + nl + fmt_len;
	t->format = kmalloc(t->format_len, GFP_KERNEL);
	if (!t->format) {
		kfree(names);
		return -ENOMEM;
	}
	f = t->format;
	f->id = t->id;
	f->nargs = t->nargs;
	f->name_len = name_len;
	f->fields_len = nl;
	f->fmt_len = fmt_len;
	p = (char *)(f + 1);
	memcpy((char *)p, t->name, name_len);
	memcpy((char *)p + name_len, t->layout, t->nargs);
	memcpy((char *)p + name_len + t->nargs, names + 1, nl);
	memcpy((char *)p + name_len + t->nargs + nl, t->fmt, fmt_len);
	kfree(names);
	return 0;
}

static struct dti_channel *dti_event_channel(struct dti_info *trace)
{
	return rcu_dereference_protected(trace->chan,
					 lockdep_is_held(&dti_event_mutex));
}

/**
 * dti_event_register - register an event type on a channel
 * @trace: the channel (a handle's: &handle.info, after INIT_DTI_HANDLE())
 * @type: the type, defined with DEFINE_DTI_EVENT(); it belongs to @trace
 *	  until the channel is unregistered
 *
 * Parses the template, builds the type's format record and adds it to
 * the channel's types.  Every sub-buffer started from now on begins
 * with the formats of all types; an event of @type logged by a CPU whose
 * sub-buffer was started before starts a new one.
 *
 * Context: process context; sleeps.  Must not race with the channel's
 * unregistration.
 * Return: 0, or -EINVAL for a NULL @type or a NULL or error-pointer
 * @trace, -ENODEV if @trace has no channel (a handle not yet
 * initialised, or cleaned up), -EBUSY if @type is registered already, -EEXIST if the
 * channel has a type of the same id or name, -EINVAL for a bad name or a
 * conversion DTI does not support, -E2BIG for more than
 * DTI_EVENT_ARGS_MAX values, -ENAMETOOLONG for a template over
 * DTI_EVENT_FMT_MAX bytes, -ENOSPC if the channel has DTI_EVENT_TYPES_MAX
 * types or the formats would take more than a quarter of a sub-buffer,
 * -ENOMEM.  Ids from DTI_EVENT_ID_DTI up are dti.ko's (context records,
 * blobs): -EINVAL.
 */
int dti_event_register(struct dti_info *trace, struct dti_event_type *type)
{
	return __dti_event_register(trace, type, false);
}
EXPORT_SYMBOL_GPL(dti_event_register);

/**
 * __dti_event_register - register an event type, dti.ko's own included
 * @trace: the channel
 * @type: the type
 * @own: @type is one of dti.ko's, whose ids are DTI_EVENT_ID_DTI and up
 *
 * Context: process context; sleeps.  Must not race with the channel's
 * unregistration.
 * Return: as dti_event_register(); -EINVAL also for an id of dti.ko's
 * given by anyone else.
 */
int __dti_event_register(struct dti_info *trace, struct dti_event_type *type,
			 bool own)
{
	struct dti_event_table *old, *new;
	char layout[DTI_EVENT_ARGS_MAX];
	struct dti_channel *ch;
	size_t name_len, fmt_len, bytes;
	unsigned int i;
	int n, ret;

	if (IS_ERR_OR_NULL(trace) || !type || !type->name ||
	    dti_check_name(type->name) || !type->fmt)
		return -EINVAL;
	if (dti_event_id_own(type->id) != own)
		return -EINVAL;
	name_len = strlen(type->name);
	fmt_len = strnlen(type->fmt, DTI_EVENT_FMT_MAX + 1);
	if (fmt_len > DTI_EVENT_FMT_MAX)
		return -ENAMETOOLONG;
	n = dti_event_parse(type->fmt, fmt_len, layout);
	if (n < 0)
		return n;

	mutex_lock(&dti_event_mutex);
	ch = dti_event_channel(trace);
	ret = -ENODEV;
	if (!ch)
		goto out;
	ret = -EBUSY;
	if (type->owner)
		goto out;
	old = rcu_dereference_protected(ch->events,
					lockdep_is_held(&dti_event_mutex));
	ret = -EEXIST;
	for (i = 0; old && i < old->n; i++)
		if (old->types[i]->id == type->id ||
		    !strcmp(old->types[i]->name, type->name))
			goto out;
	type->nargs = n;
	memcpy(type->layout, layout, n);
	ret = dti_event_build(type, name_len, fmt_len);
	if (ret)
		goto out;
	bytes = (old ? old->bytes : 0) + dti_event_format_size(type);
	ret = -ENOSPC;
	if ((old && old->n == DTI_EVENT_TYPES_MAX) ||
	    bytes > ch->subbuf_size / DTI_EVENT_FRAME_SHARE)
		goto err_format;
	ret = -ENOMEM;
	new = kzalloc(struct_size(new, types, (old ? old->n : 0) + 1), GFP_KERNEL);
	if (!new)
		goto err_format;
	new->gen = (old ? old->gen : 0) + 1;
	new->n = (old ? old->n : 0) + 1;
	new->bytes = bytes;
	if (old)
		memcpy(new->types, old->types, old->n * sizeof(*new->types));
	new->types[new->n - 1] = type;
	/*
	 * The table first, then the owner that lets writers log the type:
	 * a writer that sees the owner (acquire, dti_event_log_raw()) sees
	 * this table, so its sub-buffer is switched to one that carries the
	 * type's format before the first record of the type goes in.
	 */
	rcu_assign_pointer(ch->events, new);
	smp_store_release(&type->owner, trace);	/* pairs with dti_event_log_raw() */
	mutex_unlock(&dti_event_mutex);
	if (old)
		kfree_rcu(old, rcu);
	return 0;

err_format:
	kfree(type->format);
	type->format = NULL;
out:
	mutex_unlock(&dti_event_mutex);
	return ret;
}

/**
 * dti_event_resize_begin - keep a channel's event types as they are
 * @ch: channel about to get sub-buffers of @subbuf_size bytes
 * @subbuf_size: their size
 *
 * Takes dti_event_mutex, so that no type is registered while the
 * sub-buffers change size: their formats must fit the share of every
 * sub-buffer that registration checked them against.
 *
 * Context: process context; may sleep.
 * Return: 0, the mutex held until dti_event_resize_end(); -ENOSPC, not
 * held, if the formats of the channel's types would not fit.
 */
int dti_event_resize_begin(struct dti_channel *ch, size_t subbuf_size)
{
	struct dti_event_table *t;

	mutex_lock(&dti_event_mutex);
	t = rcu_dereference_protected(ch->events, lockdep_is_held(&dti_event_mutex));
	if (t && t->bytes > subbuf_size / DTI_EVENT_FRAME_SHARE) {
		mutex_unlock(&dti_event_mutex);
		return -ENOSPC;
	}
	return 0;
}

/* Let event types be registered again after dti_event_resize_begin(). */
void dti_event_resize_end(void)
{
	mutex_unlock(&dti_event_mutex);
}

/**
 * dti_event_release - forget a channel's event types
 * @ch: channel no writer can reach any more
 *
 * The types can be registered again, on this channel's successor.  A
 * channel without types takes no lock: dti_ctl_create() frees the
 * channel it could not add from any context, and such a channel never
 * had types (drivers register them on channels they own).
 *
 * Context: process context if @ch has event types; any context if not.
 */
void dti_event_release(struct dti_channel *ch)
{
	struct dti_event_table *t;
	unsigned int i;

	if (!rcu_access_pointer(ch->events))
		return;
	mutex_lock(&dti_event_mutex);
	t = rcu_dereference_protected(ch->events, lockdep_is_held(&dti_event_mutex));
	RCU_INIT_POINTER(ch->events, NULL);
	for (i = 0; t && i < t->n; i++) {
		kfree(t->types[i]->format);
		t->types[i]->format = NULL;
		WRITE_ONCE(t->types[i]->owner, NULL);
	}
	mutex_unlock(&dti_event_mutex);
	kfree(t);
}

/**
 * dti_event_frame - write the formats at the start of a sub-buffer
 * @ch: channel
 * @buf: the CPU's buffer
 * @at: where the first format record goes, right after the header
 * @bytes: set to the bytes the format records take
 *
 * Notes the generation of the table written in @buf's CPU's trigger
 * data, so that dti_event_stale() knows which types the sub-buffer
 * describes.  Registration keeps the formats within a quarter of a
 * sub-buffer.
 *
 * Context: interrupts disabled and the channel's write guard held on
 * @buf's CPU, or process context before any writer can reach @buf.
 * Return: the number of format records written.
 */
unsigned int dti_event_frame(struct dti_channel *ch, struct rchan_buf *buf,
			     void *at, size_t *bytes)
{
	struct dti_event_table *t;
	struct dti_crec *rec;
	unsigned int i, n = 0;

	*bytes = 0;
	rcu_read_lock_sched();
	t = rcu_dereference_sched(ch->events);
	for (i = 0; t && i < t->n; i++) {
		const struct dti_event_type *type = t->types[i];

		/* Level 0, no time of its own, no number, no caller. */
		rec = at + *bytes;
		memset(rec, 0, dti_event_format_size(type));
		rec->len = type->format_len;
		rec->flags = DTI_REC_FORMAT;
		memcpy(rec + 1, type->format, type->format_len);
		*bytes += dti_event_format_size(type);
		n++;
	}
	per_cpu_ptr(ch->trigger, buf->cpu)->events_gen = t ? t->gen : 0;
	rcu_read_unlock_sched();
	return n;
}

/**
 * dti_event_stale - does this CPU's sub-buffer lack formats?
 * @ch: channel
 * @cpu: this CPU
 *
 * Context: interrupts disabled, the channel's write guard held.
 * Return: true if types were registered since the CPU's current
 * sub-buffer was started.
 */
bool dti_event_stale(struct dti_channel *ch, unsigned int cpu)
{
	struct dti_event_table *t = rcu_dereference_sched(ch->events);

	return t && per_cpu_ptr(ch->trigger, cpu)->events_gen != t->gen;
}

/**
 * dti_event_formats - count the format records a sub-buffer starts with
 * @subbuf: the sub-buffer, its header first
 * @size: bytes of the sub-buffer
 * @records: records its header counts
 *
 * Return: how many of @records are DTI_REC_FORMAT records.
 */
unsigned int dti_event_formats(const void *subbuf, size_t size, u32 records)
{
	struct dti_walk w;
	struct dti_rview v;
	unsigned int n = 0;

	if (!dti_walk_start(&w, subbuf, size, records))
		return 0;
	while (dti_walk_next(&w, &v) && (v.flags & DTI_REC_FORMAT))
		n++;
	return n;
}

/* Read a value of @size bytes at @p as an unsigned number */
static u64 dti_event_get(const u8 *p, unsigned int size)
{
	switch (size) {
	case 1:
		return *p;
	case 2:
		return get_unaligned((const u16 *)p);
	case 4:
		return get_unaligned((const u32 *)p);
	}
	return get_unaligned((const u64 *)p);
}

static void dti_event_put(u8 *p, unsigned int size, u64 v)
{
	switch (size) {
	case 1:
		*p = v;
		break;
	case 2:
		put_unaligned((u16)v, (u16 *)p);
		break;
	case 4:
		put_unaligned((u32)v, (u32 *)p);
		break;
	default:
		put_unaligned(v, (u64 *)p);
	}
}

/**
 * dti_event_pack - pack an event's values
 * @type: its type, registered
 * @out: DTI_TEXT_MAX bytes
 * @args: the values, as the template says
 * @truncated: set if a string or byte array was cut to fit
 *
 * Strings are cut at DTI_EVENT_STR_MAX bytes, byte arrays at
 * DTI_EVENT_HEX_MAX, and both to what is left of DTI_TEXT_MAX.
 *
 * Context: any; reads the strings the caller passes.
 * Return: bytes of payload at @out.
 */
size_t dti_event_pack(const struct dti_event_type *type, u8 *out, va_list args,
		      bool *truncated)
{
	size_t pos = sizeof(u16), fixed = sizeof(u16), room, n;
	unsigned int i, size;
	const char *s;
	int len;

	for (i = 0; i < type->nargs; i++)
		fixed += dti_event_arg_size(type->layout[i]) ?: sizeof(u16);
	room = DTI_TEXT_MAX - fixed;
	put_unaligned(type->id, (u16 *)out);
	for (i = 0; i < type->nargs; i++) {
		char arg = type->layout[i];

		size = dti_event_arg_size(arg);
		if (arg == DTI_ARG_S64 || arg == DTI_ARG_U64) {
			dti_event_put(out + pos, size, va_arg(args, u64));
		} else if (arg == DTI_ARG_PTR) {
			dti_event_put(out + pos, size,
				      (unsigned long)va_arg(args, void *));
		} else if (size) {
			dti_event_put(out + pos, size, va_arg(args, unsigned int));
		} else {
			if (arg == DTI_ARG_STR) {
				s = va_arg(args, const char *);
				if (!s)
					s = "(null)";
				n = strnlen(s, DTI_EVENT_STR_MAX + 1);
				if (n > DTI_EVENT_STR_MAX) {
					n = DTI_EVENT_STR_MAX;
					*truncated = true;
				}
			} else {
				len = va_arg(args, int);
				s = va_arg(args, const char *);
				n = clamp(len, 0, DTI_EVENT_HEX_MAX);
				if (!s)
					n = 0;
			}
			if (n > room) {
				n = room;
				*truncated = true;
			}
			room -= n;
			put_unaligned((u16)n, (u16 *)(out + pos));
			memcpy(out + pos + sizeof(u16), s, n);
			pos += n;
			size = sizeof(u16);
		}
		pos += size;
	}
	return pos;
}

/*
 * Print one integer conversion @spec (a copy of the template's, its
 * length modifier replaced by "ll") with @v, sign-extended from @size
 * bytes if @arg is signed.
 */
static void dti_event_int(struct seq_file *m, const char *spec, size_t speclen,
			  char arg, unsigned int size, u64 v)
{
	char f[DTI_EVENT_SPEC_MAX + 4];
	size_t i, o = 0;

	for (i = 0; i < speclen - 1; i++)
		if (spec[i] != 'h' && spec[i] != 'l')
			f[o++] = spec[i];
	f[o++] = 'l';
	f[o++] = 'l';
	f[o++] = spec[speclen - 1];
	f[o] = '\0';
	if (arg == DTI_ARG_S8 || arg == DTI_ARG_S16 || arg == DTI_ARG_S32 ||
	    arg == DTI_ARG_S64)
		seq_printf(m, f, (long long)sign_extend64(v, size * 8 - 1));
	else
		seq_printf(m, f, (unsigned long long)v);
}

/**
 * dti_event_show - print an event through its format
 * @m: where
 * @fmt: the payload of its type's DTI_REC_FORMAT record, @fmt_len bytes
 *	 (read from a buffer: not trusted)
 * @fmt_len: its bytes
 * @data: the event's payload, its id first
 * @len: its bytes
 *
 * Return: 0, or -EINVAL if the format or the payload does not hold
 * together (the caller prints the payload as hex).
 */
int dti_event_show(struct seq_file *m, const void *fmt, size_t fmt_len,
		   const u8 *data, size_t len)
{
	const struct dti_event_format *f = fmt;
	char layout[DTI_EVENT_ARGS_MAX], sbuf[DTI_EVENT_STR_MAX + 1];
	char spec[DTI_EVENT_SPEC_MAX + 1];
	const char *tmpl, *p, *end, *lit;
	size_t pos = sizeof(u16), n;
	unsigned int i = 0, size;
	int k;
	char arg;

	if (len < sizeof(u16) || fmt_len < sizeof(*f) || f->nargs > DTI_EVENT_ARGS_MAX ||
	    fmt_len != sizeof(*f) + f->name_len + f->nargs + f->fields_len + f->fmt_len)
		return -EINVAL;
	tmpl = (const char *)(f + 1) + f->name_len + f->nargs + f->fields_len;
	end = tmpl + f->fmt_len;
	if (dti_event_parse(tmpl, f->fmt_len, layout) != f->nargs ||
	    memcmp(layout, (const char *)(f + 1) + f->name_len, f->nargs))
		return -EINVAL;
	/* the values must be whole before anything is printed */
	for (i = 0; i < f->nargs; i++) {
		size = dti_event_arg_size(layout[i]);
		if (!size) {
			if (len - pos < sizeof(u16))
				return -EINVAL;
			size = sizeof(u16) + get_unaligned((const u16 *)(data + pos));
		}
		if (len - pos < size)
			return -EINVAL;
		pos += size;
	}
	if (pos != len)
		return -EINVAL;

	pos = sizeof(u16);
	i = 0;
	for (lit = p = tmpl; (p = memchr(p, '%', end - p)); lit = p) {
		k = dti_event_conv(p, end, &arg);
		seq_write(m, lit, p - lit);
		if (!arg) {
			seq_putc(m, '%');
			p += k;
			continue;
		}
		arg = layout[i++];
		size = dti_event_arg_size(arg);
		if (arg == DTI_ARG_PTR) {
			seq_printf(m, "%016llx", dti_event_get(data + pos, size));
		} else if (size) {
			dti_event_int(m, p, k, arg, size, dti_event_get(data + pos, size));
		} else {
			n = get_unaligned((const u16 *)(data + pos));
			pos += sizeof(u16);
			memcpy(spec, p, k);
			spec[k] = '\0';
			if (arg == DTI_ARG_STR) {
				memcpy(sbuf, data + pos, min_t(size_t, n, DTI_EVENT_STR_MAX));
				sbuf[min_t(size_t, n, DTI_EVENT_STR_MAX)] = '\0';
				seq_printf(m, spec, sbuf);
			} else {
				seq_printf(m, spec, (int)min_t(size_t, n, DTI_EVENT_HEX_MAX),
					   data + pos);
			}
			size = n;
		}
		pos += size;
		p += k;
	}
	seq_write(m, lit, end - lit);
	return 0;
}

/**
 * dti_event_formats_show - the "formats" file of a channel
 * @m: the file
 * @ch: the channel
 *
 * One line per type, in the order of registration: the id, the name,
 * the layout (DTI_ARG_* characters, "-" if none), the field names
 * separated by commas ("-" if none) and the template in double quotes,
 * with backslash, double quote, newline, tab and the other bytes outside
 * printable ASCII escaped as C writes them in a string (\xNN for the
 * others).
 */
void dti_event_formats_show(struct seq_file *m, struct dti_channel *ch)
{
	const struct dti_event_format *f;
	struct dti_event_table *t;
	const char *p;
	unsigned int i, j;

	mutex_lock(&dti_event_mutex);
	t = rcu_dereference_protected(ch->events, lockdep_is_held(&dti_event_mutex));
	for (i = 0; t && i < t->n; i++) {
		f = t->types[i]->format;
		p = (const char *)(f + 1);
		seq_printf(m, "%u %.*s %.*s %.*s \"", f->id, f->name_len, p,
			   f->nargs ? f->nargs : 1, f->nargs ? p + f->name_len : "-",
			   f->fields_len ? f->fields_len : 1,
			   f->fields_len ? p + f->name_len + f->nargs : "-");
		p += f->name_len + f->nargs + f->fields_len;
		for (j = 0; j < f->fmt_len; j++) {
			unsigned char c = p[j];

			if (c == '\\' || c == '"')
				seq_printf(m, "\\%c", c);
			else if (c == '\n')
				seq_puts(m, "\\n");
			else if (c == '\t')
				seq_puts(m, "\\t");
			else if (c < ' ' || c > '~')
				seq_printf(m, "\\x%02x", c);
			else
				seq_putc(m, c);
		}
		seq_puts(m, "\"\n");
	}
	mutex_unlock(&dti_event_mutex);
}
