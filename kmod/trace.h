/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sacred - tracepoints: the steps of a request and of a permission change,
 * for measuring where a switch spends its time and for seeing which path
 * answered a request, without patching the module. trace.c instantiates
 * them; Documentation/permission-switch.rst ("Tracepoints") lists them and
 * scripts/switch-steps turns a trace into a table of steps.
 *
 * A request is named by its instance, its process, its connection's QP
 * number and its receive slot: the slot is not reused before its reply is
 * posted.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sacred

#if !defined(_SACRED_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SACRED_TRACE_H

#include <linux/tracepoint.h>
#include "core.h"

DECLARE_EVENT_CLASS(sacred_request_class,
		    TP_PROTO(const struct sacred_peer *peer, u32 qpn,
			     unsigned int slot),
		    TP_ARGS(peer, qpn, slot),
		    TP_STRUCT__entry(__field(u32, mem)
				     __field(u32, process)
				     __field(u32, qpn)
				     __field(u32, slot)),
		    TP_fast_assign(__entry->mem = peer->mem->id;
				   __entry->process = peer->process_id;
				   __entry->qpn = qpn;
				   __entry->slot = slot;),
		    TP_printk("mem=%u process=%u qpn=%u slot=%u",
			      __entry->mem, __entry->process, __entry->qpn,
			      __entry->slot));

#define SACRED_REQUEST_EVENT(name)					\
	DEFINE_EVENT(sacred_request_class, name,			\
		     TP_PROTO(const struct sacred_peer *peer, u32 qpn,	\
			      unsigned int slot),			\
		     TP_ARGS(peer, qpn, slot))

/* A request's receive completed (softirq, or the poller thread). */
SACRED_REQUEST_EVENT(sacred_request_recv);
/* It was left to the work path: its work item is queued or running. */
SACRED_REQUEST_EVENT(sacred_request_queue);
/* The work item took it up. */
SACRED_REQUEST_EVENT(sacred_request_work);
/* The work path is done with it: the change's end ran, mem->lock is free. */
SACRED_REQUEST_EVENT(sacred_request_done);

/* Its reply was posted; @in_cq: from the receive completion. */
TRACE_EVENT(sacred_request_reply,
	    TP_PROTO(const struct sacred_peer *peer, u32 qpn,
		     unsigned int slot, u32 status, bool in_cq),
	    TP_ARGS(peer, qpn, slot, status, in_cq),
	    TP_STRUCT__entry(__field(u32, mem)
			     __field(u32, process)
			     __field(u32, qpn)
			     __field(u32, slot)
			     __field(u32, status)
			     __field(bool, in_cq)),
	    TP_fast_assign(__entry->mem = peer->mem->id;
			   __entry->process = peer->process_id;
			   __entry->qpn = qpn;
			   __entry->slot = slot;
			   __entry->status = status;
			   __entry->in_cq = in_cq;),
	    TP_printk("mem=%u process=%u qpn=%u slot=%u status=%u path=%s",
		      __entry->mem, __entry->process, __entry->qpn,
		      __entry->slot, __entry->status,
		      __entry->in_cq ? "cq" : "work"));

/*
 * A changePermission was decided: @reason 0 accepted, else the policy's
 * refusal; @in_cq: in the receive completion. A decision the CQ path
 * takes back for the work path (perm.c) is traced twice.
 */
TRACE_EVENT(sacred_change_decide,
	    TP_PROTO(const struct sacred_region *region,
		     const struct sacred_perm_change *chg, u32 reason,
		     bool in_cq),
	    TP_ARGS(region, chg, reason, in_cq),
	    TP_STRUCT__entry(__field(u32, mem)
			     __field(u32, region)
			     __field(u32, epoch)
			     __field(u32, requester)
			     __field(u32, access)
			     __field(u32, target)
			     __field(u64, ballot)
			     __field(u32, reason)
			     __field(bool, in_cq)),
	    TP_fast_assign(__entry->mem = region->mem->id;
			   __entry->region = region->id;
			   __entry->epoch = region->epoch;
			   __entry->requester = chg->requester;
			   __entry->access = chg->access;
			   __entry->target = chg->target;
			   __entry->ballot = chg->ballot;
			   __entry->reason = reason;
			   __entry->in_cq = in_cq;),
	    TP_printk("mem=%u region=%u epoch=%u requester=%u access=%#x target=%u ballot=%llu reason=%u path=%s",
		      __entry->mem, __entry->region, __entry->epoch,
		      __entry->requester, __entry->access, __entry->target,
		      __entry->ballot, __entry->reason,
		      __entry->in_cq ? "cq" : "work"));

/*
 * The work path's losers: @losers MRs lose access, @invalidated of them
 * by a LOCAL_INV that completed; the rest are replaced after the reply.
 */
TRACE_EVENT(sacred_change_invalidate,
	    TP_PROTO(const struct sacred_region *region, unsigned int losers,
		     unsigned int invalidated),
	    TP_ARGS(region, losers, invalidated),
	    TP_STRUCT__entry(__field(u32, mem)
			     __field(u32, region)
			     __field(u32, losers)
			     __field(u32, invalidated)),
	    TP_fast_assign(__entry->mem = region->mem->id;
			   __entry->region = region->id;
			   __entry->losers = losers;
			   __entry->invalidated = invalidated;),
	    TP_printk("mem=%u region=%u losers=%u invalidated=%u",
		      __entry->mem, __entry->region, __entry->losers,
		      __entry->invalidated));

/*
 * A grant's REG_MR (behind a LOCAL_INV of its old key when it had one)
 * was posted on its process's QP (@err 0), or the QP refused it; @mapped:
 * the MR's page list was set first (its first registration).
 */
TRACE_EVENT(sacred_grant_register,
	    TP_PROTO(const struct sacred_grant *grant, u32 access,
		     bool mapped, int err),
	    TP_ARGS(grant, access, mapped, err),
	    TP_STRUCT__entry(__field(u32, mem)
			     __field(u32, region)
			     __field(u32, process)
			     __field(u32, access)
			     __field(bool, mapped)
			     __field(int, err)),
	    TP_fast_assign(__entry->mem = grant->region->mem->id;
			   __entry->region = grant->region->id;
			   __entry->process = grant->peer->process_id;
			   __entry->access = access;
			   __entry->mapped = mapped;
			   __entry->err = err;),
	    TP_printk("mem=%u region=%u process=%u access=%#x mapped=%d err=%d",
		      __entry->mem, __entry->region, __entry->process,
		      __entry->access, __entry->mapped, __entry->err));

/*
 * A decided change is over and announced (either path, or netlink):
 * @err 0, or why it was not applied in full.
 */
TRACE_EVENT(sacred_change_end,
	    TP_PROTO(const struct sacred_region *region,
		     const struct sacred_perm_event *ev),
	    TP_ARGS(region, ev),
	    TP_STRUCT__entry(__field(u32, mem)
			     __field(u32, region)
			     __field(u32, epoch)
			     __field(u32, requester)
			     __field(u32, reason)
			     __field(int, err)),
	    TP_fast_assign(__entry->mem = region->mem->id;
			   __entry->region = region->id;
			   __entry->epoch = ev->epoch;
			   __entry->requester = ev->chg.requester;
			   __entry->reason = ev->reason;
			   __entry->err = ev->err;),
	    TP_printk("mem=%u region=%u epoch=%u requester=%u reason=%u err=%d",
		      __entry->mem, __entry->region, __entry->epoch,
		      __entry->requester, __entry->reason, __entry->err));

DECLARE_EVENT_CLASS(sacred_fence_class,
		    TP_PROTO(const struct sacred_peer *peer, u32 qpn),
		    TP_ARGS(peer, qpn),
		    TP_STRUCT__entry(__field(u32, mem)
				     __field(u32, process)
				     __field(u32, qpn)),
		    TP_fast_assign(__entry->mem = peer->mem->id;
				   __entry->process = peer->process_id;
				   __entry->qpn = qpn;),
		    TP_printk("mem=%u process=%u qpn=%u",
			      __entry->mem, __entry->process, __entry->qpn));

/* A connection's QP was moved to the error state; its drain marker is next. */
DEFINE_EVENT(sacred_fence_class, sacred_fence_start,
	     TP_PROTO(const struct sacred_peer *peer, u32 qpn),
	     TP_ARGS(peer, qpn));

/* Its drain marker completed: no packet of the QP is placed any more. */
DEFINE_EVENT(sacred_fence_class, sacred_fence_end,
	     TP_PROTO(const struct sacred_peer *peer, u32 qpn),
	     TP_ARGS(peer, qpn));

#endif /* _SACRED_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
