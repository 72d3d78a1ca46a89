// SPDX-License-Identifier: LGPL-2.1
/* libdti: the per-thread error message behind dti_errmsg(). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "libdti-local.h"

static __thread char dti_msg[512];

const char *dti_errmsg(void)
{
	return dti_msg[0] ? dti_msg : "no error";
}

static void dti_vset(int err, const char *fmt, va_list ap)
{
	vsnprintf(dti_msg, sizeof(dti_msg), fmt, ap);
	errno = err;
}

/* Record a message and errno @err; returns -1. */
int dti_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dti_vset(err, fmt, ap);
	va_end(ap);
	return -1;
}

/* Record a message and errno @err; returns NULL. */
void *dti_fail_null(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dti_vset(err, fmt, ap);
	va_end(ap);
	return NULL;
}
