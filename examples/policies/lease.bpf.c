// SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause
/*
 * lease.bpf.c - write permission as a lease that expires unless renewed.
 *
 * A member asking for write gets it, exclusively, if nobody holds the
 * region's lease, if the lease has expired (its holder did not ask again
 * within lease_ns), or if it is the holder itself (a renewal: the lease
 * starts again). Otherwise the request is refused with code LEASE_HELD.
 * Asking for read or nothing is always granted, and gives the lease up
 * if the holder asks it.
 *
 * An expired lease is not taken away by itself: the program runs only
 * when someone asks. The next process to ask for write after the expiry
 * gets it, and the module revokes (and fences) the old holder before it
 * answers - so a holder that stopped renewing loses write exactly when
 * someone else needs it.
 *
 * Time is ctx.now_ns, the coarse monotonic clock: a lease is measured to
 * the tick (4 ms at HZ=250), fine for leases of tens of milliseconds and
 * more.
 *
 * Maps: "lease_cfg" (array, one u64: the lease in ns, 0 for the default
 * of 100 ms) is for a control process to set; "leases" (hash, region id
 * -> holder and start) is the program's own state. The state is updated
 * when the program accepts; if the module then fails to apply the change
 * (SACRED_ST_FAILED), the map names a holder that holds nothing, and the
 * next request after the lease runs out repairs it.
 */
#include "policy.h"

#define LEASE_HELD		1
#define LEASE_DEFAULT_NS	100000000ULL

struct lease {
	__u32 holder;
	__u32 pad;
	__u64 start_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lease_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct lease);
} leases SEC(".maps");

SEC("socket")
int lease(struct __sk_buff *skb)
{
	struct sacred_policy_ctx ctx;
	struct lease *cur, next = {};
	__u64 len = LEASE_DEFAULT_NS;
	__u32 zero = 0;
	__u64 *cfg;

	if (policy_ctx(skb, &ctx))
		return SACRED_VERDICT_REFUSE |
		       SACRED_VERDICT_CODE(POLICY_CODE_NO_CTX);
	cfg = bpf_map_lookup_elem(&lease_cfg, &zero);
	if (cfg && *cfg)
		len = *cfg;
	cur = bpf_map_lookup_elem(&leases, &ctx.region_id);

	if (!(ctx.req_access & POLICY_WRITE_BITS)) {
		if (cur && cur->holder == ctx.requester)
			bpf_map_delete_elem(&leases, &ctx.region_id);
		return SACRED_VERDICT_GRANT;
	}
	if (cur && cur->holder != ctx.requester &&
	    ctx.now_ns - cur->start_ns < len)
		return SACRED_VERDICT_REFUSE | SACRED_VERDICT_CODE(LEASE_HELD);

	next.holder = ctx.requester;
	next.start_ns = ctx.now_ns;
	bpf_map_update_elem(&leases, &ctx.region_id, &next, BPF_ANY);
	return SACRED_VERDICT_GRANT_EXCLUSIVE;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
