/* SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause */
/*
 * policy.h - what every acceptChange program of examples/policies/ needs.
 *
 * A region whose policy is "bpf" runs its program, a socket filter
 * (BPF_PROG_TYPE_SOCKET_FILTER), over a buffer holding one struct
 * sacred_policy_ctx (include/uapi/linux/sacred.h). policy_ctx() copies it
 * out; the program returns a SACRED_VERDICT_*. Build with
 *   clang -O2 -g -target bpf -Iinclude/uapi -c FILE.bpf.c -o FILE.bpf.o
 * (make does), and give it to a region with
 *   sacred region set MEM/ID policy bpf prog FILE.bpf.o
 */
#ifndef _SACRED_POLICY_H
#define _SACRED_POLICY_H

#include <linux/bpf.h>
#include <linux/sacred.h>
#include <bpf/bpf_helpers.h>

/* The program's refusal code when the context cannot be read. */
#define POLICY_CODE_NO_CTX	0xffff

#define POLICY_WRITE_BITS	(SACRED_ACCESS_WRITE | SACRED_ACCESS_ATOMIC)

/*
 * Copy the request's context out of @skb. A module newer than this
 * program may pass a longer one (ctx.size): the fields known here are the
 * first ones, and they mean the same.
 */
static __always_inline int policy_ctx(struct __sk_buff *skb,
				      struct sacred_policy_ctx *ctx)
{
	if (bpf_skb_load_bytes(skb, 0, ctx, sizeof(*ctx)))
		return -1;
	if (ctx->version < SACRED_POLICY_CTX_VERSION ||
	    ctx->size < sizeof(*ctx))
		return -1;
	return 0;
}

#endif /* _SACRED_POLICY_H */
