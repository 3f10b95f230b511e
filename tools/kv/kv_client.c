// SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause
/*
 * sacred-kv - the client of kv_client.h.
 *
 * Its pauses are the ones the benchmark's numbers and the tests' recorded
 * histories were taken with: 10 ms after a replica that did not answer
 * and after "unavailable", 20 ms after "not leader" with no leader known,
 * 1 ms after "not leader" naming one.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include "kv_client.h"

static uint64_t kv_client_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

int kv_client_exchange(const char *dir, int r, int wait_ms,
		       const struct kv_cmd *cmd, struct kv_reply *rep)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval tv = {
		.tv_sec = wait_ms / 1000,
		.tv_usec = wait_ms % 1000 * 1000,
	};
	int fd, ret = 0;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/kv-%d.sock", dir,
		 r);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) ||
	    send(fd, cmd, sizeof(*cmd), 0) != sizeof(*cmd) ||
	    recv(fd, rep, sizeof(*rep), 0) != sizeof(*rep))
		ret = -ENOTCONN;
	close(fd);
	return ret;
}

int kv_client_call(struct kv_client *kc, struct kv_cmd *cmd,
		   struct kv_reply *rep)
{
	uint64_t deadline = kv_client_now_ms() + kc->timeout_ms;
	int r = kc->hint, ret;

	cmd->client = htole64(kc->id);
	cmd->req = htole64(++kc->req);
	while (kv_client_now_ms() < deadline) {
		ret = kv_client_exchange(kc->dir, r, kc->wait_ms, cmd, rep);
		if (ret == -ENOTCONN) {
			r = (r + 1) % kc->nr;
			usleep(10000);
			continue;
		}
		if (ret)
			return ret;
		if (rep->status == KV_NOT_LEADER) {
			r = rep->leader >= 0 && rep->leader < kc->nr &&
			    rep->leader != r ? rep->leader : (r + 1) % kc->nr;
			usleep(rep->leader < 0 ? 20000 : 1000);
			continue;
		}
		if (rep->status == KV_UNAVAILABLE) {
			usleep(10000);
			continue;
		}
		kc->hint = r;
		return 0;
	}
	return -ETIMEDOUT;
}
