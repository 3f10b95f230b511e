// SPDX-License-Identifier: GPL-2.0
/*
 * sacred - regions.
 *
 * This file owns struct sacred_region: the memory that peers of a memory
 * instance read and write with one-sided RDMA. A region is a list of
 * physically contiguous chunks (2 MiB where the allocator has them, down to
 * single pages where it does not), so a 1 GiB region needs no contiguous
 * gigabyte, and one scatterlist over them, DMA-mapped once for the
 * instance's device at creation. The per-peer fast-registration MRs that
 * grant access all map this same scatterlist.
 *
 * Every byte is zeroed at allocation and charged to the instance's cap
 * (mem_cap) before it is allocated, so exceeding the cap is a clean
 * error. Caps are per instance; when the host runs out of memory first,
 * allocation fails cleanly (__GFP_RETRY_MAYFAIL) instead of invoking the
 * OOM killer.
 *
 * sacred_region_fill() says what a region's netlink messages carry.
 *
 * Context: everything here runs under sacred_lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include "bpf.h"
#include "notify.h"
#include "perm.h"
#include "region.h"

/* Bumped on every change of any region table; lets dumps detect it. */
unsigned int sacred_region_gen;

/* Largest chunk tried: a PMD-sized page on x86-64. */
#define SACRED_CHUNK_MAX_ORDER	9

static void sacred_region_free_chunks(struct sacred_region *region)
{
	struct scatterlist *sg;
	int i;

	for_each_sgtable_sg(&region->sgt, sg, i)
		if (sg_page(sg))
			__free_pages(sg_page(sg), get_order(sg->length));
	sg_free_table(&region->sgt);
}

/*
 * Allocate @size bytes as zeroed chunks, largest first, falling back to
 * smaller orders when memory is fragmented.
 */
static int sacred_region_alloc_chunks(struct sacred_region *region, u64 size)
{
	unsigned long pages = size >> PAGE_SHIFT, done = 0;
	struct scatterlist *sg;
	struct page **chunk;
	unsigned int *order, n = 0;
	int ret = -ENOMEM, i;

	/* Worst case: one chunk per page. */
	chunk = kvmalloc_array(pages, sizeof(*chunk), GFP_KERNEL);
	order = kvmalloc_array(pages, sizeof(*order), GFP_KERNEL);
	if (!chunk || !order)
		goto out;

	while (done < pages) {
		unsigned int o = min_t(unsigned int, SACRED_CHUNK_MAX_ORDER,
				       ilog2(pages - done));
		struct page *page = NULL;

		for (;; o--) {
			gfp_t gfp = GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN;

			/*
			 * Large chunks are a bonus; single pages may try
			 * hard, but fail rather than call the OOM killer:
			 * several instances' caps together can exceed RAM.
			 */
			gfp |= o ? __GFP_NORETRY : __GFP_RETRY_MAYFAIL;
			page = alloc_pages(gfp, o);
			if (page || !o)
				break;
		}
		if (!page)
			goto err_free;
		chunk[n] = page;
		order[n++] = o;
		done += 1UL << o;
		cond_resched();
	}

	ret = sg_alloc_table(&region->sgt, n, GFP_KERNEL);
	if (ret)
		goto err_free;
	/* Past SG_MAX_SINGLE_ALLOC entries the table is chained: walk it. */
	for_each_sgtable_sg(&region->sgt, sg, i)
		sg_set_page(sg, chunk[i], PAGE_SIZE << order[i], 0);
	region->nr_chunks = n;
	ret = 0;
	goto out;

err_free:
	while (n--)
		__free_pages(chunk[n], order[n]);
out:
	kvfree(order);
	kvfree(chunk);
	return ret;
}

/*
 * What sg_alloc_table() took for @nents entries: chained pages of
 * SG_MAX_SINGLE_ALLOC entries (the last of each links to the next), then
 * one kmalloc() for the rest (lib/scatterlist.c).
 */
static size_t sacred_region_sgt_bytes(unsigned int nents)
{
	size_t bytes = 0;

	while (nents > SG_MAX_SINGLE_ALLOC) {
		bytes += PAGE_SIZE;
		nents -= SG_MAX_SINGLE_ALLOC - 1;
	}
	return bytes + kmalloc_size_roundup(nents * sizeof(struct scatterlist));
}

/* Descriptor and scatterlist: what a region is charged besides its memory. */
static size_t sacred_region_meta(struct sacred_region *region)
{
	return kmalloc_size_roundup(sizeof(*region)) +
	       sacred_region_sgt_bytes(region->nr_chunks);
}

/*
 * The page size MRs map the region with: the largest power of two (up to
 * the biggest chunk) that every chunk is a multiple of. Chunks come from
 * the page allocator, so a chunk of order o is aligned to PAGE_SIZE << o.
 */
static void sacred_region_mr_geometry(struct sacred_region *region)
{
	unsigned int shift = PAGE_SHIFT + SACRED_CHUNK_MAX_ORDER;
	struct scatterlist *sg;
	int i;

	for_each_sgtable_sg(&region->sgt, sg, i)
		shift = min_t(unsigned int, shift, __ffs(sg->length));
	region->mr_page_size = 1U << shift;
	region->mr_pages = region->size >> shift;
}

/**
 * sacred_region_create() - allocate, zero and DMA-map a region
 * @mem: instance the region belongs to
 * @id: wanted id, or U32_MAX for the lowest free one
 * @size: bytes, a non-zero multiple of SACRED_REGION_ALIGN and PAGE_SIZE
 * @policy: &enum sacred_policy
 * @prog: with %SACRED_POLICY_BPF, its program (sacred_bpf_get()), which
 *	the region takes on success only; NULL otherwise
 * @tag: the region's tag (&struct sacred_region)
 * @extack: where to explain a failure
 * @regionp: the new region on success
 *
 * Context: sacred_lock held.
 * Return: 0 or a negative errno, with an extack message.
 */
int sacred_region_create(struct sacred_mem *mem, u32 id, u64 size, u8 policy,
			 struct sacred_region_prog *prog, u64 tag,
			 struct netlink_ext_ack *extack,
			 struct sacred_region **regionp)
{
	struct ib_device *ibdev = mem->sdev->ibdev;
	struct sacred_region *region;
	int ret;

	lockdep_assert_held(&sacred_lock);

	if (!size || size % SACRED_REGION_ALIGN || size > SACRED_REGION_SIZE_MAX) {
		NL_SET_ERR_MSG(extack,
			       "size must be a non-zero multiple of 4096, at most 16 GiB");
		return -EINVAL;
	}
	/* The pages back every byte: on a host with larger pages, whole ones. */
	if (size % PAGE_SIZE) {
		NL_SET_ERR_MSG(extack,
			       "size must be a multiple of this host's page size");
		return -EINVAL;
	}
	if (size > mem->mem_cap - mem->mem_used) {
		NL_SET_ERR_MSG(extack,
			       "region would exceed the instance's memory cap");
		return -ENOSPC;
	}

	if (id != U32_MAX && xa_load(&mem->regions, id)) {
		NL_SET_ERR_MSG(extack, "region id in use");
		return -EEXIST;
	}

	region = kzalloc(sizeof(*region), GFP_KERNEL);
	if (!region)
		return -ENOMEM;
	region->mem = mem;
	region->size = size;
	region->policy = policy;
	region->prog = prog;
	region->tag = tag;
	xa_init(&region->acl);

	ret = sacred_region_alloc_chunks(region, size);
	if (ret) {
		NL_SET_ERR_MSG(extack, "out of memory for the region");
		goto err_free;
	}
	sacred_region_mr_geometry(region);

	if (ib_dma_map_sgtable_attrs(ibdev, &region->sgt, DMA_BIDIRECTIONAL,
				     0)) {
		NL_SET_ERR_MSG(extack, "cannot DMA-map the region");
		ret = -ENOMEM;
		goto err_chunks;
	}
	region->mapped = true;

	/*
	 * Published last, under mem->lock: request work finds regions with
	 * mem->lock only, and must never see a half-made one.
	 */
	sacred_mem_lock(mem);
	if (id != U32_MAX) {
		region->id = id;
		ret = xa_insert(&mem->regions, id, region, GFP_KERNEL);
	} else {
		ret = xa_alloc(&mem->regions, &region->id, region,
			       XA_LIMIT(0, U32_MAX - 1), GFP_KERNEL);
		if (ret == -EBUSY)
			NL_SET_ERR_MSG(extack, "no free region id");
	}
	sacred_mem_unlock(mem);
	if (ret)
		goto err_unmap;

	mem->mem_used += size;
	atomic64_add(sacred_region_meta(region), &mem->meta);
	mem->nr_regions++;
	sacred_region_gen++;
	atomic_inc(&sacred_live.regions);
	*regionp = region;
	return 0;

err_unmap:
	ib_dma_unmap_sgtable_attrs(ibdev, &region->sgt, DMA_BIDIRECTIONAL, 0);
err_chunks:
	sacred_region_free_chunks(region);
err_free:
	kfree(region);
	return ret;
}

/**
 * sacred_region_destroy() - revoke every grant, then unmap and free a region
 * @region: the region; freed on return
 *
 * Every process holding access is fenced before the memory goes.
 *
 * Context: sacred_lock held; takes mem->lock.
 */
void sacred_region_destroy(struct sacred_region *region)
{
	struct sacred_mem *mem = region->mem;

	lockdep_assert_held(&sacred_lock);

	sacred_mem_lock(mem);
	xa_erase(&mem->regions, region->id);
	sacred_perm_region_revoke_all(region);
	sacred_mem_unlock(mem);
	xa_destroy(&region->acl);

	if (region->mapped)
		ib_dma_unmap_sgtable_attrs(mem->sdev->ibdev, &region->sgt,
					   DMA_BIDIRECTIONAL, 0);
	sacred_region_free_chunks(region);
	mem->mem_used -= region->size;
	atomic64_sub(sacred_region_meta(region), &mem->meta);
	mem->nr_regions--;
	sacred_region_gen++;
	sacred_bpf_put(region->prog);
	kfree(region);
	atomic_dec(&sacred_live.regions);
}

/**
 * sacred_region_find() - look up a region of an instance by id
 * @mem: the instance
 * @id: region id
 *
 * Context: sacred_lock held; the result is valid while it stays held.
 * Return: the region or NULL.
 */
struct sacred_region *sacred_region_find(struct sacred_mem *mem, u32 id)
{
	lockdep_assert_held(&sacred_lock);
	return xa_load(&mem->regions, id);
}

/**
 * sacred_region_next() - the region of @mem with the lowest id >= *@id
 * @mem: the instance
 * @id: in: where to start; out: the id found
 *
 * Context: sacred_lock held.
 * Return: the region or NULL when there is none left.
 */
struct sacred_region *sacred_region_next(struct sacred_mem *mem, u32 *id)
{
	unsigned long index = *id;
	struct sacred_region *region;

	lockdep_assert_held(&sacred_lock);
	region = xa_find(&mem->regions, &index, U32_MAX, XA_PRESENT);
	if (region)
		*id = index;
	return region;
}

/**
 * sacred_region_destroy_all() - destroy every region of an instance
 * @mem: the instance
 *
 * Each destruction is announced on the events multicast group.
 *
 * Context: sacred_lock held.
 */
void sacred_region_destroy_all(struct sacred_mem *mem)
{
	struct sacred_region *region;
	unsigned long index;

	lockdep_assert_held(&sacred_lock);
	xa_for_each(&mem->regions, index, region) {
		sacred_notify_region(region, SACRED_CMD_REGION_DEL);
		sacred_region_destroy(region);
	}
}

/* Room one ACL entry takes: a nest and three u32 attributes. */
#define SACRED_REGION_ACL_ENTRY_SIZE	(4 * NLA_HDRLEN + 3 * sizeof(u32))

/**
 * sacred_region_acl_size() - room a region's ACL takes in a message
 * @region: the region
 *
 * Return: bytes, for the ACL as it is now.
 */
size_t sacred_region_acl_size(struct sacred_region *region)
{
	return READ_ONCE(region->nr_acl) * SACRED_REGION_ACL_ENTRY_SIZE;
}

/* The ballot and the ACL of a region. Context: mem->lock held. */
static int sacred_region_acl_fill(struct sk_buff *skb,
				  struct sacred_region *region)
{
	struct sacred_acl_entry *e;
	struct nlattr *acl, *ent;
	unsigned long pid;

	if (nla_put_u64_64bit(skb, SACRED_ATTR_BALLOT, region->ballot,
			      SACRED_ATTR_PAD))
		return -EMSGSIZE;
	acl = nla_nest_start(skb, SACRED_ATTR_REGION_ACL);
	if (!acl)
		return -EMSGSIZE;
	xa_for_each(&region->acl, pid, e) {
		ent = nla_nest_start(skb, SACRED_ATTR_ACL_ENTRY);
		if (!ent ||
		    nla_put_u32(skb, SACRED_ATTR_PROCESS_ID, pid) ||
		    nla_put_u32(skb, SACRED_ATTR_ACCESS, e->max) ||
		    nla_put_u32(skb, SACRED_ATTR_ACCESS_CUR, e->cur)) {
			nla_nest_cancel(skb, acl);
			return -EMSGSIZE;
		}
		nla_nest_end(skb, ent);
	}
	nla_nest_end(skb, acl);
	return 0;
}

/**
 * sacred_region_fill() - put a region's attributes into a netlink message
 * @skb: the message, its header put (netlink.c)
 * @region: the region
 * @acl: with its ballot and ACL; @skb must have room for
 *	sacred_region_acl_size() more
 *
 * Everything is read under one hold of mem->lock.
 *
 * Context: sacred_lock held; mem->lock not held.
 * Return: 0, or -EMSGSIZE if they do not fit: the caller cancels the
 * message.
 */
int sacred_region_fill(struct sk_buff *skb, struct sacred_region *region,
		       bool acl)
{
	int ret = -EMSGSIZE;

	/*
	 * One hold of mem->lock for the whole message: the epoch, the raced
	 * count (a change counts it after its reply, perm.c) and the ACL are
	 * of the same moment.
	 */
	sacred_mem_lock(region->mem);
	sacred_perm_sync(region->mem);
	if (nla_put_u32(skb, SACRED_ATTR_MEM_ID, region->mem->id) ||
	    nla_put_u32(skb, SACRED_ATTR_REGION_ID, region->id) ||
	    nla_put_u64_64bit(skb, SACRED_ATTR_REGION_SIZE, region->size,
			      SACRED_ATTR_PAD) ||
	    nla_put_u8(skb, SACRED_ATTR_REGION_POLICY, region->policy) ||
	    nla_put_u32(skb, SACRED_ATTR_REGION_EPOCH, region->epoch) ||
	    nla_put_u32(skb, SACRED_ATTR_REGION_NR_CHUNKS, region->nr_chunks) ||
	    nla_put_u64_64bit(skb, SACRED_ATTR_REGION_RACED, region->raced,
			      SACRED_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, SACRED_ATTR_REGION_TAG, region->tag,
			      SACRED_ATTR_PAD) ||
	    (region->prog &&
	     nla_put_u32(skb, SACRED_ATTR_REGION_PROG_ID,
			 sacred_bpf_prog_id(region->prog))) ||
	    (acl && sacred_region_acl_fill(skb, region)))
		goto out;
	ret = 0;
out:
	sacred_mem_unlock(region->mem);
	return ret;
}
