/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The memories of a multi-VM run (scripts/vm-multi), from its
 * environment: SACRED_MULTIVM_MEMS, the memories' IPv4 addresses
 * separated by spaces, and SACRED_MULTIVM_PORT, their rdma_cm port
 * (default 7531). Shared by selftests/sacred_multivm.c and
 * bench/multivm.c.
 */
#ifndef _SACRED_MULTIVM_ENV_H
#define _SACRED_MULTIVM_ENV_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "sacred.h"

/*
 * Exactly @nr memories into @addrs and the members @m pointing at them,
 * each with @timeout_ms: 0, or -EINVAL (unset, too long, a bad port or
 * address, too few or too many).
 */
static inline int multivm_members(struct sockaddr_in *addrs,
				  struct sacred_rmem_member *m,
				  unsigned int nr, int timeout_ms)
{
	const char *mems = getenv("SACRED_MULTIVM_MEMS");
	const char *port = getenv("SACRED_MULTIVM_PORT");
	char buf[256], *s, *save = NULL;
	unsigned int i = 0;
	long v;

	if (!mems || strlen(mems) >= sizeof(buf))
		return -EINVAL;
	v = port ? strtol(port, NULL, 10) : 7531;
	if (v <= 0 || v > 65535)
		return -EINVAL;
	strcpy(buf, mems);
	for (s = strtok_r(buf, " ", &save); s; s = strtok_r(NULL, " ", &save)) {
		if (i == nr)
			return -EINVAL;
		memset(&addrs[i], 0, sizeof(addrs[i]));
		addrs[i].sin_family = AF_INET;
		addrs[i].sin_port = htons(v);
		if (inet_pton(AF_INET, s, &addrs[i].sin_addr) != 1)
			return -EINVAL;
		m[i] = (struct sacred_rmem_member){
			.addr = (struct sockaddr *)&addrs[i],
			.timeout_ms = timeout_ms,
		};
		i++;
	}
	return i == nr ? 0 : -EINVAL;
}

#endif /* _SACRED_MULTIVM_ENV_H */
