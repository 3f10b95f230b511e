// SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause
/*
 * region.c - sacred region: the regions of memory instances.
 *
 * A region belongs to one memory instance and has an id unique within it,
 * so it is named by two numbers. The grammar takes them as keywords,
 * "mem MEM_ID id ID", or as one devlink-style handle "MEM_ID/ID" - the form
 * the output starts its lines with, so the first word of a line of
 * `sacred region show` names its region again.
 *
 * "set" replaces the region's ACL ("acl 1:rw,2:r"); "show -d" prints it,
 * one "pid P max ACCESS cur ACCESS" line per process under the region's
 * line, which ends with the highest ballot granted. The ACL comes with a
 * request of its own per region, after the dump: a handle runs one request
 * at a time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sacred.h"
#include "json.h"
#include "utils.h"

enum region_arg {
	REGION_ARG_MEM,
	REGION_ARG_ID,
	REGION_ARG_SIZE,
	REGION_ARG_POLICY,
	REGION_ARG_ACL,
	REGION_ARG_TAG,
	REGION_ARG_PROG,
	REGION_ARG_SECTION,
};

static const struct cli_word region_add_args[] = {
	{ "mem", REGION_ARG_MEM },
	{ "memory", REGION_ARG_MEM },
	{ "size", REGION_ARG_SIZE },
	{ "policy", REGION_ARG_POLICY },
	{ "id", REGION_ARG_ID },
	{ "tag", REGION_ARG_TAG },
	{ "prog", REGION_ARG_PROG },
	{ "section", REGION_ARG_SECTION },
	{ NULL, 0 },
};

/* What "del" and "show" take besides the MEM_ID/ID handle. */
static const struct cli_word region_sel_args[] = {
	{ "mem", REGION_ARG_MEM },
	{ "memory", REGION_ARG_MEM },
	{ "id", REGION_ARG_ID },
	{ NULL, 0 },
};

static const struct cli_word region_set_args[] = {
	{ "mem", REGION_ARG_MEM },
	{ "memory", REGION_ARG_MEM },
	{ "id", REGION_ARG_ID },
	{ "acl", REGION_ARG_ACL },
	{ "policy", REGION_ARG_POLICY },
	{ "prog", REGION_ARG_PROG },
	{ "section", REGION_ARG_SECTION },
	{ NULL, 0 },
};

#define ARG(a)		(1u << (a))
#define POLICY_LIST_LEN	128
/* Ids of instances and regions: 0xffffffff is reserved for "any". */
#define REGION_ID_MAX	(SACRED_REGION_ID_ANY - 1)
/* ACL entries "show -d" makes room for first; it grows to fit. */
#define REGION_ACL_FIRST 32

/**
 * struct region_args - a parsed region command line
 * @seen: ARG(REGION_ARG_*) of every argument given
 * @mem_id: "mem"
 * @id: "id"
 * @size: "size", bytes
 * @policy: "policy", &enum sacred_policy
 * @acl: "acl", as typed
 * @tag: "tag"
 * @prog: "prog FILE.o [ section NAME ]" or "prog pinned PATH"
 */
struct region_args {
	unsigned int seen;
	uint32_t mem_id;
	uint32_t id;
	uint64_t size;
	uint8_t policy;
	const char *acl;
	uint64_t tag;
	struct prog_spec prog;
};

/**
 * struct region_acl - a region's ACL, as "show -d" prints it
 * @acl: the entries, malloc()ed
 * @n: entries in @acl
 * @ballot: the highest ballot granted on the region
 * @prog_id: the kernel's id of a bpf region's program, else 0
 */
struct region_acl {
	struct sacred_acl_entry *acl;
	unsigned int n;
	uint64_t ballot;
	uint32_t prog_id;
};

/* "static | exclusive-writer | ...", with @sep between the names. */
static const char *policy_list(char *buf, size_t len, const char *sep)
{
	size_t off = 0;
	unsigned int i;
	int n;

	buf[0] = '\0';
	for (i = 0; i <= SACRED_POLICY_MAX && off < len; i++) {
		n = snprintf(buf + off, len - off, "%s%s", i ? sep : "",
			     sacred_policy_str(i));
		if (n < 0)
			break;
		off += n;
	}
	return buf;
}

static int region_help(struct cli *cli, int argc, char **argv)
{
	char policies[POLICY_LIST_LEN];

	(void)cli;
	(void)argc;
	(void)argv;
	printf("Usage: sacred region add mem MEM_ID size SIZE [ policy POLICY [ PROG ] ]\n"
	       "                            [ id ID ] [ tag TAG ]\n"
	       "       sacred region del { mem MEM_ID id ID | MEM_ID/ID }\n"
	       "       sacred region set { mem MEM_ID id ID | MEM_ID/ID } [ acl ACL ]\n"
	       "                            [ policy POLICY [ PROG ] ]\n"
	       "       sacred [ -d ] region show [ mem MEM_ID [ id ID ] | MEM_ID[/ID] ]\n"
	       "       sacred region help\n"
	       "where  MEM_ID  memory instance, as `sacred memory show` lists it\n"
	       "       SIZE    bytes: a non-zero multiple of 4096, at most %lluGiB;\n"
	       "               k/K/KiB, m/M/MiB, g/G/GiB multiply by 1024, 1024^2,\n"
	       "               1024^3 (\"64k\", \"1g\")\n"
	       "       POLICY  { %s }\n"
	       "               (default %s)\n"
	       "       ID      region id within MEM_ID, 0-%u (default: the lowest\n"
	       "               free one)\n"
	       "       TAG     64-bit value, decimal or 0x hex, told to every process\n"
	       "               that attaches the region: the same on every memory\n"
	       "               of a replicated region, new each time it is made\n"
	       "               (default: random)\n"
	       "       ACL     { none | PID:ACCESS[,PID:ACCESS...] }: the most each\n"
	       "               process PID may hold; \"none\" (or \"\") empties it\n"
	       "       ACCESS  { none | r | rw | rwa }: read, write, atomics\n"
	       "       PROG    { prog FILE.o [ section NAME ] | prog pinned PATH }:\n"
	       "               the eBPF program that decides for policy bpf, loaded\n"
	       "               as a socket filter; NAME picks one of several in FILE.o\n"
	       "\"set\" changes the policy only among exclusive-writer, revoke-only,\n"
	       "fenced and bpf; \"set ... prog\" alone replaces a bpf region's program.\n"
	       "Lines of \"show\" start with the region's MEM_ID/ID; with -d they end\n"
	       "with the tag, the highest ballot granted and a bpf region's program id,\n"
	       "and the ACL follows, one \"pid PID max ACCESS cur ACCESS\" line per\n"
	       "process.\n",
	       SACRED_REGION_SIZE_MAX >> 30,
	       policy_list(policies, sizeof(policies), " | "),
	       sacred_policy_str(SACRED_POLICY_STATIC), REGION_ID_MAX);
	return SACRED_EXIT_OK;
}

void region_print_body(struct cli *cli,
		       const struct sacred_region_info *info)
{
	struct json_writer *jw = cli->jw;
	char size[SIZE_STR_LEN];
	char tag[24];

	if (jw) {
		json_uint_field(jw, "mem", info->mem_id);
		json_uint_field(jw, "id", info->id);
		json_uint_field(jw, "size", info->size);
		json_str_field(jw, "policy", sacred_policy_str(info->policy));
		json_uint_field(jw, "epoch", info->epoch);
		if (cli->details) {
			json_uint_field(jw, "chunks", info->nr_chunks);
			json_uint_field(jw, "raced", info->raced);
			/* A string: JSON numbers lose bits above 2^53. */
			snprintf(tag, sizeof(tag), "0x%llx",
				 (unsigned long long)info->tag);
			json_str_field(jw, "tag", tag);
		}
		return;
	}

	printf("%u/%u: size %s policy %s epoch %u", info->mem_id, info->id,
	       format_size(info->size, size, sizeof(size)),
	       sacred_policy_str(info->policy), info->epoch);
	if (cli->details)
		printf(" chunks %u raced %llu tag 0x%llx", info->nr_chunks,
		       (unsigned long long)info->raced,
		       (unsigned long long)info->tag);
}

static void region_print_acl_json(struct json_writer *jw,
				  const struct region_acl *ra)
{
	const struct sacred_acl_entry *e;

	json_uint_field(jw, "ballot", ra->ballot);
	if (ra->prog_id)
		json_uint_field(jw, "prog", ra->prog_id);
	json_key(jw, "acl");
	json_arr_open(jw);
	for (e = ra->acl; e < ra->acl + ra->n; e++) {
		json_obj_open(jw);
		json_uint_field(jw, "pid", e->process_id);
		json_str_field(jw, "max", sacred_access_str(e->access));
		json_str_field(jw, "cur", sacred_access_str(e->access_cur));
		json_obj_close(jw);
	}
	json_arr_close(jw);
}

/* A region, and its ACL if @ra is not NULL. */
static void region_print(struct cli *cli,
			 const struct sacred_region_info *info,
			 const struct region_acl *ra)
{
	const struct sacred_acl_entry *e;

	if (cli->jw) {
		json_obj_open(cli->jw);
		region_print_body(cli, info);
		if (ra)
			region_print_acl_json(cli->jw, ra);
		json_obj_close(cli->jw);
		return;
	}

	region_print_body(cli, info);
	if (ra)
		printf(" ballot %llu", (unsigned long long)ra->ballot);
	if (ra && ra->prog_id)
		printf(" prog %u", ra->prog_id);
	putchar('\n');
	if (!ra)
		return;
	for (e = ra->acl; e < ra->acl + ra->n; e++)
		printf("    pid %u max %s cur %s\n", e->process_id,
		       sacred_access_str(e->access),
		       sacred_access_str(e->access_cur));
}

/* Read the ACL of @info into @ra, growing @ra->acl until it fits. */
static int region_get_acl(struct cli *cli,
			  const struct sacred_region_info *info,
			  struct region_acl *ra)
{
	unsigned int max = REGION_ACL_FIRST;
	struct sacred_acl_entry *acl;
	int ret;

	ra->prog_id = 0;
	if (info->policy == SACRED_POLICY_BPF) {
		ret = sacred_region_prog_id(cli->ctrl, info->mem_id, info->id,
					    &ra->prog_id);
		if (ret)
			return ret;
	}
	for (;;) {
		acl = realloc(ra->acl, max * sizeof(*acl));
		if (!acl)
			return -ENOMEM;
		ra->acl = acl;
		ret = sacred_region_get_acl(cli->ctrl, info->mem_id, info->id,
					    ra->acl, max, &ra->n, &ra->ballot);
		if (ret != -ENOSPC)
			return ret;
		max = ra->n;	/* it may grow again meanwhile: loop */
	}
}

/* One region, in an array with -j; with its ACL with -d. */
static int region_print_one(struct cli *cli,
			    const struct sacred_region_info *info)
{
	struct region_acl ra = { 0 };
	int ret;

	if (cli->details) {
		ret = region_get_acl(cli, info, &ra);
		if (ret) {
			free(ra.acl);
			return cli_fail(cli, ret);
		}
	}
	if (cli->jw)
		json_arr_open(cli->jw);
	region_print(cli, info, cli->details ? &ra : NULL);
	if (cli->jw)
		json_arr_close(cli->jw);
	free(ra.acl);
	return SACRED_EXIT_OK;
}

static int region_arg_policy(struct cli *cli, const char *val, void *args)
{
	struct region_args *a = args;
	char policies[POLICY_LIST_LEN];

	if (sacred_policy_parse(val, &a->policy))
		return cli_usage(cli, "invalid policy \"%s\" (%s)", val,
				 policy_list(policies, sizeof(policies), ", "));
	return SACRED_EXIT_OK;
}

static const struct cli_arg region_table[] = {
	[REGION_ARG_MEM] = CLI_U32(struct region_args, mem_id, "mem", 0,
				   REGION_ID_MAX, "memory instance id"),
	[REGION_ARG_ID] = CLI_U32(struct region_args, id, "id", 0,
				  REGION_ID_MAX, "region id"),
	[REGION_ARG_SIZE] = CLI_HINTED(CLI_ARG_SIZE, struct region_args, size,
				       "size", "size",
				       "bytes, or with k, m or g: 64k, 1g"),
	[REGION_ARG_POLICY] = CLI_FUNC("policy", region_arg_policy),
	/* parsed by region_set() */
	[REGION_ARG_ACL] = CLI_STR(struct region_args, acl, "acl"),
	[REGION_ARG_TAG] = CLI_HINTED(CLI_ARG_U64, struct region_args, tag,
				      "tag", "tag",
				      "0-18446744073709551615, or 0x hex"),
	[REGION_ARG_PROG] = CLI_STR(struct region_args, prog.file, "prog"),
	[REGION_ARG_SECTION] = CLI_STR(struct region_args, prog.section,
				       "section"),
};

/*
 * The "KEYWORD VALUE" pairs of "add" or "set" into @args; "prog pinned
 * PATH" is the one keyword with two words after it.
 */
static int region_parse_args(struct cli *cli, const struct cli_word *words,
			     int argc, char **argv, struct region_args *args)
{
	int ret;
	int i;

	for (i = 0; i < argc; i += 2) {
		ret = cli_arg_parse(cli, words, region_table, argc - i,
				    argv + i, &args->seen, args);
		if (ret)
			return ret;
		if (args->prog.file && !strcmp(args->prog.file, "pinned") &&
		    !args->prog.pinned && i + 1 < argc &&
		    argv[i + 1] == args->prog.file) {
			if (i + 2 >= argc)
				return cli_usage(cli,
						 "\"prog pinned\" needs a path");
			args->prog.pinned = argv[i + 2];
			args->prog.file = NULL;
			i++;
		}
	}
	if (args->prog.section && !args->prog.file)
		return cli_usage(cli, "\"section\" goes with \"prog FILE.o\"");
	if ((args->prog.file || args->prog.pinned) &&
	    args->policy != SACRED_POLICY_BPF &&
	    (args->seen & ARG(REGION_ARG_POLICY)))
		return cli_usage(cli, "\"prog\" is for policy bpf");
	return SACRED_EXIT_OK;
}

/* The "MEM_ID[/ID]" handle @s into @args. */
static int region_parse_handle(struct cli *cli, const char *s,
			       struct region_args *args)
{
	int ret;

	ret = parse_u32_pair(s, REGION_ID_MAX, &args->mem_id, &args->id);
	if (ret < 0)
		return cli_usage(cli,
				 "invalid region \"%s\" (MEM_ID/ID, each 0-%u)",
				 s, REGION_ID_MAX);
	args->seen |= ARG(REGION_ARG_MEM);
	if (ret == 2)
		args->seen |= ARG(REGION_ARG_ID);
	return SACRED_EXIT_OK;
}

static bool is_handle(const char *s)
{
	return s[0] >= '0' && s[0] <= '9';
}

/*
 * The region (or, in "show", instance) a "del" or "show" names:
 * "mem MEM_ID [ id ID ]" or "MEM_ID[/ID]". Whether "id" may be left out
 * is up to the caller.
 */
static int region_parse_sel(struct cli *cli, int argc, char **argv,
			    struct region_args *args)
{
	int ret;

	if (argc && is_handle(argv[0])) {
		if (argc > 1)
			return cli_usage(cli, "unexpected argument \"%s\"",
					 argv[1]);
		return region_parse_handle(cli, argv[0], args);
	}

	ret = cli_args_parse(cli, region_sel_args, region_table, argc, argv,
			     &args->seen, args);
	if (ret)
		return ret;
	if ((args->seen & ARG(REGION_ARG_ID)) &&
	    !(args->seen & ARG(REGION_ARG_MEM)))
		return cli_usage(cli, "\"id\" needs \"mem\"");
	return SACRED_EXIT_OK;
}

static int region_add(struct cli *cli, int argc, char **argv)
{
	struct region_args args = {
		.id = SACRED_REGION_ID_ANY,
		.policy = SACRED_POLICY_STATIC,
	};
	struct sacred_region_info info;
	struct prog_handle prog;
	int ret;

	ret = region_parse_args(cli, region_add_args, argc, argv, &args);
	if (!ret)
		ret = cli_required(cli, region_table, args.seen,
				   ARG(REGION_ARG_MEM) | ARG(REGION_ARG_SIZE));
	if (ret)
		return ret;
	if (args.policy == SACRED_POLICY_BPF) {
		if (!args.prog.file && !args.prog.pinned)
			return cli_usage(cli, "policy bpf needs \"prog\"");
	} else if (args.prog.file || args.prog.pinned) {
		return cli_usage(cli, "\"prog\" is for policy bpf");
	}

	ret = cli_open(cli);
	if (ret)
		return ret;
	if (args.policy == SACRED_POLICY_BPF) {
		if (prog_load(cli, &args.prog, &prog))
			return SACRED_EXIT_FAIL;
		ret = sacred_region_new_prog(cli->ctrl, args.mem_id, args.id,
					     args.size, prog.fd,
					     args.seen & ARG(REGION_ARG_TAG) ?
					     &args.tag : NULL, &info);
		prog_close(&prog);
	} else if (args.seen & ARG(REGION_ARG_TAG))
		ret = sacred_region_new_tagged(cli->ctrl, args.mem_id, args.id,
					       args.size, args.policy, args.tag,
					       &info);
	else
		ret = sacred_region_new(cli->ctrl, args.mem_id, args.id,
					args.size, args.policy, &info);
	if (ret)
		return cli_fail(cli, ret);
	return region_print_one(cli, &info);
}

static int region_del(struct cli *cli, int argc, char **argv)
{
	struct region_args args = { 0 };
	int ret;

	if (!argc)
		return cli_usage(cli,
				 "region expected: mem MEM_ID id ID, or MEM_ID/ID");
	ret = region_parse_sel(cli, argc, argv, &args);
	if (!ret)
		ret = cli_required(cli, region_table, args.seen,
				   ARG(REGION_ARG_MEM) | ARG(REGION_ARG_ID));
	if (ret)
		return ret;

	ret = cli_open(cli);
	if (ret)
		return ret;
	ret = sacred_region_del(cli->ctrl, args.mem_id, args.id);
	return ret ? cli_fail(cli, ret) : SACRED_EXIT_OK;
}

/*
 * "set { mem MEM_ID id ID | MEM_ID/ID } acl ACL": the handle, if given,
 * comes first; the keywords may follow in any order.
 */
/* The arguments of "set" into @args: a handle first, then keywords. */
static int region_set_parse(struct cli *cli, int argc, char **argv,
			    struct region_args *args)
{
	int ret;

	if (argc && is_handle(argv[0])) {
		ret = region_parse_handle(cli, argv[0], args);
		if (ret)
			return ret;
		if (!(args->seen & ARG(REGION_ARG_ID)))
			return cli_usage(cli,
					 "invalid region \"%s\" (MEM_ID/ID)",
					 argv[0]);
		argc--;
		argv++;
	}
	ret = region_parse_args(cli, region_set_args, argc, argv, args);
	if (!ret)
		ret = cli_required(cli, region_table, args->seen,
				   ARG(REGION_ARG_MEM) | ARG(REGION_ARG_ID));
	if (ret)
		return ret;
	if (!(args->seen & (ARG(REGION_ARG_ACL) | ARG(REGION_ARG_POLICY) |
			    ARG(REGION_ARG_PROG))))
		return cli_usage(cli, "\"acl\", \"policy\" or \"prog\" is required");
	if ((args->seen & ARG(REGION_ARG_POLICY)) &&
	    args->policy == SACRED_POLICY_BPF && !args->prog.file &&
	    !args->prog.pinned)
		return cli_usage(cli, "policy bpf needs \"prog\"");
	return SACRED_EXIT_OK;
}

/*
 * The policy (and program) of "set", if given. "prog" alone replaces a
 * program: said so on any region that has another policy.
 */
static int region_set_policy(struct cli *cli, struct region_args *args)
{
	struct prog_handle prog = { .fd = -1 };
	struct sacred_region_info info;
	int ret;

	if (!(args->seen & (ARG(REGION_ARG_POLICY) | ARG(REGION_ARG_PROG))))
		return SACRED_EXIT_OK;
	if (!(args->seen & ARG(REGION_ARG_POLICY))) {
		ret = sacred_region_get(cli->ctrl, args->mem_id, args->id,
					&info);
		if (ret)
			return cli_fail(cli, ret);
		if (info.policy != SACRED_POLICY_BPF)
			return cli_error(cli,
					 "%u/%u has policy %s: \"prog\" alone replaces the program of a bpf region (add \"policy bpf\")",
					 args->mem_id, args->id,
					 sacred_policy_str(info.policy));
	}
	if ((args->prog.file || args->prog.pinned) &&
	    prog_load(cli, &args->prog, &prog))
		return SACRED_EXIT_FAIL;
	ret = sacred_region_set_policy(cli->ctrl, args->mem_id, args->id,
				       prog.fd >= 0 ? SACRED_POLICY_BPF :
				       args->policy, prog.fd);
	prog_close(&prog);
	return ret ? cli_fail(cli, ret) : SACRED_EXIT_OK;
}

static int region_set(struct cli *cli, int argc, char **argv)
{
	struct region_args args = { 0 };
	struct sacred_acl_entry *acl = NULL;
	const char *bad = NULL;
	unsigned int n = 0;
	int ret;

	ret = region_set_parse(cli, argc, argv, &args);
	if (ret)
		return ret;
	if (args.acl) {
		ret = parse_acl(args.acl, sacred_access_parse, &acl, &n, &bad);
		if (ret == -EINVAL)
			return cli_usage(cli,
					 "invalid ACL entry \"%.*s\" (PID:ACCESS, ACCESS one of none, r, rw, rwa)",
					 (int)strcspn(bad, ","), bad);
		if (ret)
			return cli_fail(cli, ret);
	}
	/* The policy (and program) first: the ACL then meets the new one. */
	ret = cli_open(cli);
	if (!ret)
		ret = region_set_policy(cli, &args);
	if (!ret && args.acl) {
		ret = sacred_region_set_acl(cli->ctrl, args.mem_id, args.id,
					    acl, n);
		ret = ret ? cli_fail(cli, ret) : SACRED_EXIT_OK;
	}
	free(acl);
	return ret;
}

/**
 * struct region_list - the regions of a dump, kept for "show -d"
 * @info: the regions, malloc()ed
 * @n: regions in @info
 * @max: room in @info
 */
struct region_list {
	struct sacred_region_info *info;
	size_t n;
	size_t max;
};

static int region_keep_one(const struct sacred_region_info *info, void *arg)
{
	struct region_list *list = arg;
	struct sacred_region_info *p;
	size_t max;

	if (list->n == list->max) {
		max = list->max ? 2 * list->max : 16;
		p = reallocarray(list->info, max, sizeof(*p));
		if (!p)
			return -ENOMEM;
		list->info = p;
		list->max = max;
	}
	list->info[list->n++] = *info;
	return 0;
}

/*
 * "show -d" of several regions: the dump first, then the ACL of each. A
 * region deleted in between is left out.
 */
static int region_show_details(struct cli *cli, uint32_t mem_id)
{
	struct region_list list = { 0 };
	struct region_acl ra = { 0 };
	size_t i;
	int ret;

	ret = sacred_region_list(cli->ctrl, mem_id, region_keep_one, &list);
	if (cli->jw)
		json_arr_open(cli->jw);
	for (i = 0; !ret && i < list.n; i++) {
		ret = region_get_acl(cli, &list.info[i], &ra);
		if (ret == -ENOENT) {
			ret = 0;
			continue;
		}
		if (!ret)
			region_print(cli, &list.info[i], &ra);
	}
	if (cli->jw)
		json_arr_close(cli->jw);
	free(ra.acl);
	free(list.info);
	return ret ? cli_fail(cli, ret) : SACRED_EXIT_OK;
}

static int region_show_one(const struct sacred_region_info *info, void *arg)
{
	region_print(arg, info, NULL);
	return 0;
}

static int region_show(struct cli *cli, int argc, char **argv)
{
	uint32_t mem_id = SACRED_MEM_ID_ANY;
	struct region_args args = { 0 };
	struct sacred_region_info info;
	struct sacred_mem_info mem;
	int ret;

	ret = region_parse_sel(cli, argc, argv, &args);
	if (ret)
		return ret;
	ret = cli_open(cli);
	if (ret)
		return ret;

	if (args.seen & ARG(REGION_ARG_ID)) {
		ret = sacred_region_get(cli->ctrl, args.mem_id, args.id, &info);
		if (ret)
			return cli_fail(cli, ret);
		return region_print_one(cli, &info);
	}

	if (args.seen & ARG(REGION_ARG_MEM)) {
		/*
		 * The dump of an instance that does not exist is empty;
		 * say that it does not exist, as "show mem M id I" would.
		 */
		ret = sacred_mem_get(cli->ctrl, args.mem_id, &mem);
		if (ret)
			return cli_fail(cli, ret);
		mem_id = args.mem_id;
	}

	if (cli->details)
		return region_show_details(cli, mem_id);
	if (cli->jw)
		json_arr_open(cli->jw);
	ret = sacred_region_list(cli->ctrl, mem_id, region_show_one, cli);
	if (cli->jw)
		json_arr_close(cli->jw);
	return ret ? cli_fail(cli, ret) : SACRED_EXIT_OK;
}

int cmd_region(struct cli *cli, int argc, char **argv)
{
	static const struct cli_cmd cmds[] = {
		{ "add", region_add },
		{ "del", region_del },
		{ "delete", region_del },
		{ "set", region_set },
		{ "show", region_show },
		{ "list", region_show },
		{ "help", region_help },
		{ NULL, NULL },
	};

	return cli_dispatch(cli, cmds, region_show, "show", argc, argv);
}
