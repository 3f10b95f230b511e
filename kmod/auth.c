// SPDX-License-Identifier: GPL-2.0
/*
 * sacred - identity: an instance's key, and the proof a process presents.
 *
 * This file owns the check of "Identity" in include/uapi/linux/sacred.h:
 * an instance with a master key M accepts a process p only with
 *
 *	mac = HMAC-SHA256(K(p), "sacred-connect-v1" || le32 p || le64 counter)
 *	K(p) = HMAC-SHA256(M, "sacred-process-key" || le32 p)
 *
 * and a counter above the last one it accepted from p (no replay). The
 * check runs when a connect request is answered (request.c, under mem->lock),
 * before a queue pair exists for the connection, with HMAC transforms set
 * up when the key was given (nothing is allocated per request). The key
 * lives only in the instance's transform, freed when it is replaced or the
 * instance goes; it is never logged or sent back.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/hash.h>
#include <crypto/algapi.h>
#include <linux/string.h>
#include "auth.h"

/* HMAC-SHA256 of @a || @b with @tfm's key into @out. */
static int sacred_hmac(struct crypto_shash *tfm, const void *a,
		       unsigned int a_len, const void *b, unsigned int b_len,
		       u8 *out)
{
	SHASH_DESC_ON_STACK(desc, tfm);
	int ret;

	desc->tfm = tfm;
	ret = crypto_shash_init(desc) ?:
	      crypto_shash_update(desc, a, a_len) ?:
	      crypto_shash_update(desc, b, b_len) ?:
	      crypto_shash_final(desc, out);
	shash_desc_zero(desc);
	return ret;
}

/**
 * sacred_auth_release() - free an instance's key transforms, or those
 * sacred_auth_prepare() made
 * @auth: the transforms; NULL members are fine; left empty
 */
void sacred_auth_release(struct sacred_auth *auth)
{
	if (auth->master)
		crypto_free_shash(auth->master);
	if (auth->proc)
		crypto_free_shash(auth->proc);
	auth->master = NULL;
	auth->proc = NULL;
}

/*
 * The transforms of master key @key (@len bytes): one keyed with it, one
 * for the per-process keys (keyed at each check). Allocated once here,
 * not per request while a connect request is answered under mem->lock.
 */
static int sacred_auth_new(struct sacred_auth *auth, const void *key,
			   unsigned int len)
{
	int ret;

	auth->master = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (IS_ERR(auth->master)) {
		ret = PTR_ERR(auth->master);
		auth->master = NULL;
		return ret;
	}
	auth->proc = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (IS_ERR(auth->proc)) {
		ret = PTR_ERR(auth->proc);
		auth->proc = NULL;
		goto err;
	}
	ret = crypto_shash_setkey(auth->master, key, len);
	if (ret)
		goto err;
	return 0;
err:
	sacred_auth_release(auth);
	return ret;
}

/**
 * sacred_auth_prepare() - the transforms of a master key, not yet in use
 * @auth: gets them (all NULL for @key NULL: no key)
 * @key: SACRED_KEY_MIN..SACRED_KEY_MAX bytes, or NULL for no key
 * @len: bytes in @key
 *
 * The one step of setting a key that may fail: callers prepare first,
 * change nothing else if it fails, and hand the result to
 * sacred_mem_swap_key() or sacred_auth_release().
 *
 * Context: may sleep.
 * Return: 0, -EINVAL, or the error of setting up the transforms.
 */
int sacred_auth_prepare(struct sacred_auth *auth, const void *key,
			unsigned int len)
{
	*auth = (struct sacred_auth){};
	if (!key)
		return 0;
	if (len < SACRED_KEY_MIN || len > SACRED_KEY_MAX)
		return -EINVAL;
	return sacred_auth_new(auth, key, len);
}

/**
 * sacred_mem_swap_key() - swap an instance's key transforms with @auth
 * @mem: the instance
 * @auth: from sacred_auth_prepare(); gets the instance's old transforms,
 *	which the caller releases (sacred_auth_release()) - or swaps back
 *
 * The key itself is not kept: only the HMAC transform keyed with it.
 *
 * Context: takes mem->lock.
 */
void sacred_mem_swap_key(struct sacred_mem *mem, struct sacred_auth *auth)
{
	struct sacred_auth old;

	sacred_mem_lock(mem);
	old = mem->auth;
	mem->auth = *auth;
	sacred_mem_unlock(mem);
	*auth = old;
}

/**
 * sacred_mem_set_key() - give an instance a master key, or take it away
 * @mem: the instance
 * @key: SACRED_KEY_MIN..SACRED_KEY_MAX bytes, or NULL for no key
 * @len: bytes in @key
 *
 * sacred_auth_prepare(), sacred_mem_swap_key() and the release of the old
 * transforms in one.
 *
 * Context: takes mem->lock; may sleep.
 * Return: 0, -EINVAL, or the error of setting up the transforms (the
 * instance keeps its old key then).
 */
int sacred_mem_set_key(struct sacred_mem *mem, const void *key,
		       unsigned int len)
{
	struct sacred_auth auth;
	int ret;

	ret = sacred_auth_prepare(&auth, key, len);
	if (ret)
		return ret;
	sacred_mem_swap_key(mem, &auth);
	sacred_auth_release(&auth);
	return 0;
}

/**
 * sacred_mem_keyed() - does an instance have a master key?
 * @mem: the instance
 *
 * Context: mem->lock or sacred_lock held.
 * Return: true if connecting processes must prove their keys.
 */
bool sacred_mem_keyed(const struct sacred_mem *mem)
{
	return mem->auth.master;
}

/**
 * sacred_auth_check() - does a connect request prove its process's key?
 * @mem: the instance; has a key
 * @req: the request's private data, padded with zeros
 * @last: the last counter accepted from the process (0 if none)
 *
 * Context: mem->lock held; may sleep.
 * Return: true if the request carries a valid proof with a fresh counter.
 */
bool sacred_auth_check(struct sacred_mem *mem,
		       const struct sacred_wire_conn_req *req, u64 last)
{
	static const char plabel[] = SACRED_PROCESS_KEY_LABEL;
	static const char clabel[] = SACRED_CONNECT_LABEL;
	u8 pkey[SACRED_MAC_LEN], mac[SACRED_MAC_LEN];
	struct {
		__le32 process_id;
		__le64 counter;
	} __packed msg = {
		.process_id = req->process_id,
		.counter = req->counter,
	};
	bool ok = false;

	lockdep_assert_held(&mem->lock);
	if (!(le16_to_cpu(req->flags) & SACRED_CONN_F_PROOF) ||
	    le64_to_cpu(req->counter) <= last)
		return false;
	/* mem->lock serialises the use (and the rekeying) of the transforms. */
	if (sacred_hmac(mem->auth.master, plabel, sizeof(plabel) - 1,
			&req->process_id, sizeof(req->process_id), pkey))
		goto out;
	if (crypto_shash_setkey(mem->auth.proc, pkey, sizeof(pkey)) ||
	    sacred_hmac(mem->auth.proc, clabel, sizeof(clabel) - 1, &msg,
			sizeof(msg), mac))
		goto out;
	ok = !crypto_memneq(mac, req->mac, sizeof(mac));
out:
	memzero_explicit(pkey, sizeof(pkey));
	memzero_explicit(mac, sizeof(mac));
	return ok;
}
