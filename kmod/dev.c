// SPDX-License-Identifier: GPL-2.0
/*
 * sacred - RDMA device tracking.
 *
 * This file owns struct sacred_dev: the ib_client whose add and remove
 * callbacks follow `rdma link add/del` (and hot-unplug of real HCAs) live.
 * A device appears here when ib_core registers it and disappears before
 * ib_core lets it go: remove first destroys every memory instance on the
 * device, so nothing of ours holds a verbs object across removal.
 *
 * rdma_cm is an ib_client too and registered before us (we use its
 * symbols); clients are removed in LIFO order, so our remove runs while
 * rdma_cm still knows the device and our rdma_destroy_id() calls are legal.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include "dev.h"
#include "mem.h"

LIST_HEAD(sacred_devs);
/* Bumped on every change of sacred_devs; lets dumps detect interruption. */
unsigned int sacred_dev_gen;

static struct ib_client sacred_ib_client;

static int sacred_ib_add(struct ib_device *ibdev)
{
	struct sacred_dev *sdev;

	sdev = kzalloc(sizeof(*sdev), GFP_KERNEL);
	if (!sdev)
		return -ENOMEM;
	sdev->ibdev = ibdev;

	mutex_lock(&sacred_lock);
	list_add_tail(&sdev->list, &sacred_devs);
	sacred_dev_gen++;
	mutex_unlock(&sacred_lock);

	atomic_inc(&sacred_live.devs);
	ib_set_client_data(ibdev, &sacred_ib_client, sdev);
	return 0;
}

static void sacred_ib_remove(struct ib_device *ibdev, void *client_data)
{
	struct sacred_dev *sdev = client_data;

	mutex_lock(&sacred_lock);
	sacred_mem_destroy_dev(sdev);
	list_del(&sdev->list);
	sacred_dev_gen++;
	mutex_unlock(&sacred_lock);

	kfree(sdev);
	atomic_dec(&sacred_live.devs);
}

static struct ib_client sacred_ib_client = {
	.name	= "sacred",
	.add	= sacred_ib_add,
	.remove	= sacred_ib_remove,
};

/**
 * sacred_dev_find_by_name() - look up an attached device by its name
 * @name: RDMA device name, e.g. "rxe0"
 *
 * Context: sacred_lock held; the result is valid while it stays held.
 * Return: the device or NULL.
 */
struct sacred_dev *sacred_dev_find_by_name(const char *name)
{
	struct sacred_dev *sdev;

	lockdep_assert_held(&sacred_lock);
	list_for_each_entry(sdev, &sacred_devs, list)
		if (!strcmp(sdev->ibdev->name, name))
			return sdev;
	return NULL;
}

/**
 * sacred_dev_find_by_index() - look up an attached device by its index
 * @index: RDMA device index, as `rdma dev` shows it
 *
 * Context: sacred_lock held; the result is valid while it stays held.
 * Return: the device or NULL.
 */
struct sacred_dev *sacred_dev_find_by_index(u32 index)
{
	struct sacred_dev *sdev;

	lockdep_assert_held(&sacred_lock);
	list_for_each_entry(sdev, &sacred_devs, list)
		if (sdev->ibdev->index == index)
			return sdev;
	return NULL;
}

/**
 * sacred_dev_init() - attach to every present and future RDMA device
 *
 * Return: 0 or a negative errno from ib_register_client().
 */
int sacred_dev_init(void)
{
	return ib_register_client(&sacred_ib_client);
}

/**
 * sacred_dev_exit() - detach from all devices; runs remove for each
 */
void sacred_dev_exit(void)
{
	ib_unregister_client(&sacred_ib_client);
}
