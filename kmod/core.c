// SPDX-License-Identifier: GPL-2.0
/*
 * sacred - what every layer of the module shares.
 *
 * This file owns the three globals every other file may use: the
 * control-plane lock, the workqueue that runs request handling and
 * connection teardown, and the live-object counters checked on exit. It
 * is the floor of the module (scripts/check-kmod-layers): it calls
 * nothing, so any file may use it. main.c, which calls every layer's init
 * and exit, is the top; it creates and destroys the workqueue.
 */
#include <linux/mutex.h>
#include <linux/workqueue.h>
#include "core.h"

/* Serialises the control plane; see core.h for what it covers. */
DEFINE_MUTEX(sacred_lock);
struct sacred_counters sacred_live;
/* Runs request handling and connection teardown (main.c allocates it). */
struct workqueue_struct *sacred_wq;
