/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * libsacred - Byzantine tolerance: process keys (Ed25519) and
 * non-equivocating broadcast.
 *
 * Part of the public API: <sacred.h> includes every layer's header;
 * this one may be included alone (<sacred/bz.h>).
 */
#ifndef _SACRED_BZ_H
#define _SACRED_BZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/sacred.h>

#include "rmem.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * ----------------------------------------------------------------------
 * Byzantine tolerance (lib/neb.c): process keys (Ed25519, libsodium) and
 * non-equivocating broadcast over single-writer (swmr) regions.
 * ----------------------------------------------------------------------
 */

#define SACRED_BZ_MAX_PROCS	16
#define SACRED_BZ_SIG_LEN	64

struct sacred_bz_keys;

/**
 * sacred_bz_keygen() - write process @i's key pair into @dir:
 * ed25519-I.key (0600) and ed25519-I.pub; never overwrites
 */
int sacred_bz_keygen(const char *dir, unsigned int i);

/**
 * sacred_bz_keys_load() - this process's secret key and all public keys
 *
 * Return: 0; -EINVAL (bad file, mismatched pair); -ENOENT; -ENOMEM.
 */
int sacred_bz_keys_load(const char *dir, unsigned int nr_procs,
			unsigned int me, struct sacred_bz_keys **keys);

/** sacred_bz_keys_free() - wipe and free @keys; NULL is ok */
void sacred_bz_keys_free(struct sacred_bz_keys *keys);

/** sacred_bz_me() - the process @keys belong to */
unsigned int sacred_bz_me(const struct sacred_bz_keys *keys);

/** sacred_bz_nr_procs() - the number of processes @keys has keys of */
unsigned int sacred_bz_nr_procs(const struct sacred_bz_keys *keys);

/** sacred_bz_sign() - sign @msg under @domain: SACRED_BZ_SIG_LEN bytes */
void sacred_bz_sign(const struct sacred_bz_keys *keys, const char *domain,
		    const void *msg, size_t len, uint8_t *sig);

/** sacred_bz_verify() - process @who's signature of @msg under @domain */
bool sacred_bz_verify(const struct sacred_bz_keys *keys, unsigned int who,
		      const char *domain, const void *msg, size_t len,
		      const uint8_t *sig);

struct sacred_neb;

/**
 * struct sacred_neb_attr - a non-equivocating broadcast
 * @rm: the replicated memory; must outlive the broadcast
 * @keys: the processes' keys; must outlive it (keys->nr_procs processes)
 * @base_region: process i owns region @base_region + i on every memory:
 *	policy swmr, i the writer, the others readers; each holds
 *	nr_msgs * (nr_procs + 1) slots of two cells of
 *	(msg_max + 112) bytes, rounded up to 8
 * @nr_msgs: messages each process may broadcast
 * @msg_max: the largest message
 */
struct sacred_neb_attr {
	struct sacred_rmem *rm;
	const struct sacred_bz_keys *keys;
	uint32_t base_region;
	unsigned int nr_msgs;
	size_t msg_max;
};

/** sacred_neb_open() - join a non-equivocating broadcast */
int sacred_neb_open(const struct sacred_neb_attr *attr,
		    struct sacred_neb **n);

/** sacred_neb_close() - free @n; NULL is ok */
void sacred_neb_close(struct sacred_neb *n);

/**
 * sacred_neb_broadcast() - sign and publish message @k
 *
 * Return: 0 (the same message again completes a failed broadcast);
 * -EEXIST (another message @k was broadcast); -EMSGSIZE, -EINVAL;
 * replicated-memory errors.
 */
int sacred_neb_broadcast(struct sacred_neb *n, uint64_t k, const void *msg,
			 size_t len);

/**
 * sacred_neb_deliver() - deliver process @p's message @k if no correct
 * process can deliver another
 *
 * Return: 0 delivered; -EAGAIN nothing valid yet; -EPROTO @p equivocated;
 * -ENOSPC, -EINVAL; replicated-memory errors.
 */
int sacred_neb_deliver(struct sacred_neb *n, unsigned int p, uint64_t k,
		       void *msg, size_t max, size_t *len);

/**
 * enum sacred_neb_misbehave - what sacred_neb_misbehave() does
 * @SACRED_NEB_EQUIVOCATE: sign another message @k over the one broadcast
 * @SACRED_NEB_GARBAGE: random bytes as message @k
 * @SACRED_NEB_FORGE: a copy of process @arg's message @k with a made-up
 *	signature
 * @SACRED_NEB_REPLAY: the signed record of message @arg as message @k
 */
enum sacred_neb_misbehave {
	SACRED_NEB_EQUIVOCATE = 1,
	SACRED_NEB_GARBAGE,
	SACRED_NEB_FORGE,
	SACRED_NEB_REPLAY,
};

/**
 * sacred_neb_misbehave() - act as a Byzantine process would, through this
 * process's own region: for test harnesses only
 */
int sacred_neb_misbehave(struct sacred_neb *n, int how, uint64_t k,
			 unsigned int arg, const void *msg, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* _SACRED_BZ_H */
