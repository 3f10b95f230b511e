/* SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause */
/*
 * sacred-kv - the one client of the replicas: sacred-kv's put, get, cas
 * and bench commands, bench/kvbench and selftests/sacred_kv. It speaks
 * kv.h's protocol: one Unix socket connection per attempt, a struct
 * kv_cmd out and a struct kv_reply back, "not leader" followed to the
 * replica named, everything else retried until the request's deadline.
 */
#ifndef _SACRED_KV_CLIENT_H
#define _SACRED_KV_CLIENT_H

#include <stdint.h>

#include "kv.h"

/**
 * struct kv_client - one client of @nr replicas
 * @dir: the replicas' directory (their sockets are kv-<index>.sock)
 * @nr: how many replicas there are
 * @timeout_ms: how long kv_client_call() retries one request
 * @wait_ms: how long one replica's answer is waited for
 * @id: the client's id, struct kv_cmd's @client
 * @req: the number of the last request sent (the next is @req + 1)
 * @hint: the replica asked first; kv_client_call() sets it to the one
 *	that answered
 */
struct kv_client {
	const char *dir;
	int nr;
	int timeout_ms;
	int wait_ms;
	uint64_t id;
	uint64_t req;
	int hint;
};

/*
 * One attempt: send @cmd to replica @r of the replicas in @dir and take
 * its reply into @rep, waiting @wait_ms for it. Returns 0 (whatever the
 * reply's status), -ENOTCONN when the replica did not answer (no socket,
 * refused, or silent), or another -errno when no socket could be made.
 */
int kv_client_exchange(const char *dir, int r, int wait_ms,
		       const struct kv_cmd *cmd, struct kv_reply *rep);

/*
 * Send @cmd as the next request of @kc (numbered @kc->id, ++@kc->req; a
 * retry keeps the number) until a replica answers it for good: "not
 * leader" moves to the leader named or the next replica, "unavailable"
 * and a replica that does not answer are retried, for @kc->timeout_ms.
 * Returns 0 with the reply in @rep, -ETIMEDOUT, or the -errno of a
 * socket that could not be made.
 */
int kv_client_call(struct kv_client *kc, struct kv_cmd *cmd,
		   struct kv_reply *rep);

#endif /* _SACRED_KV_CLIENT_H */
