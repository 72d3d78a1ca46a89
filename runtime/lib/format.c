// SPDX-License-Identifier: LGPL-2.1
/*
 * libdti: printing records.
 *
 * DTI_FMT_TEXT prints what the kernel's "merged" file prints: text as
 * logged with a newline added if it has none, binary payloads as
 * lowercase hex bytes separated by spaces (the kernel's "%*ph").
 * DTI_FMT_TS adds the "merged-ts" prefix
 * "[%5llu.%09u] cpuN Llevel #seq caller: ", the caller as the kernel's
 * %pS when symbols are loaded, as 0x<hex> otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "libdti-local.h"

int dti_format_parse(const char *name)
{
	static const char *const names[] = {
		[DTI_FMT_TEXT] = "text", [DTI_FMT_TS] = "ts", [DTI_FMT_HEX] = "hex",
		[DTI_FMT_JSON] = "json", [DTI_FMT_RAW] = "raw",
	};
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return (int)i;
	return dti_fail(EINVAL, "unknown format '%s' (text, ts, hex, json or raw)", name);
}

static void dti_put_hex(FILE *out, const unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		fprintf(out, i ? " %02x" : "%02x", p[i]);
}

static void dti_caller_str(struct dti_reader *r, uint64_t caller, char *buf,
			   size_t size)
{
	if (!r || !r->ksyms || dti_ksyms_format(r->ksyms, caller, buf, size) < 0)
		snprintf(buf, size, "0x%llx", (unsigned long long)caller);
}

static void dti_put_prefix(struct dti_reader *r, FILE *out,
			   const struct dti_rec *rec)
{
	char caller[600];

	dti_caller_str(r, rec->caller, caller, sizeof(caller));
	fprintf(out, "[%5llu.%09u] cpu%u L%d #%llu %s: ",
		(unsigned long long)(rec->ts_ns / 1000000000ull),
		(unsigned int)(rec->ts_ns % 1000000000ull), rec->cpu, rec->level,
		(unsigned long long)rec->seq, caller);
}

static void dti_put_json_str(FILE *out, const unsigned char *p, size_t len)
{
	size_t i;

	fputc('"', out);
	for (i = 0; i < len; i++) {
		unsigned char c = p[i];

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(out, "\\u%04x", c);	/* bytes, not UTF-8 */
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static int dti_print_json(struct dti_reader *r, FILE *out,
			  const struct dti_rec *rec)
{
	char caller[600];

	dti_caller_str(r, rec->caller, caller, sizeof(caller));
	fprintf(out, "{\"ts_ns\":%llu,\"cpu\":%u,\"level\":%d,\"seq\":%llu,\"flags\":%u,\"caller\":",
		(unsigned long long)rec->ts_ns, rec->cpu, rec->level,
		(unsigned long long)rec->seq, rec->flags);
	dti_put_json_str(out, (const unsigned char *)caller, strlen(caller));
	if (rec->flags & DTI_REC_TEXT) {
		fputs(",\"text\":", out);
		dti_put_json_str(out, rec->payload, rec->len);
	} else {
		fputs(",\"data\":\"", out);
		for (size_t i = 0; i < rec->len; i++)
			fprintf(out, "%02x", ((const unsigned char *)rec->payload)[i]);
		fputc('"', out);
	}
	fputs("}\n", out);
	return 0;
}

int dti_print(struct dti_reader *r, FILE *out, const struct dti_rec *rec,
	      enum dti_format format)
{
	const unsigned char *p = rec->payload;
	int ret;

	switch (format) {
	case DTI_FMT_RAW:
		fwrite(rec->raw, 1, rec->raw_len, out);
		break;
	case DTI_FMT_JSON:
		dti_print_json(r, out, rec);
		break;
	case DTI_FMT_HEX:
		dti_put_prefix(r, out, rec);
		dti_put_hex(out, p, rec->len);
		fputc('\n', out);
		break;
	case DTI_FMT_TS:
		dti_put_prefix(r, out, rec);
		/* fall through */
	case DTI_FMT_TEXT:
		if (rec->flags & DTI_REC_TEXT) {
			fwrite(p, 1, rec->len, out);
			if (!rec->len || p[rec->len - 1] != '\n')
				fputc('\n', out);
			break;
		}
		if (r && r->fmt) {
			ret = r->fmt(out, rec, r->fmt_arg);
			if (ret < 0)
				return dti_fail(-ret, "formatter failed on %s offset %llu",
						rec->source, (unsigned long long)rec->offset);
			if (ret > 0) {
				fputc('\n', out);
				break;
			}
		}
		dti_put_hex(out, p, rec->len);
		fputc('\n', out);
		break;
	default:
		return dti_fail(EINVAL, "unknown format %d", (int)format);
	}
	if (ferror(out))
		return dti_fail(EIO, "write error");
	return 0;
}
