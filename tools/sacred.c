// SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause
/*
 * sacred.c - the sacred CLI: options, object dispatch, error reporting.
 *
 * Grammar, as iproute2's rdma(8): sacred [ OPTIONS ] OBJECT { COMMAND | help }
 * Objects and commands may be abbreviated to any unambiguous prefix
 * ("sacred mem sh"). Each object lives in its own file (dev.c, mem.c,
 * region.c, peer.c, perm.c, monitor.c) and dispatches its commands from a
 * { name, func } table.
 *
 * This file has no netlink in it, nor has any other file of the CLI: all
 * talk to the kernel goes through libsacred.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sacred.h"
#include "json.h"
#include "utils.h"

#ifndef SACRED_VERSION
#define SACRED_VERSION "0.1"
#endif

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: sacred [ OPTIONS ] OBJECT { COMMAND | help }\n"
		"       sacred [ -force ] -batch FILENAME\n"
		"       sacred help\n"
		"where  OBJECT := { dev | memory | region | peer | perm | monitor }\n"
		"       OPTIONS := { -V[ersion] | -d[etails] | -j[son] | -p[retty] |\n"
		"                    -h[elp] }\n");
}

static int cmd_help(struct cli *cli, int argc, char **argv)
{
	(void)cli;
	(void)argc;
	(void)argv;
	usage(stdout);
	return SACRED_EXIT_OK;
}

int cli_open(struct cli *cli)
{
	int err;

	if (cli->ctrl)
		return SACRED_EXIT_OK;

	err = sacred_ctrl_open(&cli->ctrl);
	if (!err)
		return SACRED_EXIT_OK;
	return cli_open_failed(err);
}

int cli_open_failed(int err)
{
	if (err != -ENOENT)
		fprintf(stderr, "sacred: cannot open the control socket: %s\n",
			strerror(-err));
	else if (!access("/sys/module/sacred", F_OK))
		/* The family lives in the initial network namespace only. */
		fprintf(stderr,
			"sacred: sacred.ko is loaded but its generic netlink family \"sacred\" is not visible here; run in the initial network namespace\n");
	else
		fprintf(stderr,
			"sacred: kernel module not loaded (generic netlink family \"sacred\" not found); try: modprobe sacred / insmod sacred.ko\n");
	return SACRED_EXIT_NOMOD;
}

static void cli_prefix(const struct cli *cli)
{
	fputs("sacred: ", stderr);
	if (cli->object)
		fprintf(stderr, "%s%s%s: ", cli->object,
			cli->command ? " " : "",
			cli->command ? cli->command : "");
}

int cli_fail(struct cli *cli, int err)
{
	const char *msg = sacred_ctrl_errmsg(cli->ctrl);

	cli_prefix(cli);
	if (msg)
		fprintf(stderr, "%s: %s\n", strerror(-err), msg);
	else
		fprintf(stderr, "%s\n", strerror(-err));
	return SACRED_EXIT_FAIL;
}

int cli_error(struct cli *cli, const char *fmt, ...)
{
	va_list ap;

	cli_prefix(cli);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return SACRED_EXIT_FAIL;
}

int cli_usage(struct cli *cli, const char *fmt, ...)
{
	va_list ap;

	cli_prefix(cli);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (cli->object)
		fprintf(stderr, "; try \"sacred %s help\"\n", cli->object);
	else
		fputs("; try \"sacred -h\"\n", stderr);
	return SACRED_EXIT_USAGE;
}

/* The value @val of @a into @args + @a->off. */
static int cli_arg_value(struct cli *cli, const struct cli_arg *a,
			 const char *val, void *args)
{
	void *dst = (char *)args + a->off;
	uint32_t num;
	int bad = 0;

	switch (a->type) {
	case CLI_ARG_STR:
		*(const char **)dst = val;
		return SACRED_EXIT_OK;
	case CLI_ARG_FUNC:
		return a->parse(cli, val, args);
	case CLI_ARG_U32:
	case CLI_ARG_U16:
		bad = parse_u32(val, a->min, a->max, &num);
		if (!bad && a->type == CLI_ARG_U32)
			*(uint32_t *)dst = num;
		else if (!bad)
			*(uint16_t *)dst = num;
		if (bad)
			return cli_usage(cli, "invalid %s \"%s\" (%u-%u)",
					 a->what, val, a->min, a->max);
		return SACRED_EXIT_OK;
	case CLI_ARG_U64:
		bad = parse_u64(val, dst);
		break;
	case CLI_ARG_SIZE:
		bad = parse_size(val, dst) || !*(uint64_t *)dst;
		break;
	case CLI_ARG_ADDR:
		bad = parse_addr(val, dst);
		break;
	}
	if (bad)
		return cli_usage(cli, "invalid %s \"%s\" (%s)", a->what, val,
				 a->hint);
	return SACRED_EXIT_OK;
}

int cli_arg_parse(struct cli *cli, const struct cli_word *words,
		  const struct cli_arg *table, int argc, char **argv,
		  unsigned int *seen, void *args)
{
	int id = word_lookup(words, argv[0]);

	if (id == WORD_UNKNOWN)
		return cli_usage(cli, "unknown argument \"%s\"", argv[0]);
	if (id == WORD_AMBIGUOUS)
		return cli_usage(cli, "ambiguous argument \"%s\"", argv[0]);
	if (*seen & (1u << id))
		return cli_usage(cli, "\"%s\" given twice", table[id].name);
	*seen |= 1u << id;
	if (argc < 2)
		return cli_usage(cli, "\"%s\" needs a value", table[id].name);
	return cli_arg_value(cli, &table[id], argv[1], args);
}

int cli_args_parse(struct cli *cli, const struct cli_word *words,
		   const struct cli_arg *table, int argc, char **argv,
		   unsigned int *seen, void *args)
{
	int i, ret;

	for (i = 0; i < argc; i += 2) {
		ret = cli_arg_parse(cli, words, table, argc - i, argv + i,
				    seen, args);
		if (ret)
			return ret;
	}
	return SACRED_EXIT_OK;
}

int cli_required(struct cli *cli, const struct cli_arg *table,
		 unsigned int seen, unsigned int mask)
{
	unsigned int id;

	for (id = 0; mask >> id; id++)
		if ((mask & ~seen) & (1u << id))
			return cli_usage(cli, "\"%s\" is required",
					 table[id].name);
	return SACRED_EXIT_OK;
}

int cli_dispatch(struct cli *cli, const struct cli_cmd *cmds,
		 int (*dflt)(struct cli *cli, int argc, char **argv),
		 const char *dflt_name, int argc, char **argv)
{
	const struct cli_cmd *cmd;
	int err = WORD_UNKNOWN;

	if (!argc) {
		if (!dflt)
			return cli_usage(cli, "missing command");
		cli->command = dflt_name;
		return dflt(cli, 0, argv);
	}

	cmd = cmd_lookup(cmds, argv[0], &err);
	if (!cmd)
		return cli_usage(cli, "%s command \"%s\"",
				 err == WORD_AMBIGUOUS ? "ambiguous" :
							 "unknown",
				 argv[0]);
	cli->command = cmd->name;
	return cmd->func(cli, argc - 1, argv + 1);
}

static int run(struct cli *cli, int argc, char **argv)
{
	static const struct cli_cmd objects[] = {
		{ "dev", cmd_dev },
		{ "memory", cmd_memory },
		{ "region", cmd_region },
		{ "peer", cmd_peer },
		{ "perm", cmd_perm },
		{ "permission", cmd_perm },
		{ "monitor", cmd_monitor },
		{ "help", cmd_help },
		{ NULL, NULL },
	};
	const struct cli_cmd *obj;
	int err = WORD_UNKNOWN;

	if (!argc) {
		usage(stderr);
		return SACRED_EXIT_USAGE;
	}

	obj = cmd_lookup(objects, argv[0], &err);
	if (!obj)
		return cli_usage(cli, "%s object \"%s\"",
				 err == WORD_AMBIGUOUS ? "ambiguous" :
							 "unknown",
				 argv[0]);
	if (obj->func != cmd_help)
		cli->object = obj->name;
	return obj->func(cli, argc - 1, argv + 1);
}

/*
 * Everything printed must have reached standard output: a full disk or a
 * closed pipe turns a success into a failure, said on standard error.
 */
static int cli_flush(int ret)
{
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "sacred: write error on standard output\n");
		if (ret == SACRED_EXIT_OK)
			ret = SACRED_EXIT_FAIL;
	}
	return ret;
}

/* Words of one -batch line, at most. */
#define BATCH_MAX_ARGS	256

/*
 * Run one command, with its own JSON writer (each command prints one JSON
 * document, as it would alone).
 */
static int run_one(struct cli *cli, int argc, char **argv)
{
	int ret;

	if (cli->json) {
		cli->jw = json_new(stdout, cli->pretty);
		if (!cli->jw) {
			fprintf(stderr, "sacred: %s\n", strerror(ENOMEM));
			return SACRED_EXIT_FAIL;
		}
	}
	ret = run(cli, argc, argv);
	json_free(cli->jw);
	cli->jw = NULL;
	return ret;
}

/* Drop a line's end (LF or CRLF): its new length. */
static size_t batch_chomp(char *line, size_t len)
{
	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		line[--len] = '\0';
	return len;
}

/*
 * A logical line of @f into *@line: a physical line ending in a backslash
 * outside a comment (line_continues()) goes on on the next one, the
 * backslash and the line end dropped. *@lineno counts physical lines.
 *
 * Return: 0 with a line; 1 at the end of @f; -EINVAL when the last line
 * wants a continuation that is not there; -errno when reading failed
 * (getline() leaves errno 0 at the end of the file).
 */
static int batch_getline(FILE *f, char **line, size_t *cap,
			 unsigned int *lineno)
{
	char *part = NULL, *grown;
	size_t part_cap = 0, len;
	ssize_t n;
	int ret = 0;

	errno = 0;
	n = getline(line, cap, f);
	if (n < 0)
		return errno ? -errno : 1;
	++*lineno;
	len = batch_chomp(*line, n);
	while (line_continues(*line)) {
		(*line)[--len] = '\0';
		errno = 0;
		n = getline(&part, &part_cap, f);
		if (n < 0) {
			ret = errno ? -errno : -EINVAL;
			break;
		}
		++*lineno;
		n = batch_chomp(part, n);
		if (len + n + 1 > *cap) {
			grown = realloc(*line, len + n + 1);
			if (!grown) {
				ret = -ENOMEM;
				break;
			}
			*line = grown;
			*cap = len + n + 1;
		}
		memcpy(*line + len, part, n + 1);
		len += n;
	}
	free(part);
	return ret;
}

/*
 * -batch FILE: one command a line, without the leading "sacred", as
 * ip(8) -batch. The first failure stops the run unless @force; the exit
 * status is that of the first command that failed (0 if none did).
 * "Command failed FILE:LINE" follows each failure on stderr, LINE the
 * command's first. A read error, a write error on standard output, or a
 * monitor ended by a signal ends the run, forced or not.
 */
static int run_batch(struct cli *cli, const char *name, bool force)
{
	char *argv[BATCH_MAX_ARGS], *line = NULL;
	unsigned int lineno = 0, first;
	int argc, ret, status = SACRED_EXIT_OK;
	bool fatal;
	size_t cap = 0;
	FILE *f;

	if (!strcmp(name, "-")) {
		f = stdin;
	} else {
		f = fopen(name, "r");
		if (!f) {
			fprintf(stderr, "sacred: cannot open \"%s\": %s\n", name,
				strerror(errno));
			return SACRED_EXIT_FAIL;
		}
	}
	for (;;) {
		cli->object = NULL;
		cli->command = NULL;
		fatal = false;
		first = lineno + 1;
		ret = batch_getline(f, &line, &cap, &lineno);
		if (ret == 1)
			break;
		if (ret == -EINVAL) {
			ret = cli_usage(cli, "missing continuation line");
		} else if (ret < 0) {
			fprintf(stderr, "sacred: reading \"%s\": %s\n", name,
				strerror(-ret));
			ret = SACRED_EXIT_FAIL;
			fatal = true;
		} else {
			argc = split_line(line, argv, BATCH_MAX_ARGS);
			if (!argc)
				continue;
			if (argc == -E2BIG)
				ret = cli_usage(cli, "more than %d words on a line",
						BATCH_MAX_ARGS);
			else if (argc < 0)
				ret = cli_usage(cli, "unterminated quote");
			else
				ret = run_one(cli, argc, argv);
		}
		if (fflush(stdout) || ferror(stdout)) {
			ret = ret ? ret : SACRED_EXIT_FAIL;
			fatal = true;
		}
		if (cli->interrupted)
			fatal = true;
		if (ret != SACRED_EXIT_OK) {
			fprintf(stderr, "Command failed %s:%u\n", name, first);
			if (status == SACRED_EXIT_OK)
				status = ret;
			if (!force)
				fatal = true;
		}
		if (fatal)
			break;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return status;
}

/*
 * iproute2 spells its options as words after one dash, abbreviated at
 * will (-details, -js, -pretty): turn those into getopt's --details etc.
 * A word that is no such prefix (-jp, -1) is left to getopt.
 */
static void long_words(int argc, char **argv)
{
	static const char *const words[][2] = {
		{ "Version", "--version" }, { "help", "--help" },
		{ "json", "--json" }, { "pretty", "--pretty" },
		{ "details", "--details" }, { "batch", "--batch" },
		{ "force", "--force" },
	};
	unsigned int w;
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i];

		if (a[0] != '-' || a[1] == '-' || strlen(a) < 3)
			continue;
		for (w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
			if (!strncmp(words[w][0], a + 1, strlen(a + 1))) {
				argv[i] = (char *)words[w][1];
				break;
			}
		}
	}
}

int main(int argc, char **argv)
{
	static const struct option long_options[] = {
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "details", no_argument, NULL, 'd' },
		{ "batch", required_argument, NULL, 'b' },
		{ "force", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli cli = { 0 };
	const char *batch = NULL;
	bool force = false;
	int ret;
	int opt;

	/* getopt's own messages would not be one line with a hint */
	opterr = 0;
	long_words(argc, argv);
	while ((opt = getopt_long(argc, argv, "Vhjpdb:f", long_options,
				  NULL)) != -1) {
		switch (opt) {
		case 'V':
			printf("sacred utility, libsacred %s, netlink family \"%s\" version %u\n",
			       SACRED_VERSION, SACRED_GENL_NAME,
			       SACRED_GENL_VERSION);
			return cli_flush(SACRED_EXIT_OK);
		case 'h':
			usage(stdout);
			return cli_flush(SACRED_EXIT_OK);
		case 'j':
			cli.json = true;
			break;
		case 'p':
			cli.pretty = true;
			break;
		case 'd':
			cli.details = true;
			break;
		case 'b':
			batch = optarg;
			break;
		case 'f':
			force = true;
			break;
		default:
			if (optopt == 'b')
				return cli_usage(&cli, "\"-batch\" needs a file name (\"-\" for standard input)");
			if (optopt)
				return cli_usage(&cli, "unknown option \"-%c\"",
						 optopt);
			return cli_usage(&cli, "unknown option \"%s\"",
					 argv[optind - 1]);
		}
	}

	if (force && !batch)
		return cli_usage(&cli, "\"-force\" goes with \"-batch\"");
	if (batch && optind < argc)
		return cli_usage(&cli, "\"-batch\" takes no command line; \"%s\" is one",
				 argv[optind]);
	if (batch)
		ret = run_batch(&cli, batch, force);
	else
		ret = run_one(&cli, argc - optind, argv + optind);

	sacred_ctrl_close(cli.ctrl);
	return cli_flush(ret);
}
