/* SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause */
/*
 * sacred-kv - the wire format between a client and a replica: one
 * SOCK_SEQPACKET message per request and per reply, over a Unix socket
 * in the replicas' directory (kv-<index>.sock). A request is also the
 * log entry the leader appends, so the format is fixed-size and
 * little-endian.
 */
#ifndef _SACRED_KV_H
#define _SACRED_KV_H

#include <stdint.h>

#define KV_KEY_MAX	32
#define KV_VAL_MAX	64

enum kv_op {
	KV_PUT = 1,
	KV_GET,
	KV_CAS,		/* set to val if the value is expect ("" = absent) */
};

enum kv_status {
	KV_OK = 0,
	KV_NOT_FOUND,	/* GET of an absent key */
	KV_CAS_FAILED,	/* the value was not expect; val has it */
	KV_NOT_LEADER,	/* ask replica `leader' (-1: unknown) */
	KV_UNAVAILABLE,	/* no quorum, or leadership lost: retry */
	KV_BAD_REQUEST,
};

/**
 * struct kv_cmd - a request, and the log entry that carries it
 * @op: &enum kv_op
 * @klen: bytes of @key
 * @vlen: bytes of @val
 * @elen: bytes of @expect
 * @client: the client's random id
 * @req: the client's request number: a retried request keeps it, and a
 *	replica applies each (client, req) once
 */
struct kv_cmd {
	uint8_t op;
	uint8_t klen;
	uint8_t vlen;
	uint8_t elen;
	uint32_t pad;
	uint64_t client;
	uint64_t req;
	char key[KV_KEY_MAX];
	char val[KV_VAL_MAX];
	char expect[KV_VAL_MAX];
};

/**
 * struct kv_reply - the answer
 * @status: &enum kv_status
 * @leader: with KV_NOT_LEADER, the replica believed to lead, or -1
 * @vlen: bytes of @val
 * @index: the log index the request was decided at
 * @val: GET: the value; CAS_FAILED: the value found
 */
struct kv_reply {
	int32_t status;
	int32_t leader;
	uint32_t vlen;
	uint32_t pad;
	uint64_t index;
	char val[KV_VAL_MAX];
};

#endif /* _SACRED_KV_H */
