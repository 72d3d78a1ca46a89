// SPDX-License-Identifier: LGPL-2.1
/*
 * libdti: the records a reader returns (struct dti_filter): levels, CPUs,
 * a time range, a regular expression on the message and an expression on
 * typed events' fields.  A filter is set on a reader (dti_set_filter())
 * and holds for dti_next() and dti_print_records() alike.
 *
 * The field expression is parsed once into a tree:
 *
 *	expr	:= and { "||" and }
 *	and	:= unary { "&&" unary }
 *	unary	:= "!" unary | "(" expr ")" | FIELD OP VALUE
 *	OP	:= "==" | "!=" | "<" | "<=" | ">" | ">=" | "~"
 *	VALUE	:= a number (C syntax, signed), a level name, or a string,
 *		   quoted ("...", '...') or bare (up to a space or operator)
 *
 * FIELD is a field of the record's event type, or, where the type has
 * none of that name, one of the record's own: event (the type's name),
 * level, cpu, seq.  A comparison with a field the record lacks is false,
 * as in ftrace's filters, and so is one of a string with a number.
 * "~" is a glob (fnmatch()) on strings.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libdti-local.h"

/* Bytes of a field name or a string value in an expression */
#define DTI_EXPR_WORD_MAX	256
/* Nesting of parentheses and "!" an expression may have */
#define DTI_EXPR_DEPTH_MAX	64

enum dti_op { DTI_OP_EQ, DTI_OP_NE, DTI_OP_LT, DTI_OP_LE, DTI_OP_GT, DTI_OP_GE,
	      DTI_OP_GLOB };
enum dti_node_kind { DTI_NODE_AND, DTI_NODE_OR, DTI_NODE_NOT, DTI_NODE_CMP };

struct dti_node {
	enum dti_node_kind kind;
	struct dti_node *l, *r;		/* AND, OR: both; NOT: l */
	/* CMP */
	enum dti_op op;
	char *field;
	char *str;			/* the value as written */
	bool is_num;			/* it reads as a number */
	bool neg;			/* a negative one */
	int64_t num;
};

struct dti_time_bound {
	bool set;
	enum dti_time_base base;
	int64_t ns;
};

struct dti_filter {
	int min_level, max_level;
	uint64_t *cpus;			/* bitmap of DTI_CPU_LIMIT bits, NULL: all */
	struct dti_time_bound since, until;
	bool has_grep;
	regex_t grep;
	struct dti_node *expr;
	char *expr_text;		/* as given, for the messages */
};

struct dti_filter *dti_filter_new(void)
{
	struct dti_filter *f = calloc(1, sizeof(*f));

	if (!f)
		return dti_fail_null(ENOMEM, "out of memory");
	f->min_level = DTI_LEVEL_EMERG;
	f->max_level = DTI_LEVEL_MAX;
	return f;
}

static void dti_node_free(struct dti_node *n)
{
	if (!n)
		return;
	dti_node_free(n->l);
	dti_node_free(n->r);
	free(n->field);
	free(n->str);
	free(n);
}

void dti_filter_free(struct dti_filter *f)
{
	if (!f)
		return;
	free(f->cpus);
	if (f->has_grep)
		regfree(&f->grep);
	dti_node_free(f->expr);
	free(f->expr_text);
	free(f);
}

int dti_filter_levels(struct dti_filter *f, int from, int to)
{
	if (from < DTI_LEVEL_EMERG || from > DTI_LEVEL_MAX ||
	    to < DTI_LEVEL_EMERG || to > DTI_LEVEL_MAX)
		return dti_fail(EINVAL, "levels %d..%d: a level is 0 (emerg) to 7 (debug)",
				from, to);
	f->min_level = from < to ? from : to;
	f->max_level = from < to ? to : from;
	return 0;
}

/* Longer than any level's name or number: a longer word is no level */
#define DTI_LEVEL_WORD_MAX	32

/* A record's level (0..7) named by the @n bytes at @text: 0, or -1 */
static int dti_rec_level(const char *text, size_t n, int *level)
{
	char word[DTI_LEVEL_WORD_MAX];

	if (n >= sizeof(word))
		return -1;
	memcpy(word, text, n);
	word[n] = 0;
	return dti_level_parse(word, level) == 0 && *level >= DTI_LEVEL_EMERG ? 0 : -1;
}

int dti_filter_priority(struct dti_filter *f, const char *text)
{
	const char *dots = strstr(text, "..");
	int a = DTI_LEVEL_EMERG, b;

	if (dots ? dti_rec_level(text, dots - text, &a) < 0 ||
		   dti_rec_level(dots + 2, strlen(dots + 2), &b) < 0 :
		   dti_rec_level(text, strlen(text), &b) < 0)
		return dti_fail(EINVAL, "priority \"%s\": LEVEL or LEVEL..LEVEL, a level 0..7 or "
				"emerg, alert, crit, err, warning, notice, info, debug", text);
	return dti_filter_levels(f, a, b);
}

/* A CPU number at *@p, advanced past it: 0, or -1 (EINVAL, message for @list) */
static int dti_cpu_num(const char **p, const char *list, unsigned long *cpu)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return dti_fail(EINVAL, "CPU list \"%s\": a CPU number was expected at \"%s\"",
				list, *p);
	errno = 0;
	*cpu = strtoul(*p, &end, 10);
	if (errno || *cpu >= DTI_CPU_LIMIT)
		return dti_fail(EINVAL, "CPU list \"%s\": CPU %.*s is out of range (0..%u)",
				list, (int)(end - *p), *p, DTI_CPU_LIMIT - 1);
	*p = end;
	return 0;
}

int dti_filter_cpus(struct dti_filter *f, const char *list)
{
	const size_t words = DTI_CPU_LIMIT / 64;
	uint64_t *set = calloc(words, sizeof(*set));
	unsigned long a, b, c;
	const char *p = list;

	if (!set)
		return dti_fail(ENOMEM, "out of memory");
	if (!*p) {
		free(set);
		return dti_fail(EINVAL, "CPU list is empty: give CPUs as 0,2-3");
	}
	for (;;) {
		if (dti_cpu_num(&p, list, &a) < 0)
			goto fail;
		b = a;
		if (*p == '-') {
			p++;
			if (dti_cpu_num(&p, list, &b) < 0)
				goto fail;
			if (b < a) {
				dti_fail(EINVAL, "CPU list \"%s\": range %lu-%lu runs backwards",
					 list, a, b);
				goto fail;
			}
		}
		for (c = a; c <= b; c++)
			set[c / 64] |= 1ULL << (c % 64);
		if (!*p)
			break;
		if (*p != ',') {
			dti_fail(EINVAL, "CPU list \"%s\": ',' or '-' was expected at \"%s\"",
				 list, p);
			goto fail;
		}
		p++;
	}
	if (f->cpus) {
		for (c = 0; c < words; c++)
			f->cpus[c] |= set[c];
		free(set);
	} else {
		f->cpus = set;
	}
	return 0;
fail:
	free(set);
	return -1;
}

static int dti_filter_bound(struct dti_time_bound *b, enum dti_time_base base,
			    int64_t ns, const char *which)
{
	if ((unsigned int)base > DTI_TIME_LAST)
		return dti_fail(EINVAL, "%s: unknown time base %d", which, (int)base);
	if (base == DTI_TIME_BOOT && ns < 0)
		return dti_fail(EINVAL, "%s: a time since boot is not negative", which);
	*b = (struct dti_time_bound){ .set = true, .base = base, .ns = ns };
	return 0;
}

/* A range no record can be in, where both ends count from the same time */
static int dti_filter_range_check(struct dti_filter *f, struct dti_time_bound *b,
				  struct dti_time_bound old)
{
	if (f->since.set && f->until.set && f->since.base == f->until.base &&
	    f->since.ns > f->until.ns) {
		*b = old;
		return dti_fail(EINVAL, "since is after until: no record can be in that time range");
	}
	return 0;
}

int dti_filter_since(struct dti_filter *f, enum dti_time_base base, int64_t ns)
{
	struct dti_time_bound old = f->since;

	if (dti_filter_bound(&f->since, base, ns, "since") < 0)
		return -1;
	return dti_filter_range_check(f, &f->since, old);
}

int dti_filter_until(struct dti_filter *f, enum dti_time_base base, int64_t ns)
{
	struct dti_time_bound old = f->until;

	if (dti_filter_bound(&f->until, base, ns, "until") < 0)
		return -1;
	return dti_filter_range_check(f, &f->until, old);
}

/* Units of dti_time_parse(), longest name first where one is another's prefix */
static const struct {
	const char *name;
	int64_t ns;
} dti_units[] = {
	{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "min", 60000000000LL },
	{ "s", 1000000000 }, { "m", 60000000000LL }, { "h", 3600000000000LL },
};

int dti_time_parse(const char *text, enum dti_time_base *base, int64_t *ns)
{
	const char *p = text, *frac = NULL;
	int64_t whole = 0, unit = 1000000000, part = 0, scale;
	unsigned int i;

	*base = *p == '+' ? DTI_TIME_FIRST : *p == '-' ? DTI_TIME_LAST : DTI_TIME_BOOT;
	if (*base != DTI_TIME_BOOT)
		p++;
	if (!isdigit((unsigned char)*p))
		goto bad;
	for (; isdigit((unsigned char)*p); p++) {
		if (whole > (INT64_MAX - 9) / 10)
			goto range;
		whole = whole * 10 + (*p - '0');
	}
	if (*p == '.')
		frac = ++p;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p) {
		for (i = 0; i < sizeof(dti_units) / sizeof(dti_units[0]); i++)
			if (!strcmp(p, dti_units[i].name))
				break;
		if (i == sizeof(dti_units) / sizeof(dti_units[0]))
			goto bad;
		unit = dti_units[i].ns;
	}
	if (whole > INT64_MAX / unit)
		goto range;
	/* the fraction, to the nanosecond: digits past it are dropped */
	for (scale = unit / 10; frac && isdigit((unsigned char)*frac) && scale; frac++, scale /= 10)
		part += (*frac - '0') * scale;
	if (whole * unit > INT64_MAX - part)
		goto range;
	*ns = whole * unit + part;
	if (*base == DTI_TIME_LAST)
		*ns = -*ns;
	return 0;
bad:
	return dti_fail(EINVAL, "time \"%s\": expected SECONDS since boot (12.5), "
			"+TIME after the first record or -TIME before the last, "
			"TIME a number with an optional unit (ns, us, ms, s, min, h)", text);
range:
	return dti_fail(ERANGE, "time \"%s\" is out of range", text);
}

int dti_filter_grep(struct dti_filter *f, const char *regex, unsigned int flags)
{
	int cflags = REG_EXTENDED | REG_NOSUB, rc;
	bool icase = true;
	const char *p;
	char msg[256];

	if (flags & ~(DTI_GREP_CASE | DTI_GREP_ICASE) ||
	    (flags & DTI_GREP_CASE && flags & DTI_GREP_ICASE))
		return dti_fail(EINVAL, "grep: flags %#x", flags);
	if (flags & DTI_GREP_CASE) {
		icase = false;
	} else if (!(flags & DTI_GREP_ICASE)) {
		/* journalctl's rule: a pattern with a capital letter is exact */
		for (p = regex; *p; p++)
			if (isupper((unsigned char)*p))
				icase = false;
	}
	if (icase)
		cflags |= REG_ICASE;
	if (f->has_grep)
		regfree(&f->grep);
	f->has_grep = false;
	rc = regcomp(&f->grep, regex, cflags);
	if (rc) {
		regerror(rc, &f->grep, msg, sizeof(msg));
		regfree(&f->grep);
		return dti_fail(EINVAL, "\"%s\" is no regular expression: %s", regex, msg);
	}
	f->has_grep = true;
	return 0;
}

/* ---- the field expression ---- */

struct dti_parse {
	const char *text, *p;
	int depth;
};

static int dti_expr_fail(struct dti_parse *ps, const char *what)
{
	return dti_fail(EINVAL, "expression \"%s\": %s at column %d%s%.20s%s", ps->text, what,
			(int)(ps->p - ps->text) + 1, *ps->p ? " (\"" : " (the end",
			ps->p, *ps->p ? "\")" : ")");
}

static void dti_skip_space(struct dti_parse *ps)
{
	while (isspace((unsigned char)*ps->p))
		ps->p++;
}

static bool dti_eat(struct dti_parse *ps, const char *tok)
{
	size_t n = strlen(tok);

	dti_skip_space(ps);
	if (strncmp(ps->p, tok, n))
		return false;
	ps->p += n;
	return true;
}

static bool dti_word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-' || c == '+' ||
	       c == '*' || c == '?' || c == '[' || c == ']' || c == ':' || c == '/';
}

/* A name, a bare value or a quoted string into a malloc()ed *@out. */
static int dti_word(struct dti_parse *ps, bool value, char **out)
{
	char buf[DTI_EXPR_WORD_MAX + 1];
	size_t n = 0;
	char quote = 0;

	dti_skip_space(ps);
	if (value && (*ps->p == '"' || *ps->p == '\''))
		quote = *ps->p++;
	while (*ps->p && (quote ? *ps->p != quote :
			  value ? dti_word_char(*ps->p) :
			  isalnum((unsigned char)*ps->p) || *ps->p == '_')) {
		if (quote && *ps->p == '\\' && ps->p[1])
			ps->p++;
		if (n == DTI_EXPR_WORD_MAX)
			return dti_expr_fail(ps, "word too long");
		buf[n++] = *ps->p++;
	}
	if (quote) {
		if (*ps->p != quote)
			return dti_expr_fail(ps, "unterminated string");
		ps->p++;
	} else if (!n) {
		return dti_expr_fail(ps, value ? "a value was expected" :
				     "a field name was expected");
	}
	buf[n] = 0;
	*out = strdup(buf);
	return *out ? 0 : dti_fail(ENOMEM, "out of memory");
}

static const struct {
	const char *tok;
	enum dti_op op;
} dti_ops[] = {	/* two-character ones first */
	{ "==", DTI_OP_EQ }, { "!=", DTI_OP_NE }, { "<=", DTI_OP_LE }, { ">=", DTI_OP_GE },
	{ "<", DTI_OP_LT }, { ">", DTI_OP_GT }, { "~", DTI_OP_GLOB }, { "=", DTI_OP_EQ },
};

static struct dti_node *dti_parse_or(struct dti_parse *ps);

static struct dti_node *dti_node_new(enum dti_node_kind kind)
{
	struct dti_node *n = calloc(1, sizeof(*n));

	if (!n)
		dti_fail(ENOMEM, "out of memory");
	else
		n->kind = kind;
	return n;
}

/* The value of a comparison as a number, where it reads as one */
static void dti_cmp_number(struct dti_node *n)
{
	char *end;
	int level;

	errno = 0;
	n->num = strtoll(n->str, &end, 0);
	if (!errno && !*end && end != n->str) {
		n->is_num = true;
		n->neg = n->num < 0;
	} else if (!strcmp(n->field, "level") && !dti_level_parse(n->str, &level) &&
		   level >= DTI_LEVEL_EMERG) {
		n->num = level;
		n->is_num = true;
	} else {
		/* beyond INT64_MAX: as unsigned bits (u64 fields, addresses) */
		errno = 0;
		n->num = (int64_t)strtoull(n->str, &end, 0);
		n->is_num = !errno && !*end && end != n->str && *n->str != '-';
	}
}

static struct dti_node *dti_parse_cmp(struct dti_parse *ps)
{
	struct dti_node *n = dti_node_new(DTI_NODE_CMP);
	unsigned int i;

	if (!n)
		return NULL;
	if (dti_word(ps, false, &n->field) < 0)
		goto fail;
	dti_skip_space(ps);
	for (i = 0; i < sizeof(dti_ops) / sizeof(dti_ops[0]); i++)
		if (dti_eat(ps, dti_ops[i].tok))
			break;
	if (i == sizeof(dti_ops) / sizeof(dti_ops[0])) {
		dti_expr_fail(ps, "an operator (== != < <= > >= ~) was expected");
		goto fail;
	}
	n->op = dti_ops[i].op;
	if (dti_word(ps, true, &n->str) < 0)
		goto fail;
	dti_cmp_number(n);
	return n;
fail:
	dti_node_free(n);
	return NULL;
}

static struct dti_node *dti_parse_unary(struct dti_parse *ps)
{
	struct dti_node *n;

	if (++ps->depth > DTI_EXPR_DEPTH_MAX) {
		dti_expr_fail(ps, "nested too deep");
		return NULL;
	}
	if (dti_eat(ps, "!") ) {
		if (*ps->p == '=') {	/* "!=" with no field before it */
			ps->p--;
			dti_expr_fail(ps, "a field name was expected");
			return NULL;
		}
		n = dti_node_new(DTI_NODE_NOT);
		if (n && !(n->l = dti_parse_unary(ps))) {
			dti_node_free(n);
			n = NULL;
		}
	} else if (dti_eat(ps, "(")) {
		n = dti_parse_or(ps);
		if (n && !dti_eat(ps, ")")) {
			dti_expr_fail(ps, "')' was expected");
			dti_node_free(n);
			n = NULL;
		}
	} else {
		n = dti_parse_cmp(ps);
	}
	ps->depth--;
	return n;
}

static struct dti_node *dti_parse_bin(struct dti_parse *ps, bool and)
{
	struct dti_node *l, *n;

	l = and ? dti_parse_unary(ps) : dti_parse_bin(ps, true);
	while (l && dti_eat(ps, and ? "&&" : "||")) {
		n = dti_node_new(and ? DTI_NODE_AND : DTI_NODE_OR);
		if (!n) {
			dti_node_free(l);
			return NULL;
		}
		n->l = l;
		n->r = and ? dti_parse_unary(ps) : dti_parse_bin(ps, true);
		l = n;
		if (!n->r) {
			dti_node_free(n);
			return NULL;
		}
	}
	return l;
}

static struct dti_node *dti_parse_or(struct dti_parse *ps)
{
	return dti_parse_bin(ps, false);
}

int dti_filter_expr(struct dti_filter *f, const char *expr)
{
	struct dti_parse ps = { .text = expr, .p = expr };
	struct dti_node *n;
	char *text;

	n = dti_parse_or(&ps);
	if (!n)
		return -1;
	dti_skip_space(&ps);
	if (*ps.p) {
		dti_expr_fail(&ps, "'&&', '||' or the end was expected");
		dti_node_free(n);
		return -1;
	}
	text = strdup(expr);
	if (!text) {
		dti_node_free(n);
		return dti_fail(ENOMEM, "out of memory");
	}
	dti_node_free(f->expr);
	free(f->expr_text);
	f->expr = n;
	f->expr_text = text;
	return 0;
}

/* ---- matching ---- */

/*
 * What matching a record needs of its event type, found once per record:
 * its format (NULL if none is known), and its values if they fill the
 * layout (@have)
 */
struct dti_match {
	const struct dti_evfmt *ev;
	struct dti_values v;
	bool have;
};

static void dti_field_of(const struct dti_evfmt *ev, const struct dti_values *v,
			 unsigned int i, struct dti_field *out);

/* Index of field @name of @ev, or -1 */
static int dti_evfmt_field(const struct dti_evfmt *ev, const char *name)
{
	unsigned int i;

	for (i = 0; i < ev->nargs; i++)
		if (!strcmp(ev->fields[i], name))
			return i;
	return -1;
}

static bool dti_cmp_num(enum dti_op op, int64_t a, int64_t b, bool is_signed)
{
	int c;

	if (is_signed)
		c = a < b ? -1 : a > b;
	else
		c = (uint64_t)a < (uint64_t)b ? -1 : (uint64_t)a > (uint64_t)b;
	switch (op) {
	case DTI_OP_EQ: return !c;
	case DTI_OP_NE: return c;
	case DTI_OP_LT: return c < 0;
	case DTI_OP_LE: return c <= 0;
	case DTI_OP_GT: return c > 0;
	case DTI_OP_GE: return c >= 0;
	default: return false;
	}
}

static bool dti_cmp_str(const struct dti_node *n, const void *s, size_t len)
{
	char buf[DTI_EXPR_WORD_MAX * 4 + 1];
	int c;

	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, s, len);
	buf[len] = 0;
	if (n->op == DTI_OP_GLOB)
		return !fnmatch(n->str, buf, 0);
	c = strcmp(buf, n->str);
	return dti_cmp_num(n->op, c, 0, true);
}

static bool dti_match_cmp(const struct dti_match *m, const struct dti_node *n,
			  const struct dti_rec *rec)
{
	struct dti_field fld;
	bool is_signed = false;
	int i = m->ev ? dti_evfmt_field(m->ev, n->field) : -1;
	int64_t v;

	if (i >= 0) {
		if (!m->have)	/* values that do not fill the layout: no field */
			return false;
		dti_field_of(m->ev, &m->v, i, &fld);
		if (fld.type == DTI_FIELD_STR)
			return dti_cmp_str(n, fld.data, fld.len);
		if (fld.type == DTI_FIELD_BYTES || !n->is_num || n->op == DTI_OP_GLOB)
			return false;
		is_signed = fld.type == DTI_FIELD_INT;
		v = is_signed ? fld.i : (int64_t)fld.u;
	} else if (!strcmp(n->field, "event")) {
		return m->ev && dti_cmp_str(n, m->ev->name, strlen(m->ev->name));
	} else if (!strcmp(n->field, "level") || !strcmp(n->field, "cpu") ||
		   !strcmp(n->field, "seq")) {
		if (!n->is_num || n->op == DTI_OP_GLOB)
			return false;
		is_signed = n->field[0] == 'l';
		v = n->field[0] == 'l' ? rec->level : n->field[0] == 'c' ? (int64_t)rec->cpu :
		    (int64_t)rec->seq;
	} else {
		return false;
	}
	/* a negative value against an unsigned field: compare as numbers */
	if (!is_signed && n->neg)
		return dti_cmp_num(n->op, 1, 0, true);
	return dti_cmp_num(n->op, v, n->num, is_signed);
}

static bool dti_match_node(const struct dti_match *m, const struct dti_node *n,
			   const struct dti_rec *rec)
{
	switch (n->kind) {
	case DTI_NODE_AND:
		return dti_match_node(m, n->l, rec) && dti_match_node(m, n->r, rec);
	case DTI_NODE_OR:
		return dti_match_node(m, n->l, rec) || dti_match_node(m, n->r, rec);
	case DTI_NODE_NOT:
		return !dti_match_node(m, n->l, rec);
	default:
		return dti_match_cmp(m, n, rec);
	}
}

/* The message of @rec as DTI_FMT_TEXT prints it, NUL-terminated; NULL if binary */
static const char *dti_rec_message(struct dti_reader *r, const struct dti_match *m,
				   const struct dti_rec *rec)
{
	size_t len;

	if (rec->flags & DTI_REC_TYPED) {
		if (!m->have)	/* it prints as the binary record it is */
			return NULL;
		len = dti_event_print(m->ev, &m->v, r->match_buf);
		r->match_buf[len < DTI_EVENT_TEXT_MAX ? len : DTI_EVENT_TEXT_MAX - 1] = 0;
		return r->match_buf;
	}
	if (!(rec->flags & DTI_REC_TEXT))
		return NULL;
	len = rec->len < DTI_EVENT_TEXT_MAX - 1 ? rec->len : DTI_EVENT_TEXT_MAX - 1;
	memcpy(r->match_buf, rec->payload, len);
	r->match_buf[len] = 0;
	return r->match_buf;
}

bool dti_filter_match(struct dti_reader *r, const struct dti_rec *rec)
{
	const struct dti_filter *f = r->filter;
	struct dti_match m = { 0 };
	const char *msg;

	if (!r->first_seen) {
		r->first_seen = true;
		r->first_ts = rec->ts_ns;
		/* a merge's child: the merge's first record counts (dti_merge_times()) */
		if (f->since.set && f->since.base == DTI_TIME_FIRST && !r->in_merge)
			r->since_ns = dti_time_add(rec->ts_ns, f->since.ns);
		if (f->until.set && f->until.base == DTI_TIME_FIRST && !r->in_merge)
			r->until_ns = dti_time_add(rec->ts_ns, f->until.ns);
	}
	if (rec->level < f->min_level || rec->level > f->max_level ||
	    !dti_filter_cpu(f, rec->cpu) ||
	    rec->ts_ns < r->since_ns || rec->ts_ns > r->until_ns)
		return false;
	if ((f->has_grep || f->expr) && rec->flags & DTI_REC_TYPED) {
		m.ev = dti_events_find(&r->events, rec);
		m.have = m.ev && dti_event_values(m.ev, rec, &m.v) == 0;
	}
	if (f->has_grep) {
		msg = dti_rec_message(r, &m, rec);
		if (!msg || regexec(&f->grep, msg, 0, NULL, 0))
			return false;
	}
	return !f->expr || dti_match_node(&m, f->expr, rec);
}

/* The fields every record has (dti_match_cmp()) */
static const char *const dti_rec_fields[] = { "event", "level", "cpu", "seq" };

/* Whether field @name is one of every record's, or of an event type @r read */
static bool dti_field_known(const struct dti_reader *r, const char *name)
{
	unsigned int i;

	for (i = 0; i < sizeof(dti_rec_fields) / sizeof(dti_rec_fields[0]); i++)
		if (!strcmp(dti_rec_fields[i], name))
			return true;
	for (i = 0; i < r->events.n; i++)
		if (dti_evfmt_field(&r->events.f[i], name) >= 0)
			return true;
	for (i = 0; i < r->n_kids; i++)
		if (dti_field_known(r->kids[i].r, name))
			return true;
	return false;
}

/* The first field of expression @n that @r does not know, or NULL */
static const char *dti_expr_unknown(const struct dti_reader *r, const struct dti_node *n)
{
	const char *name;

	if (n->kind == DTI_NODE_CMP)
		return dti_field_known(r, n->field) ? NULL : n->field;
	name = dti_expr_unknown(r, n->l);
	return name || !n->r ? name : dti_expr_unknown(r, n->r);
}

/* Whether @r, or a child of merge @r, was opened with DTI_OPEN_FOLLOW */
static bool dti_follows(const struct dti_reader *r)
{
	unsigned int i;

	for (i = 0; i < r->n_kids; i++)
		if (dti_follows(r->kids[i].r))
			return true;
	return r->flags & DTI_OPEN_FOLLOW;
}

/* Whether @name is in @list (names after ", ") */
static bool dti_listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = list; (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ' ') && (!p[n] || p[n] == ','))
			return true;
	return false;
}

/* The names of the fields of the event types @r read, each once, onto @list */
static void dti_fields_add(const struct dti_reader *r, char *list, size_t size)
{
	const struct dti_evfmt *ev;
	unsigned int i, k;
	size_t len;

	for (i = 0; i < r->events.n; i++) {
		ev = &r->events.f[i];
		for (k = 0; k < ev->nargs; k++) {
			len = strlen(list);
			if (!dti_listed(list, ev->fields[k]) &&
			    snprintf(list + len, size - len, "%s%s", len ? ", " : "",
				     ev->fields[k]) >= (int)(size - len))
				return;		/* cut: the message says what fits */
		}
	}
	for (i = 0; i < r->n_kids; i++)
		dti_fields_add(r->kids[i].r, list, size);
}

/* Bytes of the list of fields an unknown field's message names */
#define DTI_FIELD_LIST_MAX	320

int dti_filter_end(struct dti_reader *r, int ret)
{
	char list[DTI_FIELD_LIST_MAX] = "";
	const char *name;

	if (ret || !r->filter || !r->filter->expr || r->in_merge || dti_follows(r))
		return ret;
	name = dti_expr_unknown(r, r->filter->expr);
	if (!name)
		return 0;
	dti_fields_add(r, list, sizeof(list));
	return dti_fail(EINVAL, "filter: expression \"%s\": no field %s: not one of every record's (event, level, cpu, seq), nor of an event type read (%s)",
			r->filter->expr_text, name, list[0] ? list : "none was read");
}

/* @ts + @ns, held within 0..UINT64_MAX */
uint64_t dti_time_add(uint64_t ts, int64_t ns)
{
	if (ns < 0)
		return (uint64_t)-ns > ts ? 0 : ts - (uint64_t)-ns;
	return UINT64_MAX - ts < (uint64_t)ns ? UINT64_MAX : ts + (uint64_t)ns;
}

/* Whether the filter passes only on what dti_print_records() checks in a run */
bool dti_filter_simple(const struct dti_filter *f)
{
	return !f->has_grep && !f->expr && !f->since.set && !f->until.set;
}

/* Whether the filter lets CPU @cpu's records through at all */
bool dti_filter_cpu(const struct dti_filter *f, unsigned int cpu)
{
	return !f->cpus || (cpu < DTI_CPU_LIMIT && f->cpus[cpu / 64] >> (cpu % 64) & 1);
}

/* The level range of @f */
void dti_filter_level_range(const struct dti_filter *f, int *min, int *max)
{
	*min = f->min_level;
	*max = f->max_level;
}

/* Bounds relative to the last record: what a second reader of the same input finds */
static int dti_filter_last(struct dti_reader *r, uint64_t *last)
{
	struct dti_reader *twin;
	struct dti_rec rec;
	struct timespec now;
	uint64_t kid_last;
	unsigned int i;
	int ret;

	if (r->merge) {
		/* the last of all its children's */
		*last = 0;
		for (i = 0; i < r->n_kids; i++) {
			if (dti_filter_last(r->kids[i].r, &kid_last) < 0)
				return -1;
			if (kid_last > *last)
				*last = kid_last;
		}
		return 0;
	}
	if (r->flags & DTI_OPEN_FOLLOW || dti_reader_live(r)) {
		/* a live channel is of this machine: its end is now */
		clock_gettime(CLOCK_MONOTONIC, &now);
		*last = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
		return 0;
	}
	twin = dti_reader_twin(r);
	if (!twin)
		return -1;
	*last = 0;
	while ((ret = dti_next_any(twin, &rec)) > 0)
		if (!(rec.flags & DTI_REC_FORMAT) && rec.ts_ns > *last)
			*last = rec.ts_ns;
	dti_close(twin);
	if (ret < 0)
		return dti_fail(errno, "finding the last record for a time before it: %s",
				dti_errmsg());
	return 0;
}

/* Whether @f has a time relative to @base */
static bool dti_filter_base(const struct dti_filter *f, enum dti_time_base base)
{
	return (f->since.set && f->since.base == base) ||
	       (f->until.set && f->until.base == base);
}

/* @f's times but those from the first record, @last the input's last: into *@since, *@until */
static void dti_filter_times(const struct dti_filter *f, uint64_t last,
			     uint64_t *since, uint64_t *until)
{
	*since = 0;
	*until = UINT64_MAX;
	if (f->since.set && f->since.base != DTI_TIME_FIRST)
		*since = f->since.base == DTI_TIME_BOOT ? (uint64_t)f->since.ns :
			 dti_time_add(last, f->since.ns);
	if (f->until.set && f->until.base != DTI_TIME_FIRST)
		*until = f->until.base == DTI_TIME_BOOT ? (uint64_t)f->until.ns :
			 dti_time_add(last, f->until.ns);
}

int dti_filter_attach(struct dti_reader *r, const struct dti_filter *f, bool times)
{
	uint64_t last = 0;

	if (f && times && dti_filter_base(f, DTI_TIME_LAST) && dti_filter_last(r, &last) < 0)
		return -1;
	if (f && !r->match_buf) {
		r->match_buf = malloc(DTI_EVENT_TEXT_MAX);
		if (!r->match_buf)
			return dti_fail(ENOMEM, "out of memory");
	}
	r->filter = f;
	r->first_seen = false;
	r->since_ns = 0;
	r->until_ns = UINT64_MAX;
	if (f && times)
		dti_filter_times(f, last, &r->since_ns, &r->until_ns);
	return 0;
}

/* A merge: the filter on its children, its times on the merged records */
static int dti_merge_set_filter(struct dti_reader *m, const struct dti_filter *f)
{
	uint64_t last = 0;
	unsigned int i;

	if (f && dti_filter_base(f, DTI_TIME_LAST) && dti_filter_last(m, &last) < 0)
		return -1;
	for (i = 0; i < m->n_kids; i++)
		if (dti_filter_attach(m->kids[i].r, f, false) < 0)
			return -1;
	m->filter = f;
	m->m_first = false;
	m->m_since = 0;
	m->m_until = UINT64_MAX;
	if (f)
		dti_filter_times(f, last, &m->m_since, &m->m_until);
	return 0;
}

bool dti_merge_times(struct dti_reader *m, uint64_t ts)
{
	const struct dti_filter *f = m->filter;
	uint64_t first = UINT64_MAX;
	unsigned int i;

	if (!m->m_first && dti_filter_base(f, DTI_TIME_FIRST)) {
		/* the first record any child saw, once one saw any */
		for (i = 0; i < m->n_kids; i++)
			if (m->kids[i].r->first_seen && m->kids[i].r->first_ts < first)
				first = m->kids[i].r->first_ts;
		if (first != UINT64_MAX) {
			m->m_first = true;
			if (f->since.set && f->since.base == DTI_TIME_FIRST)
				m->m_since = dti_time_add(first, f->since.ns);
			if (f->until.set && f->until.base == DTI_TIME_FIRST)
				m->m_until = dti_time_add(first, f->until.ns);
		}
	}
	return ts >= m->m_since && ts <= m->m_until;
}

int dti_set_filter(struct dti_reader *r, const struct dti_filter *f)
{
	return r->merge ? dti_merge_set_filter(r, f) : dti_filter_attach(r, f, true);
}

/* ---- typed events' fields ---- */

static void dti_field_of(const struct dti_evfmt *ev, const struct dti_values *v,
			 unsigned int i, struct dti_field *out)
{
	const unsigned char *data;
	uint64_t u;
	size_t len;

	dti_event_value(ev, v, i, &data, &len, &u);
	memset(out, 0, sizeof(*out));
	out->name = ev->fields[i];
	out->size = dti_event_arg_size(ev->layout[i]);
	switch (ev->layout[i]) {
	case DTI_ARG_STR:
		out->type = DTI_FIELD_STR;
		break;
	case DTI_ARG_HEX:
		out->type = DTI_FIELD_BYTES;
		break;
	case DTI_ARG_PTR:
		out->type = DTI_FIELD_PTR;
		break;
	case DTI_ARG_S8: case DTI_ARG_S16: case DTI_ARG_S32: case DTI_ARG_S64:
		out->type = DTI_FIELD_INT;
		break;
	default:
		out->type = DTI_FIELD_UINT;
	}
	if (out->type == DTI_FIELD_STR || out->type == DTI_FIELD_BYTES) {
		out->data = data;
		out->len = len;
	} else {
		out->u = u;
		out->i = (int64_t)u;
	}
}

/* Field @i of typed record @rec (format @ev) into @out: 0, or -1 (EBADMSG) */
static int dti_rec_field(const struct dti_evfmt *ev, const struct dti_rec *rec,
			 unsigned int i, struct dti_field *out)
{
	struct dti_values v;

	if (dti_event_values(ev, rec, &v) < 0)
		return dti_fail(EBADMSG, "%s, offset %" PRIu64 ": the values of event %s do not "
				"fill its layout", rec->source, rec->offset, ev->name);
	dti_field_of(ev, &v, i, out);
	return 0;
}

static const struct dti_evfmt *dti_rec_evfmt(struct dti_reader *r,
					     const struct dti_rec *rec)
{
	const struct dti_evfmt *ev;

	/* a merge's record is its child's */
	if (r->merge && !(r = dti_merge_from(r)))
		return NULL;
	if (!(rec->flags & DTI_REC_TYPED))
		return dti_fail_null(ENOENT, "%s, offset %" PRIu64 ": not a typed event",
				     rec->source, rec->offset);
	ev = dti_events_find(&r->events, rec);
	if (!ev)
		return dti_fail_null(ENOENT, "%s, offset %" PRIu64 ": no format of its event "
				     "type was read before it", rec->source, rec->offset);
	return ev;
}

int dti_event_info(struct dti_reader *r, const struct dti_rec *rec,
		   const char **name, unsigned int *nfields)
{
	const struct dti_evfmt *ev = dti_rec_evfmt(r, rec);

	if (!ev)
		return -1;
	if (name)
		*name = ev->name;
	if (nfields)
		*nfields = ev->nargs;
	return ev->id;
}

int dti_event_field(struct dti_reader *r, const struct dti_rec *rec, unsigned int i,
		    struct dti_field *out)
{
	const struct dti_evfmt *ev = dti_rec_evfmt(r, rec);

	if (!ev)
		return -1;
	if (i >= ev->nargs)
		return dti_fail(ENOENT, "event %s has %u fields, not %u", ev->name, ev->nargs,
				i + 1);
	return dti_rec_field(ev, rec, i, out);
}

int dti_event_field_by_name(struct dti_reader *r, const struct dti_rec *rec,
			    const char *name, struct dti_field *out)
{
	const struct dti_evfmt *ev = dti_rec_evfmt(r, rec);
	int i;

	if (!ev)
		return -1;
	i = dti_evfmt_field(ev, name);
	if (i < 0)
		return dti_fail(ENOENT, "event %s has no field %s", ev->name, name);
	return dti_rec_field(ev, rec, i, out);
}
