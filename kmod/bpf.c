// SPDX-License-Identifier: GPL-2.0
/*
 * sacred - programmable acceptChange: the "bpf" policy.
 *
 * This file owns struct sacred_region_prog, a region's eBPF program with
 * the buffer it runs over: taking the program from a file descriptor,
 * running it on a request, and turning its verdict into the ACL's @next,
 * as the built-in policies of policy.c do. The program only decides;
 * perm.c performs the switch, revocations first, with the guarantee of
 * every policy.
 *
 * Program type
 * ------------
 * The verifier knows a program's context from the kernel's own table of
 * program types, which a module cannot extend on 6.1 or 6.12. Of the types
 * a module can run, BPF_PROG_TYPE_SOCKET_FILTER fits a decision best:
 *
 *   - its context is an sk_buff; the module builds one of its own that
 *     holds a struct sacred_policy_ctx, and the program reads it with
 *     bpf_skb_load_bytes(), bounds-checked against the buffer's length;
 *   - it cannot write the buffer or reach anything else of the kernel,
 *     and its helpers include the map helpers and bpf_ktime_get_ns(), so
 *     a control process can steer it through maps;
 *   - the context's clock is the coarse one (the tick's resolution):
 *     reading it touches no clock hardware, which on a guest whose
 *     clocksource is emulated (HPET under TCG) costs more than the rest
 *     of the decision; a program that needs a finer clock reads it with
 *     bpf_ktime_get_ns() and pays for it then;
 *   - the verifier bounds it: a decision always ends;
 *   - the kernel runs such programs in softirq (a socket's receive) and
 *     from process context (sk_filter() on a send), with rcu_read_lock()
 *     and migration off: the module runs it in both - in a request's
 *     receive completion when perm.c's CQ path decides, else under
 *     mem->lock - and reads the return value as the verdict
 *     (include/uapi/linux/sacred.h);
 *   - the context is written straight into the skb's one buffer, which
 *     only decisions touch, under mem->lock or mem->cq_lock, which
 *     exclude each other (core.h): no copy per request.
 *
 * Loading a program needs the rights the kernel asks for (CAP_BPF for
 * maps and most helpers); giving it to a region needs CAP_NET_ADMIN, as
 * every change of a region does (GENL_ADMIN_PERM).
 *
 * Lifetime: region->prog holds a reference to the program
 * (bpf_prog_get_type()). It is replaced only under mem->lock, which
 * excludes the CQ path too, and every decision runs under mem->lock or
 * mem->cq_lock, so a request is decided wholly by the old program or
 * wholly by the new one; the replaced one is released after the lock is
 * dropped. Deleting the region (or the instance, or unloading the module)
 * releases it too.
 *
 * Context: sacred_bpf_decide() runs under mem->lock or mem->cq_lock.
 */
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/skbuff.h>
#include <linux/timekeeping.h>
#include "bpf.h"

/**
 * struct sacred_region_prog - a region's acceptChange program
 * @prog: the program, one reference held
 * @skb: the buffer it runs over: one struct sacred_policy_ctx
 */
struct sacred_region_prog {
	struct bpf_prog *prog;
	struct sk_buff *skb;
};

/**
 * sacred_bpf_get() - take a program from a file descriptor for a region
 * @fd: the caller's file descriptor of the program
 * @extack: where to say what is wrong with it
 *
 * Context: process context of the caller that owns @fd; no lock needed.
 * Return: the program with its buffer, or an ERR_PTR: -EBADF (not a
 * program), -EINVAL (not a socket filter program), -ENOMEM.
 */
struct sacred_region_prog *sacred_bpf_get(u32 fd,
					  struct netlink_ext_ack *extack)
{
	struct sacred_region_prog *rp;
	struct bpf_prog *prog;
	int ret;

	prog = bpf_prog_get_type(fd, BPF_PROG_TYPE_SOCKET_FILTER);
	if (IS_ERR(prog)) {
		ret = PTR_ERR(prog);
		if (ret == -EINVAL)
			NL_SET_ERR_MSG(extack,
				       "PROG_FD: not a socket filter program (BPF_PROG_TYPE_SOCKET_FILTER)");
		else
			NL_SET_ERR_MSG(extack,
				       "PROG_FD: not an eBPF program's file descriptor");
		return ERR_CAST(prog);
	}

	rp = kzalloc(sizeof(*rp), GFP_KERNEL);
	if (!rp) {
		ret = -ENOMEM;
		goto err_put;
	}
	rp->skb = alloc_skb(sizeof(struct sacred_policy_ctx), GFP_KERNEL);
	if (!rp->skb) {
		ret = -ENOMEM;
		goto err_free;
	}
	skb_put_zero(rp->skb, sizeof(struct sacred_policy_ctx));
	rp->prog = prog;
	return rp;

err_free:
	kfree(rp);
err_put:
	bpf_prog_put(prog);
	return ERR_PTR(ret);
}

/**
 * sacred_bpf_put() - release a program taken by sacred_bpf_get()
 * @rp: the program, or NULL
 *
 * Context: process context, no spinlock held (bpf_prog_put() may sleep
 * on the last reference's release path).
 */
void sacred_bpf_put(struct sacred_region_prog *rp)
{
	if (!rp)
		return;
	bpf_prog_put(rp->prog);
	kfree_skb(rp->skb);
	kfree(rp);
}

/**
 * sacred_bpf_prog_id() - the kernel's id of a region's program
 * @rp: the program
 *
 * Return: the id ``bpftool prog show id`` takes.
 */
u32 sacred_bpf_prog_id(const struct sacred_region_prog *rp)
{
	return rp->prog->aux->id;
}

/*
 * The context of @chg on @region, as the program sees it, written straight
 * into the buffer the program runs over. Every field is set (the struct
 * has no padding), so nothing of the previous request shows through. The
 * requester's and the target's ACL entries (or NULL) go to @self and
 * @target, for the verdict.
 */
static void sacred_bpf_ctx(struct sacred_region *region,
			   const struct sacred_perm_change *chg,
			   struct sacred_policy_ctx *ctx,
			   struct sacred_acl_entry **self,
			   struct sacred_acl_entry **target)
{
	/* fourteen __u32 and three __u64: no hole for old bytes to stay in */
	BUILD_BUG_ON(sizeof(*ctx) != 14 * sizeof(u32) + 3 * sizeof(u64));
	*self = xa_load(&region->acl, chg->requester);
	*target = chg->target ? xa_load(&region->acl, chg->target) : NULL;

	ctx->version = SACRED_POLICY_CTX_VERSION;
	ctx->size = sizeof(*ctx);
	ctx->mem_id = region->mem->id;
	ctx->region_id = region->id;
	ctx->requester = chg->requester;
	ctx->cur_access = *self ? (*self)->cur : 0;
	ctx->req_access = chg->access;
	ctx->max_access = *self ? (*self)->max : 0;
	ctx->target = chg->target;
	ctx->target_access = *target ? (*target)->cur : 0;
	ctx->nr_writers = region->nr_writers;
	ctx->writer = region->writer;
	ctx->epoch = region->epoch;
	ctx->from_admin = !chg->via;
	ctx->ballot = chg->ballot;
	ctx->region_ballot = region->ballot;
	ctx->now_ns = ktime_get_coarse_ns();
}

/*
 * Run the program on @chg; its return value is the verdict (@self and
 * @target as for sacred_bpf_ctx()). The skb's
 * control block is saved, zeroed and restored around a program that uses
 * it (bpf_prog_run_save_cb(), which also disables migration), so no state
 * passes from one decision to the next through it.
 */
static u32 sacred_bpf_run(struct sacred_region *region,
			  const struct sacred_perm_change *chg,
			  struct sacred_acl_entry **self,
			  struct sacred_acl_entry **target)
{
	struct sacred_region_prog *rp = region->prog;
	u32 verdict;

	sacred_bpf_ctx(region, chg, (struct sacred_policy_ctx *)rp->skb->data,
		       self, target);
	rcu_read_lock();
	verdict = bpf_prog_run_save_cb(rp->prog, rp->skb);
	rcu_read_unlock();
	return verdict;
}

/**
 * sacred_bpf_decide() - the decide operation of the "bpf" policy
 * @region: the region, its policy %SACRED_POLICY_BPF
 * @chg: the request
 *
 * Runs the region's program, then applies its verdict to the ACL's @next
 * as the built-in policies do. Grants stay within each member's ACL
 * maximum whatever the program says.
 *
 * Context: mem->lock held, or mem->cq_lock (perm.c's CQ path, in
 * softirq).
 * Return: 0, or an &enum sacred_refuse_reason (a program's own reason is
 * %SACRED_REFUSE_PROGRAM_BASE plus its code).
 */
u32 sacred_bpf_decide(struct sacred_region *region,
		      const struct sacred_perm_change *chg)
{
	struct sacred_acl_entry *self, *target, *e;
	unsigned long pid;
	u32 verdict;

	lockdep_assert(lockdep_is_held(&region->mem->lock) ||
		       lockdep_is_held(&region->mem->cq_lock));
	if (WARN_ON_ONCE(!region->prog))
		return SACRED_REFUSE_PROGRAM_VERDICT;

	verdict = sacred_bpf_run(region, chg, &self, &target);

	switch (verdict & SACRED_VERDICT_MASK) {
	case SACRED_VERDICT_REFUSE:
		return SACRED_REFUSE_PROGRAM_BASE +
		       SACRED_VERDICT_CODE_OF(verdict);
	case SACRED_VERDICT_GRANT:
	case SACRED_VERDICT_GRANT_EXCLUSIVE:
		if (!self || (chg->access & ~self->max))
			return SACRED_REFUSE_NOT_MEMBER;
		if ((verdict & SACRED_VERDICT_MASK) ==
		    SACRED_VERDICT_GRANT_EXCLUSIVE &&
		    (chg->access & SACRED_WRITE_BITS))
			xa_for_each(&region->acl, pid, e)
				if (pid != chg->requester)
					e->next &= ~SACRED_WRITE_BITS;
		self->next = chg->access;
		break;
	case SACRED_VERDICT_REVOKE_TARGET:
		if (chg->access)
			return SACRED_REFUSE_NO_GRANT;
		if (!self || !target)
			return SACRED_REFUSE_NOT_MEMBER;
		target->next &= ~SACRED_WRITE_BITS;
		break;
	default:
		return SACRED_REFUSE_PROGRAM_VERDICT;
	}
	if (chg->ballot > region->ballot)
		region->ballot = chg->ballot;
	return SACRED_REFUSE_NONE;
}
