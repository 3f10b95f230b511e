// SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause
/*
 * peer.c - sacred peer: the processes memory instances know.
 *
 * A process is known to an instance from its first connection on, and
 * stays known (with its counters) after it disconnects. It is named by the
 * instance's id and its own process id, "MEM_ID/PID", the handle every
 * line of `sacred peer show` starts with. The kernel only dumps peers; a
 * single one is picked out of the dump here.
 */
#include <stdio.h>

#include "sacred.h"
#include "json.h"
#include "utils.h"

enum peer_arg {
	PEER_ARG_MEM,
	PEER_ARG_PID,
};

static const struct cli_word peer_show_args[] = {
	{ "mem", PEER_ARG_MEM },
	{ "memory", PEER_ARG_MEM },
	{ "pid", PEER_ARG_PID },
	{ NULL, 0 },
};

#define ARG(a)		(1u << (a))
#define PEER_MEM_MAX	(SACRED_MEM_ID_ANY - 1)

/**
 * struct peer_show - what "show" prints
 * @cli: context
 * @seen: ARG(PEER_ARG_*) of the arguments given
 * @mem_id: "mem"
 * @pid: "pid"
 * @found: peers printed, or with "pid", found
 * @match: with "pid", the peer found, printed after the dump
 */
struct peer_show {
	struct cli *cli;
	unsigned int seen;
	uint32_t mem_id;
	uint32_t pid;
	unsigned int found;
	struct sacred_peer_info match;
};

static int peer_help(struct cli *cli, int argc, char **argv)
{
	(void)cli;
	(void)argc;
	(void)argv;
	printf("Usage: sacred peer show [ mem MEM_ID [ pid PID ] | MEM_ID[/PID] ]\n"
	       "       sacred peer help\n"
	       "where  MEM_ID  memory instance, as `sacred memory show` lists it\n"
	       "       PID     process id, as the process presented it\n"
	       "Lines start with MEM_ID/PID; the counters are those of the\n"
	       "process's life on the instance, across its connections.\n");
	return SACRED_EXIT_OK;
}

static void peer_print(struct cli *cli, const struct sacred_peer_info *info)
{
	struct json_writer *jw = cli->jw;

	if (jw) {
		json_obj_open(jw);
		json_uint_field(jw, "mem", info->mem_id);
		json_uint_field(jw, "pid", info->process_id);
		json_bool_field(jw, "connected", info->connected);
		json_uint_field(jw, "requests", info->requests);
		json_uint_field(jw, "refused", info->refused);
		json_uint_field(jw, "fences", info->fences);
		json_uint_field(jw, "connects", info->connects);
		json_uint_field(jw, "mrs", info->mrs);
		json_uint_field(jw, "raced", info->raced);
		json_uint_field(jw, "cq_changes", info->cq_changes);
		json_obj_close(jw);
		return;
	}

	printf("%u/%u: connected %s requests %llu refused %llu fences %llu connects %llu mrs %u raced %llu cq-changes %llu\n",
	       info->mem_id, info->process_id,
	       info->connected ? "yes" : "no",
	       (unsigned long long)info->requests,
	       (unsigned long long)info->refused,
	       (unsigned long long)info->fences,
	       (unsigned long long)info->connects, info->mrs,
	       (unsigned long long)info->raced,
	       (unsigned long long)info->cq_changes);
}

static int peer_show_one(const struct sacred_peer_info *info, void *arg)
{
	struct peer_show *show = arg;

	/*
	 * One process: kept, and printed once the dump is over, so that a
	 * process the instance does not know prints nothing at all - not
	 * even the "[]" of -j - before the error.
	 */
	if (show->seen & ARG(PEER_ARG_PID)) {
		if (info->process_id == show->pid) {
			show->match = *info;
			show->found++;
		}
		return 0;
	}
	peer_print(show->cli, info);
	show->found++;
	return 0;
}

static const struct cli_arg peer_show_table[] = {
	[PEER_ARG_MEM] = CLI_U32(struct peer_show, mem_id, "mem", 0,
				 PEER_MEM_MAX, "memory instance id"),
	[PEER_ARG_PID] = CLI_U32(struct peer_show, pid, "pid", 0, UINT32_MAX,
				 "pid"),
};

static int peer_parse(struct cli *cli, int argc, char **argv,
		      struct peer_show *show)
{
	int ret;

	if (argc && argv[0][0] >= '0' && argv[0][0] <= '9') {
		if (argc > 1)
			return cli_usage(cli, "unexpected argument \"%s\"",
					 argv[1]);
		ret = parse_u32_pair(argv[0], UINT32_MAX, &show->mem_id,
				     &show->pid);
		if (ret < 0 || show->mem_id > PEER_MEM_MAX)
			return cli_usage(cli,
					 "invalid peer \"%s\" (MEM_ID/PID)",
					 argv[0]);
		show->seen = ARG(PEER_ARG_MEM);
		if (ret == 2)
			show->seen |= ARG(PEER_ARG_PID);
		return SACRED_EXIT_OK;
	}

	ret = cli_args_parse(cli, peer_show_args, peer_show_table, argc, argv,
			     &show->seen, show);
	if (ret)
		return ret;
	if ((show->seen & ARG(PEER_ARG_PID)) &&
	    !(show->seen & ARG(PEER_ARG_MEM)))
		return cli_usage(cli, "\"pid\" needs \"mem\"");
	return SACRED_EXIT_OK;
}

static int peer_show(struct cli *cli, int argc, char **argv)
{
	struct peer_show show = { .cli = cli };
	uint32_t mem_id = SACRED_MEM_ID_ANY;
	struct sacred_mem_info mem;
	int ret;

	ret = peer_parse(cli, argc, argv, &show);
	if (ret)
		return ret;
	ret = cli_open(cli);
	if (ret)
		return ret;

	if (show.seen & ARG(PEER_ARG_MEM)) {
		/* An instance that does not exist is an error, not empty. */
		ret = sacred_mem_get(cli->ctrl, show.mem_id, &mem);
		if (ret)
			return cli_fail(cli, ret);
		mem_id = show.mem_id;
	}

	if (show.seen & ARG(PEER_ARG_PID)) {
		ret = sacred_peer_list(cli->ctrl, mem_id, peer_show_one, &show);
		if (ret)
			return cli_fail(cli, ret);
		if (!show.found) {
			fprintf(stderr,
				"sacred: peer show: process %u is not known to memory instance %u\n",
				show.pid, show.mem_id);
			return SACRED_EXIT_FAIL;
		}
		if (cli->jw)
			json_arr_open(cli->jw);
		peer_print(cli, &show.match);
		if (cli->jw)
			json_arr_close(cli->jw);
		return SACRED_EXIT_OK;
	}

	if (cli->jw)
		json_arr_open(cli->jw);
	ret = sacred_peer_list(cli->ctrl, mem_id, peer_show_one, &show);
	if (cli->jw)
		json_arr_close(cli->jw);
	return ret ? cli_fail(cli, ret) : SACRED_EXIT_OK;
}

int cmd_peer(struct cli *cli, int argc, char **argv)
{
	static const struct cli_cmd cmds[] = {
		{ "show", peer_show },
		{ "list", peer_show },
		{ "help", peer_help },
		{ NULL, NULL },
	};

	return cli_dispatch(cli, cmds, peer_show, "show", argc, argv);
}
