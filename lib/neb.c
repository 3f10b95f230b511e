// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * libsacred - process keys (Ed25519, libsodium) and non-equivocating
 * broadcast over single-writer regions (Aguilera et al., "The Impact of
 * RDMA on Agreement", PODC'19, after Clement et al.).
 *
 * This file owns struct sacred_bz_keys (key files, signing, checking) and
 * struct sacred_neb.
 *
 * Keys: process i's key pair lives in DIR/ed25519-i.key (secret, 0600)
 * and DIR/ed25519-i.pub; a process loads its own secret key and every
 * public key. Signatures are Ed25519ph (pre-hashed) over a
 * domain-separated message; no cryptography is done here but libsodium's.
 *
 * Non-equivocating broadcast: process i owns region base + i on every
 * memory of a replicated memory, with policy swmr - the memory refuses
 * every other writer, Byzantine ones included. Its slots (lib/slots.c):
 *
 *   slot k                  i's own message number k (k < nr_msgs)
 *   slot nr_msgs + p * nr_msgs + k
 *                           the copy of p's message k that i saw
 *
 * broadcast(k, m): write (i, k, m, sig_i(i, k, m)) into own slot k.
 * deliver(p, k): read p's slot k - or, if nothing validly signed by p is
 * there, any process's copy of it (a sender that wipes its slot cannot
 * take back what a correct process delivered) - check p's signature;
 * write the record into own copy slot for (p, k) (a process copies only
 * the first record it saw, and writes it again until a write of it
 * reached a quorum); read every process's copy slot for (p, k); if any
 * holds a record validly signed by p for k with another message, p
 * equivocated: refuse. Else deliver m.
 *
 * Why two correct processes never deliver different messages for (p, k):
 * each writes its copy to a quorum before it reads the others'; of two such
 * processes, the one that reads second sees the other's copy (the writes
 * and reads go to quorums, and a process's steps are sequential). A
 * Byzantine process cannot write another's copy (the memory refuses) nor
 * forge p's signature; a sender that is correct never equivocates, so its
 * message is delivered by every correct process that tries.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <sodium.h>

#include "sacred.h"
#include "internal.h"

#define NEB_DOMAIN	"sacred-neb-v2"
/* Record header: sender, k, len, signature. */
#define NEB_HDR		(4 + 4 + 8 + 4 + 4 + crypto_sign_BYTES)

/**
 * struct sacred_bz_keys - this process's key pair and everyone's public
 * key
 */
struct sacred_bz_keys {
	unsigned int nr_procs;
	unsigned int me;
	uint8_t pk[SACRED_BZ_MAX_PROCS][crypto_sign_PUBLICKEYBYTES];
	uint8_t sk[crypto_sign_SECRETKEYBYTES];
};

static int bz_path(char *buf, size_t len, const char *dir, unsigned int i,
		   const char *ext)
{
	int n = snprintf(buf, len, "%s/ed25519-%u.%s", dir, i, ext);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int bz_write_file(const char *path, const void *data, size_t len,
			 mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	ssize_t n;
	int ret = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, data, len);
	if (n != (ssize_t)len)
		ret = n < 0 ? -errno : -EIO;
	if (close(fd) && !ret)
		ret = -errno;
	if (ret)
		unlink(path);
	return ret;
}

static int bz_read_file(const char *path, void *data, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	char extra;

	if (fd < 0)
		return -errno;
	n = read(fd, data, len);
	/* Exactly @len bytes: a truncated or padded key is refused. */
	if (n == (ssize_t)len && read(fd, &extra, 1) != 0)
		n = -1;
	close(fd);
	return n == (ssize_t)len ? 0 : -EINVAL;
}

/**
 * sacred_bz_keygen() - make process @i's Ed25519 key pair in @dir
 * @dir: an existing directory
 * @i: the process
 *
 * Writes DIR/ed25519-I.key (mode 0600) and DIR/ed25519-I.pub; refuses to
 * overwrite either.
 *
 * Return: 0; -EINVAL (@i beyond SACRED_BZ_MAX_PROCS); -EEXIST; -EIO when
 * libsodium cannot start; -ENAMETOOLONG; another errno.
 */
int sacred_bz_keygen(const char *dir, unsigned int i)
{
	uint8_t pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
	char path[4096];
	int ret;

	if (!dir || i >= SACRED_BZ_MAX_PROCS)
		return -EINVAL;
	if (sodium_init() < 0)
		return -EIO;
	crypto_sign_keypair(pk, sk);
	ret = bz_path(path, sizeof(path), dir, i, "key");
	if (!ret)
		ret = bz_write_file(path, sk, sizeof(sk), 0600);
	sodium_memzero(sk, sizeof(sk));
	if (ret)
		return ret;
	ret = bz_path(path, sizeof(path), dir, i, "pub");
	if (!ret)
		ret = bz_write_file(path, pk, sizeof(pk), 0644);
	if (ret) {
		bz_path(path, sizeof(path), dir, i, "key");
		unlink(path);
	}
	return ret;
}

/**
 * sacred_bz_keys_load() - load this process's secret key and every
 * process's public key from @dir
 * @dir: the directory of sacred_bz_keygen()
 * @nr_procs: processes 0 .. @nr_procs - 1
 * @me: this process
 * @keysp: on success, the keys (free with sacred_bz_keys_free())
 *
 * Return: 0; -EINVAL (bad arguments, a key file of the wrong size, a
 * secret key whose public half is not the public key's); -ENOENT;
 * -ENOMEM; -EIO when libsodium cannot start; -ENAMETOOLONG; another
 * errno.
 */
int sacred_bz_keys_load(const char *dir, unsigned int nr_procs,
			unsigned int me, struct sacred_bz_keys **keysp)
{
	uint8_t pk[crypto_sign_PUBLICKEYBYTES];
	struct sacred_bz_keys *k;
	char path[4096];
	unsigned int i;
	int ret;

	if (!dir || !keysp || !nr_procs || nr_procs > SACRED_BZ_MAX_PROCS ||
	    me >= nr_procs)
		return -EINVAL;
	if (sodium_init() < 0)
		return -EIO;
	k = sodium_malloc(sizeof(*k));
	if (!k)
		return -ENOMEM;
	memset(k, 0, sizeof(*k));
	k->nr_procs = nr_procs;
	k->me = me;
	for (i = 0; i < nr_procs; i++) {
		ret = bz_path(path, sizeof(path), dir, i, "pub");
		if (!ret)
			ret = bz_read_file(path, k->pk[i], sizeof(k->pk[i]));
		if (ret)
			goto err;
	}
	ret = bz_path(path, sizeof(path), dir, me, "key");
	if (!ret)
		ret = bz_read_file(path, k->sk, sizeof(k->sk));
	if (ret)
		goto err;
	ret = -EINVAL;
	if (crypto_sign_ed25519_sk_to_pk(pk, k->sk) ||
	    memcmp(pk, k->pk[me], sizeof(pk)))
		goto err;
	*keysp = k;
	return 0;

err:
	sacred_bz_keys_free(k);
	return ret;
}

/** sacred_bz_keys_free() - wipe and free @keys; NULL is ok */
void sacred_bz_keys_free(struct sacred_bz_keys *keys)
{
	if (keys)
		sodium_free(keys);	/* zeroes the pages first */
}

/** sacred_bz_nr_procs() - the number of processes @keys has keys of */
unsigned int sacred_bz_nr_procs(const struct sacred_bz_keys *keys)
{
	return keys->nr_procs;
}

/** sacred_bz_me() - the process @keys belong to */
unsigned int sacred_bz_me(const struct sacred_bz_keys *keys)
{
	return keys->me;
}

/**
 * sacred_bz_sign() - sign @len bytes of @msg under @domain as this process
 * @keys: the keys
 * @domain: what the signature is for (a short string), so that a
 *	signature of one protocol is never accepted by another
 * @msg: the message
 * @len: its bytes
 * @sig: gets SACRED_BZ_SIG_LEN bytes
 */
void sacred_bz_sign(const struct sacred_bz_keys *keys, const char *domain,
		    const void *msg, size_t len, uint8_t *sig)
{
	crypto_sign_ed25519ph_state st;

	crypto_sign_ed25519ph_init(&st);
	crypto_sign_ed25519ph_update(&st, (const uint8_t *)domain,
				     strlen(domain) + 1);
	crypto_sign_ed25519ph_update(&st, msg, len);
	crypto_sign_ed25519ph_final_create(&st, sig, NULL, keys->sk);
}

/**
 * sacred_bz_verify() - check process @who's signature of @msg under
 * @domain
 *
 * Return: true when it is valid.
 */
bool sacred_bz_verify(const struct sacred_bz_keys *keys, unsigned int who,
		      const char *domain, const void *msg, size_t len,
		      const uint8_t *sig)
{
	crypto_sign_ed25519ph_state st;

	if (who >= keys->nr_procs)
		return false;
	crypto_sign_ed25519ph_init(&st);
	crypto_sign_ed25519ph_update(&st, (const uint8_t *)domain,
				     strlen(domain) + 1);
	crypto_sign_ed25519ph_update(&st, msg, len);
	return !crypto_sign_ed25519ph_final_verify(&st, sig, keys->pk[who]);
}

/* ------------------------------------------------------------------ */
/* Non-equivocating broadcast.                                         */

/**
 * struct sacred_neb - one process's view of a non-equivocating broadcast
 * @keys: the processes' keys (not owned)
 * @base: region of process 0; process i's is @base + i
 * @tag: the tag the regions were made with: signatures bind it, so
 *	that a record of an earlier incarnation of these region ids is not
 *	good in this one
 * @nr_procs: processes
 * @nr_msgs: messages per process
 * @msg_max: the largest message
 * @rec_size: bytes of a record
 * @regions: one slots handle per process's region
 * @rec: a record being built
 * @seen: one being read
 * @other: another being read
 * @delivered: per (sender, number), delivered here already: delivered
 *	again from own copy, whatever others copied since
 * @copied: per (sender, number), own copy written to a quorum by this
 *	handle
 */
struct sacred_neb {
	const struct sacred_bz_keys *keys;
	uint32_t base;
	uint64_t tag;
	unsigned int nr_procs;
	unsigned int nr_msgs;
	size_t msg_max;
	size_t rec_size;
	struct sacred_slots *regions[SACRED_BZ_MAX_PROCS];
	uint8_t *rec, *seen, *other;
	uint8_t *delivered;
	uint8_t *copied;
};

struct neb_rec {
	uint32_t sender;
	uint64_t k;
	uint32_t len;
	const uint8_t *sig;
	const uint8_t *msg;
};

/*
 * Record layout (little-endian): __le32 sender, pad, __le64 k, __le32
 * len, pad, signature, message. The signature covers NEB_DOMAIN, the
 * broadcast's base region and the regions' tag (so that a record is
 * never good in another broadcast, nor in a later one made on the same
 * region ids: sacred_region_new_tagged()), sender, k, len and the message.
 */
static void neb_header(uint8_t *rec, uint32_t sender, uint64_t k,
		       uint32_t len)
{
	uint32_t x;
	uint64_t y;

	memset(rec, 0, 24);
	x = htole32(sender);
	memcpy(rec, &x, 4);
	y = htole64(k);
	memcpy(rec + 8, &y, 8);
	x = htole32(len);
	memcpy(rec + 16, &x, 4);
}

static void neb_hash(const struct sacred_neb *n,
		     crypto_sign_ed25519ph_state *st, uint32_t sender,
		     uint64_t k, const uint8_t *msg, uint32_t len)
{
	uint8_t hdr[24];
	uint32_t base = htole32(n->base);
	uint64_t tag = htole64(n->tag);

	neb_header(hdr, sender, k, len);
	crypto_sign_ed25519ph_init(st);
	crypto_sign_ed25519ph_update(st, (const uint8_t *)NEB_DOMAIN,
				     sizeof(NEB_DOMAIN));
	crypto_sign_ed25519ph_update(st, (const uint8_t *)&base, 4);
	crypto_sign_ed25519ph_update(st, (const uint8_t *)&tag, 8);
	crypto_sign_ed25519ph_update(st, hdr, sizeof(hdr));
	crypto_sign_ed25519ph_update(st, msg, len);
}

static bool neb_sig_ok(const struct sacred_neb *n, const struct neb_rec *r)
{
	crypto_sign_ed25519ph_state st;

	if (r->sender >= n->nr_procs)
		return false;
	neb_hash(n, &st, r->sender, r->k, r->msg, r->len);
	return !crypto_sign_ed25519ph_final_verify(&st, r->sig,
						   n->keys->pk[r->sender]);
}

/* Parse a record read from a slot; false for anything malformed. */
static bool neb_parse(const struct sacred_neb *n, const uint8_t *buf,
		      size_t len, struct neb_rec *r)
{
	uint32_t x;
	uint64_t y;

	if (len < NEB_HDR)
		return false;
	memcpy(&x, buf, 4);
	r->sender = le32toh(x);
	memcpy(&y, buf + 8, 8);
	r->k = le64toh(y);
	memcpy(&x, buf + 16, 4);
	r->len = le32toh(x);
	r->sig = buf + 24;
	r->msg = buf + NEB_HDR;
	return r->len <= n->msg_max && r->len == len - NEB_HDR;
}

static unsigned int neb_copy_slot(const struct sacred_neb *n, unsigned int p,
				  uint64_t k)
{
	return n->nr_msgs + p * n->nr_msgs + (unsigned int)k;
}

/**
 * sacred_neb_open() - join a non-equivocating broadcast
 * @attr: see &struct sacred_neb_attr
 * @np: on success, the handle
 *
 * Return: 0; -EINVAL; -ENOMEM; -EPERM when this process cannot write its
 * own region; -EPROTO when the regions were not made with one tag (see
 * sacred_region_new_tagged()); the errors of sacred_slots_open().
 */
int sacred_neb_open(const struct sacred_neb_attr *attr,
		    struct sacred_neb **np)
{
	struct sacred_neb *n;
	unsigned int p, me;
	int ret;

	if (!attr || !np || !attr->rm || !attr->keys || !attr->nr_msgs ||
	    attr->nr_msgs > (1U << 16) || attr->msg_max > (1U << 16) ||
	    attr->keys->nr_procs > SACRED_BZ_MAX_PROCS)
		return -EINVAL;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->keys = attr->keys;
	n->base = attr->base_region;
	n->nr_procs = attr->keys->nr_procs;
	n->nr_msgs = attr->nr_msgs;
	n->msg_max = attr->msg_max;
	n->rec_size = NEB_HDR + attr->msg_max;
	me = attr->keys->me;
	ret = -ENOMEM;
	n->rec = malloc(n->rec_size);
	n->seen = malloc(n->rec_size);
	n->other = malloc(n->rec_size);
	n->delivered = calloc(n->nr_procs, n->nr_msgs);
	n->copied = calloc(n->nr_procs, n->nr_msgs);
	if (!n->rec || !n->seen || !n->other || !n->delivered || !n->copied)
		goto err;
	for (p = 0; p < n->nr_procs; p++) {
		ret = sacred_slots_open(attr->rm, n->base + p, n->rec_size,
					n->nr_msgs * (n->nr_procs + 1), 0,
					&n->regions[p]);
		if (ret)
			goto err;
	}
	/* Attached by now: the memories told the regions' tag. */
	ret = sacred_rmem_span_tag(attr->rm, n->base, n->nr_procs, &n->tag);
	if (ret)
		goto err;
	ret = -EPERM;
	if (!sacred_slots_writer(n->regions[me]))
		goto err;
	*np = n;
	return 0;

err:
	sacred_neb_close(n);
	return ret;
}

/** sacred_neb_close() - free @n; NULL is ok */
void sacred_neb_close(struct sacred_neb *n)
{
	unsigned int p;

	if (!n)
		return;
	for (p = 0; p < SACRED_BZ_MAX_PROCS; p++)
		sacred_slots_close(n->regions[p]);
	free(n->rec);
	free(n->seen);
	free(n->other);
	free(n->delivered);
	free(n->copied);
	free(n);
}

/**
 * sacred_neb_broadcast() - broadcast message @k
 * @n: the broadcast
 * @k: the message's number, below nr_msgs; each is broadcast once
 * @msg: the message
 * @len: its bytes, at most msg_max
 *
 * Return: 0 once a quorum of memories holds it (again: the same message
 * a second time completes a broadcast that failed); -EEXIST when another
 * message @k was broadcast already; -EINVAL, -EMSGSIZE; replicated-memory
 * errors.
 */
int sacred_neb_broadcast(struct sacred_neb *n, uint64_t k, const void *msg,
			 size_t len)
{
	const struct sacred_bz_keys *keys = n->keys;
	struct sacred_slots *own = n->regions[keys->me];
	crypto_sign_ed25519ph_state st;
	struct sacred_cell_view v;
	int ret;

	if (k >= n->nr_msgs || (!msg && len))
		return -EINVAL;
	if (len > n->msg_max)
		return -EMSGSIZE;
	/*
	 * Broadcast once. A broadcast that failed (no quorum) may have left
	 * its record on some memories: the same message again completes it;
	 * another one would be equivocation, and is refused.
	 */
	ret = sacred_slots_read(own, (unsigned int)k, n->seen, n->rec_size,
				&v);
	if (ret && ret != -ENODATA && ret != -ENOSPC)
		return ret;
	if (!ret) {
		struct neb_rec r;

		if (!neb_parse(n, n->seen, v.len, &r) || r.len != len ||
		    memcmp(r.msg, msg, len))
			return -EEXIST;
		return sacred_slots_write(own, (unsigned int)k, n->seen,
					  v.len);
	}

	neb_header(n->rec, keys->me, k, (uint32_t)len);
	memcpy(n->rec + NEB_HDR, msg, len);
	neb_hash(n, &st, keys->me, k, n->rec + NEB_HDR, (uint32_t)len);
	crypto_sign_ed25519ph_final_create(&st, n->rec + 24, NULL, keys->sk);
	return sacred_slots_write(own, (unsigned int)k, n->rec,
				  NEB_HDR + len);
}

/*
 * A record validly signed by @p for @k, into n->seen: from @p's own slot,
 * else from a copy some process made of it - a Byzantine sender that
 * wipes its slot after a correct process delivered cannot hide the
 * message from the others (the copier's region is the copier's alone).
 */
static int neb_find(struct sacred_neb *n, unsigned int p, uint64_t k,
		    struct neb_rec *r, struct sacred_cell_view *v)
{
	unsigned int i, q;
	int ret;

	for (i = 0; i < n->nr_procs; i++) {
		q = (p + i) % n->nr_procs;
		/* own copy: the caller looked there first */
		if (i && q == n->keys->me)
			continue;
		ret = sacred_slots_read(n->regions[q],
					i ? neb_copy_slot(n, p, k) :
					    (unsigned int)k,
					n->seen, n->rec_size, v);
		/* Nothing, or more than a record can be: not a message. */
		if (ret && ret != -ENODATA && ret != -ENOSPC)
			return ret;
		if (!ret && neb_parse(n, n->seen, v->len, r) &&
		    r->sender == p && r->k == k && neb_sig_ok(n, r))
			return 0;
	}
	return -EAGAIN;
}

/**
 * sacred_neb_deliver() - try to deliver process @p's message @k
 * @n: the broadcast
 * @p: the sender
 * @k: the message's number
 * @msg: gets the message
 * @max: room in @msg
 * @len: gets its bytes
 *
 * Return: 0 - delivered; the same message is delivered on every later
 * call, here and at every correct process that delivers (p, k).
 * -EAGAIN - nothing (valid) there yet: try again later. -EPROTO - @p
 * equivocated (two messages signed for @k were seen): never delivered.
 * -ENOSPC (@max too small), -EINVAL; replicated-memory errors.
 */
int sacred_neb_deliver(struct sacred_neb *n, unsigned int p, uint64_t k,
		       void *msg, size_t max, size_t *len)
{
	struct sacred_slots *own = n->regions[n->keys->me];
	struct sacred_cell_view v;
	struct neb_rec r, c;
	unsigned int q, slot;
	int ret;

	if (p >= n->nr_procs || k >= n->nr_msgs || !len || (!msg && max))
		return -EINVAL;
	slot = neb_copy_slot(n, p, k);

	/* What we copied before, if anything, is what we stand by. */
	ret = sacred_slots_read(own, slot, n->seen, n->rec_size, &v);
	if (ret && ret != -ENODATA)
		return ret;
	if (ret == -ENODATA || !neb_parse(n, n->seen, v.len, &r) ||
	    r.sender != p || r.k != k || !neb_sig_ok(n, &r)) {
		ret = neb_find(n, p, k, &r, &v);
		if (ret)
			return ret;
	}
	/*
	 * The copy must be on a quorum before the others' are read. One read
	 * back may be all a failed write left, on a minority of memories
	 * that a later reader of the copies does not meet: unless this
	 * handle wrote it to a quorum, write it (again).
	 */
	if (!n->copied[p * n->nr_msgs + k]) {
		ret = sacred_slots_write(own, slot, n->seen, v.len);
		if (ret)
			return ret;
		n->copied[p * n->nr_msgs + k] = 1;
	}

	/* Anyone who saw another message signed by p for k? */
	for (q = 0; q < n->nr_procs && !n->delivered[p * n->nr_msgs + k];
	     q++) {
		if (q == n->keys->me)
			continue;
		ret = sacred_slots_read(n->regions[q], slot, n->other,
					n->rec_size, &v);
		/* q copied nothing, or junk too long to be a record. */
		if (ret == -ENODATA || ret == -ENOSPC)
			continue;
		if (ret)
			return ret;
		if (!neb_parse(n, n->other, v.len, &c) || c.sender != p ||
		    c.k != k || !neb_sig_ok(n, &c))
			continue;	/* q lies: it cannot forge p */
		if (c.len != r.len || memcmp(c.msg, r.msg, r.len))
			return -EPROTO;
	}
	if (r.len > max)
		return -ENOSPC;
	memcpy(msg, r.msg, r.len);
	*len = r.len;
	n->delivered[p * n->nr_msgs + k] = 1;
	return 0;
}

/**
 * sacred_neb_misbehave() - act as a Byzantine process would (test harness)
 * @n: this process's broadcast
 * @how: &enum sacred_neb_misbehave
 * @k: the message number acted on
 * @arg: SACRED_NEB_FORGE: the process impersonated; SACRED_NEB_REPLAY: the
 *	message number whose record is replayed
 * @msg: SACRED_NEB_EQUIVOCATE, SACRED_NEB_FORGE: the message
 * @len: its bytes
 *
 * Everything here goes through this process's own region: the memory
 * refuses writes to anyone else's. What it writes is what a faulty
 * library could: SACRED_NEB_EQUIVOCATE signs and writes another message
 * @k over the one broadcast; SACRED_NEB_GARBAGE writes random bytes as
 * message @k; SACRED_NEB_FORGE writes, as this process's copy of
 * process @arg's message @k, a record claiming @msg with a made-up
 * signature; SACRED_NEB_REPLAY writes the signed record of message @arg
 * again as message @k.
 *
 * Return: 0 or a negative errno.
 */
int sacred_neb_misbehave(struct sacred_neb *n, int how, uint64_t k,
			 unsigned int arg, const void *msg, size_t len)
{
	struct sacred_slots *own = n->regions[n->keys->me];
	crypto_sign_ed25519ph_state st;
	struct sacred_cell_view v;
	int ret;

	if (k >= n->nr_msgs || (!msg && len))
		return -EINVAL;
	if (len > n->msg_max)
		return -EMSGSIZE;
	switch (how) {
	case SACRED_NEB_EQUIVOCATE:
		neb_header(n->rec, n->keys->me, k, (uint32_t)len);
		memcpy(n->rec + NEB_HDR, msg, len);
		neb_hash(n, &st, n->keys->me, k, n->rec + NEB_HDR,
			 (uint32_t)len);
		crypto_sign_ed25519ph_final_create(&st, n->rec + 24, NULL,
						   n->keys->sk);
		return sacred_slots_write(own, (unsigned int)k, n->rec,
					  NEB_HDR + len);
	case SACRED_NEB_GARBAGE:
		randombytes_buf(n->rec, n->rec_size);
		return sacred_slots_write(own, (unsigned int)k, n->rec,
					  n->rec_size);
	case SACRED_NEB_FORGE:
		if (arg >= n->nr_procs)
			return -EINVAL;
		neb_header(n->rec, arg, k, (uint32_t)len);
		randombytes_buf(n->rec + 24, crypto_sign_BYTES);
		memcpy(n->rec + NEB_HDR, msg, len);
		return sacred_slots_write(own, neb_copy_slot(n, arg, k),
					  n->rec, NEB_HDR + len);
	case SACRED_NEB_REPLAY:
		if (arg >= n->nr_msgs)
			return -EINVAL;
		ret = sacred_slots_read(own, arg, n->rec, n->rec_size, &v);
		if (ret)
			return ret;
		return sacred_slots_write(own, (unsigned int)k, n->rec,
					  v.len);
	default:
		return -EINVAL;
	}
}
