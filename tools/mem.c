// SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause
/*
 * mem.c - sacred memory: memory instances.
 *
 * A memory instance listens with rdma_cm on an address and a TCP-space
 * port, on one port of one RDMA device. In the grammar "port" is the
 * rdma_cm port - the one peers connect to - and "ibport" the RDMA port.
 * Output prints the same keywords, so a line of `sacred memory show` can
 * be fed back to `sacred memory add`.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>

#include "sacred.h"
#include "json.h"
#include "utils.h"

enum mem_arg {
	MEM_ARG_DEV,
	MEM_ARG_IBPORT,
	MEM_ARG_ADDR,
	MEM_ARG_PORT,
	MEM_ARG_ID,
	MEM_ARG_CAP,
	MEM_ARG_KEY,
	MEM_ARG_STATE,
};

static const struct cli_word mem_add_args[] = {
	{ "dev", MEM_ARG_DEV },
	{ "ibport", MEM_ARG_IBPORT },
	{ "addr", MEM_ARG_ADDR },
	{ "port", MEM_ARG_PORT },
	{ "cmport", MEM_ARG_PORT },
	{ "id", MEM_ARG_ID },
	{ "cap", MEM_ARG_CAP },
	{ "key", MEM_ARG_KEY },
	{ NULL, 0 },
};

/* What "set" takes after the instance's id. */
static const struct cli_word mem_set_args[] = {
	{ "state", MEM_ARG_STATE },
	{ "cap", MEM_ARG_CAP },
	{ "key", MEM_ARG_KEY },
	{ NULL, 0 },
};

/* RDMA port numbers, as the IBTA has them (and sacred.ko checks). */
#define IBPORT_MAX 255

static int mem_help(struct cli *cli, int argc, char **argv)
{
	char cap[SIZE_STR_LEN];

	(void)cli;
	(void)argc;
	(void)argv;
	printf("Usage: sacred memory add dev DEV [ ibport IBPORT ] [ addr ADDR ] port PORT\n"
	       "                            [ id ID ] [ cap SIZE ] [ key KEYFILE ]\n"
	       "       sacred memory del [ id ] ID\n"
	       "       sacred memory set [ id ] ID [ state { up | down } ] [ cap SIZE ]\n"
	       "                            [ key { KEYFILE | none } ]\n"
	       "       sacred memory show [ [ id ] ID ]\n"
	       "       sacred memory key KEYFILE pid PID > PROCESS_KEYFILE\n"
	       "       sacred memory help\n"
	       "where  DEV     RDMA device, as `sacred dev show` lists it\n"
	       "       IBPORT  RDMA port of DEV, 1-%u (default 1)\n"
	       "       ADDR    IPv4 or IPv6 address to listen on (default: the\n"
	       "               IPv4 address of the port's first RoCE v2 GID)\n"
	       "       PORT    rdma_cm port to listen on, 0-65535 (0: any);\n"
	       "               \"cmport\" is a synonym of \"port\"\n"
	       "       ID      memory instance id (default: the next free one)\n"
	       "       SIZE    bytes of region memory the instance may allocate\n"
	       "               (default %s); k/K/KiB, m/M/MiB, g/G/GiB multiply\n"
	       "               by 1024, 1024^2, 1024^3 (\"512m\", \"2g\")\n"
	       "KEYFILE holds the instance's master key, 16 to 64 raw bytes; with a\n"
	       "key, only processes proving their own key connect (libsacred(3),\n"
	       "sacred_process_key()). \"key\" writes process PID's key, derived\n"
	       "from the master key in KEYFILE, to standard output: the %d raw\n"
	       "bytes to hand that process (sacred-kv replica -k).\n"
	       "\"state down\" crashes the instance on purpose: its listener and\n"
	       "every connection go, its regions and ACLs stay; \"state up\"\n"
	       "listens again.\n"
	       "The object may be written \"mem\".\n",
	       IBPORT_MAX, format_size(SACRED_MEM_CAP_DEFAULT, cap, sizeof(cap)),
	       SACRED_MAC_LEN);
	return SACRED_EXIT_OK;
}

void mem_print_body(struct cli *cli, const struct sacred_mem_info *info)
{
	struct json_writer *jw = cli->jw;
	char buf[INET6_ADDRSTRLEN];
	char used[SIZE_STR_LEN];
	char cap[SIZE_STR_LEN];
	const char *addr;
	int port;

	addr = format_addr(&info->addr, buf, sizeof(buf));
	port = sockaddr_port(&info->addr);

	if (jw) {
		json_uint_field(jw, "id", info->id);
		json_uint_field(jw, "ifindex", info->dev_index);
		json_str_field(jw, "ifname", info->dev_name);
		json_uint_field(jw, "ibport", info->port);
		if (addr) {
			json_str_field(jw, "addr", addr);
			json_uint_field(jw, "port", port);
		}
		json_str_field(jw, "state", sacred_mem_state_str(info->state));
		json_uint_field(jw, "cap", info->mem_cap);
		json_uint_field(jw, "used", info->mem_used);
		json_uint_field(jw, "regions", info->nr_regions);
		json_bool_field(jw, "keyed", info->keyed);
		if (cli->details) {
			json_uint_field(jw, "peers", info->nr_peers);
			json_uint_field(jw, "conns", info->nr_conns);
			json_uint_field(jw, "mrs", info->nr_mrs);
			json_uint_field(jw, "mr_pages", info->mr_pages);
			json_uint_field(jw, "meta", info->meta_bytes);
		}
		return;
	}

	printf("%u: dev %s", info->id, info->dev_name);
	if (cli->details)
		printf(" ifindex %u", info->dev_index);
	printf(" ibport %u", info->port);
	if (addr)
		printf(" addr %s port %d", addr, port);
	printf(" state %s cap %s used %s regions %u",
	       sacred_mem_state_str(info->state),
	       format_size(info->mem_cap, cap, sizeof(cap)),
	       format_size(info->mem_used, used, sizeof(used)),
	       info->nr_regions);
	if (info->keyed)
		printf(" keyed");
	if (cli->details)
		printf(" peers %u conns %u mrs %u mr-pages %llu meta %s",
		       info->nr_peers, info->nr_conns, info->nr_mrs,
		       (unsigned long long)info->mr_pages,
		       format_size(info->meta_bytes, used, sizeof(used)));
}

static void mem_print(struct cli *cli, const struct sacred_mem_info *info)
{
	if (cli->jw) {
		json_obj_open(cli->jw);
		mem_print_body(cli, info);
		json_obj_close(cli->jw);
	} else {
		mem_print_body(cli, info);
		putchar('\n');
	}
}

static int mem_print_one(struct cli *cli, const struct sacred_mem_info *info)
{
	if (cli->jw)
		json_arr_open(cli->jw);
	mem_print(cli, info);
	if (cli->jw)
		json_arr_close(cli->jw);
	return SACRED_EXIT_OK;
}

/*
 * A master key: the raw bytes of @path, SACRED_KEY_MIN..SACRED_KEY_MAX of
 * them (e.g. head -c 32 /dev/urandom > key). Never echoed anywhere.
 */
static int mem_read_key(struct cli *cli, const char *path, uint8_t *key,
			size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return cli_usage(cli, "cannot read key file \"%s\": %s", path,
				 strerror(errno));
	n = fread(key, 1, SACRED_KEY_MAX + 1, f);
	fclose(f);
	if (n < SACRED_KEY_MIN || n > SACRED_KEY_MAX)
		return cli_usage(cli,
				 "key file \"%s\" must hold %d to %d bytes",
				 path, SACRED_KEY_MIN, SACRED_KEY_MAX);
	*len = n;
	return SACRED_EXIT_OK;
}

/* What "add" and "set" parse their keywords into. */
struct mem_args {
	struct sacred_mem_params p;	/* "set": only mem_cap, key_len */
	uint8_t key[SACRED_KEY_MAX + 1];
	uint8_t state;			/* "set" */
	bool set_key;			/* "set" */
};

static int mem_arg_dev(struct cli *cli, const char *val, void *args)
{
	struct mem_args *a = args;

	if (!val[0] || strlen(val) >= SACRED_NAME_MAX)
		return cli_usage(cli, "invalid device name \"%s\"", val);
	a->p.dev_name = val;
	return SACRED_EXIT_OK;
}

static int mem_arg_key(struct cli *cli, const char *val, void *args)
{
	struct mem_args *a = args;
	int ret;

	ret = mem_read_key(cli, val, a->key, &a->p.key_len);
	if (!ret)
		a->p.key = a->key;
	return ret;
}

/* "set": KEYFILE, or "none" to take the key away. */
static int mem_arg_set_key(struct cli *cli, const char *val, void *args)
{
	struct mem_args *a = args;

	a->set_key = true;
	if (!strcmp(val, "none"))
		return SACRED_EXIT_OK;
	return mem_read_key(cli, val, a->key, &a->p.key_len);
}

static int mem_arg_state(struct cli *cli, const char *val, void *args)
{
	struct mem_args *a = args;

	if (!strcmp(val, "up"))
		a->state = SACRED_MEM_UP;
	else if (!strcmp(val, "down"))
		a->state = SACRED_MEM_DOWN;
	else
		return cli_usage(cli, "invalid state \"%s\" (up or down)", val);
	return SACRED_EXIT_OK;
}

/* A cap of 0 would mean the kernel's default: CLI_ARG_SIZE refuses it. */
#define MEM_CAP \
	CLI_HINTED(CLI_ARG_SIZE, struct mem_args, p.mem_cap, "cap", "cap", \
		   "bytes, or with k, m or g: 512m, 2g")

static const struct cli_arg mem_add_table[] = {
	[MEM_ARG_DEV] = CLI_FUNC("dev", mem_arg_dev),
	[MEM_ARG_IBPORT] = CLI_U32(struct mem_args, p.port, "ibport", 1,
				   IBPORT_MAX, "ibport"),
	[MEM_ARG_ADDR] = CLI_HINTED(CLI_ARG_ADDR, struct mem_args, p.addr,
				    "addr", "address", "IPv4 or IPv6"),
	[MEM_ARG_PORT] = CLI_U16(struct mem_args, p.cm_port, "port", 0,
				 UINT16_MAX, "port"),
	[MEM_ARG_ID] = CLI_U32(struct mem_args, p.id, "id", 0,
			       SACRED_MEM_ID_ANY - 1, "id"),
	[MEM_ARG_CAP] = MEM_CAP,
	[MEM_ARG_KEY] = CLI_FUNC("key", mem_arg_key),
};

static const struct cli_arg mem_set_table[] = {
	[MEM_ARG_CAP] = MEM_CAP,
	[MEM_ARG_KEY] = CLI_FUNC("key", mem_arg_set_key),
	[MEM_ARG_STATE] = CLI_FUNC("state", mem_arg_state),
};

static int mem_add(struct cli *cli, int argc, char **argv)
{
	struct mem_args a = { .p = { .id = SACRED_MEM_ID_ANY } };
	struct sacred_mem_info info;
	unsigned int seen = 0;
	int ret;

	ret = cli_args_parse(cli, mem_add_args, mem_add_table, argc, argv,
			     &seen, &a);
	if (ret)
		return ret;
	ret = cli_required(cli, mem_add_table, seen,
			   1u << MEM_ARG_DEV | 1u << MEM_ARG_PORT);
	if (!ret)
		ret = cli_open(cli);
	if (ret)
		return ret;
	ret = sacred_mem_new(cli->ctrl, &a.p, &info);
	memset(a.key, 0, sizeof(a.key));
	if (ret)
		return cli_fail(cli, ret);
	return mem_print_one(cli, &info);
}

/* [ id ] ID, as "del" and "show" take it. */
static int mem_parse_id(struct cli *cli, int argc, char **argv, uint32_t *id)
{
	if (argc == 2 && is_prefix(argv[0], "id")) {
		argc--;
		argv++;
	}
	if (!argc)
		return cli_usage(cli, "memory instance ID expected");
	if (argc > 1)
		return cli_usage(cli, "unexpected argument \"%s\"", argv[1]);
	if (parse_u32(argv[0], 0, SACRED_MEM_ID_ANY - 1, id))
		return cli_usage(cli, "invalid id \"%s\" (0-%u)", argv[0],
				 SACRED_MEM_ID_ANY - 1);
	return SACRED_EXIT_OK;
}

static int mem_del(struct cli *cli, int argc, char **argv)
{
	uint32_t id;
	int ret;

	ret = mem_parse_id(cli, argc, argv, &id);
	if (!ret)
		ret = cli_open(cli);
	if (ret)
		return ret;
	ret = sacred_mem_del(cli->ctrl, id);
	return ret ? cli_fail(cli, ret) : SACRED_EXIT_OK;
}

/*
 * set [ id ] ID { state up|down | cap SIZE | key KEYFILE|none }... : crash
 * emulation, cap, master key. The keywords are looked up as those of
 * "add": abbreviated, each at most once.
 */
static int mem_set(struct cli *cli, int argc, char **argv)
{
	struct mem_args a = { 0 };
	struct sacred_mem_info info;
	unsigned int seen = 0;
	uint32_t id;
	int ret;

	if (argc >= 2 && is_prefix(argv[0], "id")) {
		argc--;
		argv++;
	}
	if (!argc)
		return cli_usage(cli, "memory instance ID expected");
	if (parse_u32(argv[0], 0, SACRED_MEM_ID_ANY - 1, &id))
		return cli_usage(cli, "invalid id \"%s\" (0-%u)", argv[0],
				 SACRED_MEM_ID_ANY - 1);
	ret = cli_args_parse(cli, mem_set_args, mem_set_table, argc - 1,
			     argv + 1, &seen, &a);
	if (ret)
		return ret;
	if (!a.state && !a.p.mem_cap && !a.set_key)
		return cli_usage(cli,
				 "nothing to set: \"state\", \"cap\" or \"key\"");

	/*
	 * Two requests, the key last: the kernel may refuse a state or a
	 * cap (cap below what the regions use) but not a key of a length
	 * checked above, so a refused command changes nothing.
	 */
	ret = cli_open(cli);
	if (ret) {
		memset(a.key, 0, sizeof(a.key));
		return ret;
	}
	if (a.state || a.p.mem_cap)
		ret = sacred_mem_set(cli->ctrl, id, a.state, a.p.mem_cap,
				     a.set_key ? NULL : &info);
	if (!ret && a.set_key)
		ret = sacred_mem_set_key(cli->ctrl, id,
					 a.p.key_len ? a.key : NULL,
					 a.p.key_len);
	memset(a.key, 0, sizeof(a.key));
	/* The key's request answers with nothing: ask for the result. */
	if (!ret && a.set_key)
		ret = sacred_mem_get(cli->ctrl, id, &info);
	if (ret)
		return cli_fail(cli, ret);
	return mem_print_one(cli, &info);
}

static int mem_show_one(const struct sacred_mem_info *info, void *arg)
{
	mem_print(arg, info);
	return 0;
}

static int mem_show(struct cli *cli, int argc, char **argv)
{
	struct sacred_mem_info info;
	uint32_t id;
	int ret;

	if (argc) {
		ret = mem_parse_id(cli, argc, argv, &id);
		if (ret)
			return ret;
	}
	ret = cli_open(cli);
	if (ret)
		return ret;

	if (argc) {
		ret = sacred_mem_get(cli->ctrl, id, &info);
		if (ret)
			return cli_fail(cli, ret);
		return mem_print_one(cli, &info);
	}

	if (cli->jw)
		json_arr_open(cli->jw);
	ret = sacred_mem_list(cli->ctrl, mem_show_one, cli);
	if (cli->jw)
		json_arr_close(cli->jw);
	return ret ? cli_fail(cli, ret) : SACRED_EXIT_OK;
}

/*
 * key KEYFILE pid PID: process PID's key, derived from the master key in
 * KEYFILE as the instance derives it, to stdout - never to a terminal.
 * No netlink: the admin hands the key to the process.
 */
static int mem_key(struct cli *cli, int argc, char **argv)
{
	uint8_t master[SACRED_KEY_MAX + 1], key[SACRED_MAC_LEN];
	size_t len;
	uint32_t pid;
	int ret;

	if (argc != 3 || !is_prefix(argv[1], "pid"))
		return cli_usage(cli, "usage: memory key KEYFILE pid PID");
	if (parse_u32(argv[2], 0, UINT32_MAX, &pid))
		return cli_usage(cli, "invalid pid \"%s\" (0-%u)", argv[2],
				 UINT32_MAX);
	if (isatty(STDOUT_FILENO))
		return cli_usage(cli,
				 "a key is raw bytes: redirect standard output to a file");
	ret = mem_read_key(cli, argv[0], master, &len);
	if (ret)
		return ret;
	ret = sacred_process_key(master, len, pid, key);
	if (!ret && fwrite(key, sizeof(key), 1, stdout) != 1)
		ret = -EIO;
	memset(master, 0, sizeof(master));
	memset(key, 0, sizeof(key));
	return ret ? cli_fail(cli, ret) : SACRED_EXIT_OK;
}

int cmd_memory(struct cli *cli, int argc, char **argv)
{
	static const struct cli_cmd cmds[] = {
		{ "add", mem_add },
		{ "del", mem_del },
		{ "delete", mem_del },
		{ "set", mem_set },
		{ "show", mem_show },
		{ "list", mem_show },
		{ "key", mem_key },
		{ "help", mem_help },
		{ NULL, NULL },
	};

	return cli_dispatch(cli, cmds, mem_show, "show", argc, argv);
}
