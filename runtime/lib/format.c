// SPDX-License-Identifier: LGPL-2.1
/*
 * libdti: printing records.
 *
 * DTI_FMT_TEXT prints what the kernel's "merged" file prints: text as
 * logged with a newline added if it has none, binary payloads as
 * lowercase hex bytes separated by spaces (the kernel's "%*ph").
 * DTI_FMT_TS adds the "merged-ts" prefix
 * "[%5llu.%09u] cpuN Llevel #seq caller: ", the caller as the kernel's
 * %pS when symbols are loaded, as 0x<hex> otherwise.  A pending record
 * (DTI_REC_PENDING, from a memory dump) has no sequence number yet: "#-"
 * in the prefix, null in JSON.  DTI_FMT_JSON
 * passes valid UTF-8 through and escapes control characters and the
 * bytes that are not UTF-8 (as \u00XX, the byte's value).
 *
 * Speed: records are formatted into the reader's buffer by hand (digits
 * and hex from tables, no printf) and written to the FILE in large
 * blocks, so the cost per record is a few copies, not a stdio call per
 * field or byte.  The buffer goes out when full, when the FILE changes,
 * before a formatter callback or a notice, and when dti_next() finds no
 * record (dti_close() too).
 */
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "libdti-local.h"

/* Longest "[sec.nsec] cpuN Llevel #seq caller: " prefix, caller included. */
#define DTI_PREFIX_MAX	(100 + DTI_CALLER_MAX)
/* Digits of the largest size_t */
#define DTI_DEC_MAX	20
/* Room a step of a formatting loop needs at least (a \u00XX escape). */
#define DTI_STEP	16
_Static_assert(DTI_STEP >= DTI_JSON_STEP, "dti_put_json_str() makes room for a step");

#define DTI_HEX_ROW(h) h "0 ", h "1 ", h "2 ", h "3 ", h "4 ", h "5 ", h "6 ", \
		       h "7 ", h "8 ", h "9 ", h "a ", h "b ", h "c ", h "d ", \
		       h "e ", h "f "
/* "00 " "01 " ... "ff ": two hex digits and a space for every byte */
static const char dti_hex3[256][4] = {
	DTI_HEX_ROW("0"), DTI_HEX_ROW("1"), DTI_HEX_ROW("2"), DTI_HEX_ROW("3"),
	DTI_HEX_ROW("4"), DTI_HEX_ROW("5"), DTI_HEX_ROW("6"), DTI_HEX_ROW("7"),
	DTI_HEX_ROW("8"), DTI_HEX_ROW("9"), DTI_HEX_ROW("a"), DTI_HEX_ROW("b"),
	DTI_HEX_ROW("c"), DTI_HEX_ROW("d"), DTI_HEX_ROW("e"), DTI_HEX_ROW("f"),
};

#define DTI_DEC_ROW(d) d "0" d "1" d "2" d "3" d "4" d "5" d "6" d "7" d "8" d "9"
/* "00" "01" ... "99": two decimal digits at a time */
static const char dti_dec2[] =
	DTI_DEC_ROW("0") DTI_DEC_ROW("1") DTI_DEC_ROW("2") DTI_DEC_ROW("3")
	DTI_DEC_ROW("4") DTI_DEC_ROW("5") DTI_DEC_ROW("6") DTI_DEC_ROW("7")
	DTI_DEC_ROW("8") DTI_DEC_ROW("9");

int dti_format_parse(const char *name)
{
	static const char *const names[] = {
		[DTI_FMT_TEXT] = "text", [DTI_FMT_TS] = "ts", [DTI_FMT_HEX] = "hex",
		[DTI_FMT_JSON] = "json", [DTI_FMT_RAW] = "raw", [DTI_FMT_EXPORT] = "export",
	};
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return (int)i;
	return dti_fail(EINVAL, "unknown format '%s' (text, ts, hex, json, raw or export)", name);
}

/* ---- the output buffer ---- */

/*
 * -F raw does not copy records that come one after another from one
 * stream's window: ob holds them as a run (dti_print()), written after
 * its buffer.  A run is settled before its window changes (dti_refill())
 * and before other output is collected: a short one is copied into the
 * buffer, a long one written as it is.
 */
#define DTI_RUN_MIN	(32u << 10)

/* Write @n bytes at @p unless a write failed before.  0, or -1 (ob->err). */
static int dti_ob_write(struct dti_obuf *ob, const void *p, size_t n)
{
	if (n && ob->out && !ob->err) {
		errno = 0;
		if (fwrite(p, 1, n, ob->out) != n || ferror(ob->out))
			ob->err = errno ? errno : EIO;
	}
	return ob->err ? -1 : 0;
}

static void dti_ob_end_run(struct dti_obuf *ob)
{
	if (ob->run_src)
		ob->run_src->pin = NULL;
	ob->run_src = NULL;
	ob->run_len = 0;
}

/* Write out what is collected.  0, or -1 once a write failed (ob->err). */
int dti_ob_flush(struct dti_obuf *ob)
{
	dti_ob_write(ob, ob->p, ob->len);
	ob->len = 0;
	if (ob->run_len) {
		dti_ob_write(ob, ob->run, ob->run_len);
		dti_ob_end_run(ob);
	}
	return ob->err ? -1 : 0;
}

/* Copy or write out the run.  0, or -1 once a write failed (ob->err). */
int dti_ob_settle(struct dti_obuf *ob)
{
	if (ob->run_len >= DTI_RUN_MIN)
		return dti_ob_flush(ob);
	if (ob->run_len) {
		if (ob->cap - ob->len < ob->run_len) {
			dti_ob_write(ob, ob->p, ob->len);
			ob->len = 0;
		}
		memcpy(ob->p + ob->len, ob->run, ob->run_len);
		ob->len += ob->run_len;
		dti_ob_end_run(ob);
	}
	return ob->err ? -1 : 0;
}

/* Where @n more bytes (at most ob->cap) can go, after @p; NULL on a write error. */
static char *dti_ob_room(struct dti_obuf *ob, char *p, size_t n)
{
	ob->len = p - ob->p;
	if (ob->cap - ob->len < n && dti_ob_flush(ob) < 0)
		return NULL;
	return ob->p + ob->len;
}

static char *dti_ob_put(struct dti_obuf *ob, char *p, const void *src, size_t n)
{
	if ((size_t)(ob->p + ob->cap - p) < n) {
		if (!dti_ob_room(ob, p, ob->cap))
			return NULL;
		if (n >= ob->cap) {
			if (fwrite(src, 1, n, ob->out) != n)
				ob->err = errno ? errno : EIO;
			return ob->err ? NULL : ob->p;
		}
		p = ob->p;
	}
	memcpy(p, src, n);
	return p + n;
}

/* ---- fields ---- */

#ifdef __x86_64__
#include <immintrin.h>

#define DTI_SP	' '
#define DTI_NO	0x80	/* a shuffle index that makes a zero byte */
/*
 * The tables of the SIMD hex: the digits, then for @step 3 the shuffles
 * that place the 32 digits of 16 bytes (a: those of bytes 0..7, b: of
 * 8..15) 3 bytes apart in three blocks of 16, and the spaces of each.
 */
#define DTI_HEX_TAB_ROWS \
	ROW({ '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b', 'c', 'd', 'e', 'f' }) \
	ROW({ 0, 1, DTI_NO, 2, 3, DTI_NO, 4, 5, DTI_NO, 6, 7, DTI_NO, 8, 9, DTI_NO, 10 }) \
	ROW({ 11, DTI_NO, 12, 13, DTI_NO, 14, 15, DTI_NO, DTI_NO, DTI_NO, DTI_NO, DTI_NO, \
	      DTI_NO, DTI_NO, DTI_NO, DTI_NO }) \
	ROW({ DTI_NO, DTI_NO, DTI_NO, DTI_NO, DTI_NO, DTI_NO, DTI_NO, DTI_NO, 0, 1, DTI_NO, \
	      2, 3, DTI_NO, 4, 5 }) \
	ROW({ DTI_NO, 6, 7, DTI_NO, 8, 9, DTI_NO, 10, 11, DTI_NO, 12, 13, DTI_NO, 14, 15, DTI_NO }) \
	ROW({ 0, 0, DTI_SP, 0, 0, DTI_SP, 0, 0, DTI_SP, 0, 0, DTI_SP, 0, 0, DTI_SP, 0 }) \
	ROW({ 0, DTI_SP, 0, 0, DTI_SP, 0, 0, DTI_SP, 0, 0, DTI_SP, 0, 0, DTI_SP, 0, 0 }) \
	ROW({ DTI_SP, 0, 0, DTI_SP, 0, 0, DTI_SP, 0, 0, DTI_SP, 0, 0, DTI_SP, 0, 0, DTI_SP })
/* the rows as 16 bytes, and twice over for AVX2 (both lanes: no set-up per call) */
#define ROW(...)	{ __VA_ARGS__ },
static const struct { unsigned char b[16]; } dti_hex_tab[8] __attribute__((aligned(16))) = {
	DTI_HEX_TAB_ROWS
};
#undef ROW
#define ROW(...)	{ { __VA_ARGS__, __VA_ARGS__ } },
static const struct { unsigned char b[2][16]; } dti_hex_tab2[8] __attribute__((aligned(32))) = {
	DTI_HEX_TAB_ROWS
};
#undef ROW
enum { DTI_T_DIGITS, DTI_T_M0, DTI_T_M1A, DTI_T_M1B, DTI_T_M2, DTI_T_SP0, DTI_T_SP1, DTI_T_SP2 };

/*
 * Hex of 16 bytes with SSSE3: the nibbles become digits by a table
 * shuffle, pairs of digits are interleaved, and for @step 3 three more
 * shuffles place them 3 bytes apart, the spaces ORed in.
 */
__attribute__((target("ssse3"), always_inline))
static inline void dti_hex16(char *p, const unsigned char *q, size_t step)
{
#define T(i)	_mm_load_si128((const __m128i *)dti_hex_tab[i].b)
	const __m128i digits = T(DTI_T_DIGITS), low = _mm_set1_epi8(0x0f);
	__m128i v = _mm_loadu_si128((const __m128i *)q), hi, lo, a, b;

	hi = _mm_shuffle_epi8(digits, _mm_and_si128(_mm_srli_epi16(v, 4), low));
	lo = _mm_shuffle_epi8(digits, _mm_and_si128(v, low));
	a = _mm_unpacklo_epi8(hi, lo);
	b = _mm_unpackhi_epi8(hi, lo);
	if (step == 2) {
		_mm_storeu_si128((__m128i *)p, a);
		_mm_storeu_si128((__m128i *)(p + 16), b);
		return;
	}
	_mm_storeu_si128((__m128i *)p,
			 _mm_or_si128(_mm_shuffle_epi8(a, T(DTI_T_M0)), T(DTI_T_SP0)));
	_mm_storeu_si128((__m128i *)(p + 16),
			 _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(a, T(DTI_T_M1A)),
						   _mm_shuffle_epi8(b, T(DTI_T_M1B))),
				      T(DTI_T_SP1)));
	_mm_storeu_si128((__m128i *)(p + 32),
			 _mm_or_si128(_mm_shuffle_epi8(b, T(DTI_T_M2)), T(DTI_T_SP2)));
#undef T
}

/* In whole turns of 16.  Returns the bytes done. */
__attribute__((target("ssse3")))
static size_t dti_hex_ssse3(char *p, const unsigned char *q, size_t n, size_t step)
{
	size_t done;

	for (done = 0; n - done >= 16; done += 16)
		dti_hex16(p + done * step, q + done, step);
	return done;
}

/*
 * The same with AVX2, 32 bytes at @q to @p: each 128-bit lane does what
 * dti_hex16() does, and the lanes' blocks are put in order.
 */
__attribute__((target("avx2"), always_inline))
static inline void dti_hex32(char *p, const unsigned char *q, size_t step)
{
#define T(i)	_mm256_load_si256((const __m256i *)dti_hex_tab2[i].b)
	const __m256i digits = T(DTI_T_DIGITS), low = _mm256_set1_epi8(0x0f);
	__m256i v, hi, lo, a, b, o0, o1, o2;

	v = _mm256_loadu_si256((const __m256i *)q);
	hi = _mm256_shuffle_epi8(digits, _mm256_and_si256(_mm256_srli_epi16(v, 4), low));
	lo = _mm256_shuffle_epi8(digits, _mm256_and_si256(v, low));
	a = _mm256_unpacklo_epi8(hi, lo);
	b = _mm256_unpackhi_epi8(hi, lo);
	if (step == 2) {
		_mm256_storeu_si256((__m256i *)p, _mm256_permute2x128_si256(a, b, 0x20));
		_mm256_storeu_si256((__m256i *)(p + 32), _mm256_permute2x128_si256(a, b, 0x31));
		return;
	}
	o0 = _mm256_or_si256(_mm256_shuffle_epi8(a, T(DTI_T_M0)), T(DTI_T_SP0));
	o1 = _mm256_or_si256(_mm256_or_si256(_mm256_shuffle_epi8(a, T(DTI_T_M1A)),
					     _mm256_shuffle_epi8(b, T(DTI_T_M1B))),
			     T(DTI_T_SP1));
	o2 = _mm256_or_si256(_mm256_shuffle_epi8(b, T(DTI_T_M2)), T(DTI_T_SP2));
	/* low lanes: output bytes 0..47; high lanes: 48..95 */
	_mm256_storeu_si256((__m256i *)p, _mm256_permute2x128_si256(o0, o1, 0x20));
	_mm256_storeu_si256((__m256i *)(p + 32), _mm256_permute2x128_si256(o2, o0, 0x30));
	_mm256_storeu_si256((__m256i *)(p + 64), _mm256_permute2x128_si256(o1, o2, 0x31));
#undef T
}

/* dti_hex32() in turns, then one of 16.  Returns the bytes done. */
__attribute__((target("avx2")))
static size_t dti_hex_avx2(char *p, const unsigned char *q, size_t n, size_t step)
{
	size_t done;

	for (done = 0; n - done >= 32; done += 32)
		dti_hex32(p + done * step, q + done, step);
	if (n - done >= 16) {
		dti_hex16(p + done * step, q + done, step);
		done += 16;
	}
	return done;
}

/* 2 with AVX2, 1 with SSSE3, else 0 */
static int dti_simd(void)
{
	static int level = -1;	/* a race only writes the same value */

	if (level < 0)
		level = __builtin_cpu_supports("avx2") ? 2 :
			__builtin_cpu_supports("ssse3") ? 1 : 0;
	return level;
}
#else
static size_t dti_hex_ssse3(char *p, const unsigned char *q, size_t n, size_t step)
{
	(void)p, (void)q, (void)n, (void)step;
	return 0;
}

static size_t dti_hex_avx2(char *p, const unsigned char *q, size_t n, size_t step)
{
	(void)p, (void)q, (void)n, (void)step;
	return 0;
}

static int dti_simd(void)
{
	return 0;
}
#endif

/*
 * @n bytes as hex, a space after each if @step is 3, none if it is 2.
 * Without SIMD, and for the tail: one 4-byte store per byte from a
 * table, each overwriting the previous one's tail, eight to a turn.
 * Needs 3 * @n + 1 bytes of room.
 */
static char *dti_hex_run(char *p, const unsigned char *q, size_t n, size_t step)
{
	const unsigned char *e = q + n;
	int simd = n >= 16 ? dti_simd() : 0;
	size_t done = simd > 1 ? dti_hex_avx2(p, q, n, step) :
		      simd ? dti_hex_ssse3(p, q, n, step) : 0;

	q += done;
	p += done * step;
	for (; e - q >= 8; q += 8, p += 8 * step) {
		memcpy(p, dti_hex3[q[0]], 4);
		memcpy(p + step, dti_hex3[q[1]], 4);
		memcpy(p + 2 * step, dti_hex3[q[2]], 4);
		memcpy(p + 3 * step, dti_hex3[q[3]], 4);
		memcpy(p + 4 * step, dti_hex3[q[4]], 4);
		memcpy(p + 5 * step, dti_hex3[q[5]], 4);
		memcpy(p + 6 * step, dti_hex3[q[6]], 4);
		memcpy(p + 7 * step, dti_hex3[q[7]], 4);
	}
	for (; q < e; q++, p += step)
		memcpy(p, dti_hex3[*q], 4);
	return p;
}

/*
 * @v < 10^8 as 8 digits in a word, the first in its lowest byte (on a
 * little-endian host: a copy of the word writes them in order), by
 * jeaiii's method (see dti_put_9()): one multiply makes v / 10^6 a
 * fixed-point number with 48 fraction bits, each multiply of the
 * fraction by 100 brings out two more digits.  The constant rounds up by
 * less than 0.3 / 2^48 of a unit, too little to change a digit (checked
 * for every v).  In a register, not in memory: a load of bytes from
 * several smaller stores would wait for them.
 */
static inline uint64_t dti_dec2w(uint64_t t)
{
	uint16_t pair;

	memcpy(&pair, dti_dec2 + 2 * (t >> 48), 2);
	return pair;
}

static inline uint64_t dti_dec8(uint32_t v)
{
	const uint64_t frac = (1ull << 48) - 1;
	uint64_t t = v * 281474977ull, d;	/* ceil(2^48 / 10^6) */

	d = dti_dec2w(t);
	t = (t & frac) * 100;
	d |= dti_dec2w(t) << 16;
	t = (t & frac) * 100;
	d |= dti_dec2w(t) << 32;
	t = (t & frac) * 100;
	return d | dti_dec2w(t) << 48;
}

/* dti_put_dec() of @v >= 10^8, in @n digits: two per division, back to front */
static char *__attribute__((noinline)) dti_put_big(char *p, uint64_t v, int n)
{
	char *e = p + n;
	uint32_t w;

	for (; v > UINT32_MAX; v /= 100)
		memcpy(e -= 2, dti_dec2 + 2 * (v % 100), 2);
	for (w = v; w >= 100; w /= 100)	/* cheaper in 32 bits */
		memcpy(e -= 2, dti_dec2 + 2 * (w % 100), 2);
	if (w >= 10)
		memcpy(e - 2, dti_dec2 + 2 * w, 2);
	else
		e[-1] = '0' + w;
	return p + n;
}

/*
 * @v in decimal, right-aligned in @width with @pad (room: 24).  A digit
 * is a digit; below 10^8 on a little-endian host the 8 digits are made
 * at once and those that count copied.
 */
static inline __attribute__((always_inline)) char *
dti_put_dec(char *p, uint64_t v, int width, char pad)
{
	static const uint64_t pow10[20] = {
		1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
		1000000000, 10000000000ull, 100000000000ull, 1000000000000ull,
		10000000000000ull, 100000000000000ull, 1000000000000000ull,
		10000000000000000ull, 100000000000000000ull,
		1000000000000000000ull, 10000000000000000000ull,
	};
	uint64_t d;
	int n;

	if (v < 10) {
		if (width > 1) {
			memset(p, pad, 8);	/* widths are at most 9 */
			p += width - 1;
		}
		*p = '0' + v;
		return p + 1;
	}
	n = (64 - __builtin_clzll(v)) * 1233 >> 12;	/* log10 of 2^bits */
	n += v >= pow10[n];
	if (width > n) {
		memset(p, pad, 8);
		p += width - n;
	}
	if (v >= 100000000 || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		return dti_put_big(p, v, n);
	d = dti_dec8(v) >> (8 * (8 - n));
	memcpy(p, &d, 8);	/* zeros after it: written over later */
	return p + n;
}

/*
 * @v < 10^9 as exactly 9 digits (nanoseconds), by jeaiii's method: one
 * multiply makes v / 10^8 a fixed-point number with 57 fraction bits,
 * and each multiply of the fraction by 100 brings out two more digits.
 * The constant rounds up by less than 2^28 / 2^57 of a unit, too little
 * to change a digit (checked for every v).
 */
static char *dti_put_9(char *p, uint32_t v)
{
	const uint64_t frac = (1ull << 57) - 1;
	uint64_t t = v * 1441151881ull;		/* ceil(2^57 / 10^8) */

	*p = '0' + (t >> 57);
	t = (t & frac) * 100;
	memcpy(p + 1, dti_dec2 + 2 * (t >> 57), 2);
	t = (t & frac) * 100;
	memcpy(p + 3, dti_dec2 + 2 * (t >> 57), 2);
	t = (t & frac) * 100;
	memcpy(p + 5, dti_dec2 + 2 * (t >> 57), 2);
	t = (t & frac) * 100;
	memcpy(p + 7, dti_dec2 + 2 * (t >> 57), 2);
	return p + 9;
}

static char *dti_put_int(char *p, int v)
{
	if (v < 0)
		*p++ = '-';
	return dti_put_dec(p, v < 0 ? -(int64_t)v : v, 0, 0);
}

/* "0x" and @v in hex without leading zeros, as printf's "0x%llx". */
static char *dti_put_addr(char *p, uint64_t v)
{
	unsigned char be[8];
	char tmp[32];		/* 16 digits, and 16 copied from the 15th on */
	int i, skip = v ? __builtin_clzll(v) / 4 : 15;

	for (i = 0; i < 8; i++)
		be[i] = v >> (56 - 8 * i);
	dti_hex_run(tmp, be, 8, 2);
	memcpy(p, "0x", 2);
	memcpy(p + 2, tmp + skip, 16);
	return p + 18 - skip;
}

/* Whether JSON takes the @len bytes at @s as they are */
static bool dti_json_plain(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] < 0x20 || s[i] >= 0x7f || s[i] == '"' || s[i] == '\\')
			return false;
	return true;
}

/* @addr as it prints without source lines: %pS with symbols, else hex */
static void dti_caller_plain(struct dti_reader *r, struct dti_caller *c, uint64_t addr)
{
	if (r && r->symbolizer &&
	    !r->symbolizer(addr, c->text, sizeof(c->text), r->symbolizer_arg) && c->text[0]) {
		c->text[sizeof(c->text) - 1] = 0;
		c->len = strlen(c->text);
	} else if (r && r->ksyms) {
		dti_ksyms_format(r->ksyms, addr, c->text, sizeof(c->text));
		c->len = strlen(c->text);
	} else {
		c->len = dti_put_addr(c->text, addr) - c->text;
	}
}

/* ---- the Journal Export Format ---- */

/*
 * Field @name with the @len bytes at @v, as the Journal Export Format
 * has it: "NAME=VALUE\n", or, for a value with a newline,
 * "NAME\n<little-endian 64-bit length>VALUE\n".  The end, or NULL on a
 * write error.
 */
static char *dti_exp_put(struct dti_obuf *ob, char *p, const char *name,
			 const void *v, size_t len)
{
	size_t n = strlen(name);
	uint64_t le = htole64(len);

	if (!(p = dti_ob_room(ob, p, n + 1 + sizeof(le))))
		return NULL;
	p = (char *)memcpy(p, name, n) + n;
	if (len && memchr(v, '\n', len)) {
		*p++ = '\n';
		p = (char *)memcpy(p, &le, sizeof(le)) + sizeof(le);
	} else {
		*p++ = '=';
	}
	if (!(p = dti_ob_put(ob, p, v, len)) || !(p = dti_ob_room(ob, p, 1)))
		return NULL;
	*p++ = '\n';
	return p;
}

static char *dti_exp_str(struct dti_obuf *ob, char *p, const char *name, const char *v)
{
	return p ? dti_exp_put(ob, p, name, v, strlen(v)) : NULL;
}

static char *dti_exp_num(struct dti_obuf *ob, char *p, const char *name, uint64_t v)
{
	char num[24];

	return p ? dti_exp_put(ob, p, name, num, dti_put_dec(num, v, 0, 0) - num) : NULL;
}

/*
 * The export fields of a caller resolved to @l (its %pS part @ps) into
 * @f: CODE_FUNC, CODE_FILE and CODE_LINE as journald's own, the rest as
 * DTI_*: the JSON fields of dti_ljson() one to one.
 */
static void dti_lexport(FILE *f, const char *ps, const struct dti_line *l)
{
	char local[1024], *p, *inl = NULL;
	struct dti_obuf ob = { .p = local, .cap = sizeof(local), .out = f };
	size_t inl_len = 0;
	unsigned int i;
	FILE *fi;

	p = local;
	if (strncmp(ps, "0x", 2))
		p = dti_exp_str(&ob, p, "DTI_SYMBOL", ps);
	if (l->function) {
		p = dti_exp_str(&ob, p, "CODE_FUNC", l->function);
		p = dti_exp_num(&ob, p, "DTI_CALLER_OFFSET", l->offset);
		p = dti_exp_num(&ob, p, "DTI_CALLER_SIZE", l->size);
	}
	p = dti_exp_str(&ob, p, "DTI_MODULE", l->module);
	if (l->file) {
		p = dti_exp_str(&ob, p, "CODE_FILE", l->file);
		p = dti_exp_num(&ob, p, "CODE_LINE", l->line);
		p = dti_exp_num(&ob, p, "DTI_CALLER_COLUMN", l->column);
		fi = l->n_inlined ? open_memstream(&inl, &inl_len) : NULL;
		for (i = 0; fi && i < l->n_inlined; i++)
			fprintf(fi, "%s%s inlined at %s:%u:%u", i ? ", " : "",
				l->inlined[i].function ? l->inlined[i].function : "??",
				l->inlined[i].file ? l->inlined[i].file : "??",
				l->inlined[i].line, l->inlined[i].column);
		if (fi && fclose(fi) == 0)
			p = p ? dti_exp_put(&ob, p, "DTI_INLINED", inl, inl_len) : NULL;
		free(inl);
	}
	if (p)
		ob.len = p - ob.p;
	dti_ob_flush(&ob);
}

/* ---- callers as source lines ---- */

/* r->lcache starts with this many slots (and doubles at half full). */
#define DTI_LCACHE_INIT		256u
/* Room the text of a resolved caller takes at most, its %pS part first */
#define DTI_LTEXT_ROOM		(DTI_CALLER_MAX - 1)

static void dti_lcaller_drop(void *e)
{
	struct dti_lcaller *c = e;

	free(c->text);
	free(c->json);
	free(c->exp);
}

/* r->lcache's: a struct dti_lcaller by address and the times it holds for */
const struct dti_cache_type dti_lcaller_cache = {
	.size = sizeof(struct dti_lcaller),
	.init = DTI_LCACHE_INIT,
	.drop = dti_lcaller_drop,
};

/*
 * @s as a JSON string into @f, escaped as a payload is (dti_json_chars():
 * a path in DWARF is bytes, not always UTF-8)
 */
static void dti_fjson_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p), done;
	char buf[256], *end;

	fputc('"', f);
	while (n) {
		end = dti_json_chars(buf, buf + sizeof(buf), p, n, &done);
		fwrite(buf, 1, end - buf, f);
		p += done;
		n -= done;
	}
	fputc('"', f);
}

/*
 * The text of caller @addr at @l (resolved) into @f: "%pS" as the kernel
 * prints it ("func+0x1c/0x80 [mod]", without [mod] for vmlinux; the
 * address when no symbol covers it), then " FILE:LINE" and the chain of
 * functions inlined there, innermost first, " (f inlined at FILE:LINE,
 * g inlined at FILE:LINE)": the call each was inlined for, in the next
 * outer function.  Its %pS part alone into @ps.
 */
static void dti_ltext(FILE *f, FILE *ps, uint64_t addr, const struct dti_line *l)
{
	char hex[24];
	unsigned int i;
	FILE *out;

	for (out = ps; out; out = out == ps ? f : NULL) {
		if (l->function)
			fprintf(out, "%s+0x%llx/0x%llx", l->function,
				(unsigned long long)l->offset, (unsigned long long)l->size);
		else
			fwrite(hex, 1, dti_put_addr(hex, addr) - hex, out);
		if (strcmp(l->module, "vmlinux"))
			fprintf(out, " [%s]", l->module);
	}
	if (!l->file)
		return;
	fprintf(f, " %s:%u", l->file, l->line);
	for (i = 0; i < l->n_inlined; i++)
		fprintf(f, "%s%s inlined at %s:%u", i ? ", " : " (", l->inlined[i].function ?
			l->inlined[i].function : "??", l->inlined[i].file ? l->inlined[i].file : "??",
			l->inlined[i].line);
	if (l->n_inlined)
		fputc(')', f);
}

/* The JSON of resolved caller @l, "caller" (@ps) and its fields, into @f */
static void dti_ljson(FILE *f, const char *ps, const struct dti_line *l)
{
	unsigned int i;

	if (strncmp(ps, "0x", 2)) {
		fputs(",\"symbol\":", f);
		dti_fjson_str(f, ps);
	}
	if (l->function) {
		fputs(",\"function\":", f);
		dti_fjson_str(f, l->function);
		fprintf(f, ",\"offset\":%llu,\"size\":%llu", (unsigned long long)l->offset,
			(unsigned long long)l->size);
	}
	fputs(",\"module\":", f);
	dti_fjson_str(f, l->module);
	if (!l->file)
		return;
	fputs(",\"file\":", f);
	dti_fjson_str(f, l->file);
	fprintf(f, ",\"line\":%u,\"column\":%u,\"inlined\":[", l->line, l->column);
	for (i = 0; i < l->n_inlined; i++) {
		fputs(i ? ",{\"function\":" : "{\"function\":", f);
		dti_fjson_str(f, l->inlined[i].function);
		fputs(",\"file\":", f);
		dti_fjson_str(f, l->inlined[i].file);
		fprintf(f, ",\"line\":%u,\"column\":%u}", l->inlined[i].line,
			l->inlined[i].column);
	}
	fputc(']', f);
}

/*
 * Resolve @addr through the reader's lines into @e: its text and JSON,
 * or, not resolved, the text it prints without (no JSON).  0, or -1
 * (ENOMEM: @e is left unused).
 */
static int dti_lcaller_make(struct dti_reader *r, struct dti_lcaller *e, uint64_t addr,
			    uint64_t ts)
{
	char *ps = NULL, *text = NULL, *json = NULL, *exp = NULL;
	size_t ps_len = 0, text_len = 0, json_len = 0, exp_len = 0;
	struct dti_caller plain;
	struct dti_line line;
	uint64_t lo, hi;
	FILE *fp, *ft, *fj, *fe;

	if (dti_lines_resolve_when(r->lines, addr, ts, &line, &lo, &hi)) {
		if (errno == ENOMEM)
			return -1;
		dti_caller_plain(r, &plain, addr);
		text = malloc(plain.len + 32);
		if (!text)
			return -1;
		memcpy(text, plain.text, plain.len);
		text_len = plain.len;
	} else {
		fp = open_memstream(&ps, &ps_len);
		ft = open_memstream(&text, &text_len);
		fj = open_memstream(&json, &json_len);
		fe = open_memstream(&exp, &exp_len);
		if (fp && ft && fj && fe) {
			dti_ltext(ft, fp, addr, &line);
			fflush(fp);
			dti_ljson(fj, ps, &line);
			dti_lexport(fe, ps, &line);
			fputs("                                ", ft);	/* room for 32 */
		}
		if (fp)
			fclose(fp);
		if (ft)
			fclose(ft);
		if (fj)
			fclose(fj);
		if (fe && fclose(fe) != 0) {
			free(exp);
			exp = NULL;
		}
		free(ps);
		if (!fp || !ft || !fj || !fe || !text || !json || !exp) {
			free(text);
			free(json);
			free(exp);
			return -1;
		}
		text_len -= 32;
		if (text_len > DTI_LTEXT_ROOM)
			text_len = DTI_LTEXT_ROOM;
		if (json_len > DTI_EVENT_JSON_MAX) {
			/* not printed cut: the plain caller alone */
			free(json);
			json = NULL;
			json_len = 0;
		}
	}
	e->text = text;
	e->len = text_len;
	e->plain = dti_json_plain(text, text_len);
	e->json = json;
	e->json_len = json_len;
	e->exp = exp;
	e->exp_len = exp_len;
	dti_cache_add(&r->lcache, e, addr, 0, lo, hi);
	return 0;
}

/*
 * dti_caller_fill() with source lines: the resolved caller of the
 * reader's cache, made on its first use.  NULL if memory ran out.
 */
static const struct dti_caller *dti_caller_lines(struct dti_reader *r,
						 struct dti_caller *c, uint64_t addr,
						 uint64_t ts)
{
	struct dti_lcaller *e = dti_cache_find(&r->lcache, addr, 0, ts);

	if (!e) {
		if (dti_cache_grow(&r->lcache))
			return NULL;
		e = dti_cache_slot(&r->lcache, addr, 0, ts);
		if (dti_lcaller_make(r, e, addr, ts))
			return NULL;
	}
	c->addr = addr;
	c->lo = e->key.lo;
	c->hi = e->key.hi;
	c->p = e->text;
	c->len = e->len;
	c->plain = e->plain;
	c->json = e->json;
	c->json_len = e->json_len;
	c->exp = e->exp;
	c->exp_len = e->exp_len;
	return c;
}

/* dti_caller() when the cache does not have @addr (or there is no reader) */
static const struct dti_caller *dti_caller_fill(struct dti_reader *r,
						struct dti_caller *c, uint64_t addr,
						uint64_t ts)
{
	if (r && r->lines && dti_caller_lines(r, c, addr, ts))
		return c;
	c->addr = addr;
	c->lo = 0;
	c->hi = UINT64_MAX;
	c->p = c->text;
	c->json = NULL;
	c->json_len = 0;
	c->exp = NULL;
	c->exp_len = 0;
	dti_caller_plain(r, c, addr);
	c->plain = dti_json_plain(c->text, c->len);
	return c;
}

/*
 * The caller at @addr of a record logged at @ts, as %pS with symbols,
 * else as an address (or with its source line), formatted in @tmp or
 * found in the reader's cache: a trace has few callers, the reader keeps
 * the last ones, by address (and the times their text holds for).
 */
static inline const struct dti_caller *dti_caller(struct dti_reader *r,
						  uint64_t addr, uint64_t ts,
						  struct dti_caller *tmp)
{
	struct dti_caller *c;

	if (!r)
		return dti_caller_fill(r, tmp, addr, ts);
	c = &r->callers[(addr * 0x9e3779b97f4a7c15ull) >> 61];
	return c->len && c->addr == addr && ts - c->lo <= c->hi - c->lo ? c :
	       dti_caller_fill(r, c, addr, ts);
}

/* The caller.  Room: DTI_CALLER_MAX. */
static char *dti_put_caller(struct dti_reader *r, char *p, uint64_t addr, uint64_t ts)
{
	struct dti_caller tmp;
	const struct dti_caller *c = dti_caller(r, addr, ts, &tmp);

	if (c->len <= 32)
		memcpy(p, c->p, 32);		/* a fixed size is cheaper */
	else
		memcpy(p, c->p, c->len);
	return p + c->len;
}

/* The "merged-ts" prefix.  Room: DTI_PREFIX_MAX. */
static char *dti_put_prefix(struct dti_reader *r, char *p,
			    const struct dti_rec *rec)
{
	*p++ = '[';
	p = dti_put_dec(p, rec->ts_ns / 1000000000u, 5, ' ');
	*p++ = '.';
	p = dti_put_9(p, rec->ts_ns % 1000000000u);
	memcpy(p, "] cpu", 5);
	p = dti_put_dec(p + 5, rec->cpu, 0, 0);
	memcpy(p, " L", 2);
	p = dti_put_int(p + 2, rec->level);
	memcpy(p, " #", 2);
	p += 2;
	if (rec->flags & DTI_REC_PENDING)
		*p++ = '-';	/* no sequence number yet */
	else
		p = dti_put_dec(p, rec->seq, 0, 0);
	*p++ = ' ';
	p = dti_put_caller(r, p, rec->caller, rec->ts_ns);
	*p++ = ':';
	*p++ = ' ';
	return p;
}

/*
 * @len bytes as hex, separated by spaces (@sep) or not.  Takes room as it
 * goes; returns the end, or NULL on a write error.
 */
static char *dti_put_hex(struct dti_obuf *ob, char *p, const unsigned char *s,
			 size_t len, bool sep)
{
	size_t step = sep ? 3 : 2, i, k;
	char *lim = ob->p + ob->cap;

	for (i = 0; i < len; i += k) {
		if ((size_t)(lim - p) < DTI_STEP && !(p = dti_ob_room(ob, p, ob->cap)))
			return NULL;
		k = (size_t)(lim - p) / 3 - 1;
		if (k > len - i)
			k = len - i;
		p = dti_hex_run(p, s + i, k, step);
	}
	return len && sep ? p - 1 : p;
}

/* A blob as the kernel's merged view prints it: "blob TYPE LEN: HEX" */
static char *dti_put_blob(struct dti_obuf *ob, char *p, const char *type, size_t type_len,
			  const void *data, size_t len)
{
	if (!(p = dti_ob_room(ob, p, sizeof("blob  : ") + type_len + DTI_DEC_MAX)))
		return NULL;
	p = (char *)memcpy(p, "blob ", 5) + 5;
	p = (char *)memcpy(p, type, type_len) + type_len;
	*p++ = ' ';
	p = dti_put_dec(p, len, 0, 0);
	*p++ = ':';
	if (len)
		*p++ = ' ';
	return dti_put_hex(ob, p, data, len, true);
}

/* Length of the valid UTF-8 character at @s (@n bytes left), 0 if none. */
static size_t dti_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	len = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	if (s[0] == 0xe0)
		lo = 0xa0;		/* overlong */
	else if (s[0] == 0xed)
		hi = 0x9f;		/* surrogates */
	else if (s[0] == 0xf0)
		lo = 0x90;		/* overlong */
	else if (s[0] == 0xf4)
		hi = 0x8f;		/* beyond U+10FFFF */
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/* No byte of the 8 at @s needs escaping: none < 0x20, >= 0x7f, '"' or '\\'. */
static bool dti_json_plain8(const unsigned char *s)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x80 * ones;
	uint64_t x, q, b;

	memcpy(&x, s, 8);
	q = x ^ ('"' * ones);
	b = x ^ ('\\' * ones);
	return !((((x - 0x20 * ones) & ~x) | x | ((q - ones) & ~q) |
		  ((b - ones) & ~b) | ((x ^ 0x7f * ones) - ones)) & high);
}

/*
 * The @len bytes at @s as the characters of a JSON string, into @p up to
 * @lim: valid UTF-8 kept as it is, '"' and '\\' escaped, a newline and a
 * tab as \n and \t, every other byte below 0x20 or not part of valid
 * UTF-8 (0x7f too) as \u00XX, the byte's value.  Stops at the end of @s
 * or when less than DTI_JSON_STEP bytes of room are left: *@done is how
 * many bytes of @s it took.  Returns the end of what it wrote.
 */
char *dti_json_chars(char *p, const char *lim, const unsigned char *s, size_t len,
		     size_t *done)
{
	size_t i = 0, k;
	unsigned char c;

	while (i < len && lim - p >= DTI_JSON_STEP) {
		c = s[i];
		if (len - i >= 8 && dti_json_plain8(s + i)) {
			memcpy(p, s + i, 8);
			p += 8;
			i += 8;
		} else if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			*p++ = c;
			i++;
		} else if (c >= 0x80 && (k = dti_utf8_len(s + i, len - i))) {
			memcpy(p, s + i, k);
			p += k;
			i += k;
		} else {
			*p++ = '\\';
			if (c == '"' || c == '\\')
				*p++ = c;
			else if (c == '\n' || c == '\t')
				*p++ = c == '\n' ? 'n' : 't';
			else {
				memcpy(p, "u00", 3);
				memcpy(p + 3, dti_hex3[c], 2);
				p += 5;
			}
			i++;
		}
	}
	*done = i;
	return p;
}

/* @len bytes as a JSON string.  The end, or NULL on a write error. */
static char *dti_put_json_str(struct dti_obuf *ob, char *p,
			      const unsigned char *s, size_t len)
{
	char *lim = ob->p + ob->cap;
	size_t done;

	*p++ = '"';
	for (;;) {
		if ((size_t)(lim - p) < DTI_STEP && !(p = dti_ob_room(ob, p, ob->cap)))
			return NULL;
		if (!len)
			break;
		p = dti_json_chars(p, lim, s, len, &done);
		s += done;
		len -= done;
	}
	*p++ = '"';
	return p;
}

/*
 * The channel of the record returned last: as the caller named it, else
 * as its sub-buffers do; or NULL
 */
const char *dti_rec_channel(const struct dti_reader *r)
{
	if (r && r->chan_name)
		return r->chan_name;
	if (r && r->last && r->last->ident.set)
		return r->last->ident.name;
	return r && r->ident.set ? r->ident.name : NULL;
}

const char *dti_channel_name(const struct dti_reader *r)
{
	const char *name = dti_rec_channel(r);

	if (!name)
		errno = ENOENT;
	return name;
}

static char *dti_put_json(struct dti_reader *r, struct dti_obuf *ob, char *p,
			  const struct dti_rec *rec)
{
	struct dti_caller tmp;
	const struct dti_caller *c = dti_caller(r, rec->caller, rec->ts_ns, &tmp);
	const struct dti_evfmt *f = NULL;
	char text[DTI_EVENT_TEXT_MAX];
	const char *name, *type;
	struct dti_values v;
	size_t n, type_len, len;
	const void *data;

	/* 64-bit numbers as strings, as protobuf's JSON mapping has them: exact in jq */
	p = (char *)memcpy(p, "{\"ts_ns\":\"", 10) + 10;
	p = dti_put_dec(p, rec->ts_ns, 0, 0);
	*p++ = '"';
	name = dti_rec_channel(r);
	if (name) {
		p = (char *)memcpy(p, ",\"channel\":", 11) + 11;
		p = dti_put_json_str(ob, p, (const unsigned char *)name, strlen(name));
		if (!p || !(p = dti_ob_room(ob, p, DTI_PREFIX_MAX)))
			return NULL;
	}
	p = (char *)memcpy(p, ",\"cpu\":", 7) + 7;
	p = dti_put_dec(p, rec->cpu, 0, 0);
	p = (char *)memcpy(p, ",\"level\":", 9) + 9;
	p = dti_put_int(p, rec->level);
	p = (char *)memcpy(p, ",\"seq\":", 7) + 7;
	if (rec->flags & DTI_REC_PENDING) {
		p = (char *)memcpy(p, "null", 4) + 4;	/* none yet */
	} else {
		*p++ = '"';
		p = dti_put_dec(p, rec->seq, 0, 0);
		*p++ = '"';
	}
	p = (char *)memcpy(p, ",\"flags\":", 9) + 9;
	p = dti_put_dec(p, rec->flags, 0, 0);
	/* the address always; what it resolves to beside it */
	p = (char *)memcpy(p, ",\"caller\":\"", 11) + 11;
	p = dti_put_addr(p, rec->caller);
	*p++ = '"';
	if (c->json) {
		/* "symbol" and the fields of its source line */
		if ((p = dti_ob_room(ob, p, c->json_len)))
			p = (char *)memcpy(p, c->json, c->json_len) + c->json_len;
	} else if (c->len > 2 && memcmp(c->p, "0x", 2)) {
		p = (char *)memcpy(p, ",\"symbol\":", 10) + 10;
		p = dti_put_json_str(ob, p, (const unsigned char *)c->p, c->len);
	}
	if (p && dti_blob_info(rec, &type, &type_len, &data, &len) == 0 &&
	    (p = dti_ob_room(ob, p, 32))) {
		/* a blob: its media type, and its bytes as a binary record's */
		p = (char *)memcpy(p, ",\"event\":\"blob\",\"media_type\":", 29) + 29;
		p = dti_put_json_str(ob, p, (const unsigned char *)type, type_len);
		if (p && (p = dti_ob_room(ob, p, 16))) {
			p = (char *)memcpy(p, ",\"data\":\"", 9) + 9;
			p = dti_put_hex(ob, p, data, len, false);
			if (p)
				*p++ = '"';
		}
	/* an event's values are found once, for its fields and its text */
	} else if (p && r && (f = dti_events_find(&r->events, rec)) &&
	    dti_event_values(f, rec, &v) == 0 &&
	    (p = dti_ob_room(ob, p, DTI_EVENT_JSON_MAX + sizeof(",\"text\":\"\"") +
				 DTI_EVENT_TEXT_MAX))) {
		/* its text, if it needs no escape, printed in place */
		p += dti_event_json(f, &v, p, f->plain);
		if (!f->plain) {
			n = dti_event_print(f, &v, text);
			p = dti_put_json_str(ob, (char *)memcpy(p, ",\"text\":", 8) + 8,
					     (const unsigned char *)text, n);
		}
	} else if (p && rec->flags & DTI_REC_TEXT) {
		p = dti_put_json_str(ob, (char *)memcpy(p, ",\"text\":", 8) + 8,
				     rec->payload, rec->len);
	} else if (p) {
		p = (char *)memcpy(p, ",\"data\":\"", 9) + 9;
		p = dti_put_hex(ob, p, rec->payload, rec->len, false);
		if (p)
			*p++ = '"';
	}
	if (p && (p = dti_ob_room(ob, p, 2)))
		p = (char *)memcpy(p, "}\n", 2) + 2;
	return p;
}

/*
 * The boot ID the Journal Export Format gives records of a boot not
 * known (a snapshot's, a dump's, a previous boot's): one made up for
 * this run, the same for all its records, so that their monotonic times
 * stay comparable among themselves and with nothing else.  systemd 257's
 * journal writer refuses an entry with a monotonic time and no boot ID.
 */
static const char *dti_run_boot_id(void)
{
	static char id[2 * DTI_BOOT_ID_BYTES + 1];
	unsigned char b[DTI_BOOT_ID_BYTES];
	unsigned int i;

	if (id[0])
		return id;
	if (getrandom(b, sizeof(b), 0) != sizeof(b))
		memset(b, 0, sizeof(b));	/* no randomness: all zero, which journald refuses */
	for (i = 0; i < sizeof(b); i++)
		snprintf(id + 2 * i, 3, "%02x", b[i]);
	return id;
}

/*
 * A record in the Journal Export Format (systemd's, for
 * systemd-journal-remote and journalctl): journald's fields (the
 * timestamps, MESSAGE, PRIORITY, SYSLOG_IDENTIFIER, CODE_*), then DTI_*
 * for what the JSON of dti_put_json() holds, and an empty line.
 */
static char *dti_put_export(struct dti_reader *r, struct dti_obuf *ob, char *p,
			    const struct dti_rec *rec)
{
	struct dti_caller tmp;
	const struct dti_caller *c = dti_caller(r, rec->caller, rec->ts_ns, &tmp);
	const struct dti_evfmt *f = NULL;
	char text[DTI_EVENT_TEXT_MAX], addr[24], *sym_end;
	const char *name = dti_rec_channel(r), *type;
	struct dti_values v;
	size_t n, type_len, len;
	const void *data;

	/* the wall clock where the boot's is known, else the time since boot */
	p = dti_exp_num(ob, p, "__REALTIME_TIMESTAMP",
			((r && r->boot_known ? (uint64_t)r->boot_realtime_ns : 0) + rec->ts_ns) / 1000);
	p = dti_exp_num(ob, p, "__MONOTONIC_TIMESTAMP", rec->ts_ns / 1000);
	/* journald's writer takes no monotonic time without its boot (257) */
	p = dti_exp_str(ob, p, "_BOOT_ID", r && r->boot_id[0] ? r->boot_id : dti_run_boot_id());
	p = dti_exp_num(ob, p, "PRIORITY", (unsigned int)rec->level & 7);
	p = dti_exp_str(ob, p, "SYSLOG_IDENTIFIER", name ? name : "dti");
	if (name)
		p = dti_exp_str(ob, p, "DTI_CHANNEL", name);
	p = dti_exp_num(ob, p, "DTI_TS_NS", rec->ts_ns);
	p = dti_exp_num(ob, p, "DTI_CPU", rec->cpu);
	if (!(rec->flags & DTI_REC_PENDING))
		p = dti_exp_num(ob, p, "DTI_SEQ", rec->seq);
	p = dti_exp_num(ob, p, "DTI_FLAGS", rec->flags);
	p = p ? dti_exp_put(ob, p, "DTI_CALLER", addr, dti_put_addr(addr, rec->caller) - addr) :
		NULL;
	if (p && c->exp) {
		if ((p = dti_ob_room(ob, p, c->exp_len)))
			p = (char *)memcpy(p, c->exp, c->exp_len) + c->exp_len;
	} else if (p && c->len > 2 && memcmp(c->p, "0x", 2)) {
		/* %pS: its function is the name before the offset */
		p = dti_exp_put(ob, p, "DTI_SYMBOL", c->p, c->len);
		sym_end = memchr(c->p, '+', c->len);
		if (p && sym_end)
			p = dti_exp_put(ob, p, "CODE_FUNC", c->p, sym_end - c->p);
	}
	if (p && r && (rec->flags & DTI_REC_TYPED) && (f = dti_events_find(&r->events, rec)) &&
	    dti_event_values(f, rec, &v) == 0 && (p = dti_ob_room(ob, p, DTI_EVENT_JSON_MAX))) {
		p += dti_event_export(f, &v, p);
		n = dti_event_print(f, &v, text);
		p = dti_exp_put(ob, p, "MESSAGE", text, n && text[n - 1] == '\n' ? n - 1 : n);
	} else if (p && dti_blob_info(rec, &type, &type_len, &data, &len) == 0) {
		/* a blob: its line as MESSAGE, its media type and its bytes */
		p = dti_exp_put(ob, p, "DTI_MEDIA_TYPE", type, type_len);
		if (p && (p = dti_ob_room(ob, p, 16))) {
			p = (char *)memcpy(p, "MESSAGE=", 8) + 8;
			p = dti_put_blob(ob, p, type, type_len, data, len);
		}
		if (p && (p = dti_ob_room(ob, p, 16))) {
			p = (char *)memcpy(p, "\nDTI_DATA=", 10) + 10;
			if ((p = dti_put_hex(ob, p, data, len, false)) &&
			    (p = dti_ob_room(ob, p, 1)))
				*p++ = '\n';
		}
	} else if (p && rec->flags & DTI_REC_TEXT) {
		/* a line's newline is no part of a journal's message (nor an event's) */
		n = rec->len && ((const char *)rec->payload)[rec->len - 1] == '\n' ?
		    rec->len - 1 : rec->len;
		p = dti_exp_put(ob, p, "MESSAGE", rec->payload, n);
	} else if (p && (p = dti_ob_room(ob, p, 16))) {
		/* binary: as -F text prints it, and as JSON's "data" */
		p = (char *)memcpy(p, "MESSAGE=", 8) + 8;
		if ((p = dti_put_hex(ob, p, rec->payload, rec->len, true)) &&
		    (p = dti_ob_room(ob, p, 16))) {
			p = (char *)memcpy(p, "\nDTI_DATA=", 10) + 10;
			if ((p = dti_put_hex(ob, p, rec->payload, rec->len, false)) &&
			    (p = dti_ob_room(ob, p, 1)))
				*p++ = '\n';
		}
	}
	if (p && (p = dti_ob_room(ob, p, 1)))
		*p++ = '\n';
	return p;
}

/* A binary record in TEXT or TS: the formatter's way, else hex. */
static char *dti_put_binary(struct dti_reader *r, struct dti_obuf *ob, char *p,
			    const struct dti_rec *rec, int *err)
{
	int ret = 0;

	if (r && r->fmt) {
		/* It writes to the FILE: what is collected goes first. */
		ob->len = p - ob->p;
		if (dti_ob_flush(ob) < 0)
			return NULL;
		ret = r->fmt(ob->out, rec, r->fmt_arg);
		if (ret < 0) {
			*err = -ret;
			return NULL;
		}
		p = ob->p;
	}
	if (!ret)
		p = dti_put_hex(ob, p, rec->payload, rec->len, true);
	return p;
}

/*
 * Values @v through @f, and a newline unless they end in one, at @p, which
 * has room for DTI_EVENT_TEXT_MAX + 1 bytes: the end
 */
static inline char *dti_event_line(char *p, const struct dti_evfmt *f,
				   const struct dti_values *v)
{
	size_t n = dti_event_print(f, v, p);

	p += n;
	if (!n || p[-1] != '\n')
		*p++ = '\n';
	return p;
}

/*
 * An event through its format, as text and a newline, after @p: *@done
 * if printed so, else it is printed as the binary record it is.
 */
static char *dti_put_event(struct dti_reader *r, struct dti_obuf *ob, char *p,
			   const struct dti_rec *rec, bool *done)
{
	const struct dti_evfmt *f = dti_events_find(&r->events, rec);
	struct dti_values v;
	const char *type;
	const void *data;
	size_t type_len, len;

	if (dti_blob_info(rec, &type, &type_len, &data, &len) == 0) {
		*done = true;
		if ((p = dti_put_blob(ob, p, type, type_len, data, len)) &&
		    (p = dti_ob_room(ob, p, 1)))
			*p++ = '\n';
		return p;
	}
	if (!f || dti_event_values(f, rec, &v) < 0 ||
	    !(p = dti_ob_room(ob, p, DTI_EVENT_TEXT_MAX + 1)))
		return p;
	*done = true;
	return dti_event_line(p, f, &v);
}

/* The whole (version-1) header of @rec, in the byte order it was written in */
static inline __attribute__((always_inline)) void
dti_whole_hdr(struct dti_record *h, const struct dti_rec *rec)
{
	bool sw = rec->swapped;

	*h = (struct dti_record){
		.magic = sw ? bswap_16(DTI_RECORD_MAGIC) : DTI_RECORD_MAGIC,
		.version = DTI_RECORD_VERSION_1,
		.flags = rec->flags, .level = rec->level, .hdr_len = sizeof(*h),
		.cpu = sw ? bswap_16(rec->buf_cpu) : rec->buf_cpu,
		.len = sw ? bswap_32(rec->len) : rec->len,
		.log_cpu = sw ? bswap_32(rec->cpu) : rec->cpu,
		.seq = sw ? bswap_64(rec->seq) : rec->seq,
		.ts_ns = sw ? bswap_64(rec->ts_ns) : rec->ts_ns,
		.caller = sw ? bswap_64(rec->caller) : rec->caller,
	};
}

/* dti_put_whole() at @p, which has the room (dti_rec_size()) */
static inline __attribute__((always_inline)) char *
dti_whole_at(char *p, const struct dti_rec *rec)
{
	size_t pad = dti_rec_size(rec->len) - sizeof(struct dti_record) - rec->len;
	struct dti_record h;

	dti_whole_hdr(&h, rec);
	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	memcpy(p, rec->payload, rec->len);
	p += rec->len;
	memset(p, 0, pad);
	return p + pad;
}

/*
 * A compact record as raw output: whole (version 1), as readers of
 * records alone take them, in the byte order it was written in.
 */
static char *dti_put_whole(struct dti_obuf *ob, char *p, const struct dti_rec *rec)
{
	static const unsigned char zero[DTI_RECORD_ALIGN];
	struct dti_record h;

	dti_whole_hdr(&h, rec);
	p = dti_ob_put(ob, p, &h, sizeof(h));
	if (p)
		p = dti_ob_put(ob, p, rec->payload, rec->len);
	if (p)
		p = dti_ob_put(ob, p, zero, dti_rec_size(rec->len) - sizeof(h) - rec->len);
	return p;
}

/* Format @rec after @p; returns the end, or NULL (a write error, or *@err). */
static char *dti_put_rec(struct dti_reader *r, struct dti_obuf *ob, char *p,
			 const struct dti_rec *rec, enum dti_format format,
			 int *err)
{
	const unsigned char *text = rec->payload;
	bool done = false;

	if (format == DTI_FMT_RAW && rec->raw_version != DTI_RECORD_VERSION_1)
		return dti_put_whole(ob, p, rec);
	if (format == DTI_FMT_RAW)
		return dti_ob_put(ob, p, rec->raw, rec->raw_len);
	/* an event type's format is for readers, not a line */
	if (rec->flags & DTI_REC_FORMAT)
		return p;
	if (!(p = dti_ob_room(ob, p, DTI_PREFIX_MAX)))
		return NULL;
	if (format == DTI_FMT_JSON)
		return dti_put_json(r, ob, p, rec);
	if (format == DTI_FMT_EXPORT)
		return dti_put_export(r, ob, p, rec);
	if (format != DTI_FMT_TEXT)
		p = dti_put_prefix(r, p, rec);
	if (format != DTI_FMT_HEX && (rec->flags & DTI_REC_TYPED) && r)
		p = dti_put_event(r, ob, p, rec, &done);
	if (done || !p)
		return p;
	if (format == DTI_FMT_HEX || !(rec->flags & DTI_REC_TEXT))
		p = format == DTI_FMT_HEX ? dti_put_hex(ob, p, text, rec->len, true) :
					    dti_put_binary(r, ob, p, rec, err);
	else if ((p = dti_ob_put(ob, p, text, rec->len)) &&
		 rec->len && text[rec->len - 1] == '\n')
		return p;
	if (p && (p = dti_ob_room(ob, p, 1)))
		*p++ = '\n';
	return p;
}

/* memcpy(), without a call for the 16 to 32 bytes of most text records */
static inline void dti_copy(char *p, const unsigned char *q, size_t n)
{
	if (n >= 16 && n <= 32) {
		memcpy(p, q, 16);
		memcpy(p + n - 16, q + n - 16, 16);
	} else {
		memcpy(p, q, n);
	}
}

/*
 * dti_put_rec() in TEXT, TS and HEX without a formatter, when the buffer
 * has room for the longest line @rec can make (dti_line_max()): no
 * checks of room on the way.
 */
static inline char *dti_put_line(struct dti_reader *r, char *p,
				 const struct dti_rec *rec, enum dti_format format)
{
	const unsigned char *q = rec->payload;

	if (format != DTI_FMT_TEXT)
		p = dti_put_prefix(r, p, rec);
	if (format != DTI_FMT_HEX && (rec->flags & DTI_REC_TEXT)) {
		dti_copy(p, q, rec->len);
		p += rec->len;
		if (!rec->len || q[rec->len - 1] != '\n')
			*p++ = '\n';
		return p;
	}
	if (!rec->len) {
		*p++ = '\n';
		return p;
	}
	p = dti_hex_run(p, q, rec->len, 3);
	p[-1] = '\n';		/* the last byte's space */
	return p;
}

/* Room dti_put_line() needs at most (dti_hex_run(): 3 a byte, and 1) */
static inline size_t dti_line_max(const struct dti_rec *rec, enum dti_format format)
{
	return (format == DTI_FMT_TEXT ? 0 : DTI_PREFIX_MAX) + 3 * rec->len + 2;
}

/* @ob allocated, for @out (what it holds for another FILE goes out).  0 or -1. */
static int dti_ob_use(struct dti_obuf *ob, FILE *out)
{
	if (!ob->p) {
		ob->p = malloc(DTI_OBUF_SIZE);
		if (!ob->p)
			return dti_fail(ENOMEM, "out of memory");
		ob->cap = DTI_OBUF_SIZE;
	}
	if (ob->out != out) {
		dti_ob_flush(ob);
		ob->out = out;
	}
	return 0;
}

/* dti_print() into @ob */
static int dti_print_ob(struct dti_reader *r, struct dti_obuf *ob, FILE *out,
			const struct dti_rec *rec, enum dti_format format)
{
	int err = 0;
	char *p;

	if ((unsigned int)format > DTI_FMT_EXPORT)
		return dti_fail(EINVAL, "unknown format %d", (int)format);
	if (dti_ob_use(ob, out) < 0)
		return -1;
	if (ob->run_len)
		dti_ob_settle(ob);
	if (format < DTI_FMT_JSON && (!r || !r->fmt) && !ob->err &&
	    !(rec->flags & (DTI_REC_TYPED | DTI_REC_FORMAT)) &&
	    dti_line_max(rec, format) <= ob->cap - ob->len) {
		ob->len = dti_put_line(r, ob->p + ob->len, rec, format) - ob->p;
		return 0;
	}
	p = dti_put_rec(r, ob, ob->p + ob->len, rec, format, &err);
	if (p)
		ob->len = p - ob->p;
	if (err)
		return dti_fail(err, "formatter failed on %s offset %llu",
				rec->source, (unsigned long long)rec->offset);
	if (ob->err)
		return dti_fail(EIO, "write error: %s", strerror(ob->err));
	return 0;
}

/* dti_print() but for a run that goes on */
static int __attribute__((noinline)) dti_print_more(struct dti_reader *r,
		FILE *out, const struct dti_rec *rec, enum dti_format format)
{
	struct dti_obuf *ob = r->ob;
	struct dti_stream *s = r->last;

	/* the record dti_next() returned, raw: a run starts */
	if (format == DTI_FMT_RAW && out == ob->out && !ob->err && s &&
	    rec->raw_version == DTI_RECORD_VERSION_1 && rec->raw == dti_last_raw(r)) {
		if (dti_ob_settle(ob) < 0)
			return dti_fail(EIO, "write error: %s", strerror(ob->err));
		ob->run = rec->raw;
		ob->run_len = rec->raw_len;
		ob->run_src = s;
		s->pin = ob;
		return 0;
	}
	return dti_print_ob(r, ob, out, rec, format);
}

/* dti_print() without a reader: into a buffer of its own, written at once */
static int dti_print_alone(FILE *out, const struct dti_rec *rec,
			   enum dti_format format)
{
	char local[DTI_PREFIX_MAX + 64];
	struct dti_obuf tmp = { .p = local, .cap = sizeof(local), .out = out };
	int ret = dti_print_ob(NULL, &tmp, out, rec, format);

	if (!ret && dti_ob_flush(&tmp) < 0)
		return dti_fail(EIO, "write error: %s", strerror(tmp.err));
	return ret;
}

/* The lines' modules changed (a table read again): their callers are made again. */
static void dti_lines_check(struct dti_reader *r)
{
	if (r->lines && r->lines_gen != dti_lines_gen(r->lines)) {
		memset(r->callers, 0, sizeof(r->callers));
		dti_cache_free(&r->lcache);
		r->lines_gen = dti_lines_gen(r->lines);
	}
}

int dti_print(struct dti_reader *r, FILE *out, const struct dti_rec *rec,
	      enum dti_format format)
{
	struct dti_obuf *ob;

	if (!r)
		return dti_print_alone(out, rec, format);
	if (r->merge)
		return dti_merge_print(r, out, rec, format);
	dti_lines_check(r);
	ob = r->ob;
	if (format == DTI_FMT_RAW) {
		/* right after the run of the stream it comes from: it goes on */
		if (ob->run_src && ob->run_src == r->last &&
		    rec->raw_version == DTI_RECORD_VERSION_1 &&
		    rec->raw == ob->run + ob->run_len && out == ob->out) {
			ob->run_len += rec->raw_len;
			return 0;
		}
	} else if (format == DTI_FMT_TEXT && out == ob->out && !ob->run_len &&
		   !ob->err && !r->fmt && !(rec->flags & (DTI_REC_TYPED | DTI_REC_FORMAT)) &&
		   dti_line_max(rec, DTI_FMT_TEXT) <= ob->cap - ob->len) {
		ob->len = dti_put_line(r, ob->p + ob->len, rec, DTI_FMT_TEXT) - ob->p;
		return 0;
	}
	return dti_print_more(r, out, rec, format);
}

/*
 * dti_print_records() in a run (struct dti_fast): the records that
 * dti_next() would take one after another, printed as dti_print() prints
 * them, with the run's state, the filter and the buffer's end in
 * registers.  Raw records extend the run of raw bytes (struct
 * dti_obuf), lines go into the buffer while it has room; anything else
 * goes through dti_print().  Takes at most *@left records and counts
 * them off.  0, or -1 as dti_print().
 */
static inline __attribute__((always_inline)) int
dti_print_run(struct dti_reader *r, FILE *out, enum dti_format format,
	      unsigned long *left)
{
	int min_level = INT_MIN, max_level = INT_MAX;
	struct dti_obuf *ob = r->ob;
	struct dti_stream *s = r->last;
	struct dti_fast f = r->fast;
	unsigned long n = *left;
	const struct dti_evfmt *ev;
	struct dti_values v;
	struct dti_rec rec, one;
	/* where the raw run ends that a record of the run would extend */
	const unsigned char *run_end = ob->run_src == s ? ob->run + ob->run_len : NULL;
	char *p = ob->p + ob->len;
	int ret = 0;

	const unsigned char *q;
	int level;

	if (r->filter) {
		dti_filter_level_range(r->filter, &min_level, &max_level);
		/* all of the run's records are of its CPU */
		if (!dti_filter_cpu(r->filter, f.cpu))
			min_level = INT_MAX;
	}
	while (n && (q = dti_fast_step(&f))) {
		n--;
		level = dti_fast_level(&f, q);
		if (level < min_level || level > max_level)
			continue;
		/* (a compact record is written whole: dti_put_whole()) */
		if (format == DTI_FMT_RAW && q == run_end && !f.compact) {
			run_end = f.next;
			continue;
		}
		dti_fast_rec(&f, q, &rec);
		/* a compact record, whole, while no raw run waits before it */
		if (format == DTI_FMT_RAW && f.compact && !ob->err && !ob->run_len &&
		    dti_rec_size(rec.len) <= (size_t)(ob->p + ob->cap - p)) {
			p = dti_whole_at(p, &rec);
			continue;
		}
		if (format < DTI_FMT_JSON && !r->fmt &&
		    !ob->err && (!(rec.flags & DTI_REC_TYPED) || format == DTI_FMT_HEX) &&
		    dti_line_max(&rec, format) <= (size_t)(ob->p + ob->cap - p)) {
			p = dti_put_line(r, p, &rec, format);
			continue;
		}
		/* an event, as dti_put_rec() prints it */
		if ((format == DTI_FMT_TEXT || format == DTI_FMT_TS) && !ob->err &&
		    DTI_PREFIX_MAX + DTI_EVENT_TEXT_MAX + 1 <= (size_t)(ob->p + ob->cap - p) &&
		    (ev = dti_events_find(&r->events, &rec)) &&
		    dti_event_values(ev, &rec, &v) == 0) {
			if (format == DTI_FMT_TS)
				p = dti_put_prefix(r, p, &rec);
			p = dti_event_line(p, ev, &v);
			continue;
		}
		/* as dti_print() does it, with the reader's state up to date */
		r->fast = f;
		if (run_end)
			ob->run_len = run_end - ob->run;
		ob->len = p - ob->p;
		dti_fast_rec(&f, q, &one);	/* rec stays in registers */
		/* JSON, export: what dti_print() comes to, straight */
		ret = format == DTI_FMT_JSON || format == DTI_FMT_EXPORT ?
		      dti_print_ob(r, ob, out, &one, format) : dti_print(r, out, &one, format);
		p = ob->p + ob->len;
		run_end = ob->run_src == s ? ob->run + ob->run_len : NULL;
		if (ret < 0)
			break;
	}
	if (run_end)
		ob->run_len = run_end - ob->run;
	ob->len = p - ob->p;
	r->fast = f;
	*left = n;
	return ret;
}

int dti_print_records(struct dti_reader *r, FILE *out, enum dti_format format,
		      unsigned long max)
{
	unsigned long left = max ? max : ULONG_MAX;
	/* a filter on more than levels and CPUs looks at every record */
	const bool runs = !r->filter || dti_filter_simple(r->filter);
	struct dti_rec rec;
	int ret;

	if ((unsigned int)format > DTI_FMT_EXPORT)
		return dti_fail(EINVAL, "unknown format %d", (int)format);
	if (r->merge)
		return dti_merge_print_records(r, out, format, max);
	if (dti_ob_use(r->ob, out) < 0)
		return -1;
	dti_lines_check(r);
	if (format != DTI_FMT_RAW && r->ob->run_len && dti_ob_settle(r->ob) < 0)
		return dti_fail(EIO, "write error: %s", strerror(r->ob->err));
	while (left) {
		if (r->fast.on && runs) {
			/* one copy of the loop per format: the tests fold away */
			switch (format) {
			case DTI_FMT_TEXT:
				ret = dti_print_run(r, out, DTI_FMT_TEXT, &left);
				break;
			case DTI_FMT_TS:
				ret = dti_print_run(r, out, DTI_FMT_TS, &left);
				break;
			case DTI_FMT_HEX:
				ret = dti_print_run(r, out, DTI_FMT_HEX, &left);
				break;
			case DTI_FMT_JSON:
				ret = dti_print_run(r, out, DTI_FMT_JSON, &left);
				break;
			case DTI_FMT_EXPORT:
				ret = dti_print_run(r, out, DTI_FMT_EXPORT, &left);
				break;
			default:
				ret = dti_print_run(r, out, DTI_FMT_RAW, &left);
				break;
			}
			if (ret < 0)
				return -1;
			if (!left)
				break;
		}
		ret = dti_next_any(r, &rec);
		if (ret <= 0)
			return dti_filter_end(r, ret);
		left--;
		/* formats pass every filter: raw output needs them */
		if ((rec.flags & DTI_REC_FORMAT || !r->filter || dti_filter_match(r, &rec)) &&
		    dti_print(r, out, &rec, format) < 0)
			return -1;
	}
	return 1;
}

/*
 * dti_print() of a merge: the record through the child it came from,
 * after the channel column where there are several channels
 */
int dti_merge_print(struct dti_reader *m, FILE *out, const struct dti_rec *rec,
		    enum dti_format format)
{
	struct dti_reader *r = m->kid_last >= 0 ? m->kids[m->kid_last].r : NULL;
	struct dti_obuf *ob = m->ob;
	const char *name;
	size_t len;
	char *p;

	if ((unsigned int)format > DTI_FMT_RAW)
		return dti_fail(EINVAL, "unknown format %d", (int)format);
	if (format == DTI_FMT_RAW && m->n_kids > 1)
		return dti_fail(EINVAL, "records of %u channels in one raw stream would be no channel's: print them apart",
				m->n_kids);
	if (!r)
		return dti_print(NULL, out, rec, format);
	if (m->n_kids > 1 && format < DTI_FMT_JSON && !(rec->flags & DTI_REC_FORMAT)) {
		if (dti_ob_use(ob, out) < 0)
			return -1;
		if (ob->run_len)
			dti_ob_settle(ob);
		name = m->kids[m->kid_last].name;
		name = name ? name : "?";
		len = strlen(name);
		p = dti_ob_room(ob, ob->p + ob->len, (len > m->name_w ? len : m->name_w) + 1);
		if (!p)
			return dti_fail(EIO, "write error: %s", strerror(ob->err));
		memcpy(p, name, len);
		memset(p + len, ' ', len < m->name_w ? m->name_w - len + 1 : 1);
		ob->len = p - ob->p + (len < m->name_w ? m->name_w : len) + 1;
	}
	return dti_print(r, out, rec, format);
}
