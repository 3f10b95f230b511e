/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * libsacred - the public API. This header includes every layer's; each
 * may also be included alone (<sacred/conn.h> and so on). Bottom up:
 *
 *   sacred/ctrl.h       control: sacred.ko's generic netlink family
 *                       "sacred" (lib/ctrl.c, libnl-genl-3): instances,
 *                       regions, ACLs, changes, events
 *   sacred/conn.h       data path: one RC connection to one memory
 *                       instance (lib/conn.c, conn_sync.c, conn_io.c,
 *                       conn_reconnect.c): READ, WRITE, atomics,
 *                       changePermission; synchronous and asynchronous
 *   sacred/rmem.h       replicated memory: the same regions on m memories
 *                       used as one (lib/rmem.c)
 *   sacred/prims.h      primitives: cells, slots, the shared state table
 *                       and registers (lib/cell.c, slots.c, sst.c,
 *                       register.c)
 *   sacred/consensus.h  agreement: Protected Memory Paxos and Disk Paxos
 *                       (lib/pmp.c); Cheap Quorum with its robust backup
 *                       (lib/cheapq.c), and its old names
 *   sacred/log.h        the replicated log with fail-over (lib/log.c)
 *   sacred/bz.h         Byzantine tolerance: Ed25519 keys,
 *                       non-equivocating broadcast (lib/neb.c)
 *
 * Handles are opaque; every call returns 0 or a negative errno. When the
 * kernel attached an extended-ack message to an error,
 * sacred_ctrl_errmsg() returns it until the next call.
 */
#ifndef _SACRED_H
#define _SACRED_H

#include "sacred/ctrl.h"
#include "sacred/conn.h"
#include "sacred/rmem.h"
#include "sacred/prims.h"
#include "sacred/consensus.h"
#include "sacred/log.h"
#include "sacred/bz.h"

#endif /* _SACRED_H */
