/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The part of the fuzz targets that reads: every record printed in every
 * format, and what must hold whatever the input.  Included by
 * fuzz_decode.c and fuzz_pipe.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

#include "dti/libdti.h"

static void fuzz_count(const struct dti_notice *n, void *arg)
{
	(void)n;
	(*(unsigned long *)arg)++;
}

/*
 * Read @r to its end and close it.  Records are whole; damage is only
 * ever a notice (dti_next() fails on data only with @strict); every
 * damage counted was notified.
 */
static void fuzz_drain(struct dti_reader *r, bool strict)
{
	static FILE *null;
	unsigned long notices = 0;
	unsigned int guard = 0;
	const unsigned char *raw;
	struct dti_rec rec;
	size_t hdr;
	int ret;

	if (!null)
		null = fopen("/dev/null", "w");
	dti_set_notice_handler(r, fuzz_count, &notices);
	while ((ret = dti_next(r, &rec)) > 0 && guard++ < 100000) {
		/* the payload within the record's bytes, after its header */
		hdr = rec.raw_version == DTI_RECORD_VERSION_1 ? sizeof(struct dti_record) :
		      sizeof(struct dti_crec);
		raw = rec.raw;
		if (rec.raw_len < hdr || (const unsigned char *)rec.payload < raw + hdr ||
		    rec.len > rec.raw_len - ((const unsigned char *)rec.payload - raw))
			__builtin_trap();
		dti_print(r, null, &rec, guard % 5);
	}
	if ((ret < 0 && !strict && errno != ENOMEM) ||
	    dti_damage_count(r) > notices)
		__builtin_trap();
	dti_close(r);
}
