// SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause
/*
 * ballot.bpf.c - "a higher ballot takes the region", as Protected Memory
 * Paxos wants its memories to decide.
 *
 * A request for write carries a ballot; it is granted, exclusively (every
 * other writer is demoted to read first), if the ballot is above every
 * ballot granted on the region so far (ctx.region_ballot, which the
 * module raises to the ballot of each accepted request). Anything else a
 * member asks for - read, or nothing - is granted. A stale ballot is
 * refused with code BALLOT_STALE: the requester sees reason
 * SACRED_REFUSE_PROGRAM_BASE + 1.
 *
 * This is the built-in "fenced" policy written as a program; the
 * selftests run the same cases against both.
 */
#include "policy.h"

#define BALLOT_STALE	1

SEC("socket")
int ballot(struct __sk_buff *skb)
{
	struct sacred_policy_ctx ctx;

	if (policy_ctx(skb, &ctx))
		return SACRED_VERDICT_REFUSE |
		       SACRED_VERDICT_CODE(POLICY_CODE_NO_CTX);
	if (!(ctx.req_access & POLICY_WRITE_BITS))
		return SACRED_VERDICT_GRANT;
	if (ctx.ballot <= ctx.region_ballot)
		return SACRED_VERDICT_REFUSE | SACRED_VERDICT_CODE(BALLOT_STALE);
	return SACRED_VERDICT_GRANT_EXCLUSIVE;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
