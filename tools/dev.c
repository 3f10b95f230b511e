// SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause
/*
 * dev.c - sacred dev: the RDMA devices sacred.ko is attached to.
 *
 * Output follows `rdma dev` and `rdma link`: one line per device, then one
 * line per port; with -j, the keys and values those tools use where they
 * have them (ifindex, ifname, node_guid; port, state, physical_state,
 * netdev), so that a test can hold one output against the other.
 */
#include <stdio.h>

#include "sacred.h"
#include "json.h"
#include "utils.h"

static int dev_help(struct cli *cli, int argc, char **argv)
{
	(void)cli;
	(void)argc;
	(void)argv;
	printf("Usage: sacred dev show [ DEV ]\n"
	       "       sacred dev help\n"
	       "where  DEV is an RDMA device name, as `rdma dev` shows it\n");
	return SACRED_EXIT_OK;
}

static void dev_print_port_json(struct cli *cli,
				const struct sacred_port_info *port)
{
	struct json_writer *jw = cli->jw;

	json_obj_open(jw);
	json_uint_field(jw, "port", port->index);
	json_str_field(jw, "state", sacred_port_state_str(port->state));
	json_str_field(jw, "physical_state",
		       sacred_phys_state_str(port->phys_state));
	if (port->active_mtu)
		json_uint_field(jw, "mtu", port->active_mtu);
	json_str_field(jw, "link_layer",
		       sacred_link_layer_str(port->link_layer));
	if (port->netdev[0])
		json_str_field(jw, "netdev", port->netdev);
	json_obj_close(jw);
}

static void dev_print_port(const struct sacred_port_info *port)
{
	printf("    port %u state %s physical_state %s", port->index,
	       sacred_port_state_str(port->state),
	       sacred_phys_state_str(port->phys_state));
	if (port->active_mtu)
		printf(" mtu %u", port->active_mtu);
	printf(" link_layer %s", sacred_link_layer_str(port->link_layer));
	if (port->netdev[0])
		printf(" netdev %s", port->netdev);
	putchar('\n');
}

static void dev_print(struct cli *cli, const struct sacred_dev_info *info)
{
	struct json_writer *jw = cli->jw;
	char guid[GUID_STR_LEN];
	uint32_t i;

	format_guid(info->node_guid, guid, sizeof(guid));

	if (jw) {
		json_obj_open(jw);
		json_uint_field(jw, "ifindex", info->index);
		json_str_field(jw, "ifname", info->name);
		json_str_field(jw, "node_guid", guid);
		if (cli->details)
			json_uint_field(jw, "num_ports", info->num_ports);
		json_key(jw, "ports");
		json_arr_open(jw);
		for (i = 0; i < info->nr_port_info; i++)
			dev_print_port_json(cli, &info->ports[i]);
		json_arr_close(jw);
		json_obj_close(jw);
		return;
	}

	printf("%u: %s: node_guid %s ports %u\n", info->index, info->name,
	       guid, info->num_ports);
	for (i = 0; i < info->nr_port_info; i++)
		dev_print_port(&info->ports[i]);
	if (cli->details && info->nr_port_info < info->num_ports)
		printf("    (%u more ports not shown)\n",
		       info->num_ports - info->nr_port_info);
}

static int dev_show_one(const struct sacred_dev_info *info, void *arg)
{
	dev_print(arg, info);
	return 0;
}

static int dev_show(struct cli *cli, int argc, char **argv)
{
	struct sacred_dev_info info;
	int ret;

	if (argc > 1)
		return cli_usage(cli, "unexpected argument \"%s\"", argv[1]);
	ret = cli_open(cli);
	if (ret)
		return ret;

	if (argc == 1) {
		ret = sacred_dev_get(cli->ctrl, argv[0], 0, &info);
		if (ret)
			return cli_fail(cli, ret);
		if (cli->jw)
			json_arr_open(cli->jw);
		dev_print(cli, &info);
		if (cli->jw)
			json_arr_close(cli->jw);
		return SACRED_EXIT_OK;
	}

	if (cli->jw)
		json_arr_open(cli->jw);
	ret = sacred_dev_list(cli->ctrl, dev_show_one, cli);
	if (cli->jw)
		json_arr_close(cli->jw);
	return ret ? cli_fail(cli, ret) : SACRED_EXIT_OK;
}

int cmd_dev(struct cli *cli, int argc, char **argv)
{
	static const struct cli_cmd cmds[] = {
		{ "show", dev_show },
		{ "list", dev_show },
		{ "help", dev_help },
		{ NULL, NULL },
	};

	return cli_dispatch(cli, cmds, dev_show, "show", argc, argv);
}
