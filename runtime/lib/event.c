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
 *
 * Speed: a template is parsed once, when its format is learnt, into the
 * text between its conversions and the conversions themselves, and the
 * JSON around an event's values is made then too; an event's values are
 * found once for its text and its JSON (dti_event_values()), and numbers
 * are written digit by digit in place, without printf.
 */
#include <byteswap.h>
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdti-local.h"

/* Bytes of a conversion specification, '%' to the conversion character */
#define DTI_SPEC_MAX	24

#define DTI_DEC_ROW(d) d "0" d "1" d "2" d "3" d "4" d "5" d "6" d "7" d "8" d "9"
/* "00" "01" ... "99": two decimal digits at a time */
static const char dti_dec2[] =
	DTI_DEC_ROW("0") DTI_DEC_ROW("1") DTI_DEC_ROW("2") DTI_DEC_ROW("3")
	DTI_DEC_ROW("4") DTI_DEC_ROW("5") DTI_DEC_ROW("6") DTI_DEC_ROW("7")
	DTI_DEC_ROW("8") DTI_DEC_ROW("9");

static const char dti_hexdig[2][17] = { "0123456789abcdef", "0123456789ABCDEF" };

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

/* Whether JSON takes @c in a string as it is (dti_json_chars()): printable ASCII */
static bool dti_json_plain(char c)
{
	return c >= ' ' && c <= '~' && c != '"' && c != '\\';
}

/*
 * What printing an event through @f needs, made once: the template's
 * conversions parsed and the text around them, and the JSON around the
 * values.  @f holds together (dti_evfmt_parse()).
 */
static void dti_evfmt_prepare(struct dti_evfmt *f)
{
	const char *p = f->fmt, *end = f->fmt + f->fmt_len, *lit = p;
	char *q = f->lit, *lim = f->head + sizeof(f->head);
	unsigned int i = 0;
	struct dti_conv c;
	size_t done, k;

	f->plain = true;
	while ((p = memchr(p, '%', end - p))) {
		memcpy(q, lit, p - lit);
		q += p - lit;
		dti_conv_parse(p, end, f->long_size, &c);
		p += c.len;
		lit = p;
		if (!c.arg) {
			*q++ = '%';
			continue;
		}
		c.size = dti_event_arg_size(c.arg);
		c.is_signed = dti_arg_signed(c.arg);
		f->plain &= c.arg != DTI_ARG_STR;
		f->lit_len[i] = q - f->lit;
		f->conv[i++] = c;
	}
	memcpy(q, lit, end - lit);
	q += end - lit;
	f->lit_len[i] = q - f->lit;
	for (k = 0; k < f->lit_len[i]; k++)
		f->plain &= dti_json_plain(f->lit[k]);
	/* the pieces' ends into their lengths */
	for (; i > 0; i--)
		f->lit_len[i] -= f->lit_len[i - 1];

	/* the name is graphic ASCII: escaped, it takes twice its bytes at most */
	_Static_assert(sizeof(",\"event\":\"\",\"id\":65535,\"fields\":{") + 2 * DTI_NAME_MAX +
		       DTI_JSON_STEP <= DTI_EVENT_HEAD_MAX, "an event's JSON head fits");
	q = (char *)memcpy(f->head, ",\"event\":\"", 10) + 10;
	q = dti_json_chars(q, lim, (const unsigned char *)f->name, strlen(f->name), &done);
	q += snprintf(q, lim - q, "\",\"id\":%u,\"fields\":{", f->id);
	f->head_len = q - f->head;
	_Static_assert(sizeof(f->fields[0]) + 4 <= DTI_EVENT_KEY_MAX, "a field's key fits");
	for (i = 0; i < f->nargs; i++)
		f->key_len[i] = snprintf(f->key[i], sizeof(f->key[i]), "%s\"%s\":",
					 i ? "," : "", f->fields[i]);
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
	dti_evfmt_prepare(&f);
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

int dti_event_values(const struct dti_evfmt *f, const struct dti_rec *rec,
		     struct dti_values *v)
{
	const unsigned char *p = rec->payload;
	size_t pos = sizeof(uint16_t), size;
	uint16_t n;
	unsigned int i;

	v->swapped = rec->swapped;
	for (i = 0; i < f->nargs; i++) {
		size = f->conv[i].size;
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
static inline uint64_t dti_value_num(const struct dti_evfmt *f,
				     const struct dti_values *v, unsigned int i)
{
	bool is_signed = f->conv[i].is_signed;
	uint64_t x = 0;
	uint8_t b;
	uint16_t h;
	uint32_t w;

	switch (f->conv[i].size) {
	case 1:
		memcpy(&b, v->p[i], 1);
		x = is_signed ? (uint64_t)(int64_t)(int8_t)b : b;
		break;
	case 2:
		memcpy(&h, v->p[i], 2);
		h = v->swapped ? bswap_16(h) : h;
		x = is_signed ? (uint64_t)(int64_t)(int16_t)h : h;
		break;
	case 4:
		memcpy(&w, v->p[i], 4);
		w = v->swapped ? bswap_32(w) : w;
		x = is_signed ? (uint64_t)(int64_t)(int32_t)w : w;
		break;
	default:
		memcpy(&x, v->p[i], 8);
		x = v->swapped ? bswap_64(x) : x;
	}
	return x;
}

void dti_event_value(const struct dti_evfmt *f, const struct dti_values *v,
		     unsigned int i, const unsigned char **data, size_t *len,
		     uint64_t *num)
{
	*data = v->p[i];
	*len = v->n[i];
	*num = 0;
	if (f->layout[i] != DTI_ARG_STR && f->layout[i] != DTI_ARG_HEX)
		*num = dti_value_num(f, v, i);
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

/*
 * As many of @n bytes as there is room for.  Most pieces of an event are
 * a few bytes: up to 16 go as two copies of a fixed size, which overlap,
 * not as a call.
 */
static inline void dti_putn(struct dti_out *o, const char *s, size_t n)
{
	char *p = o->p;

	if (n > (size_t)(o->end - p))
		n = o->end - p;
	o->p += n;
	if (n >= 8 && n <= 16) {
		memcpy(p, s, 8);
		memcpy(p + n - 8, s + n - 8, 8);
	} else if (n >= 4 && n < 8) {
		memcpy(p, s, 4);
		memcpy(p + n - 4, s + n - 4, 4);
	} else if (n > 16) {
		memcpy(p, s, n);
	} else {
		while (n--)
			*p++ = *s++;
	}
}

static void dti_pad(struct dti_out *o, char c, int n)
{
	for (; n > 0; n--)
		dti_putc(o, c);
}

/*
 * Where @n bytes made one by one go: the output if it has room, else
 * @tmp, from which dti_made() copies what fits.  Made in place, they are
 * not copied: a copy would load them while their stores are on the way,
 * and wait for them.
 */
static inline char *dti_make(struct dti_out *o, char *tmp, size_t n)
{
	return (size_t)(o->end - o->p) >= n ? o->p : tmp;
}

static inline void dti_made(struct dti_out *o, const char *at, size_t n)
{
	if (at == o->p)
		o->p += n;
	else
		dti_putn(o, at, n);
}

/* Most digits of a 64-bit number (20 in decimal) */
#define DTI_DIGITS_MAX	20

/* Digits of @num in @base (10 or 16) */
static inline unsigned int dti_ndigits(uint64_t num, unsigned int base)
{
	static const uint64_t pow10[DTI_DIGITS_MAX] = {
		1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
		1000000000, 10000000000ull, 100000000000ull, 1000000000000ull,
		10000000000000ull, 100000000000000ull, 1000000000000000ull,
		10000000000000000ull, 100000000000000000ull,
		1000000000000000000ull, 10000000000000000000ull,
	};
	uint64_t v = num | 1;		/* 0 has a digit, as 1 has */
	unsigned int bits = 64 - __builtin_clzll(v), n;

	if (base == 16)
		return (bits + 3) / 4;
	n = bits * 1233 >> 12;		/* log10 of 2^bits, 1233 / 4096 */
	return n + (v >= pow10[n]);
}

/*
 * @num as @n digits in @base (10 or 16, upper case if @upper): in hex the
 * low @n of them, leading zeros so; in decimal @n is dti_ndigits()'s.
 * Decimal two at a time, in 32 bits once the number fits: a division by
 * a constant is a multiply, a cheaper one so.
 */
static inline void dti_put_digits(struct dti_out *o, uint64_t num, unsigned int base,
				  bool upper, unsigned int n)
{
	char tmp[DTI_DIGITS_MAX], *at = dti_make(o, tmp, n), *end = at + n;
	const char *digits = dti_hexdig[upper];
	uint32_t w;

	if (base == 16) {
		for (; end > at; num >>= 4)
			*--end = digits[num & 15];
	} else {
		for (; num > UINT32_MAX; num /= 100)
			end = memcpy(end - 2, dti_dec2 + 2 * (num % 100), 2);
		for (w = num; w >= 100; w /= 100)
			end = memcpy(end - 2, dti_dec2 + 2 * (w % 100), 2);
		if (w >= 10)
			memcpy(end - 2, dti_dec2 + 2 * w, 2);
		else
			end[-1] = '0' + w;
	}
	dti_made(o, at, n);
}

/*
 * A number as the kernel's printf prints it (lib/vsprintf.c): unlike
 * C's, "%#x" of 0 is "0x0", and a precision does not turn the 0 flag off.
 */
static void dti_number(struct dti_out *o, uint64_t num, const struct dti_conv *c)
{
	unsigned int base = c->conv == 'x' || c->conv == 'X' ? 16 : 10, n;
	bool zero = c->zero && !c->left, prefix = c->special && base == 16;
	int width = c->width < 0 ? 0 : c->width, prec = c->prec;
	char sign = 0;

	if (c->is_signed) {
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
	if (prefix)
		width -= 2;
	n = dti_ndigits(num, base);
	if ((int)n > prec)
		prec = n;
	width -= prec;
	if (!zero && !c->left) {
		dti_pad(o, ' ', width);
		width = 0;
	}
	if (sign)
		dti_putc(o, sign);
	if (prefix) {
		dti_putc(o, '0');
		dti_putc(o, c->conv);
	}
	if (!c->left) {
		dti_pad(o, zero ? '0' : ' ', width);
		width = 0;
	}
	dti_pad(o, '0', prec - n);
	dti_put_digits(o, num, base, c->conv == 'X', n);
	dti_pad(o, ' ', width);
}

static void dti_string(struct dti_out *o, const unsigned char *s, size_t n,
		       const struct dti_conv *c)
{
	size_t len = c->prec >= 0 && (size_t)c->prec < n ? (size_t)c->prec : n;
	int pad = c->width > (int)len ? c->width - (int)len : 0;

	if (!c->left) {
		dti_pad(o, ' ', pad);
		pad = 0;
	}
	dti_putn(o, (const char *)s, len);
	dti_pad(o, ' ', pad);
}

/* @n bytes (at most DTI_EVENT_HEX_MAX) in hex, @sep between them if not 0 */
static void dti_hexbytes(struct dti_out *o, const unsigned char *s, size_t n, char sep)
{
	size_t len = n ? 2 * n + (sep ? n - 1 : 0) : 0, i;
	char tmp[3 * DTI_EVENT_HEX_MAX], *at = dti_make(o, tmp, len), *q = at;

	for (i = 0; i < n; i++) {
		if (i && sep)
			*q++ = sep;
		*q++ = dti_hexdig[0][s[i] >> 4];
		*q++ = dti_hexdig[0][s[i] & 15];
	}
	dti_made(o, at, len);
}

/* Hex digits of the kernel's %px: all of a 64-bit value's */
#define DTI_PTR_DIGITS	16

size_t dti_event_print(const struct dti_evfmt *f, const struct dti_values *v,
		       char *buf, size_t size)
{
	struct dti_out o = { buf, buf + size };
	const char *lit = f->lit;
	const struct dti_conv *c;
	unsigned int i;

	for (i = 0; i < f->nargs; i++) {
		dti_putn(&o, lit, f->lit_len[i]);
		lit += f->lit_len[i];
		c = &f->conv[i];
		if (c->arg == DTI_ARG_PTR)
			dti_put_digits(&o, dti_value_num(f, v, i), 16, false, DTI_PTR_DIGITS);
		else if (c->arg == DTI_ARG_STR)
			dti_string(&o, v->p[i], v->n[i], c);
		else if (c->arg == DTI_ARG_HEX)
			dti_hexbytes(&o, v->p[i], v->n[i], c->hexsep);
		else
			dti_number(&o, dti_value_num(f, v, i), c);
	}
	dti_putn(&o, lit, f->lit_len[i]);
	return o.p - buf;
}

int dti_event_text(const struct dti_evfmt *f, const struct dti_rec *rec, char *buf,
		   size_t size)
{
	struct dti_values v;

	if (dti_event_values(f, rec, &v) < 0)
		return -1;
	return dti_event_print(f, &v, buf, size);
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

/*
 * Number value @i of @v as JSON: 64-bit values as strings (protobuf's
 * JSON mapping), exact in jq
 */
static void dti_json_num(struct dti_out *o, const struct dti_evfmt *f,
			 const struct dti_values *v, unsigned int i)
{
	bool wide = f->conv[i].size == sizeof(uint64_t);
	uint64_t x = dti_value_num(f, v, i);

	if (wide)
		dti_putc(o, '"');
	if (f->conv[i].is_signed && (int64_t)x < 0) {
		dti_putc(o, '-');
		x = -x;
	}
	dti_put_digits(o, x, 10, false, dti_ndigits(x, 10));
	if (wide)
		dti_putc(o, '"');
}

size_t dti_event_json(const struct dti_evfmt *f, const struct dti_values *v,
		      char *buf, size_t size)
{
	struct dti_out o = { buf, buf + size };
	unsigned int i;

	dti_putn(&o, f->head, f->head_len);
	for (i = 0; i < f->nargs; i++) {
		dti_putn(&o, f->key[i], f->key_len[i]);
		switch (f->layout[i]) {
		case DTI_ARG_STR:
			dti_json_str(&o, v->p[i], v->n[i]);
			break;
		case DTI_ARG_HEX:
			dti_putc(&o, '"');
			dti_hexbytes(&o, v->p[i], v->n[i], 0);
			dti_putc(&o, '"');
			break;
		case DTI_ARG_PTR:
			dti_putn(&o, "\"0x", 3);
			dti_put_digits(&o, dti_value_num(f, v, i), 16, false, DTI_PTR_DIGITS);
			dti_putc(&o, '"');
			break;
		default:
			dti_json_num(&o, f, v, i);
		}
	}
	dti_putc(&o, '}');
	return o.p - buf;
}

/*
 * An export field's name, DTI_FIELD_ and @name as a journal takes it:
 * upper case, every byte but a letter or a digit as '_'
 */
static void dti_export_name(struct dti_out *o, const char *name)
{
	dti_putn(o, "DTI_FIELD_", 10);
	for (; *name; name++)
		dti_putc(o, *name >= 'a' && *name <= 'z' ? *name - 'a' + 'A' :
			 (*name >= 'A' && *name <= 'Z') || (*name >= '0' && *name <= '9') ?
			 *name : '_');
}

/* @n bytes at @s as a field's value after its name: "=VALUE\n", or binary if it has a newline */
static void dti_export_value(struct dti_out *o, const unsigned char *s, size_t n)
{
	uint64_t le = htole64(n);

	if (memchr(s, '\n', n)) {
		dti_putc(o, '\n');
		dti_putn(o, (const char *)&le, sizeof(le));
	} else {
		dti_putc(o, '=');
	}
	dti_putn(o, (const char *)s, n);
	dti_putc(o, '\n');
}

size_t dti_event_export(const struct dti_evfmt *f, const struct dti_values *v,
			char *buf, size_t size)
{
	struct dti_out o = { buf, buf + size };
	uint64_t x;
	unsigned int i;

	dti_putn(&o, "DTI_EVENT=", 10);
	dti_putn(&o, f->name, strlen(f->name));	/* graphic ASCII */
	dti_putn(&o, "\nDTI_EVENT_ID=", 14);
	dti_put_digits(&o, f->id, 10, false, dti_ndigits(f->id, 10));
	dti_putc(&o, '\n');
	for (i = 0; i < f->nargs; i++) {
		dti_export_name(&o, f->fields[i]);
		switch (f->layout[i]) {
		case DTI_ARG_STR:
			dti_export_value(&o, v->p[i], v->n[i]);
			continue;
		case DTI_ARG_HEX:
			dti_putc(&o, '=');
			dti_hexbytes(&o, v->p[i], v->n[i], 0);
			break;
		case DTI_ARG_PTR:
			dti_putn(&o, "=0x", 3);
			dti_put_digits(&o, dti_value_num(f, v, i), 16, false, DTI_PTR_DIGITS);
			break;
		default:
			dti_putc(&o, '=');
			x = dti_value_num(f, v, i);
			if (f->conv[i].is_signed && (int64_t)x < 0) {
				dti_putc(&o, '-');
				x = -x;
			}
			dti_put_digits(&o, x, 10, false, dti_ndigits(x, 10));
		}
		dti_putc(&o, '\n');
	}
	return o.p - buf;
}
