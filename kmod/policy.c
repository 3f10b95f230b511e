// SPDX-License-Identifier: GPL-2.0
/*
 * sacred - acceptChange policies.
 *
 * This file owns the decision half of changePermission: one struct
 * sacred_policy_ops per policy, in one table, so a new policy is one more
 * struct. A policy never touches verbs: it reads the region's ACL (every
 * entry's @cur, bounded by @max) and writes the access each member should
 * hold afterwards into @next; perm.c then applies the difference, revokes
 * before grants. A refusal returns a reason and leaves every @next equal
 * to @cur, so a refused request changes nothing.
 *
 *   initial(max)   what a member holds when it enters the ACL (and, where
 *                  acl_is_access - nothing changes access at runtime -
 *                  when it stays in a new one)
 *   decide(r, c)   0, or an &enum sacred_refuse_reason
 *   undoable       decide() writes nothing but the ACL's @next and the
 *                  region's ballot: perm.c's CQ path may decide, find
 *                  that the change needs a fence, and take the decision
 *                  back (sacred_policy_undo()) for the work path to make
 *                  again; every built-in policy is, a program is not
 *   takes_write(r, c)  would decide() accept by taking write from every
 *                  other member? Told without deciding, so that the CQ
 *                  path sends a change that would fence a connected
 *                  writer to the work path at once (exclusive-writer and
 *                  fenced say; the others never take write that way)
 *
 * The policies (Documentation/policies.rst has the why):
 *   static            ACL = permissions; no runtime change
 *   exclusive-writer  asking for write demotes every other writer to
 *                     read first; always accepted within the ACL
 *   swmr              the ACL's writer writes, the rest read; no change
 *   revoke-only       any member may take write away from the target;
 *                     nothing is ever granted back
 *   fenced            exclusive-writer, but a grant of write needs a
 *                     ballot above the highest granted so far
 *   bpf               the region's eBPF program decides (bpf.c)
 *
 * Context: mem->lock held, or mem->cq_lock (perm.c's CQ path: a
 * decision never sleeps).
 */
#include "bpf.h"
#include "policy.h"

/*
 * Every @next is @cur again, and, in the same pass over the ACL, the
 * region's writers are counted for the "bpf" policy's context: before a
 * decision (one walk, not two), and after a refusal (the count is the
 * same then).
 */
static void sacred_policy_reset(struct sacred_region *region)
{
	struct sacred_acl_entry *e;
	unsigned long pid;
	u32 nr_writers = 0, writer = 0;

	xa_for_each(&region->acl, pid, e) {
		e->next = e->cur;
		if ((e->cur & SACRED_ACCESS_WRITE) && !nr_writers++)
			writer = pid;
	}
	region->nr_writers = nr_writers;
	region->writer = writer;
}

static u32 sacred_policy_max(u32 max)
{
	return max;
}

static u32 sacred_policy_read(u32 max)
{
	return max & SACRED_ACCESS_READ;
}

static u32 sacred_policy_refuse_static(struct sacred_region *region,
				       const struct sacred_perm_change *chg)
{
	return SACRED_REFUSE_STATIC;
}

static u32 sacred_policy_refuse_swmr(struct sacred_region *region,
				     const struct sacred_perm_change *chg)
{
	return SACRED_REFUSE_SWMR;
}

/* Is @chg's requester a member whose max covers what it asks for? */
static struct sacred_acl_entry *
sacred_policy_member(struct sacred_region *region,
		     const struct sacred_perm_change *chg)
{
	struct sacred_acl_entry *self = xa_load(&region->acl, chg->requester);

	return self && !(chg->access & ~self->max) ? self : NULL;
}

/*
 * The requester gets what it asks for within its ACL entry; if that
 * includes write, every other writer keeps only read.
 */
static u32 sacred_policy_exclusive(struct sacred_region *region,
				   const struct sacred_perm_change *chg)
{
	struct sacred_acl_entry *self, *e;
	unsigned long pid;

	self = sacred_policy_member(region, chg);
	if (!self)
		return SACRED_REFUSE_NOT_MEMBER;

	if (chg->access & SACRED_WRITE_BITS)
		xa_for_each(&region->acl, pid, e)
			if (pid != chg->requester)
				e->next &= ~SACRED_WRITE_BITS;
	self->next = chg->access;
	return SACRED_REFUSE_NONE;
}

static bool sacred_policy_exclusive_takes(struct sacred_region *region,
					  const struct sacred_perm_change *chg)
{
	return (chg->access & SACRED_WRITE_BITS) &&
	       sacred_policy_member(region, chg);
}

static bool sacred_policy_fenced_takes(struct sacred_region *region,
				       const struct sacred_perm_change *chg)
{
	return chg->ballot > region->ballot &&
	       sacred_policy_exclusive_takes(region, chg);
}

static u32 sacred_policy_fenced(struct sacred_region *region,
				const struct sacred_perm_change *chg)
{
	u32 reason;

	if ((chg->access & SACRED_WRITE_BITS) && chg->ballot <= region->ballot)
		return SACRED_REFUSE_STALE_BALLOT;
	reason = sacred_policy_exclusive(region, chg);
	if (reason == SACRED_REFUSE_NONE && (chg->access & SACRED_WRITE_BITS))
		region->ballot = chg->ballot;
	return reason;
}

/*
 * A member may only take write away from the target (itself included): the
 * request's access must be 0; anything else would be a grant.
 */
static u32 sacred_policy_revoke_only(struct sacred_region *region,
				     const struct sacred_perm_change *chg)
{
	struct sacred_acl_entry *self, *target;

	self = xa_load(&region->acl, chg->requester);
	if (!self)
		return SACRED_REFUSE_NOT_MEMBER;
	if (chg->access)
		return SACRED_REFUSE_NO_GRANT;
	target = xa_load(&region->acl, chg->target);
	if (!target)
		return SACRED_REFUSE_NOT_MEMBER;
	target->next &= ~SACRED_WRITE_BITS;
	return SACRED_REFUSE_NONE;
}

static const struct sacred_policy_ops sacred_policies[] = {
	[SACRED_POLICY_STATIC] = {
		.name		= "static",
		.undoable	= true,
		.initial	= sacred_policy_max,
		.acl_is_access	= true,
		.decide		= sacred_policy_refuse_static,
	},
	[SACRED_POLICY_EXCLUSIVE_WRITER] = {
		.name		= "exclusive-writer",
		.undoable	= true,
		.initial	= sacred_policy_read,
		.decide		= sacred_policy_exclusive,
		.takes_write	= sacred_policy_exclusive_takes,
	},
	[SACRED_POLICY_SWMR] = {
		.name		= "swmr",
		.undoable	= true,
		.initial	= sacred_policy_max,
		.acl_is_access	= true,
		.decide		= sacred_policy_refuse_swmr,
	},
	[SACRED_POLICY_REVOKE_ONLY] = {
		.name		= "revoke-only",
		.undoable	= true,
		.initial	= sacred_policy_max,
		.decide		= sacred_policy_revoke_only,
	},
	[SACRED_POLICY_FENCED] = {
		.name		= "fenced",
		.undoable	= true,
		.initial	= sacred_policy_read,
		.decide		= sacred_policy_fenced,
		.takes_write	= sacred_policy_fenced_takes,
	},
	[SACRED_POLICY_BPF] = {
		.name		= "bpf",
		.initial	= sacred_policy_read,
		.decide		= sacred_bpf_decide,
	},
};

static_assert(ARRAY_SIZE(sacred_policies) == __SACRED_POLICY_MAX);

/**
 * sacred_access_valid() - is @access one of the levels an ACL can hold?
 * @access: &enum sacred_access bits, from netlink or from the wire
 *
 * Return: true for none, read, read-write and read-write-atomic.
 */
bool sacred_access_valid(u32 access)
{
	return access == 0 || access == SACRED_ACCESS_READ ||
	       access == (SACRED_ACCESS_READ | SACRED_ACCESS_WRITE) ||
	       access == SACRED_ACCESS_ALL;
}

/**
 * sacred_policy() - the operations of a policy
 * @policy: &enum sacred_policy, already validated
 *
 * Return: the policy's operations.
 */
const struct sacred_policy_ops *sacred_policy(u8 policy)
{
	return &sacred_policies[policy];
}

/**
 * sacred_policy_args_valid() - does a request carry only what its policy
 * reads?
 * @policy: the region's policy
 * @chg: the request
 *
 * A ballot is for fenced regions, a target for revoke-only ones, both for
 * bpf ones (the program reads them); elsewhere both must be 0 (the wire
 * says so), so that a later meaning for them cannot be taken for garbage
 * sent today.
 *
 * Return: true if @chg is well formed for @policy.
 */
bool sacred_policy_args_valid(u8 policy, const struct sacred_perm_change *chg)
{
	if (policy == SACRED_POLICY_BPF)
		return true;
	return (!chg->ballot || policy == SACRED_POLICY_FENCED) &&
	       (!chg->target || policy == SACRED_POLICY_REVOKE_ONLY);
}

/**
 * sacred_policy_decide() - run a region's policy on a request
 * @region: the region
 * @chg: the request
 *
 * Context: mem->lock or mem->cq_lock held.
 * Return: 0 with every ACL entry's @next set, or a refuse reason with
 * every @next equal to @cur.
 */
u32 sacred_policy_decide(struct sacred_region *region,
			 const struct sacred_perm_change *chg)
{
	u32 reason;

	sacred_policy_reset(region);
	reason = sacred_policies[region->policy].decide(region, chg);
	if (reason)
		sacred_policy_reset(region);
	return reason;
}

/**
 * sacred_policy_takes_write() - would @chg take write from all others?
 * @region: the region
 * @chg: the request
 *
 * Answered without deciding: true only where the region's policy, if it
 * decided now, would accept @chg and take write from everyone else (the
 * exclusive-writer rules). perm.c's CQ path asks before it decides, so
 * that a request which would fence a connected writer goes to the work
 * path without a decision made and taken back in the receive completion.
 *
 * Context: mem->lock or mem->cq_lock held.
 * Return: true if it would; false if not, or if the policy does not say.
 */
bool sacred_policy_takes_write(struct sacred_region *region,
			       const struct sacred_perm_change *chg)
{
	const struct sacred_policy_ops *pol = &sacred_policies[region->policy];

	return pol->takes_write && pol->takes_write(region, chg);
}

/**
 * sacred_policy_undoable() - may a decision of @policy be taken back?
 * @policy: &enum sacred_policy
 *
 * Return: true if its decide() writes nothing but the ACL's @next and the
 * region's ballot (sacred_policy_undo()).
 */
bool sacred_policy_undoable(u8 policy)
{
	return sacred_policies[policy].undoable;
}

/**
 * sacred_policy_undo() - take back a decision sacred_policy_decide() made
 * @region: the region, its policy undoable (sacred_policy_undoable())
 * @ballot: the region's ballot before the decision
 *
 * Context: the lock held since the decision (mem->lock or mem->cq_lock).
 */
void sacred_policy_undo(struct sacred_region *region, u64 ballot)
{
	region->ballot = ballot;
	sacred_policy_reset(region);
}
