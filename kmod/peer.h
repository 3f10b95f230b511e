/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sacred - peers: the processes an instance knows (peer.c).
 */
#ifndef _SACRED_PEER_H
#define _SACRED_PEER_H

#include "core.h"

struct sacred_peer *sacred_peer_get(struct sacred_mem *mem, u32 process_id,
				    bool create);
struct sacred_ep *sacred_peer_ep(struct sacred_peer *peer);
void sacred_mem_peers_free(struct sacred_mem *mem);
int sacred_peer_fill(struct sk_buff *skb, struct sacred_peer *peer);

#endif /* _SACRED_PEER_H */
