/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sacred - the "bpf" policy (bpf.c): an eBPF program decides.
 */
#ifndef _SACRED_BPF_H
#define _SACRED_BPF_H

#include "core.h"

struct sacred_region_prog;
struct sacred_region_prog *sacred_bpf_get(u32 fd,
					  struct netlink_ext_ack *extack);
void sacred_bpf_put(struct sacred_region_prog *rp);
u32 sacred_bpf_prog_id(const struct sacred_region_prog *rp);
u32 sacred_bpf_decide(struct sacred_region *region,
		      const struct sacred_perm_change *chg);

#endif /* _SACRED_BPF_H */
