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
 * check runs in the listener's connect-request handler, before a queue
 * pair exists for the connection. The key lives only in the instance and
 * is wiped when it is replaced or the instance goes; it is never logged or
 * sent back.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/hash.h>
#include <crypto/algapi.h>
#include <linux/string.h>
#include "sacred.h"

static int sacred_hmac(const u8 *key, unsigned int key_len,
		       const void *a, unsigned int a_len,
		       const void *b, unsigned int b_len, u8 *out)
{
	struct crypto_shash *tfm;
	int ret;

	tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	ret = crypto_shash_setkey(tfm, key, key_len);
	if (!ret) {
		SHASH_DESC_ON_STACK(desc, tfm);

		desc->tfm = tfm;
		ret = crypto_shash_init(desc) ?:
		      crypto_shash_update(desc, a, a_len) ?:
		      crypto_shash_update(desc, b, b_len) ?:
		      crypto_shash_final(desc, out);
		shash_desc_zero(desc);
	}
	crypto_free_shash(tfm);
	return ret;
}

/**
 * sacred_mem_set_key() - give an instance a master key, or take it away
 * @mem: the instance
 * @key: SACRED_KEY_MIN..SACRED_KEY_MAX bytes, or NULL for no key
 * @len: bytes in @key
 *
 * Context: sacred_lock held; takes mem->lock.
 * Return: 0 or -EINVAL.
 */
int sacred_mem_set_key(struct sacred_mem *mem, const void *key,
		       unsigned int len)
{
	if (key && (len < SACRED_KEY_MIN || len > SACRED_KEY_MAX))
		return -EINVAL;
	mutex_lock(&mem->lock);
	memzero_explicit(mem->key, sizeof(mem->key));
	mem->key_len = key ? len : 0;
	if (key)
		memcpy(mem->key, key, len);
	mutex_unlock(&mem->lock);
	return 0;
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
	if (sacred_hmac(mem->key, mem->key_len, plabel, sizeof(plabel) - 1,
			&req->process_id, sizeof(req->process_id), pkey))
		goto out;
	if (sacred_hmac(pkey, sizeof(pkey), clabel, sizeof(clabel) - 1, &msg,
			sizeof(msg), mac))
		goto out;
	ok = !crypto_memneq(mac, req->mac, sizeof(mac));
out:
	memzero_explicit(pkey, sizeof(pkey));
	memzero_explicit(mac, sizeof(mac));
	return ok;
}
