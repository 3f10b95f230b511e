// SPDX-License-Identifier: BSD-2-Clause
/*
 * lose_permission - the smallest sacred program worth reading: two
 * processes share a region of one memory; the first writes, the second
 * asks for write, and the first learns - from its next write - that it
 * lost it.
 *
 * Usage: lose_permission ADDR PORT REGION
 *   ADDR PORT   a memory instance (sacred memory show)
 *   REGION      an exclusive-writer region whose ACL gives processes 1
 *               and 2 read-write, e.g.
 *                 sacred region add mem 0 size 64k policy exclusive-writer
 *                 sacred region set 0/0 acl 1:rw,2:rw
 *
 * Both "processes" live in this one program for brevity: each is a
 * connection with its own process id, exactly as two hosts would be.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sacred.h>

static struct sacred_conn *join(const struct sockaddr_in *sin, uint32_t pid,
				uint32_t region)
{
	struct sacred_conn_attr attr = {
		.addr = (const struct sockaddr *)sin,
		.process_id = pid,
	};
	struct sacred_region_attr ra;
	struct sacred_conn *c;
	int ret;

	ret = sacred_conn_create(&attr, &c);
	if (ret) {
		fprintf(stderr, "process %u: connect: %s\n", pid, strerror(-ret));
		exit(1);
	}
	ret = sacred_attach(c, region, &ra);
	if (ret) {
		fprintf(stderr, "process %u: attach: %s\n", pid, strerror(-ret));
		exit(1);
	}
	printf("process %u: attached to region %u (%llu bytes), access %s\n",
	       pid, region, (unsigned long long)ra.size,
	       ra.access & SACRED_ACCESS_WRITE ? "rw" : "r");
	return c;
}

static void take_write(struct sacred_conn *c, uint32_t pid, uint32_t region)
{
	struct sacred_perm_req req = {
		.region_id = region,
		.access = SACRED_ACCESS_READ | SACRED_ACCESS_WRITE,
	};
	struct sacred_perm_result res;
	int ret;

	ret = sacred_change_perm(c, &req, &res);
	if (ret) {
		fprintf(stderr, "process %u: changePermission: %s\n", pid,
			strerror(-ret));
		exit(1);
	}
	printf("process %u: has write now (epoch %u, key %#x)\n", pid,
	       res.region.epoch, res.region.rkey);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sacred_region_attr ra;
	struct sacred_conn *p1, *p2;
	const char *msg1 = "written by process 1";
	const char *msg2 = "written by process 2";
	char buf[32] = "";
	uint32_t region;
	int ret;

	if (argc != 4 || inet_pton(AF_INET, argv[1], &sin.sin_addr) != 1) {
		fprintf(stderr, "usage: lose_permission ADDR PORT REGION\n");
		return 2;
	}
	sin.sin_port = htons(atoi(argv[2]));
	region = atoi(argv[3]);

	p1 = join(&sin, 1, region);
	p2 = join(&sin, 2, region);

	take_write(p1, 1, region);
	ret = sacred_write(p1, region, 0, msg1, strlen(msg1) + 1);
	printf("process 1: write: %s\n", ret ? strerror(-ret) : "ok");

	/* Process 2 takes write: the memory revokes process 1 first. */
	take_write(p2, 2, region);
	ret = sacred_write(p2, region, 0, msg2, strlen(msg2) + 1);
	printf("process 2: write: %s\n", ret ? strerror(-ret) : "ok");

	ret = sacred_write(p1, region, 0, msg1, strlen(msg1) + 1);
	printf("process 1: write again: %s (%s)\n", ret ? strerror(-ret) : "ok",
	       sacred_conn_errmsg(p1) ?: "");

	/* It reconnects and learns what it holds now. */
	ret = sacred_conn_reconnect(p1);
	if (!ret)
		ret = sacred_conn_region(p1, region, &ra);
	if (ret) {
		fprintf(stderr, "process 1: reconnect: %s\n", strerror(-ret));
		return 1;
	}
	printf("process 1: reconnected: access %s, epoch %u\n",
	       ra.access & SACRED_ACCESS_WRITE ? "rw" : "r", ra.epoch);
	ret = sacred_read(p1, region, 0, buf, sizeof(buf) - 1);
	printf("process 1: reads \"%s\"\n", ret ? strerror(-ret) : buf);

	sacred_conn_destroy(p2);
	sacred_conn_destroy(p1);
	return strcmp(buf, msg2) != 0;
}
