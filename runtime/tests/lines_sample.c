// SPDX-License-Identifier: GPL-2.0
/*
 * test_lines.c's module: built with gcc -g -O2 -c and ld -r --build-id
 * into an ET_REL object, as a .ko is (runtime/Makefile).  A call from an
 * always-inline helper and one from the function itself; "LINE:name"
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
