// SPDX-License-Identifier: GPL-2.0
/*
 * sacred - polling mode: one kernel thread busy-polls every connection's
 * completion queue.
 *
 * This file owns the module parameter poll_cpu and the poller thread. By
 * default (poll_cpu=-1) an endpoint's CQ is polled in softirq
 * (IB_POLL_SOFTIRQ): a completion raises the CQ's event, the IB core
 * schedules irq_poll, and the handlers run there; on rxe in 6.1 the
 * event is a tasklet scheduled from whatever context posted the work -
 * for a request, the client's system call - which wakes ksoftirqd. With
 * poll_cpu=N every endpoint's CQ is allocated IB_POLL_DIRECT and never
 * armed, and one thread, "sacred_poll", allowed on CPU N only, polls them
 * all in turn, without sleeping while any exists: the kernel's twin of a
 * userspace server that busy-polls (bench/permswitch's reference). It
 * takes CPU N whole while connections exist, and saves each completion
 * the event and the hop to irq_poll. nvme's poll_queues is the same trade.
 *
 * The handlers run in the thread with bottom halves disabled, so they run
 * in the context they have in softirq: the same spinlocks, and what they
 * post runs when the pass ends (local_bh_enable()). Passes run one at a
 * time, each CQ's completions in order: the handlers of one CQ never run
 * concurrently, as with irq_poll. The list's lock is held across a pass,
 * so sacred_poll_del() returns only once no pass can touch the CQ: it may
 * be freed then.
 *
 * A device with a drain of its own (ops.drain_sq or ops.drain_rq) keeps
 * softirq CQs: on a polled CQ a connection's release drains its send
 * queue with a marker of its own (ep.c) - ib_drain_sq() would poll the
 * CQ from the draining thread, beside the poller - and such a device may
 * not take a marker on a QP in the error state.
 *
 * The thread sleeps while no CQ is listed; sacred_poll_add() wakes it.
 * After every pass it yields (cond_resched()), so that work queued on CPU
 * N by its handlers - a request's work item - runs. Its CPU is an
 * affinity, not kthread_bind(): if CPU N goes offline the scheduler moves
 * the thread, and the CQs stay polled.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include "poll.h"

/* Completions per CQ per pass: a busy connection cannot starve the rest. */
#define SACRED_POLL_BUDGET	16

static int poll_cpu = -1;
module_param(poll_cpu, int, 0444);
MODULE_PARM_DESC(poll_cpu,
		 "CPU on which a kernel thread busy-polls every connection's completion queue (default -1: completions are handled in softirq)");

static LIST_HEAD(sacred_poll_list);
static DEFINE_SPINLOCK(sacred_poll_lock);	/* protects sacred_poll_list */
static struct task_struct *sacred_poller;

static bool sacred_poll_idle(void)
{
	bool empty;

	spin_lock_bh(&sacred_poll_lock);
	empty = list_empty(&sacred_poll_list);
	spin_unlock_bh(&sacred_poll_lock);
	return empty;
}

static int sacred_poll_thread(void *unused)
{
	struct sacred_poll_cq *pcq;
	bool empty;

	while (!kthread_should_stop()) {
		local_bh_disable();
		spin_lock(&sacred_poll_lock);
		empty = list_empty(&sacred_poll_list);
		list_for_each_entry(pcq, &sacred_poll_list, link)
			ib_process_cq_direct(pcq->cq, SACRED_POLL_BUDGET);
		spin_unlock(&sacred_poll_lock);
		local_bh_enable();
		if (!empty) {
			cond_resched();
			continue;
		}
		/* Sleep unless a CQ came meanwhile; sacred_poll_add() wakes us. */
		set_current_state(TASK_INTERRUPTIBLE);
		if (sacred_poll_idle() && !kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
	return 0;
}

/**
 * sacred_poll_init() - start the poller if poll_cpu asks for one
 *
 * Context: module init.
 * Return: 0, or -EINVAL if poll_cpu is neither -1 nor an online CPU, or
 * the error of the thread's creation.
 */
int sacred_poll_init(void)
{
	struct task_struct *t;
	int ret;

	if (poll_cpu == -1)
		return 0;
	if (poll_cpu < 0 || poll_cpu >= nr_cpu_ids || !cpu_online(poll_cpu)) {
		pr_err("poll_cpu=%d: neither -1 nor an online CPU\n", poll_cpu);
		return -EINVAL;
	}
	t = kthread_create(sacred_poll_thread, NULL, "sacred_poll");
	if (IS_ERR(t))
		return PTR_ERR(t);
	ret = set_cpus_allowed_ptr(t, cpumask_of(poll_cpu));
	if (ret) {
		kthread_stop(t);
		return ret;
	}
	sacred_poller = t;
	wake_up_process(t);
	pr_info("connections' completion queues are busy-polled on CPU %d\n",
		poll_cpu);
	return 0;
}

/**
 * sacred_poll_exit() - stop the poller
 *
 * Context: module exit, after every connection is gone.
 */
void sacred_poll_exit(void)
{
	if (!sacred_poller)
		return;
	WARN_ON(!sacred_poll_idle());
	kthread_stop(sacred_poller);
	sacred_poller = NULL;
}

/**
 * sacred_poll_ctx() - how a new connection's CQ on a device is polled
 * @ibdev: the device
 *
 * Return: IB_POLL_DIRECT (then sacred_poll_add() it) in polling mode on a
 * device without a drain of its own, else IB_POLL_SOFTIRQ.
 */
enum ib_poll_context sacred_poll_ctx(struct ib_device *ibdev)
{
	if (!sacred_poller || ibdev->ops.drain_sq || ibdev->ops.drain_rq)
		return IB_POLL_SOFTIRQ;
	return IB_POLL_DIRECT;
}

/**
 * sacred_poll_add() - have the poller poll a CQ
 * @pcq: the entry, embedded in the CQ's owner
 * @cq: a CQ allocated with sacred_poll_ctx()'s IB_POLL_DIRECT
 *
 * Context: process context.
 */
void sacred_poll_add(struct sacred_poll_cq *pcq, struct ib_cq *cq)
{
	pcq->cq = cq;
	spin_lock_bh(&sacred_poll_lock);
	list_add_tail(&pcq->link, &sacred_poll_list);
	spin_unlock_bh(&sacred_poll_lock);
	wake_up_process(sacred_poller);
}

/**
 * sacred_poll_del() - stop polling a CQ
 * @pcq: an entry sacred_poll_add() listed
 *
 * When this returns no pass polls the CQ, and none will.
 *
 * Context: process context.
 */
void sacred_poll_del(struct sacred_poll_cq *pcq)
{
	spin_lock_bh(&sacred_poll_lock);
	list_del_init(&pcq->link);
	spin_unlock_bh(&sacred_poll_lock);
}
