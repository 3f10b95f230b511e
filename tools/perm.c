// SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause
/*
 * perm.c - sacred perm: changePermission on behalf of a process.
 *
 * "perm set" asks the region's acceptChange policy for a change exactly as
 * a request from that process over RDMA would, and the kernel applies it
 * (revoking first) before it answers. A refusal is an error: exit 1 with
 * the kernel's reason, as every other failure. The region's ACL and what
 * each process holds are shown by `sacred -d region show`.
 */
#include <stdio.h>

#include "sacred.h"
#include "utils.h"

enum perm_arg {
	PERM_ARG_MEM,
	PERM_ARG_ID,
	PERM_ARG_PID,
	PERM_ARG_ACCESS,
	PERM_ARG_BALLOT,
	PERM_ARG_TARGET,
};

static const struct cli_word perm_set_args[] = {
	{ "mem", PERM_ARG_MEM },
	{ "memory", PERM_ARG_MEM },
	{ "id", PERM_ARG_ID },
	{ "pid", PERM_ARG_PID },
	{ "access", PERM_ARG_ACCESS },
	{ "ballot", PERM_ARG_BALLOT },
	{ "target", PERM_ARG_TARGET },
	{ NULL, 0 },
};

#define ARG(a)		(1u << (a))
#define PERM_ID_MAX	(SACRED_REGION_ID_ANY - 1)

static int perm_help(struct cli *cli, int argc, char **argv)
{
	(void)cli;
	(void)argc;
	(void)argv;
	printf("Usage: sacred perm set { mem MEM_ID id ID | MEM_ID/ID } pid PID\n"
	       "                      access ACCESS [ ballot BALLOT ] [ target TARGET ]\n"
	       "       sacred perm help\n"
	       "where  MEM_ID/ID  the region, as `sacred region show` lists it\n"
	       "       PID        the process the request is made for\n"
	       "       ACCESS     { none | r | rw | rwa }: the access it asks for\n"
	       "       BALLOT     fenced regions: the grant's ballot, 0-2^64-1\n"
	       "       TARGET     revoke-only regions: the process whose write\n"
	       "                  access is revoked (with access none)\n"
	       "The region's policy decides as for a request from PID itself; a\n"
	       "refusal exits with 1 and the policy's reason.\n");
	return SACRED_EXIT_OK;
}

/* What "set" parses its keywords into. */
struct perm_args {
	uint32_t mem_id;
	uint32_t pid;
	struct sacred_perm_req req;
};

static int perm_arg_access(struct cli *cli, const char *val, void *args)
{
	struct perm_args *a = args;

	if (sacred_access_parse(val, &a->req.access))
		return cli_usage(cli, "invalid access \"%s\" (none, r, rw, rwa)",
				 val);
	return SACRED_EXIT_OK;
}

static const struct cli_arg perm_set_table[] = {
	[PERM_ARG_MEM] = CLI_U32(struct perm_args, mem_id, "mem", 0,
				 PERM_ID_MAX, "memory instance id"),
	[PERM_ARG_ID] = CLI_U32(struct perm_args, req.region_id, "id", 0,
				PERM_ID_MAX, "region id"),
	[PERM_ARG_PID] = CLI_U32(struct perm_args, pid, "pid", 0, UINT32_MAX,
				 "pid"),
	[PERM_ARG_ACCESS] = CLI_FUNC("access", perm_arg_access),
	[PERM_ARG_BALLOT] = CLI_HINTED(CLI_ARG_U64, struct perm_args,
				       req.ballot, "ballot", "ballot",
				       "0-18446744073709551615"),
	[PERM_ARG_TARGET] = CLI_U32(struct perm_args, req.target, "target", 0,
				    UINT32_MAX, "target"),
};

static int perm_set(struct cli *cli, int argc, char **argv)
{
	struct perm_args a = { 0 };
	unsigned int seen = 0;
	int ret;

	/* The region's handle, if given, comes first. */
	if (argc && argv[0][0] >= '0' && argv[0][0] <= '9') {
		if (parse_u32_pair(argv[0], PERM_ID_MAX, &a.mem_id,
				   &a.req.region_id) != 2)
			return cli_usage(cli,
					 "invalid region \"%s\" (MEM_ID/ID, each 0-%u)",
					 argv[0], PERM_ID_MAX);
		seen = ARG(PERM_ARG_MEM) | ARG(PERM_ARG_ID);
		argc--;
		argv++;
	}
	ret = cli_args_parse(cli, perm_set_args, perm_set_table, argc, argv,
			     &seen, &a);
	if (!ret)
		ret = cli_required(cli, perm_set_table, seen,
				   ARG(PERM_ARG_MEM) | ARG(PERM_ARG_ID) |
				   ARG(PERM_ARG_PID) | ARG(PERM_ARG_ACCESS));
	if (ret)
		return ret;

	ret = cli_open(cli);
	if (ret)
		return ret;
	if (!a.req.access && !(seen & ARG(PERM_ARG_TARGET))) {
		struct sacred_region_info info;

		/* Not a silent "target 0": say what the policy needs. */
		ret = sacred_region_get(cli->ctrl, a.mem_id, a.req.region_id,
					&info);
		if (ret)
			return cli_fail(cli, ret);
		if (info.policy == SACRED_POLICY_REVOKE_ONLY)
			return cli_usage(cli,
					 "region %u/%u is revoke-only: \"target\" names the process to revoke",
					 a.mem_id, a.req.region_id);
	}
	ret = sacred_perm_set(cli->ctrl, a.mem_id, a.pid, &a.req);
	return ret ? cli_fail(cli, ret) : SACRED_EXIT_OK;
}

int cmd_perm(struct cli *cli, int argc, char **argv)
{
	static const struct cli_cmd cmds[] = {
		{ "set", perm_set },
		{ "help", perm_help },
		{ NULL, NULL },
	};

	return cli_dispatch(cli, cmds, NULL, NULL, argc, argv);
}
