/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sacred - acceptChange policies (policy.c): what a change may do; perm.c
 * applies it.
 */
#ifndef _SACRED_POLICY_H
#define _SACRED_POLICY_H

#include "core.h"

/**
 * struct sacred_policy_ops - an acceptChange policy
 * @name: as the CLI spells it
 * @initial: access of a process entering the ACL with @max
 * @acl_is_access: nothing changes access at runtime: a process that stays
 *	in a new ACL holds @initial of its new max, as one entering it
 * @decide: 0 with every ACL entry's @next set, or a refuse reason
 * @undoable: @decide changes nothing but the ACL's @next and the region's
 *	ballot: sacred_policy_undo() takes a decision back
 * @takes_write: true if @decide would accept the change by taking write
 *	from every other member, told without deciding; NULL where the
 *	policy never does (sacred_policy_takes_write())
 */
struct sacred_policy_ops {
	const char *name;
	u32 (*initial)(u32 max);
	bool acl_is_access;
	u32 (*decide)(struct sacred_region *region,
		      const struct sacred_perm_change *chg);
	bool undoable;
	bool (*takes_write)(struct sacred_region *region,
			    const struct sacred_perm_change *chg);
};

bool sacred_access_valid(u32 access);
bool sacred_policy_args_valid(u8 policy, const struct sacred_perm_change *chg);
const struct sacred_policy_ops *sacred_policy(u8 policy);
u32 sacred_policy_decide(struct sacred_region *region,
			 const struct sacred_perm_change *chg);
bool sacred_policy_takes_write(struct sacred_region *region,
			       const struct sacred_perm_change *chg);
bool sacred_policy_undoable(u8 policy);
void sacred_policy_undo(struct sacred_region *region, u64 ballot);

#endif /* _SACRED_POLICY_H */
