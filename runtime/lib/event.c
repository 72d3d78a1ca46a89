// SPDX-License-Identifier: LGPL-2.1
/*
 * libdti: event types (<linux/dti_record.h>): the formats that frame the
 * sub-buffers of a channel with event types (DTI_REC_FORMAT records) are
 * learnt as they are read, and the events (DTI_REC_TYPED records) are
 * printed through them: as text that equals what the kernel's printf
 * prints with the same template and values, and as named JSON fields.
 *
 * Formats are read from the data, so nothing about them is trusted: a
 * format is kept only if its template parses to the layout it states,
 * with as many field names, and an event only prints through it if its
 * values fill the layout exactly.  Otherwise the event prints as the
 * binary record it is (hex).
 */
#include <byteswap.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdti-local.h"

/* Bytes of a conversion specification, '%' to the conversion character */
#define DTI_SPEC_MAX	24

/* What a conversion of a template is */
struct dti_conv {
	char arg;		/* DTI_ARG_*, 0 for %% */
	char conv;		/* d i u x X s p h(ex) */
	char hexsep;		/* %*ph: ' ', ':', '-' or 0 */
	bool left, plus, space, special, zero;
	int width, prec;	/* -1 if not given */
	size_t len;		/* bytes of the specification */
};

static bool dti_arg_signed(char arg)
{
	return arg == DTI_ARG_S8 || arg == DTI_ARG_S16 || arg == DTI_ARG_S32 ||
	       arg == DTI_ARG_S64;
}

/* Digits at *@q as a number, at most DTI_EVENT_WIDTH_MAX + 1 */
static int dti_digits(const char **q, const char *end)
{
	int n = 0;

	for (; *q < end && isdigit((unsigned char)**q); ++*q)
		if (n <= DTI_EVENT_WIDTH_MAX)
			n = n * 10 + (**q - '0');
	return n;
}

/*
 * The conversion at @p (a '%') of a template ending at @end, as dti.ko
 * parses it (dti_event.c): 0, or -1 if DTI does not support it.
 * @long_size: bytes of the writing kernel's long, for %ld.
 */
static int dti_conv_parse(const char *p, const char *end, unsigned int long_size,
			  struct dti_conv *c)
{
	const char *q = p + 1;
	unsigned int size = 4;
	char len[3] = "";

	memset(c, 0, sizeof(*c));
	c->width = c->prec = -1;
	if (q < end && *q == '%') {
		c->len = 2;
		return 0;
	}
	if (end - q >= 3 && !memcmp(q, "*ph", 3)) {
		q += 3;
		c->arg = DTI_ARG_HEX;
		c->conv = 'h';
		c->hexsep = ' ';
		if (q < end && *q && strchr("CDN", *q)) {
			c->hexsep = *q == 'C' ? ':' : *q == 'D' ? '-' : 0;
			q++;
		}
		c->len = q - p;
		return 0;
	}
	for (; q < end && *q && strchr("-+ #0", *q); q++) {
		c->left |= *q == '-';
		c->plus |= *q == '+';
		c->space |= *q == ' ';
		c->special |= *q == '#';
		c->zero |= *q == '0';
	}
	if (q < end && isdigit((unsigned char)*q))
		c->width = dti_digits(&q, end);
	if (q < end && *q == '.') {
		q++;
		c->prec = dti_digits(&q, end);
	}
	if (c->width > DTI_EVENT_WIDTH_MAX || c->prec > DTI_EVENT_WIDTH_MAX)
		return -1;
	if (q < end && (*q == 'h' || *q == 'l')) {
		len[0] = *q++;
		if (q < end && *q == len[0])
			len[1] = *q++;
	}
	if (q >= end || q - p >= DTI_SPEC_MAX)
		return -1;
	c->conv = *q;
	size = !strcmp(len, "hh") ? 1 : !strcmp(len, "h") ? 2 : !strcmp(len, "ll") ? 8 :
	       !strcmp(len, "l") ? long_size : 4;
	switch (*q) {
	case 'd': case 'i': case 'u': case 'x': case 'X':
		c->arg = size == 1 ? DTI_ARG_S8 : size == 2 ? DTI_ARG_S16 :
			 size == 8 ? DTI_ARG_S64 : DTI_ARG_S32;
		if (*q != 'd' && *q != 'i')	/* the unsigned kinds are upper case */
			c->arg = toupper((unsigned char)c->arg);
		break;
	case 's':
		if (len[0])
			return -1;
		c->arg = DTI_ARG_STR;
		break;
	case 'p':
		if (c->left || c->plus || c->space || c->special || c->zero ||
		    c->width >= 0 || c->prec >= 0 || len[0] || q + 1 >= end || q[1] != 'x')
			return -1;
		c->arg = DTI_ARG_PTR;
		q++;
		break;
	default:
		return -1;
	}
	c->len = q + 1 - p;
	return 0;
}

/* The layout of template @fmt (@len bytes) into @layout: values, or -1. */
static int dti_layout(const char *fmt, size_t len, unsigned int long_size,
		      char *layout)
{
	const char *p = fmt, *end = fmt + len;
	struct dti_conv c;
	int n = 0;

	while ((p = memchr(p, '%', end - p))) {
		if (dti_conv_parse(p, end, long_size, &c) < 0)
			return -1;
		p += c.len;
		if (!c.arg)
			continue;
		if (n == DTI_EVENT_ARGS_MAX)
			return -1;
		layout[n++] = c.arg;
	}
	return n;
}

/*
 * A DTI_REC_FORMAT payload (@len bytes at @p, in the byte order @swapped
 * says) as @f: 0, or -1 if it does not hold together.
 */
static int dti_evfmt_parse(const unsigned char *p, size_t len, bool swapped,
			   struct dti_evfmt *f)
{
	struct dti_event_format h;
	const char *name, *layout, *fields, *fmt, *q;
	char mine[DTI_EVENT_ARGS_MAX];
	unsigned int i, long_size;
	size_t n;

	if (len < sizeof(h))
		return -1;
	memcpy(&h, p, sizeof(h));
	if (swapped) {
		h.id = bswap_16(h.id);
		h.fields_len = bswap_16(h.fields_len);
		h.fmt_len = bswap_16(h.fmt_len);
	}
	if (h.nargs > DTI_EVENT_ARGS_MAX || !h.name_len || h.name_len > DTI_NAME_MAX ||
	    h.fmt_len > DTI_EVENT_FMT_MAX ||
	    len != sizeof(h) + h.name_len + h.nargs + h.fields_len + h.fmt_len)
		return -1;
	name = (const char *)p + sizeof(h);
	layout = name + h.name_len;
	fields = layout + h.nargs;
	fmt = fields + h.fields_len;
	memset(f, 0, sizeof(*f));
	f->id = h.id;
	f->nargs = h.nargs;
	f->swapped = swapped;
	memcpy(f->name, name, h.name_len);
	memcpy(f->fmt, fmt, h.fmt_len);
	f->fmt_len = h.fmt_len;
	memcpy(f->layout, layout, h.nargs);
	for (i = 0; i < h.name_len; i++)
		if (!isgraph((unsigned char)name[i]))
			return -1;
	/* %ld: the long of the kernel that wrote it, 8 bytes or 4 */
	for (long_size = 8; long_size >= 4; long_size -= 4)
		if (dti_layout(fmt, h.fmt_len, long_size, mine) == h.nargs &&
		    !memcmp(mine, layout, h.nargs))
			break;
	if (long_size < 4)
		return -1;
	f->long_size = long_size;
	/* nargs names, C identifiers separated by commas */
	for (i = 0, q = fields; i < h.nargs; i++) {
		const char *comma = memchr(q, ',', fields + h.fields_len - q);

		n = (comma ? comma : fields + h.fields_len) - q;
		if (!n || n >= sizeof(f->fields[i]) || isdigit((unsigned char)*q))
			return -1;
		memcpy(f->fields[i], q, n);
		for (size_t k = 0; k < n; k++)
			if (!isalnum((unsigned char)q[k]) && q[k] != '_')
				return -1;
		q += n;
		if (i + 1 < h.nargs) {
			if (q >= fields + h.fields_len || *q != ',')
				return -1;
			q++;
		}
	}
	return q == fields + h.fields_len ? 0 : -1;
}

int dti_events_learn(struct dti_events *ev, const void *payload, size_t len,
		     bool swapped)
{
	struct dti_evfmt f, *n;
	unsigned int i;

	if (dti_evfmt_parse(payload, len, swapped, &f) < 0)
		return 1;
	for (i = 0; i < ev->n; i++)
		if (ev->f[i].id == f.id)
			return 0;	/* the first of an id is kept */
	if (ev->n == ev->cap) {
		n = realloc(ev->f, (ev->cap ? 2 * ev->cap : 8) * sizeof(*n));
		if (!n)
			return dti_fail(ENOMEM, "out of memory for event formats");
		ev->f = n;
		ev->cap = ev->cap ? 2 * ev->cap : 8;
	}
	ev->f[ev->n++] = f;
	return 0;
}

void dti_events_free(struct dti_events *ev)
{
	free(ev->f);
	memset(ev, 0, sizeof(*ev));
}

const struct dti_evfmt *dti_events_find(const struct dti_events *ev,
					const struct dti_rec *rec)
{
	uint16_t id;
	unsigned int i;

	if (!(rec->flags & DTI_REC_TYPED) || rec->len < sizeof(id))
		return NULL;
	memcpy(&id, rec->payload, sizeof(id));
	if (rec->swapped)
		id = bswap_16(id);
	for (i = 0; i < ev->n; i++)
		if (ev->f[i].id == id)
			return &ev->f[i];
	return NULL;
}

/* The values of an event, checked against the layout */
struct dti_values {
	const unsigned char *p[DTI_EVENT_ARGS_MAX];	/* each value's bytes */
	uint16_t n[DTI_EVENT_ARGS_MAX];			/* strings, arrays: their length */
};

static int dti_values(const struct dti_evfmt *f, const struct dti_rec *rec,
		      struct dti_values *v)
{
	const unsigned char *p = rec->payload;
	size_t pos = sizeof(uint16_t), size;
	uint16_t n;
	unsigned int i;

	for (i = 0; i < f->nargs; i++) {
		size = dti_event_arg_size(f->layout[i]);
		if (!size) {
			if (rec->len - pos < sizeof(n))
				return -1;
			memcpy(&n, p + pos, sizeof(n));
			if (rec->swapped)
				n = bswap_16(n);
			if (n > (f->layout[i] == DTI_ARG_STR ? DTI_EVENT_STR_MAX : DTI_EVENT_HEX_MAX))
				return -1;
			pos += sizeof(n);
			v->n[i] = n;
			size = n;
		}
		if (rec->len - pos < size)
			return -1;
		v->p[i] = p + pos;
		pos += size;
	}
	return pos == rec->len ? 0 : -1;
}

/* Value @i of @v as a 64-bit number, sign-extended if its kind is signed */
static uint64_t dti_value_num(const struct dti_evfmt *f, const struct dti_values *v,
			      unsigned int i, bool swapped)
{
	unsigned int size = dti_event_arg_size(f->layout[i]);
	uint64_t x = 0;
	uint8_t b;
	uint16_t h;
	uint32_t w;

	switch (size) {
	case 1:
		memcpy(&b, v->p[i], 1);
		x = dti_arg_signed(f->layout[i]) ? (uint64_t)(int64_t)(int8_t)b : b;
		break;
	case 2:
		memcpy(&h, v->p[i], 2);
		h = swapped ? bswap_16(h) : h;
		x = dti_arg_signed(f->layout[i]) ? (uint64_t)(int64_t)(int16_t)h : h;
		break;
	case 4:
		memcpy(&w, v->p[i], 4);
		w = swapped ? bswap_32(w) : w;
		x = dti_arg_signed(f->layout[i]) ? (uint64_t)(int64_t)(int32_t)w : w;
		break;
	default:
		memcpy(&x, v->p[i], 8);
		x = swapped ? bswap_64(x) : x;
	}
	return x;
}

int dti_event_value(const struct dti_evfmt *f, const struct dti_rec *rec,
		    unsigned int i, const unsigned char **data, size_t *len,
		    uint64_t *num)
{
	struct dti_values v;

	if (i >= f->nargs || dti_values(f, rec, &v) < 0)
		return -1;
	*data = v.p[i];
	*len = v.n[i];
	*num = 0;
	if (f->layout[i] != DTI_ARG_STR && f->layout[i] != DTI_ARG_HEX)
		*num = dti_value_num(f, &v, i, rec->swapped);
	return 0;
}

/* Output of the formatting functions: a buffer that is never overrun */
struct dti_out {
	char *p, *end;
};

static void dti_putc(struct dti_out *o, char c)
{
	if (o->p < o->end)
		*o->p++ = c;
}

static void dti_putn(struct dti_out *o, const char *s, size_t n)
{
	while (n--)
		dti_putc(o, *s++);
}

/*
 * A number as the kernel's printf prints it (lib/vsprintf.c): unlike
 * C's, "%#x" of 0 is "0x0", and a precision does not turn the 0 flag off.
 */
static void dti_number(struct dti_out *o, uint64_t num, const struct dti_conv *c,
		       bool is_signed)
{
	const char *digits = c->conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
	unsigned int base = c->conv == 'x' || c->conv == 'X' ? 16 : 10;
	bool zero = c->zero && !c->left;
	int width = c->width < 0 ? 0 : c->width, prec = c->prec, i = 0;
	char tmp[24], sign = 0;

	if (is_signed) {
		if ((int64_t)num < 0) {
			sign = '-';
			num = -num;
		} else if (c->plus) {
			sign = '+';
		} else if (c->space) {
			sign = ' ';
		}
		if (sign)
			width--;
	}
	if (c->special && base == 16)
		width -= 2;
	do {
		tmp[i++] = digits[num % base];
		num /= base;
	} while (num);
	if (i > prec)
		prec = i;
	width -= prec;
	if (!zero && !c->left)
		for (; width > 0; width--)
			dti_putc(o, ' ');
	if (sign)
		dti_putc(o, sign);
	if (c->special && base == 16) {
		dti_putc(o, '0');
		dti_putc(o, c->conv == 'X' ? 'X' : 'x');
	}
	if (!c->left)
		for (; width > 0; width--)
			dti_putc(o, zero ? '0' : ' ');
	for (; prec > i; prec--)
		dti_putc(o, '0');
	while (i > 0)
		dti_putc(o, tmp[--i]);
	for (; width > 0; width--)
		dti_putc(o, ' ');
}

static void dti_string(struct dti_out *o, const unsigned char *s, size_t n,
		       const struct dti_conv *c)
{
	size_t len = c->prec >= 0 && (size_t)c->prec < n ? (size_t)c->prec : n;
	int pad = c->width > (int)len ? c->width - (int)len : 0;

	if (!c->left)
		for (; pad > 0; pad--)
			dti_putc(o, ' ');
	dti_putn(o, (const char *)s, len);
	for (; pad > 0; pad--)
		dti_putc(o, ' ');
}

static void dti_hexbytes(struct dti_out *o, const unsigned char *s, size_t n, char sep)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		if (i && sep)
			dti_putc(o, sep);
		dti_putc(o, hex[s[i] >> 4]);
		dti_putc(o, hex[s[i] & 15]);
	}
}

int dti_event_text(const struct dti_evfmt *f, const struct dti_rec *rec, char *buf,
		   size_t size)
{
	const char *p = f->fmt, *end = f->fmt + f->fmt_len, *lit = p;
	struct dti_out o = { buf, buf + size };
	struct dti_values v;
	struct dti_conv c;
	unsigned int i = 0;
	char ptr[17];

	if (dti_values(f, rec, &v) < 0)
		return -1;
	while ((p = memchr(p, '%', end - p))) {
		dti_putn(&o, lit, p - lit);
		dti_conv_parse(p, end, f->long_size, &c);	/* parsed when learnt */
		p += c.len;
		lit = p;
		if (!c.arg) {
			dti_putc(&o, '%');
			continue;
		}
		if (c.arg == DTI_ARG_PTR) {
			snprintf(ptr, sizeof(ptr), "%016llx",
				 (unsigned long long)dti_value_num(f, &v, i, rec->swapped));
			dti_putn(&o, ptr, 16);
		} else if (c.arg == DTI_ARG_STR) {
			dti_string(&o, v.p[i], v.n[i], &c);
		} else if (c.arg == DTI_ARG_HEX) {
			dti_hexbytes(&o, v.p[i], v.n[i], c.hexsep);
		} else {
			dti_number(&o, dti_value_num(f, &v, i, rec->swapped), &c,
				   c.conv == 'd' || c.conv == 'i');
		}
		i++;
	}
	dti_putn(&o, lit, end - lit);
	return o.p - buf;
}

/*
 * @n bytes at @s as a JSON string, escaped as a payload is (format.c).
 * An event's JSON (DTI_EVENT_JSON_MAX) has room for its name and every
 * string escaped whole; were it short, the string would be cut.
 */
static void dti_json_str(struct dti_out *o, const unsigned char *s, size_t n)
{
	size_t done;

	dti_putc(o, '"');
	o->p = dti_json_chars(o->p, o->end, s, n, &done);
	dti_putc(o, '"');
}

int dti_event_json(const struct dti_evfmt *f, const struct dti_rec *rec, char *buf,
		   size_t size)
{
	static const char hex[] = "0123456789abcdef";
	struct dti_out o = { buf, buf + size };
	struct dti_values v;
	char num[32];
	unsigned int i;
	bool wide;
	size_t k;
	uint64_t x;

	if (dti_values(f, rec, &v) < 0)
		return -1;
	dti_putn(&o, ",\"event\":", 9);
	dti_json_str(&o, (const unsigned char *)f->name, strlen(f->name));
	dti_putn(&o, num, snprintf(num, sizeof(num), ",\"id\":%u,\"fields\":{", f->id));
	for (i = 0; i < f->nargs; i++) {
		if (i)
			dti_putc(&o, ',');
		dti_putc(&o, '"');
		dti_putn(&o, f->fields[i], strlen(f->fields[i]));
		dti_putn(&o, "\":", 2);
		switch (f->layout[i]) {
		case DTI_ARG_STR:
			dti_json_str(&o, v.p[i], v.n[i]);
			break;
		case DTI_ARG_HEX:
			dti_putc(&o, '"');
			for (k = 0; k < v.n[i]; k++) {
				dti_putc(&o, hex[v.p[i][k] >> 4]);
				dti_putc(&o, hex[v.p[i][k] & 15]);
			}
			dti_putc(&o, '"');
			break;
		case DTI_ARG_PTR:
			dti_putn(&o, num, snprintf(num, sizeof(num), "\"0x%016llx\"",
						   (unsigned long long)dti_value_num(f, &v, i, rec->swapped)));
			break;
		default:
			/* 64-bit values as strings (protobuf's JSON mapping): exact in jq */
			x = dti_value_num(f, &v, i, rec->swapped);
			wide = dti_event_arg_size(f->layout[i]) == sizeof(uint64_t);
			if (wide)
				dti_putc(&o, '"');
			dti_putn(&o, num, dti_arg_signed(f->layout[i]) ?
				 snprintf(num, sizeof(num), "%lld", (long long)x) :
				 snprintf(num, sizeof(num), "%llu", (unsigned long long)x));
			if (wide)
				dti_putc(&o, '"');
		}
	}
	dti_putc(&o, '}');
	return o.p - buf;
}
