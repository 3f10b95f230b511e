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

static const char *const perm_arg_names[] = {
	[PERM_ARG_MEM] = "mem",
	[PERM_ARG_ID] = "id",
	[PERM_ARG_PID] = "pid",
	[PERM_ARG_ACCESS] = "access",
	[PERM_ARG_BALLOT] = "ballot",
	[PERM_ARG_TARGET] = "target",
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

static int perm_parse_arg(struct cli *cli, int argc, char **argv,
			  unsigned int *seen, uint32_t *mem_id, uint32_t *pid,
			  struct sacred_perm_req *req)
{
	const char *val;
	int ret;
	int id;

	ret = cli_keyword(cli, perm_set_args, perm_arg_names, argc, argv,
			  seen, &id);
	if (ret)
		return ret;
	val = argv[1];

	switch (id) {
	case PERM_ARG_MEM:
		if (parse_u32(val, 0, PERM_ID_MAX, mem_id))
			return cli_usage(cli,
					 "invalid memory instance id \"%s\" (0-%u)",
					 val, PERM_ID_MAX);
		break;
	case PERM_ARG_ID:
		if (parse_u32(val, 0, PERM_ID_MAX, &req->region_id))
			return cli_usage(cli, "invalid region id \"%s\" (0-%u)",
					 val, PERM_ID_MAX);
		break;
	case PERM_ARG_PID:
		if (parse_u32(val, 0, UINT32_MAX, pid))
			return cli_usage(cli, "invalid pid \"%s\" (0-%u)", val,
					 UINT32_MAX);
		break;
	case PERM_ARG_ACCESS:
		if (sacred_access_parse(val, &req->access))
			return cli_usage(cli,
					 "invalid access \"%s\" (none, r, rw, rwa)",
					 val);
		break;
	case PERM_ARG_BALLOT:
		if (parse_u64(val, &req->ballot))
			return cli_usage(cli, "invalid ballot \"%s\" (0-%llu)",
					 val, (unsigned long long)UINT64_MAX);
		break;
	case PERM_ARG_TARGET:
		if (parse_u32(val, 0, UINT32_MAX, &req->target))
			return cli_usage(cli, "invalid target \"%s\" (0-%u)",
					 val, UINT32_MAX);
		break;
	}
	return SACRED_EXIT_OK;
}

static int perm_set(struct cli *cli, int argc, char **argv)
{
	struct sacred_perm_req req = { 0 };
	unsigned int seen = 0;
	uint32_t mem_id = 0;
	uint32_t pid = 0;
	int ret;
	int i;

	/* The region's handle, if given, comes first. */
	if (argc && argv[0][0] >= '0' && argv[0][0] <= '9') {
		if (parse_u32_pair(argv[0], PERM_ID_MAX, &mem_id,
				   &req.region_id) != 2)
			return cli_usage(cli,
					 "invalid region \"%s\" (MEM_ID/ID, each 0-%u)",
					 argv[0], PERM_ID_MAX);
		seen = ARG(PERM_ARG_MEM) | ARG(PERM_ARG_ID);
		argc--;
		argv++;
	}
	for (i = 0; i < argc; i += 2) {
		ret = perm_parse_arg(cli, argc - i, argv + i, &seen, &mem_id,
				     &pid, &req);
		if (ret)
			return ret;
	}
	if (!(seen & ARG(PERM_ARG_MEM)))
		return cli_usage(cli, "\"mem\" is required");
	if (!(seen & ARG(PERM_ARG_ID)))
		return cli_usage(cli, "\"id\" is required");
	if (!(seen & ARG(PERM_ARG_PID)))
		return cli_usage(cli, "\"pid\" is required");
	if (!(seen & ARG(PERM_ARG_ACCESS)))
		return cli_usage(cli, "\"access\" is required");

	ret = cli_open(cli);
	if (ret)
		return ret;
	if (!req.access && !(seen & ARG(PERM_ARG_TARGET))) {
		struct sacred_region_info info;

		/* Not a silent "target 0": say what the policy needs. */
		ret = sacred_region_get(cli->ctrl, mem_id, req.region_id,
					&info);
		if (ret)
			return cli_fail(cli, ret);
		if (info.policy == SACRED_POLICY_REVOKE_ONLY)
			return cli_usage(cli,
					 "region %u/%u is revoke-only: \"target\" names the process to revoke",
					 mem_id, req.region_id);
	}
	ret = sacred_perm_set(cli->ctrl, mem_id, pid, &req);
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
