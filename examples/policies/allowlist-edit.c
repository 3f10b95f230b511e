// SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause
/*
 * allowlist-edit - edit the allow-list of a region that runs
 * allowlist.bpf.o, while it runs.
 *
 *   allowlist-edit MEM_ID/REGION_ID show
 *   allowlist-edit MEM_ID/REGION_ID add PID ACCESS     (r, rw or rwa)
 *   allowlist-edit MEM_ID/REGION_ID del PID
 *
 * The way from a region to its program's map, as any control process can
 * walk it: sacred_region_prog_id() gives the program's id, the kernel
 * turns an id into a file descriptor, and the program's info lists the
 * maps it uses - here one, "allow". Needs CAP_SYS_ADMIN (bpf ids) and
 * sacred.ko.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "sacred.h"

static int usage(void)
{
	fprintf(stderr,
		"usage: allowlist-edit MEM_ID/REGION_ID { show | add PID ACCESS | del PID }\n");
	return 2;
}

/* The fd of the one map of the program deciding for @mem/@region. */
static int allow_map(uint32_t mem, uint32_t region)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info), prog_id, map_id = 0;
	struct sacred_ctrl *ctrl;
	int ret, fd;

	ret = sacred_ctrl_open(&ctrl);
	if (ret) {
		fprintf(stderr, "allowlist-edit: sacred.ko: %s\n",
			strerror(-ret));
		return ret;
	}
	ret = sacred_region_prog_id(ctrl, mem, region, &prog_id);
	sacred_ctrl_close(ctrl);
	if (ret || !prog_id) {
		fprintf(stderr, "allowlist-edit: %u/%u: %s\n", mem, region,
			ret ? strerror(-ret) : "not a bpf region");
		return ret ? ret : -ENOENT;
	}
	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd < 0) {
		ret = -errno;
		fprintf(stderr, "allowlist-edit: program %u: %s\n", prog_id,
			strerror(errno));
		return ret;
	}
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = 1;
	info.map_ids = (uintptr_t)&map_id;
	ret = bpf_obj_get_info_by_fd(fd, &info, &len);
	close(fd);
	if (ret || info.nr_map_ids != 1) {
		fprintf(stderr, "allowlist-edit: program %u is not allowlist.bpf.o (%u maps)\n",
			prog_id, info.nr_map_ids);
		return -EINVAL;
	}
	fd = bpf_map_get_fd_by_id(map_id);
	if (fd < 0) {
		ret = -errno;
		fprintf(stderr, "allowlist-edit: map %u: %s\n", map_id,
			strerror(errno));
		return ret;
	}
	return fd;
}

int main(int argc, char **argv)
{
	uint32_t mem, region, pid, access, next;
	uint32_t *key = NULL;
	int fd, ret = 0;

	if (argc < 3 || sscanf(argv[1], "%u/%u", &mem, &region) != 2)
		return usage();
	fd = allow_map(mem, region);
	if (fd < 0)
		return 1;

	if (!strcmp(argv[2], "show") && argc == 3) {
		while (!bpf_map_get_next_key(fd, key, &next)) {
			if (!bpf_map_lookup_elem(fd, &next, &access))
				printf("pid %u max %s\n", next,
				       sacred_access_str(access));
			pid = next;
			key = &pid;
		}
	} else if (!strcmp(argv[2], "add") && argc == 5) {
		pid = strtoul(argv[3], NULL, 0);
		if (sacred_access_parse(argv[4], &access)) {
			close(fd);
			return usage();
		}
		ret = bpf_map_update_elem(fd, &pid, &access, BPF_ANY);
	} else if (!strcmp(argv[2], "del") && argc == 4) {
		pid = strtoul(argv[3], NULL, 0);
		ret = bpf_map_delete_elem(fd, &pid);
	} else {
		close(fd);
		return usage();
	}
	if (ret)
		fprintf(stderr, "allowlist-edit: %s\n", strerror(errno));
	close(fd);
	return ret ? 1 : 0;
}
