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
 * are written digit by digit in place, without printf, into a buffer that
 * has room for all an event prints, with no check at each byte; in JSON
 * the text copies the digits of its fields.
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
		c.bare = c.arg != DTI_ARG_STR && c.arg != DTI_ARG_HEX && c.arg != DTI_ARG_PTR &&
			 c.width < 0 && c.prec < 0 && !c.plus && !c.space;
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

int dti_blob_info(const struct dti_rec *rec, const char **media_type, size_t *type_len,
		  const void **data, size_t *len)
{
	const unsigned char *p = rec->payload;
	uint16_t id;
	size_t n;

	if (!(rec->flags & DTI_REC_TYPED) || rec->len < DTI_BLOB_HDR_SIZE) {
		errno = ENOENT;
		return -1;
	}
	memcpy(&id, p, sizeof(id));
	if ((rec->swapped ? bswap_16(id) : id) != DTI_EVENT_ID_BLOB) {
		errno = ENOENT;
		return -1;
	}
	n = p[sizeof(id)];
	if (DTI_BLOB_HDR_SIZE + n > rec->len) {
		errno = EBADMSG;
		return -1;
	}
	*media_type = (const char *)p + DTI_BLOB_HDR_SIZE;
	*type_len = n;
	*data = p + DTI_BLOB_HDR_SIZE + n;
	*len = rec->len - DTI_BLOB_HDR_SIZE - n;
	return 0;
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

/*
 * The formatting functions write into a buffer with room for anything an
 * event prints (DTI_EVENT_TEXT_MAX, DTI_EVENT_JSON_MAX), which the limits
 * on a format prove: no check of room on the way.
 *
 * Most bytes a conversion prints: its width, or a precision's digits with
 * a sign and "0x"; a string, bytes in hex and a pointer print less.
 */
#define DTI_CONV_TEXT_MAX	(DTI_EVENT_WIDTH_MAX + 3)
_Static_assert(DTI_EVENT_STR_MAX <= DTI_CONV_TEXT_MAX &&
	       3 * DTI_EVENT_HEX_MAX <= DTI_CONV_TEXT_MAX,
	       "every conversion prints at most DTI_CONV_TEXT_MAX bytes");
_Static_assert(DTI_EVENT_FMT_MAX + DTI_EVENT_ARGS_MAX * DTI_CONV_TEXT_MAX <=
	       DTI_EVENT_TEXT_MAX, "an event's text fits in DTI_EVENT_TEXT_MAX");
/* a field's JSON: its key, a string escaped (6 bytes a byte at most) in quotes */
_Static_assert(DTI_EVENT_HEAD_MAX + DTI_EVENT_ARGS_MAX *
	       (DTI_EVENT_KEY_MAX + 6 * DTI_EVENT_STR_MAX + 2) + 1 + DTI_JSON_STEP <=
	       DTI_EVENT_JSON_MAX && 2 * DTI_EVENT_HEX_MAX <= 6 * DTI_EVENT_STR_MAX,
	       "an event's JSON fits in DTI_EVENT_JSON_MAX");

/*
 * @n bytes at @p.  Most pieces of an event are a few bytes: up to 16 go
 * as two copies of a fixed size, which overlap, not as a call.
 */
static inline char *dti_putn(char *p, const char *s, size_t n)
{
	if (n >= 8 && n <= 16) {
		memcpy(p, s, 8);
		memcpy(p + n - 8, s + n - 8, 8);
	} else if (n >= 4 && n < 8) {
		memcpy(p, s, 4);
		memcpy(p + n - 4, s + n - 4, 4);
	} else if (n > 16) {
		memcpy(p, s, n);
	} else {
		for (size_t i = 0; i < n; i++)
			p[i] = s[i];
	}
	return p + n;
}

static inline char *dti_pad(char *p, char c, int n)
{
	if (n <= 0)
		return p;
	memset(p, c, n);
	return p + n;
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
 * @num as @n digits in @base (10 or 16, upper case if @upper) at @p: in
 * hex the low @n of them, leading zeros so; in decimal @n is
 * dti_ndigits()'s.  Decimal two at a time, in 32 bits once the number
 * fits: a division by a constant is a multiply, a cheaper one so.
 */
static inline char *dti_put_digits(char *p, uint64_t num, unsigned int base,
				   bool upper, unsigned int n)
{
	const char *digits = dti_hexdig[upper];
	char *end = p + n;
	uint32_t w;

	if (base == 16) {
		for (; end > p; num >>= 4)
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
	return p + n;
}

/* @num in decimal, '-' first if @is_signed and it is negative */
static inline char *dti_put_dec(char *p, uint64_t num, bool is_signed)
{
	if (is_signed && (int64_t)num < 0) {
		*p++ = '-';
		num = -num;
	}
	return dti_put_digits(p, num, 10, false, dti_ndigits(num, 10));
}

/* A bare number (struct dti_conv): its digits, after a '-' or a 0x */
static inline char *dti_bare(char *p, uint64_t num, const struct dti_conv *c)
{
	if (c->conv != 'x' && c->conv != 'X')
		return dti_put_dec(p, num, c->is_signed);
	if (c->special) {
		*p++ = '0';
		*p++ = c->conv;
	}
	return dti_put_digits(p, num, 16, c->conv == 'X', dti_ndigits(num, 16));
}

/*
 * A number as the kernel's printf prints it (lib/vsprintf.c): unlike
 * C's, "%#x" of 0 is "0x0", and a precision does not turn the 0 flag off.
 */
static char *dti_number(char *p, uint64_t num, const struct dti_conv *c)
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
		p = dti_pad(p, ' ', width);
		width = 0;
	}
	if (sign)
		*p++ = sign;
	if (prefix) {
		*p++ = '0';
		*p++ = c->conv;
	}
	if (!c->left) {
		p = dti_pad(p, zero ? '0' : ' ', width);
		width = 0;
	}
	p = dti_pad(p, '0', prec - n);
	p = dti_put_digits(p, num, base, c->conv == 'X', n);
	return dti_pad(p, ' ', width);
}

static char *dti_string(char *p, const unsigned char *s, size_t n,
			const struct dti_conv *c)
{
	size_t len = c->prec >= 0 && (size_t)c->prec < n ? (size_t)c->prec : n;
	int pad = c->width > (int)len ? c->width - (int)len : 0;

	if (!c->left) {
		p = dti_pad(p, ' ', pad);
		pad = 0;
	}
	p = dti_putn(p, (const char *)s, len);
	return dti_pad(p, ' ', pad);
}

/* @n bytes (at most DTI_EVENT_HEX_MAX) in hex, @sep between them if not 0 */
static char *dti_hexbytes(char *p, const unsigned char *s, size_t n, char sep)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (i && sep)
			*p++ = sep;
		*p++ = dti_hexdig[0][s[i] >> 4];
		*p++ = dti_hexdig[0][s[i] & 15];
	}
	return p;
}

/* Hex digits of the kernel's %px: all of a 64-bit value's */
#define DTI_PTR_DIGITS	16

/*
 * Where an event's JSON has its numbers in decimal: a bare decimal
 * conversion of the same value prints the same bytes, copied.  @len[i] is
 * 0 where value i is not there.
 */
struct dti_decs {
	const char *at[DTI_EVENT_ARGS_MAX];
	uint8_t len[DTI_EVENT_ARGS_MAX];
};

/* dti_event_print() at @p, with the numbers at @d if not NULL: the end */
static inline char *dti_event_put(const struct dti_evfmt *f, const struct dti_values *v,
				  char *p, const struct dti_decs *d)
{
	const char *lit = f->lit;
	const struct dti_conv *c;
	unsigned int i;

	for (i = 0; i < f->nargs; i++) {
		p = dti_putn(p, lit, f->lit_len[i]);
		lit += f->lit_len[i];
		c = &f->conv[i];
		if (c->arg == DTI_ARG_PTR)
			p = dti_put_digits(p, dti_value_num(f, v, i), 16, false, DTI_PTR_DIGITS);
		else if (c->arg == DTI_ARG_STR)
			p = dti_string(p, v->p[i], v->n[i], c);
		else if (c->arg == DTI_ARG_HEX)
			p = dti_hexbytes(p, v->p[i], v->n[i], c->hexsep);
		else if (c->bare && d && d->len[i])
			p = dti_putn(p, d->at[i], d->len[i]);
		else if (c->bare)
			p = dti_bare(p, dti_value_num(f, v, i), c);
		else
			p = dti_number(p, dti_value_num(f, v, i), c);
	}
	return dti_putn(p, lit, f->lit_len[i]);
}

size_t dti_event_print(const struct dti_evfmt *f, const struct dti_values *v, char *buf)
{
	return dti_event_put(f, v, buf, NULL) - buf;
}

/* @n bytes at @s (at most DTI_EVENT_STR_MAX) as a JSON string, escaped as a payload is */
static char *dti_json_str(char *p, const unsigned char *s, size_t n)
{
	size_t done;

	*p++ = '"';
	p = dti_json_chars(p, p + 6 * n + DTI_JSON_STEP, s, n, &done);
	*p++ = '"';
	return p;
}

size_t dti_event_json(const struct dti_evfmt *f, const struct dti_values *v, char *buf,
		      bool text)
{
	char *p = dti_putn(buf, f->head, f->head_len);
	struct dti_decs d;
	bool wide;
	unsigned int i;

	for (i = 0; i < f->nargs; i++) {
		p = dti_putn(p, f->key[i], f->key_len[i]);
		d.len[i] = 0;
		switch (f->layout[i]) {
		case DTI_ARG_STR:
			p = dti_json_str(p, v->p[i], v->n[i]);
			break;
		case DTI_ARG_HEX:
			*p++ = '"';
			p = dti_hexbytes(p, v->p[i], v->n[i], 0);
			*p++ = '"';
			break;
		case DTI_ARG_PTR:
			p = (char *)memcpy(p, "\"0x", 3) + 3;
			p = dti_put_digits(p, dti_value_num(f, v, i), 16, false, DTI_PTR_DIGITS);
			*p++ = '"';
			break;
		default:
			/* 64-bit values as strings (protobuf's JSON mapping): exact in jq */
			wide = f->conv[i].size == sizeof(uint64_t);
			if (wide)
				*p++ = '"';
			d.at[i] = p;
			p = dti_put_dec(p, dti_value_num(f, v, i), f->conv[i].is_signed);
			if (f->conv[i].conv != 'x' && f->conv[i].conv != 'X')
				d.len[i] = p - d.at[i];
			if (wide)
				*p++ = '"';
		}
	}
	*p++ = '}';
	if (text) {
		p = (char *)memcpy(p, ",\"text\":\"", 9) + 9;
		p = dti_event_put(f, v, p, &d);
		*p++ = '"';
	}
	return p - buf;
}

/*
 * An export field's name, DTI_FIELD_ and @name as a journal takes it:
 * upper case, every byte but a letter or a digit as '_'
 */
static char *dti_export_name(char *p, const char *name)
{
	p = dti_putn(p, "DTI_FIELD_", 10);
	for (; *name; name++)
		*p++ = *name >= 'a' && *name <= 'z' ? *name - 'a' + 'A' :
		       (*name >= 'A' && *name <= 'Z') || (*name >= '0' && *name <= '9') ?
		       *name : '_';
	return p;
}

/* @n bytes at @s as a field's value after its name: "=VALUE\n", or binary if it has a newline */
static char *dti_export_value(char *p, const unsigned char *s, size_t n)
{
	uint64_t le = htole64(n);

	if (memchr(s, '\n', n)) {
		*p++ = '\n';
		p = dti_putn(p, (const char *)&le, sizeof(le));
	} else {
		*p++ = '=';
	}
	p = dti_putn(p, (const char *)s, n);
	*p++ = '\n';
	return p;
}

/* Bytes of the fields' names the export adds to each: DTI_FIELD_, '=' or the binary length, '\n' */
#define DTI_EXPORT_FIELD_EXTRA	(10 + 1 + sizeof(uint64_t) + 1)
/* DTI_EVENT=NAME\nDTI_EVENT_ID=ID\n */
#define DTI_EXPORT_HEAD_MAX	(10 + DTI_NAME_MAX + 14 + 5 + 1)
_Static_assert(DTI_EXPORT_HEAD_MAX + DTI_EVENT_ARGS_MAX *
	       (DTI_EXPORT_FIELD_EXTRA + sizeof(((struct dti_evfmt *)0)->fields[0]) +
		6 * DTI_EVENT_STR_MAX) <= DTI_EVENT_JSON_MAX,
	       "an event's export fields fit in DTI_EVENT_JSON_MAX");

size_t dti_event_export(const struct dti_evfmt *f, const struct dti_values *v, char *buf)
{
	char *p = dti_putn(buf, "DTI_EVENT=", 10);
	unsigned int i;

	p = dti_putn(p, f->name, strlen(f->name));	/* graphic ASCII */
	p = dti_putn(p, "\nDTI_EVENT_ID=", 14);
	p = dti_put_dec(p, f->id, false);
	*p++ = '\n';
	for (i = 0; i < f->nargs; i++) {
		p = dti_export_name(p, f->fields[i]);
		switch (f->layout[i]) {
		case DTI_ARG_STR:
			p = dti_export_value(p, v->p[i], v->n[i]);
			continue;
		case DTI_ARG_HEX:
			*p++ = '=';
			p = dti_hexbytes(p, v->p[i], v->n[i], 0);
			break;
		case DTI_ARG_PTR:
			p = dti_putn(p, "=0x", 3);
			p = dti_put_digits(p, dti_value_num(f, v, i), 16, false, DTI_PTR_DIGITS);
			break;
		default:
			*p++ = '=';
			p = dti_put_dec(p, dti_value_num(f, v, i), f->conv[i].is_signed);
		}
		*p++ = '\n';
	}
	return p - buf;
}
