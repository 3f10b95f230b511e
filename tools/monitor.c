// SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause
/*
 * monitor.c - sacred monitor: print the events of sacred.ko as they come.
 *
 * One line per event, until SIGINT or SIGTERM: the kind in brackets, then
 * the object as "show" prints it, so that the first word after the
 * brackets names the object again:
 *
 *   [mem new] 0: dev rxe0 ibport 1 addr 192.0.2.1 port 7471 state up ...
 *   [region set] 0/3: size 64KiB policy fenced epoch 2
 *   [perm refused] 0/3: pid 2 access rw ballot 1 target 0 epoch 2 reason stale-ballot
 *
 * "[perm failed]" (with error "...") is a change the policy accepted that
 * the instance could not apply in full: revoked maybe, granted nothing.
 *
 * With -j, one JSON object per line (JSON lines), with an "event" key.
 * Output is flushed after every event, so a pipe or a file sees it at once.
 *
 * Signals: SIGINT and SIGTERM are blocked except inside ppoll(), so one
 * that arrives at any other time is taken at the next wait rather than
 * lost; the handler only sets a flag, and the loop ends, freeing
 * everything, with status 0. The handler stays until the process exits,
 * so a second signal during the cleanup does not kill it. A signal the
 * caller ignores (SIGINT of a background job of a non-interactive shell)
 * stays ignored.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "sacred.h"
#include "json.h"
#include "utils.h"

static const int monitor_signals[] = { SIGINT, SIGTERM };

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define NR_SIGNALS	ARRAY_SIZE(monitor_signals)

static volatile sig_atomic_t monitor_stop;

static void monitor_on_signal(int sig)
{
	(void)sig;
	monitor_stop = 1;
}

static const char *const event_names[] = {
	[SACRED_EVENT_MEM_NEW] = "mem new",
	[SACRED_EVENT_MEM_DEL] = "mem del",
	[SACRED_EVENT_MEM_SET] = "mem set",
	[SACRED_EVENT_REGION_NEW] = "region new",
	[SACRED_EVENT_REGION_DEL] = "region del",
	[SACRED_EVENT_REGION_SET] = "region set",
	[SACRED_EVENT_PERM] = "perm",
};

static int monitor_help(struct cli *cli, int argc, char **argv)
{
	(void)cli;
	(void)argc;
	(void)argv;
	printf("Usage: sacred monitor [ mem MEM_ID ]\n"
	       "       sacred monitor help\n"
	       "where  MEM_ID  only the events of this memory instance\n"
	       "Prints one line per event until interrupted (SIGINT, SIGTERM):\n"
	       "[mem new|del|set] ID: ..., [region new|del|set] MEM_ID/ID: ...,\n"
	       "[perm], [perm refused] or [perm failed] MEM_ID/ID: pid PID access ACCESS ...\n"
	       "With -j, one JSON object per line, with an \"event\" key.\n");
	return SACRED_EXIT_OK;
}

static uint32_t event_mem_id(const struct sacred_event *ev)
{
	switch (ev->type) {
	case SACRED_EVENT_MEM_NEW:
	case SACRED_EVENT_MEM_DEL:
	case SACRED_EVENT_MEM_SET:
		return ev->mem.id;
	case SACRED_EVENT_PERM:
		return ev->perm.mem_id;
	default:
		return ev->region.mem_id;
	}
}

static void perm_print_body(struct cli *cli, const struct sacred_perm_event *p)
{
	struct json_writer *jw = cli->jw;

	if (jw) {
		json_uint_field(jw, "mem", p->mem_id);
		json_uint_field(jw, "id", p->region_id);
		json_uint_field(jw, "pid", p->process_id);
		json_str_field(jw, "access", sacred_access_str(p->access));
		json_uint_field(jw, "ballot", p->ballot);
		json_uint_field(jw, "target", p->target);
		json_uint_field(jw, "epoch", p->epoch);
		if (p->reason)
			json_str_field(jw, "reason",
				       sacred_refuse_str(p->reason));
		if (p->error)
			json_str_field(jw, "error", strerror(-p->error));
		return;
	}

	printf("%u/%u: pid %u access %s ballot %llu target %u epoch %u",
	       p->mem_id, p->region_id, p->process_id,
	       sacred_access_str(p->access), (unsigned long long)p->ballot,
	       p->target, p->epoch);
	if (p->reason)
		printf(" reason %s", sacred_refuse_str(p->reason));
	if (p->error)
		printf(" error \"%s\"", strerror(-p->error));
}

static void monitor_print(struct cli *cli, const struct sacred_event *ev)
{
	const char *name = event_names[ev->type];

	if (ev->type == SACRED_EVENT_PERM && ev->perm.reason)
		name = "perm refused";
	else if (ev->type == SACRED_EVENT_PERM && ev->perm.error)
		name = "perm failed";

	if (cli->jw) {
		json_obj_open(cli->jw);
		json_str_field(cli->jw, "event", name);
	} else {
		printf("[%s] ", name);
	}

	switch (ev->type) {
	case SACRED_EVENT_MEM_NEW:
	case SACRED_EVENT_MEM_DEL:
	case SACRED_EVENT_MEM_SET:
		mem_print_body(cli, &ev->mem);
		break;
	case SACRED_EVENT_REGION_NEW:
	case SACRED_EVENT_REGION_DEL:
	case SACRED_EVENT_REGION_SET:
		region_print_body(cli, &ev->region);
		break;
	case SACRED_EVENT_PERM:
		perm_print_body(cli, &ev->perm);
		break;
	}

	if (cli->jw)
		json_obj_close(cli->jw);
	else
		putchar('\n');
}

/* What monitor_catch() changed, for monitor_release(). */
struct monitor_sigs {
	sigset_t oldmask;
	struct sigaction old[NR_SIGNALS];
};

/*
 * Catch the signals that end the monitor, and block them; @waitmask gets
 * the mask to wait with, in which they are not blocked.
 */
static void monitor_catch(sigset_t *waitmask, struct monitor_sigs *saved)
{
	struct sigaction sa = { .sa_handler = monitor_on_signal };
	sigset_t block;
	unsigned int i;

	monitor_stop = 0;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	for (i = 0; i < NR_SIGNALS; i++)
		sigaddset(&block, monitor_signals[i]);
	sigprocmask(SIG_BLOCK, &block, &saved->oldmask);
	*waitmask = saved->oldmask;

	for (i = 0; i < NR_SIGNALS; i++) {
		sigdelset(waitmask, monitor_signals[i]);
		sigaction(monitor_signals[i], NULL, &saved->old[i]);
		if (saved->old[i].sa_handler != SIG_IGN)
			sigaction(monitor_signals[i], &sa, NULL);
	}
}

/*
 * Undo monitor_catch(): the commands of a -batch after this one run with
 * the signals as they were (a monitor a signal ended stops the batch:
 * cli->interrupted).
 */
static void monitor_release(const struct monitor_sigs *saved)
{
	unsigned int i;

	for (i = 0; i < NR_SIGNALS; i++)
		sigaction(monitor_signals[i], &saved->old[i], NULL);
	sigprocmask(SIG_SETMASK, &saved->oldmask, NULL);
}

/**
 * monitor_run() - print events until a signal comes or something fails
 * @cli: context
 * @mon: monitor
 * @mem_id: only the events of this instance, or SACRED_MEM_ID_ANY
 * @waitmask: the signal mask to wait with: the caller's, in which the
 *	monitor's signals are not blocked
 */
static int monitor_run(struct cli *cli, struct sacred_monitor *mon,
		       uint32_t mem_id, const sigset_t *waitmask)
{
	struct pollfd pfd = {
		.fd = sacred_monitor_fd(mon),
		.events = POLLIN,
	};
	struct sacred_event ev;
	int ret;

	while (!monitor_stop) {
		ret = sacred_monitor_next(mon, &ev, 0);
		switch (ret) {
		case 0:
			/* A kind newer than this tool: not ours to print. */
			if ((size_t)ev.type >= ARRAY_SIZE(event_names) ||
			    !event_names[ev.type])
				break;
			if (mem_id != SACRED_MEM_ID_ANY &&
			    event_mem_id(&ev) != mem_id)
				break;
			monitor_print(cli, &ev);
			if (fflush(stdout) || ferror(stdout))
				return SACRED_EXIT_FAIL; /* main() says so */
			break;
		case -ENOBUFS:
			fprintf(stderr,
				"sacred: monitor: events lost (receive buffer overrun)\n");
			break;
		case -EPROTO:
			fprintf(stderr,
				"sacred: monitor: malformed event dropped\n");
			break;
		case -EAGAIN:
			if (ppoll(&pfd, 1, NULL, waitmask) < 0 &&
			    errno != EINTR)
				return cli_fail(cli, -errno);
			break;
		default:
			return cli_fail(cli, ret);
		}
	}
	return SACRED_EXIT_OK;
}

int cmd_monitor(struct cli *cli, int argc, char **argv)
{
	uint32_t mem_id = SACRED_MEM_ID_ANY;
	struct sacred_monitor *mon;
	struct monitor_sigs saved;
	sigset_t waitmask;
	int ret;

	if (argc && is_prefix(argv[0], "help"))
		return monitor_help(cli, argc, argv);
	if (argc) {
		if (!is_prefix(argv[0], "mem") &&
		    !is_prefix(argv[0], "memory"))
			return cli_usage(cli, "unknown argument \"%s\"",
					 argv[0]);
		if (argc < 2)
			return cli_usage(cli, "\"mem\" needs a value");
		if (parse_u32(argv[1], 0, SACRED_MEM_ID_ANY - 1, &mem_id))
			return cli_usage(cli,
					 "invalid memory instance id \"%s\" (0-%u)",
					 argv[1], SACRED_MEM_ID_ANY - 1);
		if (argc > 2)
			return cli_usage(cli, "unexpected argument \"%s\"",
					 argv[2]);
	}

	ret = sacred_monitor_open(&mon);
	if (ret == -EOPNOTSUPP) {
		fprintf(stderr,
			"sacred: monitor: sacred.ko has no \"%s\" multicast group\n",
			SACRED_GENL_MCGRP_EVENTS);
		return SACRED_EXIT_FAIL;
	}
	if (ret)
		return cli_open_failed(ret);

	monitor_catch(&waitmask, &saved);
	ret = monitor_run(cli, mon, mem_id, &waitmask);
	if (monitor_stop)
		cli->interrupted = true;
	monitor_release(&saved);
	sacred_monitor_close(mon);
	return ret;
}
