// SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause
/*
 * allowlist.bpf.c - who may write is a map a control process edits.
 *
 * "allow" (hash, process id -> the most it may ask for, enum
 * sacred_access bits) is the allow-list: a request is granted if the
 * requester is in it and asks for no more than its entry (a grant of
 * write demotes every other writer: one writer at a time); else it is
 * refused with code NOT_LISTED. The region's ACL still bounds every
 * grant. examples/policies/allowlist-edit.c edits the map of the program
 * a region runs while it runs: no reload, no module change.
 */
#include "policy.h"

#define NOT_LISTED	1

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32);
} allow SEC(".maps");

SEC("socket")
int allowlist(struct __sk_buff *skb)
{
	struct sacred_policy_ctx ctx;
	__u32 *max;

	if (policy_ctx(skb, &ctx))
		return SACRED_VERDICT_REFUSE |
		       SACRED_VERDICT_CODE(POLICY_CODE_NO_CTX);
	max = bpf_map_lookup_elem(&allow, &ctx.requester);
	if (!max || (ctx.req_access & ~*max))
		return SACRED_VERDICT_REFUSE | SACRED_VERDICT_CODE(NOT_LISTED);
	return SACRED_VERDICT_GRANT_EXCLUSIVE;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
