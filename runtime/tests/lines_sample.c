// SPDX-License-Identifier: GPL-2.0
/*
 * test_lines.c's module: built with gcc -g -O2 -c and ld -r --build-id
 * into an ET_REL object, as a .ko is (runtime/Makefile).  A call from an
 * always-inline helper, one from the function itself, and calls from cold
 * code (.text.unlikely); "LINE:name"
 * marks the lines test_lines.c expects, which it reads from this file.
 */
extern void lines_sink(int v);

static inline __attribute__((always_inline)) int lines_helper(int x)
{
	lines_sink(x * 3);		/* LINE:helper_call */
	return x + 1;
}

int lines_first(int x)
{
	lines_sink(x);			/* LINE:first_call */
	return x;
}

int lines_outer(int x)
{
	int y = lines_helper(x);	/* LINE:inlined_at */

	lines_sink(y);			/* LINE:outer_call */
	return y;
}

/*
 * Cold code, which the kernel lays out after .text (.text.unlikely): a
 * cold function, and the unlikely part of a function that gcc splits off
 * into "lines_split.cold".
 */
extern void lines_report(int v) __attribute__((cold));

__attribute__((noinline, cold)) void lines_cold(int x)
{
	lines_sink(x + 5);		/* LINE:cold_fn_call */
	__asm__ volatile("" ::: "memory");	/* a call, not a tail jump */
}

int lines_split(int x)
{
	if (__builtin_expect(x < 0, 0)) {
		lines_report(x);	/* LINE:split_report */
		lines_sink(-x);		/* LINE:split_cold_call */
		return -1;
	}
	lines_sink(x + 7);		/* LINE:split_call */
	return x;
}
