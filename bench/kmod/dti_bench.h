/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Constants shared by the benchmark module and its trace events.
 */
#ifndef _DTI_BENCH_H
#define _DTI_BENCH_H

/* The payload sizes every binary case is measured with, in bytes. */
#define DTI_BENCH_SMALL		16
#define DTI_BENCH_MEDIUM	64
#define DTI_BENCH_LARGE		256

#endif /* _DTI_BENCH_H */
