// SPDX-License-Identifier: GPL-2.0
/*
 * libsacred - the exported functions that only keep an old name.
 *
 * This file owns the ABI of renamed calls: each old name is a function of
 * the version node it was first exported in, calling the new one. Nothing
 * else belongs here. Remove an entry only with the major version.
 *
 *   sacred_cq_*   Cheap Quorum (lib/cheapq.c) before LIBSACRED_0.3
 */
#define SACRED_NO_OLD_NAMES
#include "sacred.h"

int sacred_cq_setup(struct sacred_ctrl *ctrl, const uint32_t *mem_ids,
		    unsigned int nr_mems, const struct sacred_cheapq_attr *attr,
		    unsigned int nr_procs)
{
	return sacred_cheapq_setup(ctrl, mem_ids, nr_mems, attr, nr_procs);
}

int sacred_cq_open(const struct sacred_cheapq_attr *attr,
		   struct sacred_cheapq **cheapq)
{
	return sacred_cheapq_open(attr, cheapq);
}

void sacred_cq_close(struct sacred_cheapq *cheapq)
{
	sacred_cheapq_close(cheapq);
}

int sacred_cq_propose(struct sacred_cheapq *cheapq, const void *v, size_t len,
		      void *out, size_t max, size_t *out_len)
{
	return sacred_cheapq_propose(cheapq, v, len, out, max, out_len);
}

int sacred_cq_help(struct sacred_cheapq *cheapq, int timeout_ms)
{
	return sacred_cheapq_help(cheapq, timeout_ms);
}

int sacred_cq_lead_value(struct sacred_cheapq *cheapq, const void *v,
			 size_t len)
{
	return sacred_cheapq_lead_value(cheapq, v, len);
}

int sacred_cq_misbehave(struct sacred_cheapq *cheapq, int how, const void *v,
			size_t len)
{
	return sacred_cheapq_misbehave(cheapq, how, v, len);
}

void sacred_cq_stats(const struct sacred_cheapq *cheapq,
		     struct sacred_cheapq_stats *st)
{
	sacred_cheapq_stats(cheapq, st);
}
