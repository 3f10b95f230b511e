// SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause
/*
 * cheap_quorum - Byzantine consensus (Cheap Quorum and its robust backup)
 * over three memory instances, three times: with three correct processes
 * (decided on the fast path); with a leader that turns Byzantine and signs
 * two values (nobody decides on the fast path; the leader's write
 * permission is revoked for good, the memories refuse both its late write
 * and its request to get write back, and the backup decides); and with a
 * leader that lets one process decide on the fast path and then lies to
 * a slow one, which still decides the same value.
 *
 *   cheap_quorum ADDR:PORT ADDR:PORT ADDR:PORT
 *
 * The three processes are threads of this program, each with its own
 * connections, process id and Ed25519 key. It creates its regions on the
 * instances (run as root, on the instances' host) and removes them at the
 * end. Used by `make demo`.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/stat.h>

#include "sacred.h"

#define N		3
#define PID(i)		(3001 + (i))
#define VALUE_MAX	32
#define RW		(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)

static struct sacred_ctrl *ctrl;
static uint32_t mem_ids[N];
static struct sockaddr_in addrs[N];
static struct sacred_bz_keys *keys[N];

static void die(const char *what, int ret)
{
	fprintf(stderr, "cheap_quorum: %s: %s\n", what, strerror(-ret));
	exit(1);
}

/* The instance's 1 + 3N regions at @base on every memory. */
static void regions(uint32_t base)
{
	struct sacred_cheapq_attr ca = {
		.base_region = base,
		.leader_pid = PID(0),
		.value_max = VALUE_MAX,
	};
	int ret = sacred_cheapq_setup(ctrl, mem_ids, N, &ca, N);

	if (ret)
		die("sacred_cheapq_setup", ret);
}

static void regions_del(uint32_t base)
{
	uint32_t id;
	int i;

	for (id = base; id < base + 1 + 3 * N; id++)
		for (i = 0; i < N; i++)
			sacred_region_del(ctrl, mem_ids[i], id);
}

struct proc {
	int me;
	struct sacred_rmem *rm;
	struct sacred_cheapq *cheapq;
	char in[VALUE_MAX];
	char out[VALUE_MAX + 1];
	int ret;
	int help;
	unsigned int delay_ms;
	struct sacred_cheapq_stats st;
};

static void proc_open(struct proc *p, int me, uint32_t base)
{
	struct sacred_rmem_member m[N];
	struct sacred_rmem_attr ra = {
		.process_id = PID(me),
		.nr_mems = N,
		.mems = m,
	};
	struct sacred_cheapq_attr ca = {
		.keys = keys[me],
		.base_region = base,
		.leader_pid = PID(0),
		.value_max = VALUE_MAX,
		.timeout_ms = 500,
	};
	int i, ret;

	for (i = 0; i < N; i++)
		m[i] = (struct sacred_rmem_member){
			.addr = (struct sockaddr *)&addrs[i],
		};
	*p = (struct proc){ .me = me };
	ret = sacred_rmem_create(&ra, &p->rm);
	if (ret)
		die("connecting", ret);
	ca.rm = p->rm;
	ret = sacred_cheapq_open(&ca, &p->cheapq);
	if (ret)
		die("sacred_cheapq_open", ret);
	snprintf(p->in, sizeof(p->in), "the value of P%d", me);
}

static void proc_close(struct proc *p)
{
	sacred_cheapq_close(p->cheapq);
	sacred_rmem_destroy(p->rm);
}

static void *propose(void *arg)
{
	struct proc *p = arg;
	size_t len = 0;

	if (p->delay_ms)
		usleep(p->delay_ms * 1000);
	p->ret = sacred_cheapq_propose(p->cheapq, p->in, strlen(p->in) + 1,
				       p->out, VALUE_MAX, &len);
	p->out[len <= VALUE_MAX ? len : VALUE_MAX] = '\0';
	sacred_cheapq_stats(p->cheapq, &p->st);
	/* the others may need us for a quorum */
	p->help = p->ret ? p->ret : sacred_cheapq_help(p->cheapq, 1000);
	return NULL;
}

static void *help(void *arg)
{
	struct proc *p = arg;

	p->help = sacred_cheapq_help(p->cheapq, 1000);
	return NULL;
}

static const char *const carried[] = {
	[SACRED_CHEAPQ_CARRY_INPUT] = "its own input",
	[SACRED_CHEAPQ_CARRY_LEADER] = "the leader's value",
	[SACRED_CHEAPQ_CARRY_COPY] = "its copy of the leader's value",
	[SACRED_CHEAPQ_CARRY_CERTIFIED] = "a unanimity certificate",
};

static void report(const struct proc *p)
{
	if (p->ret)
		printf("  P%d failed: %s\n", p->me, strerror(-p->ret));
	else if (p->st.fast)
		printf("  P%d decided \"%s\" on the fast path (%u quorum round trip%s, polls included)\n",
		       p->me, p->out, p->st.round_trips,
		       p->st.round_trips == 1 ? "" : "s");
	else
		printf("  P%d panicked (revoked the leader, carried %s) and decided \"%s\" in backup round %u%s\n",
		       p->me, carried[p->st.carried], p->out,
		       p->st.backup_rounds - 1,
		       p->st.faulty ? ", after catching P0 lying" : "");
}

/* The instances listening at ADDR:PORT @args[0..N-1]: addrs[], mem_ids[]. */
static void find_instances(char **args)
{
	int i;

	for (i = 0; i < N; i++) {
		char host[64], *colon;
		struct sacred_mem_info mi;
		bool found = false;

		snprintf(host, sizeof(host), "%s", args[i]);
		colon = strrchr(host, ':');
		if (!colon)
			die("ADDR:PORT", -EINVAL);
		*colon = '\0';
		addrs[i].sin_family = AF_INET;
		addrs[i].sin_port = htons(atoi(colon + 1));
		if (inet_pton(AF_INET, host, &addrs[i].sin_addr) != 1)
			die("ADDR:PORT", -EINVAL);
		/* Which instance listens there. */
		for (mem_ids[i] = 0; mem_ids[i] < 64 && !found; mem_ids[i]++) {
			struct sockaddr_in *sin = (void *)&mi.addr;

			if (sacred_mem_get(ctrl, mem_ids[i], &mi))
				continue;
			found = sin->sin_addr.s_addr ==
					addrs[i].sin_addr.s_addr &&
				sin->sin_port == addrs[i].sin_port;
		}
		if (!found)
			die("no instance at that address", -ENOENT);
		mem_ids[i]--;
	}
}

/* Every process's Ed25519 key pair in @dir, and keys[] loaded from it. */
static void make_keys(const char *dir)
{
	int i, ret;

	for (i = 0; i < N; i++) {
		ret = sacred_bz_keygen(dir, i);
		if (ret)
			die("sacred_bz_keygen", ret);
	}
	for (i = 0; i < N; i++) {
		ret = sacred_bz_keys_load(dir, N, i, &keys[i]);
		if (ret)
			die("sacred_bz_keys_load", ret);
	}
	printf("Ed25519 keys for P0..P2 in %s\n", dir);
}

static void drop_keys(const char *dir)
{
	int i;

	for (i = 0; i < N; i++) {
		char path[128];

		sacred_bz_keys_free(keys[i]);
		snprintf(path, sizeof(path), "%s/ed25519-%d.key", dir, i);
		unlink(path);
		snprintf(path, sizeof(path), "%s/ed25519-%d.pub", dir, i);
		unlink(path);
	}
	rmdir(dir);
}

static void round_correct(struct proc *p)
{
	pthread_t th[N];
	int i;

	printf("\nRound 1: three correct processes, leader P0\n");
	regions(60);
	for (i = 0; i < N; i++)
		proc_open(&p[i], i, 60);
	for (i = 0; i < N; i++)
		pthread_create(&th[i], NULL, propose, &p[i]);
	for (i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < N; i++) {
		report(&p[i]);
		proc_close(&p[i]);
	}
}

static void round_equivocating_leader(struct proc *p)
{
	struct sacred_perm_req req = { .access = RW, .region_id = 70 };
	struct sacred_rmem_result res;
	pthread_t th;
	int i, ret;

	printf("\nRound 2: the leader P0 turns Byzantine and signs two values\n");
	regions(70);
	for (i = 0; i < N; i++)
		proc_open(&p[i], i, 70);
	ret = sacred_cheapq_lead_value(p[0].cheapq, "red", 4);
	printf("  P0 writes \"red\" into the leader region: %s\n",
	       ret ? strerror(-ret) : "ok");
	pthread_create(&th, NULL, propose, &p[1]);
	usleep(150000);
	ret = sacred_cheapq_lead_value(p[0].cheapq, "blue", 5);
	printf("  P0 writes \"blue\" over it: %s\n", ret ? strerror(-ret) : "ok");
	propose(&p[2]);
	pthread_join(th, NULL);
	report(&p[1]);
	report(&p[2]);
	ret = sacred_cheapq_lead_value(p[0].cheapq, "green", 6);
	printf("  P0 tries to write \"green\": %s (the memories refuse it)\n",
	       ret ? strerror(-ret) : "accepted?!");
	sacred_rmem_revive(p[0].rm);
	ret = sacred_rmem_change_perm(p[0].rm, &req, &res);
	printf("  P0 asks for write back: %s, reason \"%s\"\n",
	       ret ? strerror(-ret) : "granted?!",
	       sacred_refuse_str(res.perm[0].reason));
	for (i = 0; i < N; i++)
		proc_close(&p[i]);
}

static void round_lying_leader(struct proc *p)
{
	pthread_t th[2];
	size_t len;
	int i, ret;

	printf("\nRound 3: P0 lets P1 decide on the fast path, then lies to a slow P2\n");
	regions(80);
	for (i = 0; i < N; i++)
		proc_open(&p[i], i, 80);
	sacred_cheapq_lead_value(p[0].cheapq, "red", 4);
	sacred_cheapq_misbehave(p[2].cheapq, SACRED_CHEAPQ_STALL_AFTER_COPY,
				NULL, 0);
	ret = sacred_cheapq_propose(p[2].cheapq, p[2].in, strlen(p[2].in) + 1,
				    p[2].out, VALUE_MAX, &len);
	printf("  P2 copies \"red\" and stalls: %s\n",
	       ret == -EINPROGRESS ? "ok" : strerror(-ret));
	propose(&p[1]);
	report(&p[1]);
	sacred_cheapq_lead_value(p[0].cheapq, "blue", 5);
	sacred_cheapq_misbehave(p[0].cheapq, SACRED_CHEAPQ_BAD_CARRY, "blue",
				5);
	sacred_cheapq_misbehave(p[0].cheapq, SACRED_CHEAPQ_BAD_PROPOSE, "blue",
				5);
	printf("  P0 writes a signed \"blue\" over its value and will argue for it in the backup\n");
	p[0].delay_ms = 300;
	pthread_create(&th[0], NULL, propose, &p[0]);
	pthread_create(&th[1], NULL, help, &p[1]);
	propose(&p[2]);
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	report(&p[2]);
	printf("  P1 and P2 agree: %s\n",
	       !strcmp(p[1].out, p[2].out) ? "yes" : "NO");
	for (i = 0; i < N; i++)
		proc_close(&p[i]);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/cheap_quorum.XXXXXX";
	struct proc p[N];
	int ret;

	if (argc != N + 1) {
		fprintf(stderr, "usage: cheap_quorum ADDR:PORT ADDR:PORT ADDR:PORT\n");
		return 2;
	}
	ret = sacred_ctrl_open(&ctrl);
	if (ret)
		die("sacred_ctrl_open", ret);
	find_instances(argv + 1);
	if (!mkdtemp(dir))
		die("mkdtemp", -errno);
	make_keys(dir);

	round_correct(p);
	round_equivocating_leader(p);
	round_lying_leader(p);

	regions_del(60);
	regions_del(70);
	regions_del(80);
	drop_keys(dir);
	sacred_ctrl_close(ctrl);
	return 0;
}
