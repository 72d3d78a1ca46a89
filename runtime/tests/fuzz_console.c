// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for `dti console-log` (cli/console.c): the input
 * after a byte of flags is a console log, read by the command itself as
 * a file, its records printed to /dev/null.  Flags: bits 0-1 the format
 * (text, ts, json, hex), bit 2 --channel pa, bit 3 not --quiet (the
 * damage messages on stderr), bit 4 --lines (through the log's module
 * lines, with no module file found; ts for text, which has no callers).  The command exits 0, 1 or 2, nothing
 * else, and leaks nothing.  Built with the whole dti command (its main()
 * renamed): cmd_console_log() uses the option parsing and printing that
 * read and decode share.
 *
 * Seeds (fuzz-seeds-from-guest.py): tests/guest-output/console.log, the
 * console of a real panic with two channels' records (text with escapes,
 * binary), as it is, cut inside a section, with a record line per
 * kind of damage, and with module lines.
 */
#include <getopt.h>

#include "../cli/dti-cli.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const formats[] = { "text", "ts", "json", "hex" };
	char path[64];
	char *argv[16];
	int argc = 0, fd, ret;

	if (size < 1)
		return 0;
	fd = fuzz_memfd(data + 1, size - 1, path, sizeof(path));
	argv[argc++] = (char *)"console-log";
	argv[argc++] = (char *)"-F";
	/* text prints no callers: with --lines it is refused, so ts then */
	argv[argc++] = (char *)formats[(data[0] & 3) || !(data[0] & 16) ? data[0] & 3 : 1];
	argv[argc++] = (char *)"-o";
	argv[argc++] = (char *)"/dev/null";
	if (data[0] & 4) {
		argv[argc++] = (char *)"--channel";
		argv[argc++] = (char *)"pa";
	}
	if (!(data[0] & 8))
		argv[argc++] = (char *)"-q";
	if (data[0] & 16) {
		/* through the log's module lines; no release: no files found */
		argv[argc++] = (char *)"--lines";
		argv[argc++] = (char *)"--kernel-release";
		argv[argc++] = (char *)"fuzz-no-such-release";
	}
	argv[argc++] = path;
	argv[argc] = NULL;
	optind = 0;		/* getopt from the start, as a new process */
	ret = cmd_console_log(argc, argv);
	close(fd);
	if (ret != DTI_EXIT_OK && ret != DTI_EXIT_FAIL && ret != DTI_EXIT_DAMAGE)
		__builtin_trap();
	return 0;
}
