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
 * refused with the built-in reason as its code: the requester sees
 * SACRED_REFUSE_PROGRAM_BASE + SACRED_REFUSE_STALE_BALLOT, which
 * libsacred's SACRED_PMP_BALLOT reads as contention, as it reads the
 * fenced policy's SACRED_REFUSE_STALE_BALLOT.
 *
 * This is the built-in "fenced" policy written as a program: PMP's
 * selftests run against it (selftests/sacred_consensus, variant
 * ballot_bpf).
 */
#include "policy.h"

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
		return SACRED_VERDICT_REFUSE | SACRED_VERDICT_CODE(SACRED_REFUSE_STALE_BALLOT);
	return SACRED_VERDICT_GRANT_EXCLUSIVE;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
