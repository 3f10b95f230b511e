/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sacred - an instance's master key and the proofs checked with it
 * (auth.c).
 */
#ifndef _SACRED_AUTH_H
#define _SACRED_AUTH_H

#include "core.h"

int sacred_auth_prepare(struct sacred_auth *auth, const void *key,
			unsigned int len);
void sacred_auth_release(struct sacred_auth *auth);
void sacred_mem_swap_key(struct sacred_mem *mem, struct sacred_auth *auth);
int sacred_mem_set_key(struct sacred_mem *mem, const void *key,
		       unsigned int len);
bool sacred_mem_keyed(const struct sacred_mem *mem);
bool sacred_auth_check(struct sacred_mem *mem,
		       const struct sacred_wire_conn_req *req, u64 last);

#endif /* _SACRED_AUTH_H */
